#pragma once
// ThreadPool: a fixed set of threads that run one data-parallel loop at a time.
// Work is split into contiguous ranges whose boundaries depend only on the
// problem size and the pool size, never on timing, so kernels that reduce
// within a range stay deterministic.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace llmserve::kernels::cpu {

class ThreadPool {
 public:
  // Starts num_threads - 1 helper threads; the caller is the last worker.
  // num_threads == 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(size_t num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Number of threads that run a ParallelFor, the caller included.
  size_t size() const { return workers_.size() + 1; }

  // Calls fn(begin, end, thread_index) over [0, n) split into size() contiguous
  // chunks of at least `grain` items (fewer chunks when n is small), and
  // returns when all are done. Not reentrant: fn must not call ParallelFor.
  void ParallelFor(size_t n, size_t grain,
                   const std::function<void(size_t begin, size_t end, size_t thread)>& fn);

 private:
  void WorkerLoop(size_t index);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t, size_t, size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  size_t chunk_ = 0;
  size_t generation_ = 0;
  size_t pending_ = 0;
  bool stop_ = false;
};

}  // namespace llmserve::kernels::cpu
