#pragma once
// Adapts the shared-memory all-reduce group (common/ipc) to the model's
// Communicator interface.

#include <memory>

#include "common/ipc/communicator.h"
#include "worker/communicator.h"

namespace llmserve::worker {

class IpcCommunicator final : public Communicator {
 public:
  explicit IpcCommunicator(std::unique_ptr<common::ipc::Communicator> group) : group_(std::move(group)) {}
  size_t rank() const override { return static_cast<size_t>(group_->rank()); }
  size_t size() const override { return static_cast<size_t>(group_->world_size()); }
  Status AllReduceSum(float* data, size_t n) override { return group_->AllReduceSum(data, n); }
  Status AllGather(const float* in, size_t n, float* out) override { return group_->AllGather(in, n, out); }

 private:
  std::unique_ptr<common::ipc::Communicator> group_;
};

}  // namespace llmserve::worker
