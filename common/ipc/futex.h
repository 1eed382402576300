#pragma once
// Process-shared futex wait/wake on a 32-bit atomic that lives in shared
// memory (Linux). A waiter sleeps only while the word still holds the value it
// last saw, so a wake that races with going to sleep is never lost.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <ctime>

namespace llmserve::common::ipc {

// Sleeps while *word == expected, for at most `timeout` (or until woken).
inline void FutexWait(std::atomic<uint32_t>* word, uint32_t expected,
                      std::chrono::milliseconds timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  timespec ts{static_cast<time_t>(timeout.count() / 1000),
              static_cast<long>(timeout.count() % 1000) * 1000000};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

// Wakes every process sleeping on `word`.
inline void FutexWakeAll(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace llmserve::common::ipc
