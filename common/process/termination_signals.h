#pragma once
// SIGTERM and SIGINT taken synchronously (sigwait) instead of by a handler, so
// that what they trigger may lock, log and allocate. Block them in main()
// before any thread starts: threads inherit the mask, and ChildProcesses
// unblocks them in the children it spawns.

#include <signal.h>

#include <functional>

namespace llmserve::common {

// Blocks SIGTERM and SIGINT in the calling thread; returns the set for sigwait.
sigset_t BlockTerminationSignals();

// Blocks them and calls `on_signal` (with the signal number) for each one that
// arrives, on a detached thread, for the life of the process.
void WatchTerminationSignals(std::function<void(int signal)> on_signal);

}  // namespace llmserve::common
