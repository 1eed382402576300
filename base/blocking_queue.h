#pragma once
// BlockingQueue: a mutex-guarded FIFO between threads (input thread -> main
// loop -> output thread). Push never blocks; Pop can wait with a timeout.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace llmserve::base {

template <typename T>
class BlockingQueue {
 public:
  // Appends an item and wakes one waiter.
  void Push(T item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
  }

  // Takes the oldest item, waiting up to `timeout` for one.
  std::optional<T> Pop(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  // Takes the oldest item if there is one, without waiting.
  std::optional<T> TryPop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  // Takes every queued item at once.
  std::deque<T> PopAll() {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<T> out;
    out.swap(items_);
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
};

}  // namespace llmserve::base
