#pragma once
// ShmCommunicator: the Communicator for tensor-parallel ranks on one host,
// through one shared-memory segment (see shm_allreduce.cc for the protocol).
// Small tensors take one barrier (every rank sums every slot); large ones are
// reduce-scattered (rank r sums partition r) and gathered back, so the memory
// traffic is spread over the ranks. Both paths add in rank order, so results
// are bitwise identical on every rank and from run to run.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/ipc/communicator.h"
#include "common/ipc/spin_wait.h"
#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

// One rank's view of a group.
struct ShmCommunicatorConfig {
  // Segment name shared by the group (from NewGroupName(), passed to every rank).
  std::string name;
  // This rank and the group size.
  int rank = 0;
  int world_size = 1;
  // Floats each rank can stage at once; larger tensors go in pieces. The
  // segment holds 2 * world_size * this many floats.
  size_t slot_floats = 1u << 20;
  // Tensors of at least this many floats are reduce-scattered.
  size_t scatter_min_floats = 1u << 14;
  // How a rank waits for its peers before sleeping on a futex.
  WaitPolicy wait;
  // Bound on joining the group and on each collective; nullopt: no bound (a
  // dead peer is still detected through its pid).
  std::optional<std::chrono::milliseconds> timeout;
};

class ShmCommunicator final : public Communicator {
 public:
  // A fresh group name ("/llmserve-tp-<pid>-<random>") for the ranks to share.
  static std::string NewGroupName();
  // Joins the group: rank 0 creates the segment, the others wait for it (up to
  // config.timeout). Returns once every rank has joined; the last one to join
  // unlinks the name.
  static StatusOr<std::unique_ptr<ShmCommunicator>> Create(const ShmCommunicatorConfig& config);
  ~ShmCommunicator() override;
  ShmCommunicator(const ShmCommunicator&) = delete;
  ShmCommunicator& operator=(const ShmCommunicator&) = delete;

  int rank() const override;
  int world_size() const override;
  Status AllReduceSum(float* data, size_t n) override;
  Status AllGather(const float* in, size_t n, float* out) override;
  Status Barrier() override;

 private:
  struct Impl;
  explicit ShmCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmserve::common::ipc
