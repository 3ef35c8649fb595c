#include "status.hpp"

#include <array>
#include <utility>

namespace grader {

namespace {

constexpr std::string_view kSkippedNeeds = "skipped: needs ";

struct Names {
  Status::Code code;
  std::string_view key;   // stable: what reports hold and scripts match
  std::string_view word;  // for people: tables, messages, course tools' text
};

//! Every status's key and word: the one place either is written.
constexpr std::array<Names, 13> kNames = {{
    {Status::pending, "", ""},
    {Status::passed, "passed", "passed"},
    {Status::failed, "failed", "failed"},
    {Status::rejected, "rejected", "rejected"},
    {Status::does_not_compile, "does_not_compile", "does not compile"},
    {Status::crashed, "crashed", "crashed"},
    {Status::timed_out, "timed_out", "timed out"},
    {Status::incomplete, "incomplete", "incomplete"},
    {Status::no_gpu, "no_gpu", "not graded: no GPU"},
    {Status::missing, "missing", "missing"},
    {Status::interrupted, "interrupted", "interrupted"},
    {Status::not_graded, "not_graded", "not graded"},
    {Status::skipped, "skipped", ""},  // its word names what it needs: "skipped: needs sm_90"
}};

}  // namespace

Status Status::skipped_for(std::string feature) {
  Status s(Code::skipped);
  s.text_ = std::move(feature);
  return s;
}

Status Status::from_word(std::string_view word) {
  for (const Names& n : kNames) {
    if (n.code != skipped && n.word == word) return n.code;
  }
  if (word.substr(0, kSkippedNeeds.size()) == kSkippedNeeds && word.size() > kSkippedNeeds.size()) {
    return skipped_for(std::string(word.substr(kSkippedNeeds.size())));
  }
  Status s(Code::unrecognised);
  s.text_ = std::string(word);
  return s;
}

Status Status::from_key(std::string_view key, std::string_view needs) {
  if (key == "skipped" && !needs.empty()) return skipped_for(std::string(needs));
  for (const Names& n : kNames) {
    if (n.code != skipped && n.key == key) return n.code;
  }
  return from_word(key);  // a report before schema 4 held the word
}

std::string Status::key() const {
  if (code_ == Code::unrecognised) return text_;
  for (const Names& n : kNames) {
    if (n.code == code_) return std::string(n.key);
  }
  return "";
}

std::string Status::word() const {
  if (code_ == Code::skipped) return std::string(kSkippedNeeds) + text_;
  if (code_ == Code::unrecognised) return text_;
  for (const Names& n : kNames) {
    if (n.code == code_) return std::string(n.word);
  }
  return "";
}

void put_status(nlohmann::json& j, const Status& s) {
  j["status"] = s.key();
  j["status_text"] = s.word();
  if (s.code() == Status::skipped) j["needs"] = s.feature();
}

Status status_of(const nlohmann::json& j) {
  const auto text = [&](const char* name) {
    const auto it = j.find(name);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  return Status::from_key(text("status"), text("needs"));
}

Outcome Status::outcome() const {
  switch (code_) {
    case Code::passed: return Outcome::passed;
    case Code::crashed:
    case Code::timed_out:
    case Code::incomplete: return Outcome::error;
    case Code::skipped: return Outcome::skipped;
    case Code::no_gpu: return Outcome::untested;
    case Code::pending:
    case Code::interrupted:
    case Code::not_graded: return Outcome::unknown;
    case Code::failed:
    case Code::rejected:
    case Code::does_not_compile:
    case Code::missing:
    case Code::unrecognised: return Outcome::failed;
  }
  return Outcome::failed;
}

}  // namespace grader
