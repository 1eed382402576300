#include "kernels/cpu/thread_pool.h"

#include <algorithm>

namespace llmserve::kernels::cpu {

ThreadPool::ThreadPool(size_t num_threads) {
  if (num_threads == 0) num_threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i + 1 < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::ParallelFor(size_t n, size_t grain,
                             const std::function<void(size_t, size_t, size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t chunks = std::min(size(), (n + grain - 1) / grain);
  size_t chunk = (n + chunks - 1) / chunks;
  if (chunks <= 1) {
    fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    pending_ = workers_.size();
    ++generation_;
  }
  work_cv_.notify_all();
  // The caller takes the last chunk; helper i takes chunk i.
  size_t last = workers_.size();
  if (last * chunk < n) fn(last * chunk, n, last);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  fn_ = nullptr;
}

void ThreadPool::WorkerLoop(size_t index) {
  size_t seen = 0;
  for (;;) {
    const std::function<void(size_t, size_t, size_t)>* fn;
    size_t begin, end;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
      begin = std::min(index * chunk_, n_);
      end = std::min(begin + chunk_, n_);
    }
    if (begin < end) (*fn)(begin, end, index);
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

}  // namespace llmserve::kernels::cpu
