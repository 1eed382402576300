#pragma once
// Collective operations between the tensor-parallel ranks of one engine.
// The model calls these at the seams of Megatron-style sharding: all_reduce
// after row-parallel layers (o_proj, down_proj), all_gather of vocab-parallel
// logits. Implementations: SingleProcessCommunicator (tp_size 1, no-ops);
// multi-process ones (shared memory on CPU, NCCL on GPU) plug in here.

#include <cstddef>

#include "proto/status.h"

namespace llmserve::worker {

class Communicator {
 public:
  virtual ~Communicator() = default;
  // This process's rank in [0, size()).
  virtual size_t rank() const = 0;
  // Number of ranks.
  virtual size_t size() const = 0;
  // data[0..n) = the sum over ranks of every rank's data[0..n). The order of
  // the sum must be fixed (rank order) so results are deterministic.
  virtual Status AllReduceSum(float* data, size_t n) = 0;
  // out[r * n .. (r+1) * n) = rank r's in[0..n), for every rank r.
  virtual Status AllGather(const float* in, size_t n, float* out) = 0;
};

// The communicator of a single rank (tp_size 1).
class SingleProcessCommunicator final : public Communicator {
 public:
  size_t rank() const override { return 0; }
  size_t size() const override { return 1; }
  Status AllReduceSum(float*, size_t) override { return Status::Ok(); }
  Status AllGather(const float* in, size_t n, float* out) override;
};

}  // namespace llmserve::worker
