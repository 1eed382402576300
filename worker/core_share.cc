#include "worker/core_share.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace llmserve::worker {

size_t CoreShare(size_t processes) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int allowed = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  const size_t cores = allowed > 0 ? static_cast<size_t>(allowed) : std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, cores / std::max<size_t>(1, processes));
}

}  // namespace llmserve::worker
