// One submission on the CPU: its kernel.cu files copied into a slot of the
// grading build, checked, compiled, checked again as objects, and linked with
// the chapter tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "result.hpp"
#include "session.hpp"

namespace grader {

//! The largest kernel.cu the grader takes.
inline constexpr std::uintmax_t kMaxSourceBytes = std::uintmax_t(1) << 20;

//! One submission to compile: its chapters/ tree, the slot it is copied into,
//! where its logs go, and its results (one entry per chosen chapter, in order).
//! A result's status is set where the chapter cannot be tested (missing,
//! rejected, does not compile, interrupted), and stays empty where
//! session.slot_executable(slot, slug) is built and waits for its tests.
struct SlotWork {
  int slot = 0;
  std::string chapters_dir, log_dir;
  std::vector<ChapterResult>* results = nullptr;
};

//! Compiles the chosen chapters of several submissions at once: their files
//! in one parallel build, their links in another.
void compile_submissions(Session& session, const std::vector<SlotWork>& batch);

//! The compiler's output for each target that failed in a Ninja log, by
//! target name ("slot0_03_idle_threads"): Ninja prints each failed command's
//! output in one piece after "FAILED: <its output file>".
std::map<std::string, std::string> failed_targets(const std::string& log_text);

//! Marks `r` refused by the static checks; false if `refusals` is empty.
bool reject(ChapterResult& r, const std::vector<Refusal>& refusals);

}  // namespace grader
