#include "status.hpp"

#include <array>
#include <utility>

namespace grader {

namespace {

constexpr std::string_view kSkippedNeeds = "skipped: needs ";

//! The word of every status that has a fixed one.
constexpr std::array<std::pair<Status::Code, std::string_view>, 12> kWords = {{
    {Status::pending, ""},
    {Status::passed, "passed"},
    {Status::failed, "failed"},
    {Status::rejected, "rejected"},
    {Status::does_not_compile, "does not compile"},
    {Status::crashed, "crashed"},
    {Status::timed_out, "timed out"},
    {Status::incomplete, "incomplete"},
    {Status::no_gpu, "not graded: no GPU"},
    {Status::missing, "missing"},
    {Status::interrupted, "interrupted"},
    {Status::not_graded, "not graded"},
}};

}  // namespace

Status Status::skipped_for(std::string feature) {
  Status s(Code::skipped);
  s.text_ = std::move(feature);
  return s;
}

Status Status::from_word(std::string_view word) {
  for (const auto& [code, w] : kWords) {
    if (w == word) return code;
  }
  if (word.substr(0, kSkippedNeeds.size()) == kSkippedNeeds && word.size() > kSkippedNeeds.size()) {
    return skipped_for(std::string(word.substr(kSkippedNeeds.size())));
  }
  Status s(Code::unrecognised);
  s.text_ = std::string(word);
  return s;
}

std::string Status::word() const {
  if (code_ == Code::skipped) return std::string(kSkippedNeeds) + text_;
  if (code_ == Code::unrecognised) return text_;
  for (const auto& [code, w] : kWords) {
    if (code == code_) return std::string(w);
  }
  return "";
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

void to_json(nlohmann::json& j, const Status& s) { j = s.word(); }

void from_json(const nlohmann::json& j, Status& s) {
  s = j.is_string() ? Status::from_word(j.get_ref<const std::string&>()) : Status();
}

}  // namespace grader
