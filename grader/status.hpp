// A graded chapter's status as a type: what the grader decided about it, the word every report,
// table and format shows for it, and what it counts as. One table (outcome()) decides what a
// status means wherever it is read: the grader's exit status, its table, the reports, the course
// formats and the student's progress.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace grader {

//! What a status means for whoever reads it.
enum class Outcome {
  passed,    // every test passed
  failed,    // the learner's code is wrong: failed, rejected, does not compile, missing, or a word
             // this grader does not know
  error,     // the run of the code went wrong: crashed, timed out, incomplete
  skipped,   // the GPU lacks a feature the chapter requires: its points do not count
  untested,  // no GPU: built and checked, nothing tested
  unknown,   // the run never got to it: interrupted, not graded, or not decided
};

class Status {
 public:
  enum Code {
    pending,           // not decided yet: no word
    passed,            // every test passed and the bandwidth was enough
    failed,            // a test failed, or the bandwidth was not enough
    rejected,          // a static check refused the file
    does_not_compile,  // the build failed
    crashed,           // a test process ended without finishing (a lost context, a signal)
    timed_out,         // a test process or a call ran out of time
    incomplete,        // fewer tests reported than expected
    no_gpu,            // built and checked; nothing tested
    missing,           // the submission has no such chapter
    interrupted,       // the run was interrupted while it was graded
    not_graded,        // the run was interrupted before it
    skipped,           // the GPU lacks a feature the chapter requires (feature() says which)
    unrecognised,      // a word read from a report that this grader does not know (word() keeps it)
  };

  Status() = default;
  Status(Code code) : code_(code) {}  // NOLINT(google-explicit-constructor): `r.status = Status::failed`
  //! Skipped on this GPU, for want of `feature` ("sm_90").
  static Status skipped_for(std::string feature);
  //! The status a word names ("does not compile", "skipped: needs sm_90"); never throws.
  static Status from_word(std::string_view word);
  //! The status a key names ("does_not_compile"; "skipped" with what it `needs`), as reports hold
  //! it; else the word a report before schema 4 held; never throws.
  static Status from_key(std::string_view key, std::string_view needs = "");

  Code code() const { return code_; }
  bool is_pending() const { return code_ == Code::pending; }
  const std::string& feature() const { return text_; }
  //! The stable key reports hold and scripts match: "passed", "does_not_compile", "no_gpu",
  //! "skipped" (what it needs is feature()), "" while pending.
  std::string key() const;
  //! The word people read in tables and messages: "does not compile", "skipped: needs sm_90".
  std::string word() const;
  //! The word, or `fallback` while pending ("no status", "-"), for what people read.
  std::string word_or(std::string_view fallback) const { return is_pending() ? std::string(fallback) : word(); }

  Outcome outcome() const;
  //! Makes the run's exit status "some failed".
  bool counts_as_failure() const { return outcome() == Outcome::failed || outcome() == Outcome::error; }
  //! Tested on a GPU: passed, failed, an error, or skipped there for a missing feature.
  bool was_tested() const { return outcome() != Outcome::untested && outcome() != Outcome::unknown; }
  //! Done, for the student's next chapter: passed, or skipped on this GPU.
  bool is_done() const { return outcome() == Outcome::passed || outcome() == Outcome::skipped; }

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_ && a.text_ == b.text_; }
  friend bool operator!=(const Status& a, const Status& b) { return !(a == b); }

 private:
  Code code_ = Code::pending;
  std::string text_;  // skipped: the feature; unrecognised: the word as read
};

//! A status as a report's or progress file's object holds it: "status" (the key), "status_text"
//! (the word) and, when skipped, "needs".
void put_status(nlohmann::json& j, const Status& s);
Status status_of(const nlohmann::json& j);

}  // namespace grader

//! fmt prints a status as its word ("{:<18}" pads it as a string).
template <>
struct fmt::formatter<grader::Status> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const grader::Status& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.word(), ctx);
  }
};
