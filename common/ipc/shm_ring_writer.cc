// The writer side of the shared-memory broadcast ring; the protocol is
// described in shm_ring_layout.h.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
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

struct ShmRingWriter::Impl {
  ShmRingConfig config;
  ShmRingHandle handle;
  std::unique_ptr<ShmSegment> shm;
  RingView ring;
  zmq::context_t context{1};
  std::optional<zmq::socket_t> local;   // XPUB ipc: overflow + READY
  std::optional<zmq::socket_t> notify;  // XPUB ipc: wake-up pings
  std::optional<zmq::socket_t> remote;  // XPUB tcp: every message
  uint64_t next_seq = 0;
  uint64_t notifications = 0;
  bool ready = false;
  bool closed = false;
  // Subscriptions seen so far; kept across WaitUntilReady calls, so one that
  // times out does not lose the ones it consumed.
  uint32_t local_subs = 0, notify_subs = 0, remote_subs = 0;
  AdaptiveSpin spin{WaitPolicy{}};

  // Waits until every local reader has released chunk `c`'s previous message.
  Status WaitChunkFree(uint32_t c, uint64_t needed, const Deadline& deadline);
  // Wakes every sleeping local reader.
  void WakeReaders() {
    if (notify) {
      (void)SendBytes(*notify, std::string_view("\0", 1), /*dont_wait=*/true);
    } else {
      ring.header().wake_seq.fetch_add(1, std::memory_order_seq_cst);
      FutexWakeAll(&ring.header().wake_seq);
    }
  }
};

StatusOr<std::unique_ptr<ShmRingWriter>> ShmRingWriter::Create(const ShmRingConfig& config) {
  LLMSERVE_RETURN_IF_ERROR(
      ValidateGeometry(config.num_chunks, config.chunk_bytes, config.num_local_readers));
  if (config.num_local_readers + config.num_remote_readers == 0) {
    return Status::InvalidArgument("shm ring: needs at least one reader");
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->spin = AdaptiveSpin(config.wait);
  const Layout layout =
      Layout::For(config.num_chunks, config.chunk_bytes, config.num_local_readers);
  LLMSERVE_ASSIGN_OR_RETURN(impl->shm, ShmSegment::Create("ring", layout.total));
  impl->ring = RingView{layout, static_cast<char*>(impl->shm->data())};
  RingHeader* header = new (impl->ring.base) RingHeader{};
  header->version = kVersion;
  header->num_chunks = config.num_chunks;
  header->chunk_bytes = config.chunk_bytes;
  header->num_readers = config.num_local_readers;
  header->writer_pid = ::getpid();
  for (uint32_t c = 0; c < config.num_chunks; ++c) new (&impl->ring.chunk(c)) ChunkMeta{};
  for (uint32_t r = 0; r < config.num_local_readers; ++r) {
    new (&impl->ring.reader(r)) ReaderSlot{};
    for (uint32_t c = 0; c < config.num_chunks; ++c) {
      new (&impl->ring.stamp(r, c)) std::atomic<uint64_t>(0);
    }
  }
  std::atomic_ref<uint64_t>(header->magic).store(kMagic, std::memory_order_release);

  ShmRingHandle& h = impl->handle;
  h.shm_name = impl->shm->name();
  h.num_chunks = config.num_chunks;
  h.chunk_bytes = config.chunk_bytes;
  h.num_local_readers = config.num_local_readers;
  h.num_remote_readers = config.num_remote_readers;
  h.wake = config.wake;
  SocketOptions xpub;
  xpub.xpub_verbose = true;
  xpub.linger_ms = kDataLinger;
  if (config.num_local_readers > 0) {
    LLMSERVE_ASSIGN_OR_RETURN(h.local_endpoint, MakeIpcEndpoint("ring", config.runtime_dir));
    LLMSERVE_ASSIGN_OR_RETURN(
        impl->local, MakeSocket(impl->context, zmq::socket_type::xpub, h.local_endpoint,
                                SocketMode::kBind, xpub));
  }
  if (config.num_local_readers > 0 && config.wake == RingWake::kZmq) {
    LLMSERVE_ASSIGN_OR_RETURN(h.notify_endpoint, MakeIpcEndpoint("ring-wake", config.runtime_dir));
    SocketOptions notify = xpub;
    notify.linger_ms = 0;
    LLMSERVE_ASSIGN_OR_RETURN(
        impl->notify, MakeSocket(impl->context, zmq::socket_type::xpub, h.notify_endpoint,
                                 SocketMode::kBind, notify));
  }
  if (config.num_remote_readers > 0) {
    if (config.remote_host.empty()) {
      return Status::InvalidArgument("shm ring: remote readers need remote_host");
    }
    try {
      impl->remote.emplace(impl->context, zmq::socket_type::xpub);
      impl->remote->set(zmq::sockopt::xpub_verbose, 1);
      impl->remote->set(zmq::sockopt::linger, kDataLinger);
      impl->remote->set(zmq::sockopt::sndhwm, 0);
    } catch (const zmq::error_t& e) {
      return Status::Unavailable(std::string("shm ring: remote socket: ") + e.what());
    }
    LLMSERVE_ASSIGN_OR_RETURN(h.remote_endpoint, BindToFreePort(*impl->remote, config.remote_host));
  }
  return std::unique_ptr<ShmRingWriter>(new ShmRingWriter(std::move(impl)));
}

ShmRingWriter::ShmRingWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ShmRingWriter::~ShmRingWriter() {
  Close();
  RemoveIpcFile(impl_->handle.local_endpoint);
  RemoveIpcFile(impl_->handle.notify_endpoint);
}

const ShmRingHandle& ShmRingWriter::handle() const { return impl_->handle; }
uint64_t ShmRingWriter::messages_written() const { return impl_->next_seq; }
uint64_t ShmRingWriter::notifications_sent() const { return impl_->notifications; }

Status ShmRingWriter::WaitUntilReady(Timeout timeout) {
  Impl& m = *impl_;
  if (m.ready) return Status::Ok();
  const Deadline deadline(timeout);
  const uint32_t n_local = m.config.num_local_readers;
  const uint32_t n_remote = m.config.num_remote_readers;
  Poller poller;
  const size_t kNone = ~size_t{0};
  const size_t local_i = m.local ? poller.AddSocket(*m.local) : kNone;
  const size_t notify_i = m.notify ? poller.AddSocket(*m.notify) : kNone;
  const size_t remote_i = m.remote ? poller.AddSocket(*m.remote) : kNone;
  auto count = [](zmq::socket_t& socket, uint32_t* n) -> Status {
    LLMSERVE_ASSIGN_OR_RETURN(auto frames, RecvMultipart(socket, std::chrono::milliseconds(0)));
    if (!frames.empty() && frames[0].size() >= 1 && frames[0].data<char>()[0] == 1) ++*n;
    return Status::Ok();
  };
  for (;;) {
    const uint32_t attached = m.ring.header().attached.load(std::memory_order_acquire);
    const uint32_t n_notify = m.notify ? n_local : 0;
    if (m.local_subs >= n_local && m.notify_subs >= n_notify && m.remote_subs >= n_remote &&
        attached >= n_local) {
      break;
    }
    if (deadline.Expired()) {
      return TimeoutError("shm ring: readers not ready (" + std::to_string(attached) + "/" +
                          std::to_string(n_local) + " local attached, " +
                          std::to_string(m.remote_subs) + "/" + std::to_string(n_remote) +
                          " remote subscribed)");
    }
    LLMSERVE_ASSIGN_OR_RETURN(int n, poller.Wait(deadline.Remaining(std::chrono::milliseconds(50))));
    if (n == 0) continue;
    if (poller.Readable(local_i)) LLMSERVE_RETURN_IF_ERROR(count(*m.local, &m.local_subs));
    if (poller.Readable(notify_i)) LLMSERVE_RETURN_IF_ERROR(count(*m.notify, &m.notify_subs));
    if (poller.Readable(remote_i)) LLMSERVE_RETURN_IF_ERROR(count(*m.remote, &m.remote_subs));
  }
  if (m.local) LLMSERVE_RETURN_IF_ERROR(SendBytes(*m.local, kReady));
  if (m.remote) LLMSERVE_RETURN_IF_ERROR(SendBytes(*m.remote, kReady));
  // Every reader has mapped the segment and connected: drop the names.
  m.shm->Unlink();
  RemoveIpcFile(m.handle.local_endpoint);
  RemoveIpcFile(m.handle.notify_endpoint);
  m.ready = true;
  return Status::Ok();
}

Status ShmRingWriter::Impl::WaitChunkFree(uint32_t c, uint64_t needed, const Deadline& deadline) {
  auto all_released = [&] {
    for (uint32_t r = 0; r < config.num_local_readers; ++r) {
      if (ring.stamp(r, c).load(std::memory_order_acquire) < needed) return false;
    }
    return true;
  };
  if (all_released()) return Status::Ok();
  SpinPhase phase(spin.Next());
  while (phase.Next()) {
    if (all_released()) {
      spin.Done(phase);
      return Status::Ok();
    }
  }
  spin.Done(phase);
  // Blocked by a slow reader: back off with short sleeps, checking liveness.
  auto sleep = std::chrono::microseconds(20);
  auto next_check = std::chrono::steady_clock::now();
  while (!all_released()) {
    if (deadline.Expired()) return TimeoutError("shm ring: writer blocked by a slow reader");
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_check) {
      next_check = now + kLivenessSlice;
      for (uint32_t r = 0; r < config.num_local_readers; ++r) {
        if (ring.stamp(r, c).load(std::memory_order_acquire) >= needed) continue;
        const ReaderSlot& slot = ring.reader(r);
        const int32_t pid = slot.pid.load(std::memory_order_acquire);
        if (slot.detached.load(std::memory_order_acquire) != 0 || pid == 0 ||
            !ProcessAlive(pid)) {
          return Status::Unavailable("shm ring: local reader " + std::to_string(r) +
                                     " has gone away");
        }
      }
    }
    SleepFor(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
  }
  return Status::Ok();
}

Status ShmRingWriter::Write(std::string_view message, Timeout timeout) {
  return Write(std::span<const std::string_view>(&message, 1), timeout);
}

Status ShmRingWriter::Write(std::span<const std::string_view> parts, Timeout timeout) {
  Impl& m = *impl_;
  if (m.closed) return Status::Unavailable("shm ring: write after Close");
  if (!m.ready) return Status::Unavailable("shm ring: write before WaitUntilReady");
  const uint64_t seq = m.next_seq;
  const uint32_t c = static_cast<uint32_t>(seq % m.config.num_chunks);
  if (seq >= m.config.num_chunks) {
    LLMSERVE_RETURN_IF_ERROR(m.WaitChunkFree(c, seq - m.config.num_chunks + 1, Deadline(timeout)));
  }
  uint64_t total = 0;
  for (std::string_view part : parts) total += part.size();
  const bool overflow = total > m.config.chunk_bytes;
  ChunkMeta& meta = m.ring.chunk(c);
  meta.size = total;
  meta.flags = overflow ? kOverflow : 0;

  // Out-of-band frames: [seq][parts...] for overflow (local) and remote readers.
  std::vector<zmq::const_buffer> frames;
  const std::string seq_frame = SeqBytes(seq);
  if (overflow || m.remote) {
    frames.reserve(parts.size() + 1);
    frames.emplace_back(seq_frame.data(), seq_frame.size());
    for (std::string_view part : parts) {
      if (!part.empty()) frames.emplace_back(part.data(), part.size());
    }
  }
  if (!overflow) {
    char* dst = m.ring.data(c);
    for (std::string_view part : parts) {
      if (!part.empty()) std::memcpy(dst, part.data(), part.size());
      dst += part.size();
    }
  } else if (m.local) {
    LLMSERVE_RETURN_IF_ERROR(SendMultipart(*m.local, frames));
  }
  if (m.remote) {
    Status sent = SendMultipart(*m.remote, frames);
    if (!sent.ok()) {
      // Local readers may already hold this seq out of band: end the ring
      // rather than let a retry send the same seq twice.
      Close();
      return sent;
    }
  }

  meta.written.store(seq + 1, std::memory_order_seq_cst);
  std::atomic<uint32_t>& wake_wanted = m.ring.header().wake_wanted;
  if (wake_wanted.load(std::memory_order_seq_cst) != 0 &&
      wake_wanted.exchange(0, std::memory_order_seq_cst) != 0) {
    m.WakeReaders();
    ++m.notifications;
  }
  m.next_seq = seq + 1;
  return Status::Ok();
}

void ShmRingWriter::Close() {
  Impl& m = *impl_;
  if (m.closed) return;
  m.closed = true;
  m.ring.header().closed.store(1, std::memory_order_seq_cst);
  m.WakeReaders();
  if (m.remote && m.ready) (void)SendBytes(*m.remote, kClose, /*dont_wait=*/true);
}

}  // namespace llmserve::common::ipc
