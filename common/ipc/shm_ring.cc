// Protocol of the shared-memory broadcast ring.
//
// Segment layout (one POSIX shm object, every region 64-byte aligned):
//   RingHeader | ChunkMeta[num_chunks] | ReaderSlot[num_readers]
//   | stamps[num_readers][num_chunks] (each reader's row padded to 64 bytes)
//   | data[num_chunks][chunk_stride]
//
// Message `seq` (0, 1, 2, ...) lives in chunk seq % num_chunks. Instead of
// vLLM's boolean written/read flags, which the writer must reset in a careful
// order (read flags first, then written, with fences between), every flag is a
// *stamp*: the sequence number + 1 of the message it refers to. Stamps only
// grow, so there is nothing to reset and no ABA:
//   - ChunkMeta::written == seq + 1  <=>  message seq is complete in the chunk
//     (the chunk's "written flag"; stored with release after the payload);
//   - stamps[r][c] == seq + 1  <=>  reader r is done with message seq in chunk c
//     (reader r's "read flag" for the chunk; stored with release after reading).
// The writer may overwrite chunk c with message seq once every reader's stamp
// for c is >= seq - num_chunks + 1 (it has released the previous occupant);
// acquire loads of those stamps order the readers' reads of the old payload
// before the writer's new stores. Each stamp row is written by one reader only,
// so readers never share a cache line they write.
//
// Sleeping without lost wake-ups (an eventcount): a reader that has spun and
// yielded for WaitPolicy without a message sets RingHeader::wake_wanted,
// re-checks the written stamp, and only then sleeps. The writer stores the
// stamp and then exchanges wake_wanted with 0; both sides use seq_cst, so at
// least one of them sees the other: either the reader sees the message, or the
// writer sees the flag and wakes every sleeper (a woken reader whose message
// is not there yet sets the flag again). The writer makes no system call
// while every reader is awake (vLLM pings a socket on every enqueue), and only
// one per sleep episode otherwise: the exchange clears the flag, so a slowly
// scheduled sleeper does not cost the writer a wake-up per message.
// Two ways to sleep (RingWake):
//   kFutex: the reader reads RingHeader::wake_seq *before* re-checking the
//     stamp and FUTEX_WAITs on that value; the writer bumps wake_seq and
//     FUTEX_WAKEs. A bump between the re-check and the wait makes the wait
//     return at once, so nothing is lost. One syscall each side.
//   kZmq: the reader polls a CONFLATE SUB (at most one stale ping pending) and
//     the writer publishes a one-byte ping on an XPUB (vLLM's mechanism).
//
// Messages larger than a chunk: the writer claims the chunk as usual, sends
// [seq][payload...] on the local XPUB first and then stamps the chunk with the
// overflow flag; the reader that sees the flag receives from its SUB and checks
// seq. Remote readers get every message as [seq][payload...] on a TCP XPUB.
// Control frames (never 8 bytes long): "READY", "CLOSE".
//
// Readiness: the writer's three XPUBs are XPUB_VERBOSE, so every reader's
// subscription reaches the writer; once it has one per reader on each socket
// (and every local reader has registered in the segment) it publishes READY
// and unlinks the shm name. Subscriptions are counted on the notification
// socket too, so that no wake-up ping is sent before a reader can receive it.
//
// Dead peers: readers sleep in slices of at most 200 ms and check that the
// writer's pid is alive; a blocked writer checks its readers' pids and
// whether they detached. Either way the survivor gets kUnavailable instead of
// hanging.

#include "common/ipc/shm_ring.h"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <new>
#include <vector>

#include <zmq.hpp>

#include "common/ipc/futex.h"
#include "common/ipc/process_liveness.h"
#include "common/ipc/shm_segment.h"
#include "common/ipc/zmq_socket.h"

namespace llmserve::common::ipc {

namespace {

constexpr uint64_t kMagic = 0x676e6972766c6c6dull;  // "mllvring"
constexpr uint32_t kVersion = 1;
constexpr uint32_t kOverflow = 1;
constexpr size_t kAlign = 64;
constexpr uint32_t kMaxChunks = 1u << 16;
constexpr uint32_t kMaxReaders = 1024;
constexpr std::string_view kReady = "READY";
constexpr std::string_view kClose = "CLOSE";
constexpr auto kLivenessSlice = std::chrono::milliseconds(200);
constexpr auto kDataLinger = 2000;  // ms a closing writer may flush big messages

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<int32_t>::is_always_lock_free);

struct alignas(kAlign) RingHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t num_chunks;
  uint64_t chunk_bytes;
  uint32_t num_readers;
  int32_t writer_pid;
  alignas(kAlign) std::atomic<uint32_t> attached;  // local readers registered
  std::atomic<uint32_t> closed;                    // writer closed the ring
  alignas(kAlign) std::atomic<uint32_t> wake_wanted;  // a reader is (about to be) asleep
  std::atomic<uint32_t> wake_seq;                  // futex word (RingWake::kFutex)
};

struct alignas(kAlign) ChunkMeta {
  std::atomic<uint64_t> written;  // seq + 1 of the complete message here
  uint64_t size;                  // payload bytes
  uint32_t flags;                 // kOverflow: the payload is on the local SUB
};

struct alignas(kAlign) ReaderSlot {
  std::atomic<int32_t> pid;        // attached reader's process, 0 if free
  std::atomic<uint32_t> detached;  // the reader has gone away
};

size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Byte offsets of the regions for one ring geometry.
struct Layout {
  uint32_t num_chunks = 0;
  uint64_t chunk_bytes = 0;
  uint32_t num_readers = 0;
  size_t chunks_off = 0, readers_off = 0, stamps_off = 0, stamp_row = 0, data_off = 0,
         chunk_stride = 0, total = 0;

  static Layout For(uint32_t num_chunks, uint64_t chunk_bytes, uint32_t num_readers) {
    Layout l;
    l.num_chunks = num_chunks;
    l.chunk_bytes = chunk_bytes;
    l.num_readers = num_readers;
    l.chunks_off = RoundUp(sizeof(RingHeader), kAlign);
    l.readers_off = l.chunks_off + sizeof(ChunkMeta) * num_chunks;
    l.stamps_off = l.readers_off + sizeof(ReaderSlot) * num_readers;
    l.stamp_row = RoundUp(sizeof(std::atomic<uint64_t>) * num_chunks, kAlign);
    l.data_off = RoundUp(l.stamps_off + l.stamp_row * num_readers, 4096);
    l.chunk_stride = RoundUp(chunk_bytes, kAlign);
    l.total = l.data_off + l.chunk_stride * num_chunks;
    return l;
  }
};

// Typed views of a mapped segment.
struct RingView {
  Layout layout;
  char* base = nullptr;

  RingHeader& header() const { return *reinterpret_cast<RingHeader*>(base); }
  ChunkMeta& chunk(uint32_t c) const {
    return reinterpret_cast<ChunkMeta*>(base + layout.chunks_off)[c];
  }
  ReaderSlot& reader(uint32_t r) const {
    return reinterpret_cast<ReaderSlot*>(base + layout.readers_off)[r];
  }
  std::atomic<uint64_t>& stamp(uint32_t r, uint32_t c) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(base + layout.stamps_off +
                                                    layout.stamp_row * r)[c];
  }
  char* data(uint32_t c) const { return base + layout.data_off + layout.chunk_stride * c; }
};

void SleepFor(std::chrono::microseconds d) {
  timespec ts{static_cast<time_t>(d.count() / 1000000), static_cast<long>(d.count() % 1000000) * 1000};
  ::nanosleep(&ts, nullptr);
}

std::string SeqBytes(uint64_t seq) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &seq, 8);
  return out;
}

Status ValidateGeometry(uint32_t num_chunks, uint64_t chunk_bytes, uint32_t num_readers) {
  if (num_chunks == 0 || num_chunks > kMaxChunks) {
    return Status::InvalidArgument("shm ring: num_chunks must be in [1, 65536], got " +
                                   std::to_string(num_chunks));
  }
  if (chunk_bytes == 0 || chunk_bytes > (1ull << 32)) {
    return Status::InvalidArgument("shm ring: chunk_bytes must be in [1, 4 GiB], got " +
                                   std::to_string(chunk_bytes));
  }
  if (num_readers > kMaxReaders) {
    return Status::InvalidArgument("shm ring: at most 1024 local readers, got " +
                                   std::to_string(num_readers));
  }
  return Status::Ok();
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

// ---- handle ------------------------------------------------------------------

std::string ShmRingHandle::Serialize() const {
  std::string out = "llmserve-shm-ring-v1\n";
  out += "shm=" + shm_name + "\n";
  out += "chunks=" + std::to_string(num_chunks) + "\n";
  out += "chunk_bytes=" + std::to_string(chunk_bytes) + "\n";
  out += "local_readers=" + std::to_string(num_local_readers) + "\n";
  out += "remote_readers=" + std::to_string(num_remote_readers) + "\n";
  out += "local=" + local_endpoint + "\n";
  out += std::string("wake=") + (wake == RingWake::kFutex ? "futex" : "zmq") + "\n";
  out += "notify=" + notify_endpoint + "\n";
  out += "remote=" + remote_endpoint + "\n";
  return out;
}

StatusOr<ShmRingHandle> ShmRingHandle::Parse(std::string_view text) {
  auto bad = [](const std::string& why) {
    return Status::InvalidArgument("malformed shm ring handle: " + why);
  };
  std::map<std::string, std::string, std::less<>> fields;
  bool first = true;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (first) {
      if (line != "llmserve-shm-ring-v1") return bad("missing 'llmserve-shm-ring-v1' header");
      first = false;
      continue;
    }
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return bad("line without '=': " + std::string(line));
    if (!fields.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))).second) {
      return bad("duplicate key " + std::string(line.substr(0, eq)));
    }
  }
  if (first) return bad("empty");
  for (const char* key : {"shm", "chunks", "chunk_bytes", "local_readers", "remote_readers",
                          "local", "wake", "notify", "remote"}) {
    if (!fields.count(key)) return bad(std::string("missing key ") + key);
  }
  if (fields.size() != 9) return bad("unknown keys");
  ShmRingHandle h;
  h.shm_name = fields["shm"];
  if (h.shm_name.size() < 2 || h.shm_name[0] != '/' ||
      h.shm_name.find('/', 1) != std::string::npos) {
    return bad("shm name must be '/name', got '" + h.shm_name + "'");
  }
  if (!ParseNumber(fields["chunks"], &h.num_chunks) ||
      !ParseNumber(fields["chunk_bytes"], &h.chunk_bytes) ||
      !ParseNumber(fields["local_readers"], &h.num_local_readers) ||
      !ParseNumber(fields["remote_readers"], &h.num_remote_readers)) {
    return bad("non-numeric geometry");
  }
  LLMSERVE_RETURN_IF_ERROR(ValidateGeometry(h.num_chunks, h.chunk_bytes, h.num_local_readers));
  h.local_endpoint = fields["local"];
  h.notify_endpoint = fields["notify"];
  h.remote_endpoint = fields["remote"];
  if (fields["wake"] == "futex") {
    h.wake = RingWake::kFutex;
  } else if (fields["wake"] == "zmq") {
    h.wake = RingWake::kZmq;
  } else {
    return bad("wake must be futex or zmq");
  }
  if (h.num_local_readers > 0 &&
      (h.local_endpoint.rfind("ipc://", 0) != 0 ||
       (h.wake == RingWake::kZmq && h.notify_endpoint.rfind("ipc://", 0) != 0))) {
    return bad("local readers need ipc:// endpoints");
  }
  if (h.num_remote_readers > 0 && h.remote_endpoint.rfind("tcp://", 0) != 0) {
    return bad("remote readers need a tcp:// endpoint");
  }
  return h;
}

// ---- writer ------------------------------------------------------------------

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
  // ipc:// socket files are removed by ZeroMQ when the bound sockets close.
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
  uint32_t local_subs = 0, notify_subs = 0, remote_subs = 0;
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
    if (local_subs >= n_local && notify_subs >= n_notify && remote_subs >= n_remote &&
        attached >= n_local) {
      break;
    }
    if (deadline.Expired()) {
      return TimeoutError("shm ring: readers not ready (" + std::to_string(attached) + "/" +
                          std::to_string(n_local) + " local attached, " +
                          std::to_string(remote_subs) + "/" + std::to_string(n_remote) +
                          " remote subscribed)");
    }
    LLMSERVE_ASSIGN_OR_RETURN(int n, poller.Wait(deadline.Remaining(std::chrono::milliseconds(50))));
    if (n == 0) continue;
    if (poller.Readable(local_i)) LLMSERVE_RETURN_IF_ERROR(count(*m.local, &local_subs));
    if (poller.Readable(notify_i)) LLMSERVE_RETURN_IF_ERROR(count(*m.notify, &notify_subs));
    if (poller.Readable(remote_i)) LLMSERVE_RETURN_IF_ERROR(count(*m.remote, &remote_subs));
  }
  if (m.local) LLMSERVE_RETURN_IF_ERROR(SendBytes(*m.local, kReady));
  if (m.remote) LLMSERVE_RETURN_IF_ERROR(SendBytes(*m.remote, kReady));
  m.shm->Unlink();
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
    for (std::string_view part : parts) frames.emplace_back(part.data(), part.size());
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
  if (m.remote) LLMSERVE_RETURN_IF_ERROR(SendMultipart(*m.remote, frames));

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

// ---- reader ------------------------------------------------------------------

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
  uint64_t sleeps = 0;

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

uint64_t ShmRingReader::sleeps() const { return impl_->sleeps; }

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
    ++sleeps;
    FutexWait(&header.wake_seq, wake_seq, deadline.Remaining(kLivenessSlice));
    if (header.wake_seq.load(std::memory_order_acquire) == wake_seq &&
        !ProcessAlive(header.writer_pid) &&
        ring.chunk(c).written.load(std::memory_order_acquire) != want) {
      status = Status::Unavailable("shm ring: writer process died");
    }
  } else if (!runnable) {
    ++sleeps;
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
