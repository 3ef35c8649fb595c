// The test processes of one GPU: several threads take the chapters of the
// submissions given to that GPU, fetching the next submission when no chapter
// is left, and finish a submission when its last chapter is done. A chapter holds
// one of the GPU's places (Places) for its tests, and may give it back for the
// rest of its run (its tools' runs), so that the next chapter's tests begin.
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

//! The places on one GPU for chapters in their tests: a count that a chapter takes before its
//! tests and gives back when what is left of its run holds little of the GPU's memory.
class Places {
 public:
  explicit Places(int count) : free_(count) {}
  void take() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return free_ > 0; });
    --free_;
  }
  void give() {
    {
      std::lock_guard<std::mutex> l(m_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int free_;
};

//! One chapter's place: taken when made, given back early (give_back) or at the end, and taken
//! again (take) for a part that needs it once more (a retest).
class Place {
 public:
  explicit Place(Places& places) : places_(places) { take(); }
  Place(const Place&) = delete;
  Place& operator=(const Place&) = delete;
  ~Place() { give_back(); }
  void take() {
    if (held_) return;
    places_.take();
    held_ = true;
  }
  void give_back() {
    if (!held_) return;
    places_.give();
    held_ = false;
  }

 private:
  Places& places_;
  bool held_ = false;
};

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
