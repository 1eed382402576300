#include "kernels/cpu/thread_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>

namespace llmserve::kernels::cpu {
namespace {

void FutexWait(std::atomic<uint32_t>* addr, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* addr) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// Spins until *addr != value or `spin_us` passed; true if it changed.
bool SpinWhileEqual(const std::atomic<uint32_t>& addr, uint32_t value, uint32_t spin_us) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(spin_us);
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (addr.load(std::memory_order_acquire) != value) return true;
      CpuRelax();
    }
    if (Clock::now() >= deadline) return false;
  }
}

}  // namespace

ThreadPool::ThreadPool(size_t num_threads) {
  if (num_threads == 0) num_threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i + 1 < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(&generation_);
  for (auto& t : workers_) t.join();
}

void ThreadPool::ParallelFor(size_t n, size_t grain,
                             const std::function<void(size_t, size_t, size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  const size_t chunks = std::min(size(), (n + grain - 1) / grain);
  ParallelForChunks(n, (n + chunks - 1) / chunks, fn);
}

void ThreadPool::ParallelForChunks(size_t n, size_t chunk,
                                   const std::function<void(size_t, size_t, size_t)>& fn) {
  if (n == 0) return;
  chunk = std::max<size_t>(chunk, 1);
  const size_t num_chunks = (n + chunk - 1) / chunk;
  if (num_chunks <= 1 || workers_.empty()) {
    for (size_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk), workers_.size());
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  fn_ = &fn;
  n_ = n;
  chunk_ = chunk;
  num_chunks_ = num_chunks;
  next_chunk_.store(0, std::memory_order_relaxed);
  done_chunks_.store(0, std::memory_order_relaxed);
  members_.store(0, std::memory_order_release);  // open the round
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) FutexWakeAll(&generation_);
  RunChunks(workers_.size());
  // Every range is claimed; wait for the ones still running: spin, then sleep.
  const uint32_t total = static_cast<uint32_t>(num_chunks);
  for (;;) {
    const uint32_t done = done_chunks_.load(std::memory_order_acquire);
    if (done == total) break;
    if (SpinWhileEqual(done_chunks_, done, spin_us_.load(std::memory_order_relaxed))) continue;
    caller_asleep_.store(1, std::memory_order_seq_cst);
    if (done_chunks_.load(std::memory_order_seq_cst) == done) FutexWait(&done_chunks_, done);
    caller_asleep_.store(0, std::memory_order_seq_cst);
  }
  // Close the round once no helper is inside it (a helper that joined late
  // finds nothing to claim and leaves at once); later joiners see -1.
  for (int spins = 0;; ++spins) {
    int32_t expected = 0;
    if (members_.compare_exchange_weak(expected, -1, std::memory_order_acq_rel)) break;
    if (spins < 4096) {
      CpuRelax();
    } else {
      std::this_thread::yield();  // that helper was preempted right after joining
    }
  }
  fn_ = nullptr;
}

void ThreadPool::RunChunks(size_t thread) {
  const uint32_t total = static_cast<uint32_t>(num_chunks_);
  for (;;) {
    const size_t i = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (i >= num_chunks_) return;
    const size_t begin = i * chunk_;
    (*fn_)(begin, std::min(n_, begin + chunk_), thread);
    if (done_chunks_.fetch_add(1, std::memory_order_seq_cst) + 1 == total &&
        caller_asleep_.load(std::memory_order_seq_cst) != 0) {
      FutexWakeAll(&done_chunks_);
    }
  }
}

void ThreadPool::WorkerLoop(size_t index) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = generation_.load(std::memory_order_acquire);
    while (gen == seen) {
      if (!SpinWhileEqual(generation_, seen, spin_us_.load(std::memory_order_relaxed))) {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (generation_.load(std::memory_order_seq_cst) == seen) FutexWait(&generation_, seen);
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      }
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    // Join whatever round is open now (it may already be a later one than
    // `gen`: that is fine, its parameters are valid while we are a member).
    int32_t members = members_.load(std::memory_order_acquire);
    while (members >= 0 &&
           !members_.compare_exchange_weak(members, members + 1, std::memory_order_acq_rel)) {
    }
    if (members < 0) continue;  // closed: the others did all the work
    RunChunks(index);
    members_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace llmserve::kernels::cpu
