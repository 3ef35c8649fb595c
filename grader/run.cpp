#include "run.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "judge/channel.hpp"
#include "judge/names.hpp"
#include "sandbox/cgroup.hpp"
#include "sandbox/sandbox.hpp"
#include "text.hpp"

namespace grader {

const TestRecord* TestRun::find(const std::string& name) const {
  for (const TestRecord& t : tests) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool TestRun::starved() const {
  if (start_starved) return true;
  for (const TestRecord& t : tests) {
    if (t.starved) return true;
  }
  return std::any_of(sanitized.begin(), sanitized.end(), [](const TestRun& s) { return s.starved(); });
}

bool TestRun::judge_broken() const {
  return judge_broke ||
         std::any_of(sanitized.begin(), sanitized.end(), [](const TestRun& s) { return s.judge_broken(); });
}

namespace {

// Takes one channel line into `run`: the event it was, or nullopt for a line no event reads.
std::optional<workbook::channel::Event> take_line(TestRun& whole, std::string_view line) {
  using workbook::channel::Event;
  // A run under a tool takes the events between its sanitize and its sanitized.
  TestRun& run = whole.sanitized.empty() || whole.sanitized.back().ended ? whole : whole.sanitized.back();
  // What the judge sends may quote the learner's code (a name it registered, an error its
  // process gave): a name or a message is one visible line, a failure's text a visible block.
  try {
    const nlohmann::json record = nlohmann::json::parse(line);
    const auto name = [&] { return visible_line(record.at("name").get<std::string>(), 512); };
    const Event event = record.at("event").get<Event>();
    if (nlohmann::json(event) != record.at("event")) {  // a name no event has (the enum maps it to the first)
      ++run.unreadable_lines;
      return std::nullopt;
    }
    switch (event) {
      case Event::begin:
        run.began = true;
        run.problem = visible_line(record.value("problem", ""), 2048);
        run.start_starved = record.value("starved", false);
        run.where = visible_line(record.value("where", ""), 2048);
        if (record.contains("sandbox") && record["sandbox"].is_object()) {
          run.sandboxed = record["sandbox"].get<workbook::sandbox::SandboxReport>().contained();
        }
        break;
      case Event::start: run.started = name(); break;
      case Event::test: {
        TestRecord t;
        t.name = name();
        t.group = std::string(workbook::names::group_of(t.name));
        t.result = record.at("result").get<workbook::channel::Result>();
        if (nlohmann::json(t.result) != record.at("result")) throw std::invalid_argument("no such result");
        for (const auto& f : record.at("failures")) t.failures.push_back(bounded_text(f.get<std::string>(), 8192));
        if (record.contains("bandwidth")) t.bandwidth = record.at("bandwidth").get<workbook::channel::Bandwidth>();
        t.starved = record.value("starved", false);
        run.tests.push_back(std::move(t));
        break;
      }
      case Event::context_lost:
        run.context_lost = name() + ": " + visible_line(record.at("error").get<std::string>(), 1024);
        run.judge_broke = record.value("judge", false);
        break;
      case Event::hang: run.hang = name() + ": " + visible_line(record.at("error").get<std::string>(), 1024); break;
      case Event::alone: run.asked_alone = true; break;
      case Event::between: break;  // only asks for a grant
      case Event::end:
      case Event::sanitized:
        run.ended = true;
        run.runner_exit = record.value("runner_exit", -1);
        run.output_bytes = record.value("output_bytes", std::size_t(0));
        run.output_kept = record.value("output_kept", std::size_t(0));
        if (record.contains("gpu_bytes")) run.gpu_bytes = record.at("gpu_bytes").get<std::uint64_t>();
        for (const auto& line : record.value("findings", nlohmann::json::array())) {
          if (run.findings.size() < 400) run.findings.push_back(visible_line(line.get<std::string>(), 2048));
        }
        if (event == Event::sanitized) {
          run.problem = visible_line(record.value("problem", ""), 2048);
          run.start_starved = record.value("starved", false);
        }
        break;
      case Event::sanitize: {
        TestRun tool_run;
        tool_run.tool = visible_line(record.at("tool").get<std::string>(), 64);
        tool_run.began = true;
        tool_run.process.exit_code = 0;
        whole.sanitized.push_back(std::move(tool_run));
        break;
      }
    }
    return event;
  } catch (const std::exception&) {
    ++run.unreadable_lines;
    return std::nullopt;
  }
}

}  // namespace

TestRun run_tests(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s,
                  const std::map<std::string, std::string>& env, double silence_limit_s, const OnEvent& on_event) {
  TestRun run;
  ProcessOptions options;
  options.env = env;
  // A folder of the grader's own for the judge's temporary files (a runner's scratch, where there is
  // no bubblewrap to keep it in a tmpfs): removed when the judge has ended, killed or not.
  const char* tmp = std::getenv("TMPDIR");
  std::string scratch = std::string(tmp && *tmp ? tmp : "/tmp") + "/workbook-judge-XXXXXX";
  const bool own_tmp = mkdtemp(scratch.data()) != nullptr;
  if (own_tmp) options.env["TMPDIR"] = scratch;
  // A run under a tool is slower (channel.hpp): the silence it may keep too.
  options.silence_limit_s = [&run, silence_limit_s] {
    return run.sanitized.empty() ? silence_limit_s : workbook::channel::kSanitizerTimeFactor * silence_limit_s;
  };
  options.channel_variable = workbook::names::kResultFdVariable;
  std::size_t taken = 0;  // the channel's bytes read while the process ran
  if (on_event) {
    options.grant_variable = workbook::names::kGrantFdVariable;
    options.on_channel_line = [&](std::string_view line) {
      taken += line.size() + 1;
      if (line.empty()) return ProcessOptions::Grant::none;
      const auto event = take_line(run, line);
      return event ? on_event(*event, run) : ProcessOptions::Grant::none;
    };
  }
  run.process = run_process(argv, log_path, timeout_s, options);
  workbook::cgroup::remove_left_by(run.process.pid);  // a judge that was killed leaves its runner's
  if (own_tmp) {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  }
  // The lines no callback saw (all of them without one; a last line without its newline).
  std::istringstream in(run.process.channel.substr(std::min(taken, run.process.channel.size())));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) take_line(run, line);
  }
  if (!run.sanitized.empty()) {  // how the process ended is the last run's
    ProcessResult& whole = run.process;
    ProcessResult& last = run.sanitized.back().process;
    last = whole;
    last.channel.clear();  // the channel's text stays with the whole run
    whole.timed_out = whole.interrupted = whole.silent = false;
    whole.exit_code = 0;
    whole.signal = 0;
  }
  return run;
}

std::vector<std::string> list_tests(const std::vector<std::string>& command, const std::string& filter,
                                    const std::string& log_path) {
  // GoogleTest writes the list as JSON (--gtest_output with --gtest_list_tests): {"testsuites":
  // [{"name": "Sizes/ExactSums", "testsuite": [{"name": "EveryElementCountedOnce/n_1", ...}]}]}.
  const std::string listing = log_path + ".json";
  std::remove(listing.c_str());
  std::vector<std::string> argv = command;
  argv.push_back("--gtest_list_tests");
  argv.push_back("--gtest_output=json:" + listing);
  if (!filter.empty()) argv.push_back("--gtest_filter=" + filter);
  const ProcessResult r = run_process(argv, log_path, 60);
  if (r.timed_out || r.interrupted || r.exit_code != 0) {
    throw std::runtime_error(fmt::format("{} --gtest_list_tests failed:\n{}", command.front(), tail_of(log_path, 10)));
  }
  std::vector<std::string> tests;
  try {
    const nlohmann::json doc = nlohmann::json::parse(std::ifstream(listing));
    for (const nlohmann::json& suite : doc.at("testsuites")) {
      for (const nlohmann::json& test : suite.at("testsuite")) {
        tests.push_back(suite.at("name").get<std::string>() + "." + test.at("name").get<std::string>());
      }
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{} --gtest_list_tests wrote no readable list ({}): {}", command.front(), listing, e.what()));
  }
  return tests;
}

}  // namespace grader
