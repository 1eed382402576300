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
  const size_t chunk = (n + chunks - 1) / chunks;
  if (chunks <= 1) {
    fn(0, n, 0);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  // Helper i takes [i * chunk, (i + 1) * chunk); the caller takes the last
  // chunk [workers * chunk, n). Only helpers whose chunk is non-empty run.
  const size_t last = workers_.size();
  fn_ = &fn;
  n_ = n;
  chunk_ = chunk;
  pending_.store(static_cast<uint32_t>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) FutexWakeAll(&generation_);
  if (last * chunk < n) fn(last * chunk, n, last);
  // Wait for the helpers: spin first, then sleep on pending_.
  for (;;) {
    const uint32_t left = pending_.load(std::memory_order_acquire);
    if (left == 0) break;
    if (SpinWhileEqual(pending_, left, spin_us_.load(std::memory_order_relaxed))) continue;
    caller_asleep_.store(1, std::memory_order_seq_cst);
    if (pending_.load(std::memory_order_seq_cst) == left) FutexWait(&pending_, left);
    caller_asleep_.store(0, std::memory_order_seq_cst);
  }
  fn_ = nullptr;
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
    const size_t begin = std::min(index * chunk_, n_);
    const size_t end = std::min(begin + chunk_, n_);
    if (begin < end) (*fn_)(begin, end, index);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_asleep_.load(std::memory_order_seq_cst) != 0) {
      FutexWakeAll(&pending_);
    }
  }
}

}  // namespace llmserve::kernels::cpu
