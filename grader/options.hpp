// What the command line asks for; every path absolute.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace grader {

struct Options {
  std::string chapters_dir;        // the chapters/ tree to grade
  std::vector<std::string> only;   // chapter slugs; empty: every chapter of the manifest
  std::string build_dir;
  std::string report, gradescope, roster;
  std::uint64_t seed = 0;
  bool seed_given = false;
  double build_timeout_s = 900;
  int timeout_s = 0;               // 0: each chapter's own limit from the manifest
  bool sanitize = true;
};

}  // namespace grader
