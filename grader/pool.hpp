// The test processes of one GPU: several threads take the chapters of the
// submissions given to that GPU, fetching the next submission when no chapter
// is left, and finish a submission when its last chapter is done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace grader {

template <class Submission>
struct PoolTasks {
  //! The next submission, waiting for it if need be; null when there is none.
  std::function<std::shared_ptr<Submission>()> fetch;
  //! The indices of its chapters to test.
  std::function<std::vector<std::size_t>(Submission&)> chapters;
  //! Tests one chapter (several run at once).
  std::function<void(Submission&, std::size_t)> test;
  //! After its last chapter (or at once when it has none to test).
  std::function<void(const std::shared_ptr<Submission>&)> finish;
};

//! Runs `threads` threads until fetch() has no more and every chapter is done.
//! No lock is held while fetch() waits: a thread that finishes a submission
//! (and so gives back what fetch() may be waiting for) is never blocked by it.
template <class Submission>
void run_pool(int threads, const PoolTasks<Submission>& tasks) {
  struct Job {
    std::shared_ptr<Submission> s;
    std::shared_ptr<std::atomic<int>> remaining;
    std::size_t chapter;
  };
  std::mutex m;
  std::condition_variable cv;
  std::deque<Job> queue;
  bool done = false, fetching = false;
  auto work = [&] {
    for (;;) {
      std::unique_lock<std::mutex> l(m);
      if (queue.empty()) {
        if (done) return;
        if (fetching) {  // another thread is getting the next submission
          cv.wait(l);
          continue;
        }
        fetching = true;
        l.unlock();
        std::shared_ptr<Submission> s = tasks.fetch();
        const std::vector<std::size_t> chapters = s ? tasks.chapters(*s) : std::vector<std::size_t>{};
        l.lock();
        fetching = false;
        if (!s) {
          done = true;
          cv.notify_all();
          return;
        }
        auto remaining = std::make_shared<std::atomic<int>>(static_cast<int>(chapters.size()));
        for (std::size_t i : chapters) queue.push_back({s, remaining, i});
        cv.notify_all();
        if (chapters.empty()) {
          l.unlock();
          tasks.finish(s);
        }
        continue;
      }
      Job job = queue.front();
      queue.pop_front();
      l.unlock();
      tasks.test(*job.s, job.chapter);
      if (--*job.remaining == 0) tasks.finish(job.s);
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
}

}  // namespace grader
