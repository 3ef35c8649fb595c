#include "timing_gate.hpp"

namespace grader {

bool TimingGate::draining() const {
  if (waiting_ == 0) return false;
  return serving_ || waiting_ >= batch_ || shared_ == 0 ||
         std::chrono::steady_clock::now() - first_wait_ > std::chrono::duration<double>(patience_s_);
}

void TimingGate::lock_shared() {
  std::unique_lock<std::mutex> l(m_);
  // Timed out every 200 ms: the patience of a waiting timed run can run out while nothing changes.
  while (exclusive_ || draining()) cv_.wait_for(l, std::chrono::milliseconds(200));
  ++shared_;
}
void TimingGate::unlock_shared() {
  std::lock_guard<std::mutex> l(m_);
  --shared_;
  cv_.notify_all();
}
void TimingGate::lock() {
  std::unique_lock<std::mutex> l(m_);
  if (waiting_++ == 0) first_wait_ = std::chrono::steady_clock::now();
  cv_.notify_all();  // a batch may be complete now
  while (exclusive_ || shared_ != 0 || !draining()) cv_.wait_for(l, std::chrono::milliseconds(200));
  --waiting_;
  exclusive_ = true;
  serving_ = waiting_ > 0;  // the rest of the batch goes before any shared work
}
void TimingGate::unlock() {
  std::lock_guard<std::mutex> l(m_);
  exclusive_ = false;
  if (waiting_ == 0) serving_ = false;
  if (waiting_ > 0) first_wait_ = std::chrono::steady_clock::now();
  cv_.notify_all();
}

}  // namespace grader
