// Tests whose calls go together: beside the other test processes of a class, each wait for the GPU
// is a time slice, and a small test is little else than its waits. So the first test of such a
// group to run hands every selected test's calls to the chapter's process in one batch (run_batch,
// trial.hpp), checked with one wait; where every call passed every check there, those tests pass,
// and otherwise each makes its calls alone, as without the batch, so that a failure reads as it
// always did. One failure and no verdict of the batch stands: a call that went wrong may have
// written into another test's buffers, which it could not have reached alone.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace workbook::judge {

class BatchedTests {
 public:
  //! Runs the calls of the tests `selected` (indices into the names) together: true when every
  //! call passed every check. It may throw: then none passed.
  using Make = std::function<bool(const std::vector<std::size_t>& selected)>;
  //! The tests' full GoogleTest names; `what` names the group in the judge's log.
  BatchedTests(std::string what, std::vector<std::string> names, Make make);
  //! Whether the running test passed in the batch, made for every selected test of the group
  //! (never a sanitized one: those run alone, as the runs under the tools see them) when the first
  //! of them runs, where batches_allowed(). Each test's pass is taken once.
  bool passed();
  //! The names that no registered test has: a renamed test would silently leave its batch.
  std::string unlisted() const;

 private:
  std::string what_;
  std::vector<std::string> names_;
  Make make_;
  bool made_ = false;
  std::set<std::string> passed_;
};

}  // namespace workbook::judge
