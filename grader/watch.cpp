// Watch mode: grade one chapter, then again on every save of its kernel.cu
// (the kernel's file events, inotify), until Ctrl-C.
#include <csignal>
#include <filesystem>

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fmt/format.h>

#include "exit_status.hpp"
#include "grade.hpp"
#include "judge/names.hpp"
#include "process.hpp"
#include "student.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

// Waits for kernel.cu in `dir` to be written (editors also save by renaming a
// new file over it); false when interrupted.
bool wait_for_save(int fd) {
  bool saved = false;
  for (;;) {
    if (interrupted()) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, saved ? 150 : 200);
    if (n > 0) {
      alignas(inotify_event) char buf[8192];
      for (ssize_t len; (len = read(fd, buf, sizeof buf)) > 0;) {
        for (char* at = buf; at < buf + len;) {
          const auto* e = reinterpret_cast<const inotify_event*>(at);
          if (e->len && std::string(e->name) == "kernel.cu") saved = true;
          at += sizeof(inotify_event) + e->len;
        }
      }
    } else if (n == 0 && saved) {
      return true;  // the save is over: nothing more for 150 ms
    }
  }
}

}  // namespace

int watch(Options opt, const workbook::Manifest& manifest, const std::string& slug_given) {
  const std::string slug = slug_given.empty() ? next_chapter(opt.chapters_dir, manifest) : slug_given;
  if (slug.empty()) {
    fmt::print("Every chapter passed. Name one to work on again: grader/grade watch 03\n");
    return code(Exit::ok);
  }
  opt.only = {slug};
  const fs::path dir = fs::path(opt.chapters_dir) / slug;
  const int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0 || inotify_add_watch(fd, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
    fmt::print(stderr, "grader: cannot watch {} for changes\n", dir.string());
    if (fd >= 0) close(fd);
    return code(Exit::cannot);
  }
  const bool tty = isatty(STDOUT_FILENO);
  for (;;) {
    if (tty) fmt::print("\033[2J\033[H");
    std::map<std::string, Status> statuses;
    grade(opt, manifest, &statuses);
    if (interrupted()) break;
    const auto it = statuses.find(slug);
    const bool passed = it != statuses.end() && it->second == Status::passed;
    if (passed) {
      const std::string next = next_chapter(opt.chapters_dir, manifest);
      fmt::print("\n{} {} passed.{}\n", paint("✓", "32"), slug,
                 next.empty() ? " Every chapter has passed."
                              : fmt::format(" Next: {} (Ctrl-C, then grader/grade watch {})", next, next.substr(0, 2)));
    } else {
      fmt::print("\nThe lesson: chapters/{}/lesson.md   A hint: grader/grade hint {}\n", slug, slug.substr(0, 2));
    }
    fmt::print("{}\n",
               paint(fmt::format("Watching {}/kernel.cu: save it to grade again; Ctrl-C to stop.", dir.string()), "2"));
    std::fflush(stdout);
    if (!wait_for_save(fd)) break;
  }
  close(fd);
  fmt::print("\n");
  int sig = 0;
  interrupted(&sig);
  return sig == SIGINT ? code(Exit::ok) : interrupted_code(sig);  // Ctrl-C is how watch mode ends
}

}  // namespace grader
