#include "common/process/termination_signals.h"

#include <pthread.h>

#include <thread>

namespace llmserve::common {

sigset_t BlockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

void WatchTerminationSignals(std::function<void(int signal)> on_signal) {
  const sigset_t set = BlockTerminationSignals();
  std::thread([set, on_signal = std::move(on_signal)] {
    int sig = 0;
    while (sigwait(&set, &sig) == 0) on_signal(sig);
  }).detach();
}

}  // namespace llmserve::common
