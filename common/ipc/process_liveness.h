#pragma once
// Whether a peer process on this host still runs, for shared-memory waiters
// that would otherwise wait forever on a crashed peer.

#include <sys/types.h>

namespace llmserve::common::ipc {

// False when `pid` no longer exists or is a zombie (exited, not yet reaped by
// its parent); true otherwise, including when we may not signal it. pid <= 0
// (not known yet) counts as alive.
bool ProcessAlive(pid_t pid);

}  // namespace llmserve::common::ipc
