#pragma once
// SingleRankCommunicator: the Communicator of a group of one (tensor-parallel
// size 1): the all-reduce is the identity, the all-gather a copy.

#include "common/ipc/communicator.h"

namespace llmserve::common::ipc {

class SingleRankCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  Status AllReduceSum(float*, size_t) override { return Status::Ok(); }
  Status AllGather(const float* in, size_t n, float* out) override;
  Status Barrier() override { return Status::Ok(); }
};

}  // namespace llmserve::common::ipc
