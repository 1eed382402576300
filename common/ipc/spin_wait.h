#pragma once
// Waiting policy shared by the shared-memory primitives: spin with a CPU pause
// hint for `spin`, then sched_yield() until `yield` has passed, then block
// (each primitive decides how: a ZMQ notification, a futex, a short sleep).
// Spinning pays off only while a core is free; on an oversubscribed machine the
// yield phase hands the core to the peer we are waiting for.

#include <sched.h>

#include <chrono>
#include <optional>

namespace llmserve::common::ipc {

// How long a waiter spins and yields before it blocks.
struct WaitPolicy {
  // Busy-wait with a pause instruction this long (lowest latency).
  std::chrono::microseconds spin{50};
  // Then call sched_yield() until this much time has passed since the start.
  std::chrono::microseconds yield{1000};
};

// Tells the CPU we are in a spin loop (x86 PAUSE, ARM YIELD).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The phases of one wait; call Next() each time the condition is still false.
class SpinPhase final {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SpinPhase(const WaitPolicy& policy) : policy_(policy), start_(Clock::now()) {}

  // Pauses or yields once; returns false once the caller should block instead.
  bool Next() {
    if ((++iterations_ & 15) == 0 || yielding_) {
      const auto elapsed = Clock::now() - start_;
      if (elapsed >= policy_.yield) return false;
      yielding_ = elapsed >= policy_.spin;
    }
    if (yielding_) {
      sched_yield();
    } else {
      CpuRelax();
    }
    return true;
  }

 private:
  WaitPolicy policy_;
  Clock::time_point start_;
  unsigned iterations_ = 0;
  bool yielding_ = false;
};

// A deadline from an optional timeout (nullopt: none).
class Deadline final {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(std::optional<std::chrono::milliseconds> timeout) {
    if (timeout.has_value()) at_ = Clock::now() + *timeout;
  }
  // Whether the deadline has passed.
  bool Expired() const { return at_.has_value() && Clock::now() >= *at_; }
  // Time left, capped at `cap` (which is also the answer without a deadline).
  std::chrono::milliseconds Remaining(std::chrono::milliseconds cap) const {
    if (!at_.has_value()) return cap;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*at_ - Clock::now());
    if (left.count() < 0) return std::chrono::milliseconds(0);
    return left < cap ? left : cap;
  }

 private:
  std::optional<Clock::time_point> at_;
};

}  // namespace llmserve::common::ipc
