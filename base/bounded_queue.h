#pragma once
// BoundedQueue: a mutex-guarded FIFO with a capacity. Push waits while the
// queue is full (back-pressure instead of loss); Pop can wait with a timeout.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace llmserve::base {

template <typename T>
class BoundedQueue {
 public:
  // `capacity` >= 1 items.
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Appends an item, first waiting for room.
  void Push(T item) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_full_.wait(lock, [&] { return items_.size() < capacity_; });
      items_.push_back(std::move(item));
    }
    not_empty_.notify_one();
  }

  // Takes the oldest item, waiting up to `timeout` for one.
  std::optional<T> Pop(std::chrono::milliseconds timeout) {
    std::optional<T> item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!not_empty_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
      item.emplace(std::move(items_.front()));
      items_.pop_front();
    }
    not_full_.notify_one();
    return item;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<T> items_;
};

}  // namespace llmserve::base
