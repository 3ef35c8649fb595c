#include "compile.hpp"

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "judge/manifest.hpp"
#include "judge/names.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
}

// Copies a chapter's kernel.cu into the slot; "" or why it is refused.
// What is checked and compiled is this copy: the submission cannot change under the grader.
std::string stage(const fs::path& source, const fs::path& staged, bool* missing) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(source, ec);
  *missing = false;
  if (ec || status.type() == fs::file_type::not_found) {
    *missing = true;
    return "";
  }
  if (status.type() == fs::file_type::symlink) return "kernel.cu is a symbolic link; hand in the file itself";
  if (status.type() != fs::file_type::regular) return "kernel.cu is not a regular file";
  const std::uintmax_t bytes = fs::file_size(source, ec);
  if (ec) return "kernel.cu cannot be read";
  if (bytes > kMaxSourceBytes) {
    return fmt::format("kernel.cu is {} bytes; the grader takes files up to {} bytes", bytes, kMaxSourceBytes);
  }
  fs::copy_file(source, staged, fs::copy_options::overwrite_existing, ec);
  if (ec) return fmt::format("kernel.cu cannot be copied: {}", ec.message());
  fs::permissions(staged, fs::perms::owner_read | fs::perms::owner_write, ec);
  return "";
}

void does_not_compile(ChapterResult& r, const ProcessResult& p, const std::string& log, const std::string& slot_dir,
                      double timeout_s) {
  r.status = Status::does_not_compile;
  r.detail =
      p.timed_out ? fmt::format("the build took longer than {:.0f} s", timeout_s) : compile_errors(log, slot_dir);
  if (r.detail.find("No such file or directory") != std::string::npos) {
    r.detail += "(only each chapter's kernel.cu is graded: a header of your own belongs in it)\n";
  }
}

}  // namespace

bool reject(ChapterResult& r, const std::vector<Refusal>& refusals) {
  if (refusals.empty()) return false;
  r.status = Status::rejected;
  r.refusals.insert(r.refusals.end(), refusals.begin(), refusals.end());
  std::string detail = "the grader refuses this kernel.cu before running it:";
  for (const Refusal& f : refusals) detail += "\n  - " + f.reason;
  r.detail = detail;
  return true;
}

std::map<std::string, std::string> failed_targets(const std::string& log_text) {
  std::map<std::string, std::string> failed;
  std::istringstream in(log_text);
  std::string target, block;
  const auto close = [&] {
    if (!target.empty()) failed[target] += block;
    target.clear();
    block.clear();
  };
  // An object:     FAILED: grader/judge/CMakeFiles/slot<i>_<slug>.dir/<path>/kernel.cu.o
  // An executable: FAILED: grader/judge/slots/<i>/runner_<slug>
  static const std::regex object(R"(^FAILED: (\S*/)?CMakeFiles/([A-Za-z0-9_]+)\.dir/.*)");
  static const std::regex executable(R"(^FAILED: (\S*/)?slots/(\d+)/runner_([A-Za-z0-9_]+)\b.*)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, object)) {
      close();
      target = m[2];
      continue;
    }
    if (std::regex_match(line, m, executable)) {
      close();
      target = "slot" + m[2].str() + "_runner_" + m[3].str();
      continue;
    }
    if (line.rfind("[", 0) == 0 || line.rfind("ninja: ", 0) == 0) {
      close();
      continue;
    }
    if (!target.empty()) block += line + "\n";
  }
  close();
  return failed;
}

void compile_submissions(Session& session, const std::vector<SlotWork>& batch) {
  Build& build = session.build();
  const double timeout_s = session.options().build_timeout_s;
  std::error_code ec;
  // The files of every submission: copied, then their includes checked in parallel.
  std::map<std::pair<int, std::string>, std::future<std::vector<Refusal>>> includes;  // by slot, slug
  for (const SlotWork& w : batch) {
    const fs::path slot_dir = session.slot_dir(w.slot);
    fs::create_directories(w.log_dir, ec);
    w.results->clear();
    for (const workbook::ChapterSpec* spec : session.chosen()) {
      ChapterResult r;
      r.spec = spec;
      // Nothing of the slot's last submission may be tested in this one's name.
      remove_quietly(session.slot_runner(w.slot, spec->slug));
      remove_quietly(session.slot_listing(w.slot, spec->slug));
      const std::string old_object = build.object_of(Session::slot_object_target(w.slot, spec->slug));
      if (!old_object.empty()) remove_quietly(old_object);
      const fs::path staged = slot_dir / spec->slug / "kernel.cu";
      fs::create_directories(staged.parent_path(), ec);
      if (const workbook::Unmet unmet = unmet_in_build(*spec); !unmet.met()) {
        // The grading build has no target for it: the chapter over several GPUs needs NCCL.
        skip(r, unmet, kBuildWithoutNccl);
        w.results->push_back(std::move(r));
        continue;
      }
      bool missing = false;
      const std::string refused = stage(fs::path(w.chapters_dir) / spec->slug / "kernel.cu", staged, &missing);
      if (missing || !refused.empty()) {
        std::ofstream(staged, std::ios::trunc) << "";  // no earlier submission's file stays in the slot
        if (missing) {
          r.status = Status::missing;
          r.detail = fmt::format("{}/kernel.cu does not exist", spec->slug);
        } else {
          reject(r, {Refusal{"file", refused}});
        }
      } else {
        Toolchain tools = session.tools_for(*spec, w.log_dir);
        tools.submission_dir = slot_dir.string();
        includes[{w.slot, spec->slug}] = std::async(std::launch::async, [&session, tools, spec, staged] {
          return check_includes(tools, session.rules(), spec->slug, staged.string());
        });
      }
      w.results->push_back(std::move(r));
    }
  }
  // Every accepted file of the batch compiles in one parallel build.
  std::vector<std::string> objects;
  for (const SlotWork& w : batch) {
    for (ChapterResult& r : *w.results) {
      auto it = includes.find({w.slot, r.spec->slug});
      if (it == includes.end()) continue;
      if (!reject(r, it->second.get())) objects.push_back(Session::slot_object_target(w.slot, r.spec->slug));
    }
  }
  if (objects.empty()) return;
  const std::string objects_log = build.log("batch.build.log");
  const ProcessResult all = build.build(objects, objects_log, true);
  const std::map<std::string, std::string> object_errors = failed_targets(read_bounded(objects_log, 64 << 20));
  // A file that does not compile gets its own log: its part of the batch's, or its own build.
  const auto failure = [&](ChapterResult& r, const SlotWork& w, const std::string& target,
                           const std::map<std::string, std::string>& errors, const char* suffix) {
    const std::string log = (fs::path(w.log_dir) / (r.spec->slug + suffix)).string();
    const auto it = errors.find(target);
    ProcessResult p;
    if (it != errors.end()) {
      std::ofstream(log, std::ios::binary | std::ios::trunc) << it->second;
    } else {
      p = build.build({target}, log);
    }
    does_not_compile(r, p, log, session.slot_dir(w.slot), timeout_s);
  };
  // Each object is checked before it is linked with anything, and its idea notes read: every
  // chapter's at once (one after the other they took about 7 s of a submission's 22 s build on an
  // H100 machine's 16 cores, CUDA 13.0, 2026-12-05).
  struct Checked {
    std::vector<Refusal> refusals;
    std::string unreadable;  // why the object could not be read, if it could not
    std::vector<IdeaNote> ideas;
  };
  std::map<std::pair<int, std::string>, std::future<Checked>> checks;
  for (const SlotWork& w : batch) {
    for (ChapterResult& r : *w.results) {
      if (!r.status.is_pending()) continue;
      if (all.interrupted || interrupted()) {
        r.status = Status::interrupted;
        r.detail = "the grader was interrupted while building this chapter";
        continue;
      }
      const std::string target = Session::slot_object_target(w.slot, r.spec->slug);
      const std::string object = build.object_of(target);
      if (object.empty()) {
        failure(r, w, target, object_errors, ".build.log");
        continue;
      }
      checks[{w.slot, r.spec->slug}] =
          std::async(std::launch::async, [&session, tools = session.tools_for(*r.spec, w.log_dir), slug = r.spec->slug,
                                          object, listing = session.slot_listing(w.slot, r.spec->slug)] {
            Checked c;
            try {
              c.refusals = check_object(tools, session.rules(), slug, object, listing);
            } catch (const std::exception& e) {
              c.unreadable = e.what();
              return c;
            }
            if (c.refusals.empty()) {
              try {
                c.ideas = idea_notes(tools, session.rules(), slug, object);
              } catch (const std::exception&) {  // a note is advice: none is no refusal
              }
            }
            return c;
          });
    }
  }
  std::vector<std::string> links;
  for (const SlotWork& w : batch) {
    for (ChapterResult& r : *w.results) {
      auto it = checks.find({w.slot, r.spec->slug});
      if (it == checks.end()) continue;
      Checked c = it->second.get();
      if (!c.unreadable.empty()) {
        reject(r, {Refusal{"object", fmt::format("the grader could not read the object file: {}", c.unreadable)}});
        continue;
      }
      if (reject(r, c.refusals)) continue;
      r.idea = std::move(c.ideas);
      links.push_back(Session::slot_runner_target(w.slot, r.spec->slug));
    }
  }
  if (links.empty()) return;
  const std::string links_log = build.log("batch.link.log");
  const ProcessResult linked = build.build(links, links_log, true);
  const std::map<std::string, std::string> link_errors = failed_targets(read_bounded(links_log, 64 << 20));
  for (const SlotWork& w : batch) {
    for (ChapterResult& r : *w.results) {
      if (!r.status.is_pending() || !checks.count({w.slot, r.spec->slug})) continue;
      if (linked.interrupted || interrupted()) {
        r.status = Status::interrupted;
        r.detail = "the grader was interrupted while building this chapter";
        continue;
      }
      if (!fs::exists(session.slot_runner(w.slot, r.spec->slug), ec)) {
        failure(r, w, Session::slot_runner_target(w.slot, r.spec->slug), link_errors, ".link.log");
      }
    }
  }
}

}  // namespace grader
