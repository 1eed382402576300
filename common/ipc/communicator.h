#pragma once
// Communicator: the collective operations tensor parallelism needs, whatever
// carries them (shared memory between local CPU workers, NCCL on GPUs).
// Every rank of a group calls the same operations in the same order with the
// same sizes (a collective contract); a rank that breaks it, dies or times out
// makes the others return kUnavailable instead of hanging, and the
// communicator is unusable afterwards.

#include <cstddef>

#include "base/status.h"

namespace llmserve::common::ipc {

class Communicator {
 public:
  virtual ~Communicator() = default;

  // This process's rank in [0, world_size()).
  virtual int rank() const = 0;
  // Number of ranks in the group.
  virtual int world_size() const = 0;
  // data[i] = sum over ranks of data[i], in place. The sum is taken in rank
  // order ((r0 + r1) + r2) + ..., so the result is reproducible and bitwise
  // identical on every rank.
  virtual Status AllReduceSum(float* data, size_t n) = 0;
  // out[r * n + i] = rank r's in[i]; `out` holds world_size() * n floats and
  // must not overlap `in`.
  virtual Status AllGather(const float* in, size_t n, float* out) = 0;
  // Returns once every rank has called Barrier.
  virtual Status Barrier() = 0;
};

}  // namespace llmserve::common::ipc
