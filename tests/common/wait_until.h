#pragma once
// WaitUntil: the one place tests poll. A test that needs "X has happened"
// waits on X itself — a condition variable, a pipe, a readiness message — and
// where the only observable is a value another thread or process changes (a
// counter, a file, /proc), it polls that value here, with a deadline, instead
// of sleeping "long enough".

#include <chrono>
#include <thread>

namespace llmserve::test_util {

// Calls `predicate` until it returns true or `timeout` has passed, pausing
// `poll` between calls; returns true as soon as the predicate holds, false
// when the deadline passed without it (the predicate is asked once more at
// the deadline, so a zero timeout is a plain check).
template <typename Predicate>
bool WaitUntil(Predicate&& predicate, std::chrono::milliseconds timeout,
               std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() >= deadline) return predicate();
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace llmserve::test_util
