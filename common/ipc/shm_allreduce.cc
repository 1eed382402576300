// Protocol of the shared-memory communicator.
//
// Segment: GroupHeader | RankState[world] | data[2][world][slot_floats]
// (each RankState on its own cache line; data 4 KiB aligned).
//
// Every collective is a sequence of *phases*. A rank enters phase e by storing
// e into its own RankState::arrive (release, after writing its slot) and then
// waits until every peer's arrive has reached e (acquire, before reading the
// peers' slots). Phase numbers only grow (compared modulo 2^32), so there is
// nothing to reset between operations and a late peer cannot be confused with
// an early one. Because every rank runs the same sequence of collectives
// (the Communicator contract), the phase numbers agree across ranks.
//
// Staging slots are double-buffered: piece k of an operation (tensors larger
// than slot_floats are processed in pieces) uses buffer k % 2. A rank writing
// buffer b for piece k+2 has already passed the first phase of piece k+1, which
// every peer enters only after it finished reading piece k — so slots are never
// overwritten while a peer still reads them, without a second barrier.
//
// AllReduceSum, n < scatter_min_floats: copy in, one phase, every rank sums
// all slots in rank order. Otherwise reduce-scatter + gather: copy in, phase,
// rank r sums partition r of all slots (in rank order) into its own slot,
// phase, every rank copies partition p from rank p's slot. Both paths compute
// ((s0 + s1) + s2) + ... per element, so they agree bitwise with each other.
//
// Waiting: spin and yield per WaitPolicy, then sleep on a futex on the peer's
// arrive word (the arriving rank wakes it only if its `waiters` count is
// non-zero; seq_cst on both sides prevents lost wake-ups, and FUTEX_WAIT
// re-checks the value in the kernel). Sleeps last at most 200 ms so that a
// dead peer (its pid gone) is noticed.

#include "common/ipc/shm_allreduce.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "common/ipc/futex.h"
#include "common/ipc/process_liveness.h"
#include "common/ipc/shm_segment.h"
#include "common/ipc/zmq_socket.h"

namespace llmserve::common::ipc {

namespace {

constexpr uint64_t kAllReduceMagic = 0x636e7572766c6c6dull;  // "mllvrunc"
constexpr size_t kAlign = 64;
constexpr auto kAllReduceLivenessSlice = std::chrono::milliseconds(200);
constexpr auto kDefaultJoinTimeout = std::chrono::milliseconds(60000);
constexpr size_t kSumBlock = 2048;  // floats summed per block (8 KiB, stays in L1)

struct alignas(kAlign) GroupHeader {
  uint64_t magic;
  uint32_t world_size;
  uint32_t reserved;
  uint64_t slot_floats;
  alignas(kAlign) std::atomic<uint32_t> joined;
};

struct alignas(kAlign) RankState {
  std::atomic<uint32_t> arrive;   // last phase this rank entered (futex word)
  std::atomic<uint32_t> waiters;  // peers sleeping on `arrive`
  std::atomic<int32_t> pid;       // this rank's process, 0 until joined
};

size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

size_t StatesOffset() { return RoundUp(sizeof(GroupHeader), kAlign); }
size_t DataOffset(int world) { return RoundUp(StatesOffset() + sizeof(RankState) * world, 4096); }
size_t SegmentBytes(int world, size_t slot_floats) {
  return DataOffset(world) + 2 * static_cast<size_t>(world) * slot_floats * sizeof(float);
}

bool Reached(uint32_t value, uint32_t phase) { return static_cast<int32_t>(value - phase) >= 0; }

// out[j] = ((src[0][j] + src[1][j]) + src[2][j]) + ... for j in [begin, end).
// `out` may alias one of the sources: each block is summed into a local buffer
// first.
void SumInRankOrder(float* out, const std::vector<const float*>& src, size_t begin, size_t end) {
  float block[kSumBlock];
  for (size_t b = begin; b < end; b += kSumBlock) {
    const size_t len = std::min(kSumBlock, end - b);
    const float* s0 = src[0] + b;
    const float* s1 = src[1] + b;
    for (size_t j = 0; j < len; ++j) block[j] = s0[j] + s1[j];
    for (size_t p = 2; p < src.size(); ++p) {
      const float* sp = src[p] + b;
      for (size_t j = 0; j < len; ++j) block[j] += sp[j];
    }
    std::memcpy(out + (b - begin), block, len * sizeof(float));
  }
}

}  // namespace

struct ShmCommunicator::Impl {
  ShmCommunicatorConfig config;
  std::unique_ptr<ShmSegment> shm;
  char* base = nullptr;
  uint32_t phase = 0;   // last phase entered
  uint64_t pieces = 0;  // pieces staged so far (picks the buffer)
  bool broken = false;
  AdaptiveSpin spin{WaitPolicy{}};

  GroupHeader& header() const { return *reinterpret_cast<GroupHeader*>(base); }
  RankState& state(int r) const {
    return reinterpret_cast<RankState*>(base + StatesOffset())[r];
  }
  float* slot(uint64_t buffer, int r) const {
    float* data = reinterpret_cast<float*>(base + DataOffset(config.world_size));
    return data + (buffer * config.world_size + r) * config.slot_floats;
  }
  std::vector<const float*> slots(uint64_t buffer) const {
    std::vector<const float*> out(config.world_size);
    for (int r = 0; r < config.world_size; ++r) out[r] = slot(buffer, r);
    return out;
  }

  // Enters the next phase and waits for every peer to enter it.
  Status Step(const Deadline& deadline);
  Status WaitFor(int peer, uint32_t target, const Deadline& deadline);
  Status Fail(Status status) {
    broken = true;
    return status;
  }
};

std::string ShmCommunicator::NewGroupName() { return UniqueShmName("tp"); }

StatusOr<std::unique_ptr<ShmCommunicator>> ShmCommunicator::Create(
    const ShmCommunicatorConfig& config) {
  if (config.world_size < 1 || config.world_size > 1024) {
    return Status::InvalidArgument("shm communicator: world_size must be in [1, 1024], got " +
                                   std::to_string(config.world_size));
  }
  if (config.rank < 0 || config.rank >= config.world_size) {
    return Status::InvalidArgument("shm communicator: rank " + std::to_string(config.rank) +
                                   " out of range for world size " +
                                   std::to_string(config.world_size));
  }
  if (config.slot_floats == 0 || config.slot_floats % 16 != 0) {
    return Status::InvalidArgument("shm communicator: slot_floats must be a positive multiple of 16");
  }
  if (config.name.size() < 2 || config.name[0] != '/' ||
      config.name.find('/', 1) != std::string::npos) {
    return Status::InvalidArgument("shm communicator: name must be '/name', got '" +
                                   config.name + "'");
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->spin = AdaptiveSpin(config.wait);
  const size_t bytes = SegmentBytes(config.world_size, config.slot_floats);
  const Deadline deadline(config.timeout.value_or(kDefaultJoinTimeout));
  if (config.rank == 0) {
    LLMSERVE_ASSIGN_OR_RETURN(impl->shm, ShmSegment::CreateNamed(config.name, bytes));
    impl->base = static_cast<char*>(impl->shm->data());
    GroupHeader* header = new (impl->base) GroupHeader{};
    header->world_size = static_cast<uint32_t>(config.world_size);
    header->slot_floats = config.slot_floats;
    for (int r = 0; r < config.world_size; ++r) new (&impl->state(r)) RankState{};
    std::atomic_ref<uint64_t>(header->magic).store(kAllReduceMagic, std::memory_order_release);
  } else {
    // Rank 0 may not have created (or sized) the segment yet: retry.
    for (;;) {
      StatusOr<std::unique_ptr<ShmSegment>> shm = ShmSegment::Open(config.name, bytes);
      if (shm.ok()) {
        impl->shm = std::move(shm).value();
        impl->base = static_cast<char*>(impl->shm->data());
        if (std::atomic_ref<uint64_t>(impl->header().magic).load(std::memory_order_acquire) ==
            kAllReduceMagic) {
          break;
        }
        impl->shm.reset();
      } else if (shm.status().code() != StatusCode::kNotFound &&
                 shm.status().code() != StatusCode::kInvalidArgument) {
        return shm.status();
      }
      if (deadline.Expired()) {
        return TimeoutError("shm communicator: rank 0 never created " + config.name +
                            (shm.ok() ? std::string() : " (" + shm.status().ToString() + ")"));
      }
      ::usleep(1000);
    }
    if (impl->header().world_size != static_cast<uint32_t>(config.world_size) ||
        impl->header().slot_floats != config.slot_floats) {
      return Status::InvalidArgument("shm communicator: " + config.name +
                                     " was created for another group shape");
    }
  }
  impl->state(config.rank).pid.store(::getpid(), std::memory_order_release);
  if (impl->header().joined.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint32_t>(config.world_size)) {
    impl->shm->Unlink(/*force=*/true);  // everyone has it mapped
  }
  Status joined = impl->Step(deadline);
  if (!joined.ok()) return joined.WithContext("shm communicator: joining " + config.name);
  return std::unique_ptr<ShmCommunicator>(new ShmCommunicator(std::move(impl)));
}

ShmCommunicator::ShmCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShmCommunicator::~ShmCommunicator() = default;

int ShmCommunicator::rank() const { return impl_->config.rank; }
int ShmCommunicator::world_size() const { return impl_->config.world_size; }

Status ShmCommunicator::Impl::WaitFor(int peer, uint32_t target, const Deadline& deadline) {
  RankState& s = state(peer);
  if (Reached(s.arrive.load(std::memory_order_acquire), target)) return Status::Ok();
  SpinPhase phase(spin.Next());
  while (phase.Next()) {
    if (Reached(s.arrive.load(std::memory_order_acquire), target)) {
      spin.Done(phase);
      return Status::Ok();
    }
  }
  spin.Done(phase);
  for (;;) {
    s.waiters.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = s.arrive.load(std::memory_order_seq_cst);
    if (!Reached(seen, target)) FutexWait(&s.arrive, seen, deadline.Remaining(kAllReduceLivenessSlice));
    s.waiters.fetch_sub(1, std::memory_order_seq_cst);
    if (Reached(s.arrive.load(std::memory_order_acquire), target)) return Status::Ok();
    if (!ProcessAlive(s.pid.load(std::memory_order_acquire))) {
      return Status::Unavailable("shm communicator: rank " + std::to_string(peer) + " died");
    }
    if (deadline.Expired()) {
      return TimeoutError("shm communicator: rank " + std::to_string(peer) +
                          " did not arrive in time");
    }
  }
}

Status ShmCommunicator::Impl::Step(const Deadline& deadline) {
  const uint32_t target = ++phase;
  RankState& mine = state(config.rank);
  mine.arrive.store(target, std::memory_order_seq_cst);
  if (mine.waiters.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&mine.arrive);
  for (int p = 0; p < config.world_size; ++p) {
    if (p == config.rank) continue;
    Status status = WaitFor(p, target, deadline);
    if (!status.ok()) return Fail(status);
  }
  return Status::Ok();
}

Status ShmCommunicator::AllReduceSum(float* data, size_t n) {
  Impl& m = *impl_;
  if (m.broken) return Status::Unavailable("shm communicator: unusable after an earlier failure");
  const int world = m.config.world_size;
  if (world == 1 || n == 0) return Status::Ok();
  const Deadline deadline(m.config.timeout);
  for (size_t off = 0; off < n; off += m.config.slot_floats) {
    const size_t len = std::min(m.config.slot_floats, n - off);
    const uint64_t buffer = m.pieces++ & 1;
    float* mine = m.slot(buffer, m.config.rank);
    std::memcpy(mine, data + off, len * sizeof(float));
    LLMSERVE_RETURN_IF_ERROR(m.Step(deadline));
    const std::vector<const float*> src = m.slots(buffer);
    if (len < m.config.scatter_min_floats) {
      SumInRankOrder(data + off, src, 0, len);
      continue;
    }
    const size_t part = RoundUp((len + world - 1) / world, 16);
    const size_t begin = std::min(len, part * m.config.rank);
    const size_t end = std::min(len, begin + part);
    SumInRankOrder(mine + begin, src, begin, end);
    LLMSERVE_RETURN_IF_ERROR(m.Step(deadline));
    for (int p = 0; p < world; ++p) {
      const size_t b = std::min(len, part * p), e = std::min(len, b + part);
      if (e > b) std::memcpy(data + off + b, src[p] + b, (e - b) * sizeof(float));
    }
  }
  return Status::Ok();
}

Status ShmCommunicator::AllGather(const float* in, size_t n, float* out) {
  Impl& m = *impl_;
  if (m.broken) return Status::Unavailable("shm communicator: unusable after an earlier failure");
  const int world = m.config.world_size;
  if (n == 0) return Status::Ok();
  if (world == 1) {
    std::memmove(out, in, n * sizeof(float));
    return Status::Ok();
  }
  const Deadline deadline(m.config.timeout);
  for (size_t off = 0; off < n; off += m.config.slot_floats) {
    const size_t len = std::min(m.config.slot_floats, n - off);
    const uint64_t buffer = m.pieces++ & 1;
    std::memcpy(m.slot(buffer, m.config.rank), in + off, len * sizeof(float));
    LLMSERVE_RETURN_IF_ERROR(m.Step(deadline));
    for (int p = 0; p < world; ++p) {
      std::memcpy(out + p * n + off, m.slot(buffer, p), len * sizeof(float));
    }
  }
  return Status::Ok();
}

Status ShmCommunicator::Barrier() {
  Impl& m = *impl_;
  if (m.broken) return Status::Unavailable("shm communicator: unusable after an earlier failure");
  if (m.config.world_size == 1) return Status::Ok();
  return m.Step(Deadline(m.config.timeout));
}

}  // namespace llmserve::common::ipc
