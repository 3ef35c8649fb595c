#include "build.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {

Build::Build(std::string build_dir, double timeout_s) : build_dir_(std::move(build_dir)), timeout_s_(timeout_s) {
  fs::create_directories(fs::path(build_dir_) / "logs");
}

std::string Build::log(const std::string& name) const { return (fs::path(build_dir_) / "logs" / name).string(); }

std::string Build::cached(const std::string& variable) const {
  std::ifstream in(fs::path(build_dir_) / "CMakeCache.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(variable + ":", 0) != 0) continue;
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) return line.substr(eq + 1);
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> found_by_own_build() {
  // NCCL by its root, the folder above its include folder (the runner's -DWORKBOOK_NCCL_ROOT).
  const std::string nccl_root =
      *WORKBOOK_NCCL_INCLUDE_DIR ? fs::path(WORKBOOK_NCCL_INCLUDE_DIR).parent_path().string() : "";
  std::vector<std::pair<std::string, std::string>> parts = {
      {"WORKBOOK_BWRAP", WORKBOOK_OWN_BWRAP},
      {"WORKBOOK_SECCOMP_INCLUDE_DIR", WORKBOOK_OWN_SECCOMP_INCLUDE_DIR},
      {"WORKBOOK_SECCOMP_LIBRARY", WORKBOOK_OWN_SECCOMP_LIBRARY},
      {"WORKBOOK_NCCL_ROOT", nccl_root}};
  parts.erase(std::remove_if(parts.begin(), parts.end(), [](const auto& p) { return p.second.empty(); }), parts.end());
  return parts;
}

bool Build::caches(const std::vector<std::pair<std::string, std::string>>& values) const {
  for (const auto& [variable, value] : values) {
    if (cached(variable) != value) return false;
  }
  return true;
}

bool Build::configure(const std::string& architectures, int slots, const std::string& slots_dir, bool device_debug,
                      std::string* why) {
  std::vector<std::string> cmd = {"cmake",
                                  "-S",
                                  WORKBOOK_SOURCE_DIR,
                                  "-B",
                                  build_dir_,
                                  "-G",
                                  WORKBOOK_GENERATOR,
                                  "-DCMAKE_BUILD_TYPE=Release",
                                  "-DWORKBOOK_CHAPTERS_ONLY=ON",
                                  fmt::format("-DWORKBOOK_GRADING_SLOTS={}", slots),
                                  "-DWORKBOOK_SLOTS_DIR=" + slots_dir,
                                  std::string("-DWORKBOOK_LEARNER_DEVICE_DEBUG=") + (device_debug ? "ON" : "OFF"),
                                  "-DCMAKE_CUDA_ARCHITECTURES=" + architectures,
                                  "-DCMAKE_CUDA_COMPILER=" + std::string(WORKBOOK_CUDA_COMPILER)};
  // What the grader's own build found (its cache, not only the environment): the sandbox's parts,
  // and NCCL, so that the grading build has the chapter over several GPUs as well.
  for (const auto& [variable, value] : found_by_own_build()) cmd.push_back("-D" + variable + "=" + value);
  const ProcessResult r = run_process(cmd, log("configure.log"), timeout_s_);
  if (r.interrupted) {
    *why = "interrupted";
    return false;
  }
  if (r.timed_out || r.exit_code != 0) {
    *why = tail_of(log("configure.log"), 20);
    return false;
  }
  return true;
}

ProcessResult Build::build(const std::vector<std::string>& targets, const std::string& log_path, bool keep_going) {
  std::vector<std::string> cmd = {"cmake", "--build", build_dir_, "--target"};
  cmd.insert(cmd.end(), targets.begin(), targets.end());
  if (keep_going) {
    const std::string generator = WORKBOOK_GENERATOR;
    if (generator.find("Ninja") != std::string::npos) {
      cmd.insert(cmd.end(), {"--", "-k", "0"});
    } else if (generator.find("Makefiles") != std::string::npos) {
      cmd.insert(cmd.end(), {"--", "-k"});
    }
  }
  ProcessOptions options;
  options.nice = kBuilderNice;
  return run_process(cmd, log_path, timeout_s_, options);
}

std::string Build::object_of(const std::string& target) const {
  const fs::path dir = fs::path(build_dir_) / kJudgeBinaryDir / "CMakeFiles" / (target + ".dir");
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->path().filename() == "kernel.cu.o") return it->path().string();
  }
  return "";
}

std::string compile_errors(const std::string& log_path, const std::string& strip_prefix, std::size_t max_errors) {
  const std::string log = read_bounded(log_path, 4 * kMaxEntryBytes);
  // nvcc/EDG: "file(12): error: ..."; g++: "file:12:3: error: ..."; the linker; ptxas.
  static const std::regex diagnostic(
      R"(^(.*\(\d+\): (catastrophic )?error\b.*|.*:\d+:\d+: (fatal )?error:.*|.*(undefined reference|multiple definition) .*|ptxas (fatal|error).*|nvlink error.*))");
  static const std::regex noise(R"(^(FAILED: |\[\d+/\d+\] |ninja: |/.*(nvcc|g\+\+|c\+\+|ld) ).*)");
  std::istringstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  std::size_t errors = 0;
  std::string summary;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("errors detected in the compilation") != std::string::npos ||
        lines[i].find("error detected in the compilation") != std::string::npos) {
      summary = lines[i];
      continue;
    }
    if (!std::regex_match(lines[i], diagnostic)) continue;
    if (++errors > max_errors) continue;
    out += lines[i] + "\n";
    // The source line and the caret under it (nvcc), or g++'s " 12 | code" and "    |  ^".
    for (std::size_t k = i + 1; k < lines.size() && k <= i + 3; ++k) {
      if (lines[k].empty() || std::regex_match(lines[k], diagnostic) || std::regex_match(lines[k], noise)) {
        break;
      }
      out += lines[k] + "\n";
    }
  }
  if (errors > max_errors) out += fmt::format("... and {} more errors\n", errors - max_errors);
  if (!summary.empty()) out += summary + "\n";
  if (out.empty()) out = tail_of(log_path, 15);
  // Paths as the student knows them: "07_vectorized/kernel.cu(12): error: ...".
  const std::string prefix = strip_prefix + "/";
  for (std::size_t at; (at = out.find(prefix)) != std::string::npos;) out.erase(at, prefix.size());
  return bounded_text(out);
}

}  // namespace grader
