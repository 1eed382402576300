// The reader side of the shared-memory broadcast ring; the protocol is
// described in shm_ring_layout.h.

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include <zmq.hpp>

#include "common/ipc/futex.h"
#include "common/ipc/process_liveness.h"
#include "common/ipc/shm_ring.h"
#include "common/ipc/shm_ring_layout.h"
#include "common/ipc/shm_segment.h"
#include "common/ipc/zmq_socket.h"

namespace llmserve::common::ipc {

using namespace shm_ring_internal;  // NOLINT: the ring's own internals

struct ShmRingReader::Impl {
  ShmRingHandle handle;
  AdaptiveSpin spin{WaitPolicy{}};
  bool is_local = true;
  uint32_t rank = 0;
  std::unique_ptr<ShmSegment> shm;
  RingView ring;
  zmq::context_t context{1};
  std::optional<zmq::socket_t> data;    // SUB: overflow/READY (local) or everything (remote)
  std::optional<zmq::socket_t> notify;  // SUB, CONFLATE: wake-up pings (local)
  int cancel_fd = -1;                   // eventfd written by Cancel()
  std::atomic<bool> cancelled{false};
  uint64_t next_seq = 0;
  bool held = false;
  std::vector<zmq::message_t> held_frames;
  std::string held_copy;
  std::atomic<uint64_t> sleeps{0};  // read by other threads (sleeps())

  StatusOr<std::string_view> ReadLocal(const Deadline& deadline);
  StatusOr<std::string_view> ReadRemote(const Deadline& deadline);
  // Blocks on the notification socket once; ok when woken or the slice ended.
  Status Sleep(uint32_t c, uint64_t want, const Deadline& deadline);
  // Receives [seq][payload...] for `seq` from the data socket.
  StatusOr<std::string_view> ReceiveOutOfBand(uint64_t seq, const Deadline& deadline);
};

StatusOr<std::unique_ptr<ShmRingReader>> ShmRingReader::AttachLocal(const ShmRingHandle& handle,
                                                                    uint32_t local_rank,
                                                                    const WaitPolicy& wait) {
  LLMSERVE_RETURN_IF_ERROR(
      ValidateGeometry(handle.num_chunks, handle.chunk_bytes, handle.num_local_readers));
  if (local_rank >= handle.num_local_readers) {
    return Status::InvalidArgument("shm ring: local rank " + std::to_string(local_rank) +
                                   " out of range (" + std::to_string(handle.num_local_readers) +
                                   " local readers)");
  }
  auto impl = std::make_unique<Impl>();
  impl->handle = handle;
  impl->spin = AdaptiveSpin(wait);
  impl->rank = local_rank;
  const Layout layout = Layout::For(handle.num_chunks, handle.chunk_bytes, handle.num_local_readers);
  LLMSERVE_ASSIGN_OR_RETURN(impl->shm, ShmSegment::Open(handle.shm_name, layout.total));
  impl->ring = RingView{layout, static_cast<char*>(impl->shm->data())};
  RingHeader& header = impl->ring.header();
  if (std::atomic_ref<uint64_t>(header.magic).load(std::memory_order_acquire) != kMagic ||
      header.version != kVersion || header.num_chunks != handle.num_chunks ||
      header.chunk_bytes != handle.chunk_bytes || header.num_readers != handle.num_local_readers) {
    return Status::InvalidArgument("shm ring: segment " + handle.shm_name +
                                   " does not match the handle");
  }
  int32_t expected = 0;
  if (!impl->ring.reader(local_rank).pid.compare_exchange_strong(expected, ::getpid())) {
    return Status::InvalidArgument("shm ring: local rank " + std::to_string(local_rank) +
                                   " is already attached (pid " + std::to_string(expected) + ")");
  }
  header.attached.fetch_add(1, std::memory_order_acq_rel);
  SocketOptions sub;
  LLMSERVE_ASSIGN_OR_RETURN(impl->data, MakeSocket(impl->context, zmq::socket_type::sub,
                                                   handle.local_endpoint, SocketMode::kConnect, sub));
  if (handle.wake == RingWake::kZmq) {
    sub.conflate = true;
    LLMSERVE_ASSIGN_OR_RETURN(impl->notify,
                              MakeSocket(impl->context, zmq::socket_type::sub,
                                         handle.notify_endpoint, SocketMode::kConnect, sub));
  }
  impl->cancel_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->cancel_fd < 0) return Status::Unavailable("shm ring: eventfd failed");
  return std::unique_ptr<ShmRingReader>(new ShmRingReader(std::move(impl)));
}

StatusOr<std::unique_ptr<ShmRingReader>> ShmRingReader::AttachRemote(const ShmRingHandle& handle) {
  if (handle.num_remote_readers == 0 || handle.remote_endpoint.empty()) {
    return Status::InvalidArgument("shm ring: this ring has no remote readers");
  }
  auto impl = std::make_unique<Impl>();
  impl->handle = handle;
  impl->is_local = false;
  LLMSERVE_ASSIGN_OR_RETURN(impl->data, MakeSocket(impl->context, zmq::socket_type::sub,
                                                   handle.remote_endpoint, SocketMode::kConnect));
  impl->cancel_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->cancel_fd < 0) return Status::Unavailable("shm ring: eventfd failed");
  return std::unique_ptr<ShmRingReader>(new ShmRingReader(std::move(impl)));
}

ShmRingReader::ShmRingReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ShmRingReader::~ShmRingReader() {
  if (impl_->is_local) {
    impl_->ring.reader(impl_->rank).detached.store(1, std::memory_order_release);
  }
  if (impl_->cancel_fd >= 0) ::close(impl_->cancel_fd);
}

uint64_t ShmRingReader::sleeps() const { return impl_->sleeps.load(std::memory_order_relaxed); }

void ShmRingReader::Cancel() {
  impl_->cancelled.store(true, std::memory_order_seq_cst);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(impl_->cancel_fd, &one, sizeof(one));
  if (impl_->is_local && impl_->handle.wake == RingWake::kFutex) {
    // Spuriously wakes the ring's other sleepers too; they just re-check.
    impl_->ring.header().wake_seq.fetch_add(1, std::memory_order_seq_cst);
    FutexWakeAll(&impl_->ring.header().wake_seq);
  }
}

Status ShmRingReader::WaitUntilReady(Timeout timeout) {
  Impl& m = *impl_;
  const Deadline deadline(timeout);
  Poller poller;
  const size_t data_i = poller.AddSocket(*m.data);
  poller.AddFd(m.cancel_fd);
  for (;;) {
    if (m.cancelled.load(std::memory_order_acquire)) {
      return Status::Unavailable("shm ring: reader cancelled");
    }
    if (deadline.Expired()) return TimeoutError("shm ring: writer never said READY");
    LLMSERVE_ASSIGN_OR_RETURN(int n, poller.Wait(deadline.Remaining(kLivenessSlice)));
    if (n == 0 || !poller.Readable(data_i)) {
      if (m.is_local && !ProcessAlive(m.ring.header().writer_pid)) {
        return Status::Unavailable("shm ring: writer process died");
      }
      continue;
    }
    LLMSERVE_ASSIGN_OR_RETURN(auto frames, RecvMultipart(*m.data, std::chrono::milliseconds(0)));
    if (frames.size() == 1 && frames[0].to_string_view() == kReady) return Status::Ok();
    return Status::DataLoss("shm ring: expected READY from the writer");
  }
}

void ShmRingReader::Release() {
  Impl& m = *impl_;
  if (!m.held) return;
  if (m.is_local) {
    const uint32_t c = static_cast<uint32_t>(m.next_seq % m.handle.num_chunks);
    m.ring.stamp(m.rank, c).store(m.next_seq + 1, std::memory_order_release);
  }
  m.held_frames.clear();
  m.held = false;
  ++m.next_seq;
}

StatusOr<std::string_view> ShmRingReader::Read(Timeout timeout) {
  Release();
  const Deadline deadline(timeout);
  return impl_->is_local ? impl_->ReadLocal(deadline) : impl_->ReadRemote(deadline);
}

Status ShmRingReader::ReadCopy(std::string* out, Timeout timeout) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string_view view, Read(timeout));
  out->assign(view.data(), view.size());
  Release();
  return Status::Ok();
}

StatusOr<std::string_view> ShmRingReader::Impl::ReadLocal(const Deadline& deadline) {
  const uint64_t seq = next_seq;
  const uint32_t c = static_cast<uint32_t>(seq % handle.num_chunks);
  ChunkMeta& meta = ring.chunk(c);
  RingHeader& header = ring.header();
  auto ready = [&] { return meta.written.load(std::memory_order_acquire) == seq + 1; };
  if (!ready()) {
    SpinPhase phase(spin.Next());
    while (!ready()) {
      if (header.closed.load(std::memory_order_acquire) != 0) {
        if (ready()) break;
        return Status::Unavailable("shm ring: closed by the writer");
      }
      if (cancelled.load(std::memory_order_relaxed)) {
        return Status::Unavailable("shm ring: reader cancelled");
      }
      if (deadline.Expired()) return TimeoutError("shm ring: no message");
      if (phase.Next()) continue;
      LLMSERVE_RETURN_IF_ERROR(Sleep(c, seq + 1, deadline));
    }
    spin.Done(phase);
  }
  if (meta.flags & kOverflow) return ReceiveOutOfBand(seq, deadline);
  held = true;
  return std::string_view(ring.data(c), meta.size);
}

Status ShmRingReader::Impl::Sleep(uint32_t c, uint64_t want, const Deadline& deadline) {
  RingHeader& header = ring.header();
  header.wake_wanted.store(1, std::memory_order_seq_cst);
  const uint32_t wake_seq = header.wake_seq.load(std::memory_order_seq_cst);
  const bool runnable = ring.chunk(c).written.load(std::memory_order_seq_cst) == want ||
                        header.closed.load(std::memory_order_seq_cst) != 0 ||
                        cancelled.load(std::memory_order_seq_cst);
  Status status;
  if (!runnable && !notify) {
    sleeps.fetch_add(1, std::memory_order_relaxed);
    FutexWait(&header.wake_seq, wake_seq, deadline.Remaining(kLivenessSlice));
    if (header.wake_seq.load(std::memory_order_acquire) == wake_seq &&
        !ProcessAlive(header.writer_pid) &&
        ring.chunk(c).written.load(std::memory_order_acquire) != want) {
      status = Status::Unavailable("shm ring: writer process died");
    }
  } else if (!runnable) {
    sleeps.fetch_add(1, std::memory_order_relaxed);
    Poller poller;
    const size_t notify_i = poller.AddSocket(*notify);
    poller.AddFd(cancel_fd);
    StatusOr<int> n = poller.Wait(deadline.Remaining(kLivenessSlice));
    if (!n.ok()) {
      status = n.status();
    } else if (poller.Readable(notify_i)) {
      (void)RecvMultipart(*notify, std::chrono::milliseconds(0));  // drain the ping
    } else if (*n == 0 && !ProcessAlive(header.writer_pid) &&
               ring.chunk(c).written.load(std::memory_order_acquire) != want) {
      status = Status::Unavailable("shm ring: writer process died");
    }
  }
  return status;
}

StatusOr<std::string_view> ShmRingReader::Impl::ReceiveOutOfBand(uint64_t seq,
                                                                 const Deadline& deadline) {
  Poller poller;
  const size_t data_i = poller.AddSocket(*data);
  poller.AddFd(cancel_fd);
  for (;;) {
    if (cancelled.load(std::memory_order_acquire)) {
      return Status::Unavailable("shm ring: reader cancelled");
    }
    if (deadline.Expired()) return TimeoutError("shm ring: no message");
    LLMSERVE_ASSIGN_OR_RETURN(int n, poller.Wait(deadline.Remaining(kLivenessSlice)));
    if (n > 0 && poller.Readable(data_i)) break;
    if (!is_local) continue;
    if (!ProcessAlive(ring.header().writer_pid)) {
      return Status::Unavailable("shm ring: writer process died");
    }
  }
  LLMSERVE_ASSIGN_OR_RETURN(held_frames, RecvMultipart(*data, std::chrono::milliseconds(0)));
  if (held_frames.size() == 1 && held_frames[0].to_string_view() == kClose) {
    held_frames.clear();
    return Status::Unavailable("shm ring: closed by the writer");
  }
  uint64_t got = 0;
  if (held_frames.empty() || held_frames[0].size() != 8 ||
      (std::memcpy(&got, held_frames[0].data(), 8), got != seq)) {
    held_frames.clear();
    return Status::DataLoss("shm ring: out-of-band message out of sequence (expected " +
                            std::to_string(seq) + ", got " + std::to_string(got) + ")");
  }
  held = true;
  if (held_frames.size() == 1) return std::string_view();
  if (held_frames.size() == 2) return held_frames[1].to_string_view();
  held_copy.clear();
  for (size_t i = 1; i < held_frames.size(); ++i) held_copy += held_frames[i].to_string_view();
  return std::string_view(held_copy);
}

StatusOr<std::string_view> ShmRingReader::Impl::ReadRemote(const Deadline& deadline) {
  return ReceiveOutOfBand(next_seq, deadline);
}

}  // namespace llmserve::common::ipc
