#pragma once
// ThreadPool: a fixed set of threads that run one data-parallel loop at a time.
// Work is split into contiguous ranges whose boundaries depend only on the
// problem size and the pool size (or an explicit chunk size), never on timing,
// so kernels that reduce within a range stay deterministic.
//
// Which thread runs which range is decided at run time: every participating
// thread (the caller included) takes the next unclaimed range until none is
// left. So a helper that is late (asleep, or preempted on a busy machine) does
// not hold the loop up: the others take its share, and the loop returns once
// all ranges are done without waiting for a helper that never started.
//
// Dispatch is built for many small loops (a decode step issues ~200 matmuls):
// idle helpers spin for a short while on an atomic generation counter before
// sleeping on a futex.

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  // returns when all are done. thread_index < size() is unique among the calls
  // running at once (use it for per-thread scratch). Not reentrant: fn must
  // not call ParallelFor. Calls from several threads at once are serialised.
  void ParallelFor(size_t n, size_t grain,
                   const std::function<void(size_t begin, size_t end, size_t thread)>& fn);

  // Like ParallelFor, but the ranges are [i * chunk, min(n, (i + 1) * chunk)):
  // many small ranges balance better when threads run at uneven speed.
  void ParallelForChunks(size_t n, size_t chunk,
                         const std::function<void(size_t begin, size_t end, size_t thread)>& fn);

  // How long idle threads spin before sleeping, in microseconds (default 100).
  void set_spin_us(uint32_t us) { spin_us_.store(us, std::memory_order_relaxed); }
  // Helpers asleep (or about to sleep) on the futex now; tests wait on it.
  uint32_t sleeping_helpers() const { return sleepers_.load(std::memory_order_seq_cst); }

 private:
  void WorkerLoop(size_t index);
  // Takes and runs unclaimed ranges of the open round until none is left.
  void RunChunks(size_t thread);

  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // one round at a time
  // The open round (written by the caller before members_ opens it).
  const std::function<void(size_t, size_t, size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  size_t chunk_ = 0;
  size_t num_chunks_ = 0;
  std::atomic<size_t> next_chunk_{0};     // next unclaimed range
  std::atomic<uint32_t> done_chunks_{0};  // ranges finished; the caller futex-waits on it
  std::atomic<int32_t> members_{-1};      // helpers inside the round; -1 = closed
  std::atomic<uint32_t> generation_{0};   // bumped to start a round; helpers futex-wait on it
  std::atomic<uint32_t> sleepers_{0};     // helpers asleep (or going to sleep) on generation_
  std::atomic<uint32_t> caller_asleep_{0};  // 1 while the caller futex-waits on done_chunks_
  std::atomic<uint32_t> spin_us_{100};
  std::atomic<bool> stop_{false};
};

}  // namespace llmserve::kernels::cpu
