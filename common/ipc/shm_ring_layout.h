#pragma once
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
//
// This header is internal to the ring's implementation files.

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/status.h"

namespace llmserve::common::ipc::shm_ring_internal {

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

inline size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

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

inline void SleepFor(std::chrono::microseconds d) {
  timespec ts{static_cast<time_t>(d.count() / 1000000), static_cast<long>(d.count() % 1000000) * 1000};
  ::nanosleep(&ts, nullptr);
}

inline std::string SeqBytes(uint64_t seq) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &seq, 8);
  return out;
}

inline Status ValidateGeometry(uint32_t num_chunks, uint64_t chunk_bytes, uint32_t num_readers) {
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

}  // namespace llmserve::common::ipc::shm_ring_internal
