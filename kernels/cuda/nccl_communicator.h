#pragma once
// NcclCommunicator: the sum all-reduce of tensor parallelism between GPU
// worker processes, through NCCL. libnccl.so.2 is loaded at run time (never
// linked), so binaries built with CUDA still run where NCCL is absent; only
// creating a communicator then fails, naming the library.
//
// The ranks agree on an NcclId first: rank 0 makes one (NewId) and the
// others receive it by whatever channel the ranks already share.

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <memory>

#include "base/status_or.h"

namespace llmserve::kernels::cuda {

// NCCL's ncclUniqueId: 128 opaque bytes.
struct NcclId {
  std::array<char, 128> bytes{};
};

class NcclCommunicator {
 public:
  // A fresh id for a group (rank 0 calls this).
  static StatusOr<NcclId> NewId();
  // Joins group `id` as `rank` of `world_size` on the current device; blocks
  // until every rank has joined.
  static StatusOr<std::unique_ptr<NcclCommunicator>> Create(int rank, int world_size, const NcclId& id);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // data[i] = the sum over ranks of data[i] (n floats in device memory), in
  // place, enqueued on `stream`. Every rank gets the same bits.
  Status AllReduceSum(float* data, size_t n, cudaStream_t stream);

 private:
  NcclCommunicator() = default;
  void* comm_ = nullptr;  // ncclComm_t
  int rank_ = 0, world_size_ = 1;
};

}  // namespace llmserve::kernels::cuda
