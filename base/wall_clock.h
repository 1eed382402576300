#pragma once
// Wall-clock time as seconds since the Unix epoch: what vLLM's `created`
// fields and request arrival times hold.

#include <chrono>

namespace llmserve::base {

inline double EpochSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace llmserve::base
