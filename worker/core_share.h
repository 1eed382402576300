#pragma once
// How many threads one compute process of a node gets: the cores this
// process may run on (its CPU affinity, so `taskset` bounds a deployment),
// shared equally by the node's compute processes.

#include <cstddef>

namespace llmserve::worker {

// max(1, usable cores / processes); processes 0 counts as 1.
size_t CoreShare(size_t processes);

}  // namespace llmserve::worker
