#include "batched_tests.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chapter_env.hpp"

namespace workbook::judge {
namespace {

//! Every registered test by its full name.
std::map<std::string, const ::testing::TestInfo*> registered_tests() {
  std::map<std::string, const ::testing::TestInfo*> out;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) out[full_name(*suite.GetTestInfo(j))] = suite.GetTestInfo(j);
  }
  return out;
}

bool sanitized(const std::string& name) {
  return std::find(names::kSanitizedTests.begin(), names::kSanitizedTests.end(), name) != names::kSanitizedTests.end();
}

}  // namespace

BatchedTests::BatchedTests(std::string what, std::vector<std::string> names, Make make)
    : what_(std::move(what)), names_(std::move(names)), make_(std::move(make)) {}

bool BatchedTests::passed() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!info) return false;
  const std::string name = full_name(*info);
  if (sanitized(name) || std::find(names_.begin(), names_.end(), name) == names_.end()) return false;
  if (!made_ && batches_allowed()) {
    made_ = true;
    const std::map<std::string, const ::testing::TestInfo*> registered = registered_tests();
    std::vector<std::size_t> selected;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const auto it = registered.find(names_[i]);
      if (it != registered.end() && it->second->should_run() && !sanitized(names_[i])) selected.push_back(i);
    }
    if (selected.size() >= 2) {
      try {
        if (make_(selected)) {
          for (std::size_t i : selected) passed_.insert(names_[i]);
          fmt::print("[batch] {}: {} tests' calls together, all passed there\n", what_, selected.size());
        }
      } catch (const std::exception& e) {
        passed_.clear();
        fmt::print("[batch] {}: not made ({}); the tests make their calls alone\n", what_, e.what());
      }
    }
  }
  return passed_.erase(name) == 1;
}

std::string BatchedTests::unlisted() const {
  const std::map<std::string, const ::testing::TestInfo*> registered = registered_tests();
  std::string out;
  for (const std::string& name : names_)
    if (!registered.count(name)) out += " " + name;
  return out;
}

}  // namespace workbook::judge
