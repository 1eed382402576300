#pragma once
// Waiting policy shared by the shared-memory primitives: spin with a CPU pause
// hint for `spin`, then sched_yield() until `yield` has passed, then block
// (each primitive decides how: a ZMQ notification, a futex, a short sleep).
// Spinning pays off only while a core is free; on an oversubscribed machine the
// yield phase hands the core to the peer we are waiting for.

#include <sched.h>

#include <algorithm>
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

  // Whether the pause-spin phase is over (the wait is yielding or blocking).
  bool spun_out() const { return yielding_; }

  // Pauses or yields once; returns false once the caller should block instead.
  bool Next() {
    if ((++iterations_ & 15) == 0 || yielding_) {
      const auto elapsed = Clock::now() - start_;
      yielding_ = elapsed >= policy_.spin;
      if (elapsed >= policy_.yield) return false;
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

// Adapts the spin budget of one waiter to how its waits end, like an adaptive
// mutex: a wait that ends while still spinning doubles the budget (up to
// policy.spin); one that needs to yield or sleep halves it (down to 2 µs, so
// that a fast peer can win it back). On an oversubscribed machine, where the
// peer we wait for may need our very core, spinning first would delay it by
// the whole budget, so the budget drops to 2 µs and the waiter soon yields;
// with idle cores and a responsive peer it stays at policy.spin.
class AdaptiveSpin final {
 public:
  explicit AdaptiveSpin(const WaitPolicy& policy) : policy_(policy), spin_(policy.spin) {}

  // The policy for the next wait.
  WaitPolicy Next() const { return WaitPolicy{spin_, policy_.yield}; }
  // Records how a wait with Next()'s policy ended.
  void Done(const SpinPhase& phase) {
    if (phase.spun_out()) {
      spin_ = std::max(std::min(policy_.spin, kFloor), spin_ / 2);
    } else {
      spin_ = std::min(policy_.spin, spin_ * 2 + std::chrono::microseconds(1));
    }
  }

 private:
  static constexpr std::chrono::microseconds kFloor{2};
  WaitPolicy policy_;
  std::chrono::microseconds spin_;
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
