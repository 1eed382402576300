#pragma once
// Shared-memory broadcast ring (vLLM's MessageQueue / ShmRingBuffer, see
// shm_ring.cc for the protocol): one writer, N local readers that read every
// message from a POSIX shm segment, and M remote readers (other hosts) that get
// every message over ZMQ PUB/SUB on TCP. Messages larger than a chunk travel
// out of band over an ipc:// PUB/SUB, with an overflow marker in their chunk.
// With one local reader it is the single-reader response ring.
//
// Life cycle: the writer Creates the ring and passes handle().Serialize() to
// its readers (command line, pipe); each reader Attaches; both sides call
// WaitUntilReady (the writer returns once every reader is attached, and only
// then may it Write). The shm name is unlinked as soon as every local reader is
// attached. Close() (or destroying the writer) makes readers return
// kUnavailable once they have read every message written before it.
//
// Threading: a writer or reader object is used by one thread at a time, except
// ShmRingReader::Cancel, which any thread (or a signal handler) may call.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/ipc/spin_wait.h"
#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

using Timeout = std::optional<std::chrono::milliseconds>;

// How a local reader that has spun and yielded without a message sleeps, and
// how the writer wakes it (only when some reader sleeps, either way).
enum class RingWake {
  kFutex,  // FUTEX_WAIT on a word in the segment; the writer's FUTEX_WAKE
           // reaches the sleeper directly (a few µs)
  kZmq,    // poll a CONFLATE SUB; the writer publishes a ping (vLLM's way;
           // the ping crosses two ZeroMQ I/O threads)
};

// Shape of a ring, chosen by its writer.
struct ShmRingConfig {
  // Number of chunks (messages in flight); vLLM uses 10.
  uint32_t num_chunks = 10;
  // Bytes per chunk; larger messages go out of band. vLLM uses 16 MiB.
  uint64_t chunk_bytes = 16ull << 20;
  // Readers on this host (read the shm segment).
  uint32_t num_local_readers = 1;
  // Readers on other hosts (receive every message over TCP).
  uint32_t num_remote_readers = 0;
  // Address the remote readers connect to (the writer binds a free port on
  // it); required when num_remote_readers > 0.
  std::string remote_host = "127.0.0.1";
  // Directory for the ipc:// sockets; empty means RuntimeDir().
  std::string runtime_dir;
  // How the writer waits for a chunk that a slow reader still holds.
  WaitPolicy wait;
  // How sleeping local readers are woken.
  RingWake wake = RingWake::kFutex;
};

// What a reader needs to attach, as written by the writer.
struct ShmRingHandle {
  std::string shm_name;            // POSIX shm name of the segment
  uint32_t num_chunks = 0;         // ring geometry, checked against the segment
  uint64_t chunk_bytes = 0;
  uint32_t num_local_readers = 0;
  uint32_t num_remote_readers = 0;
  std::string local_endpoint;      // ipc:// XPUB for overflow messages and READY
  RingWake wake = RingWake::kFutex;  // how sleeping local readers are woken
  std::string notify_endpoint;     // ipc:// XPUB that wakes them (kZmq only)
  std::string remote_endpoint;     // tcp:// XPUB for remote readers ("" if none)

  // One line per field ("key=value"), safe to pass on a command line.
  std::string Serialize() const;
  // Parses Serialize()'s output; kInvalidArgument on anything malformed.
  static StatusOr<ShmRingHandle> Parse(std::string_view text);
};

class ShmRingWriter final {
 public:
  // Creates the segment and binds the sockets; readers may attach afterwards.
  static StatusOr<std::unique_ptr<ShmRingWriter>> Create(const ShmRingConfig& config);
  ~ShmRingWriter();
  ShmRingWriter(const ShmRingWriter&) = delete;
  ShmRingWriter& operator=(const ShmRingWriter&) = delete;

  // What readers attach with.
  const ShmRingHandle& handle() const;
  // Blocks until every local and remote reader is attached and subscribed,
  // then tells them READY and unlinks the shm name. A call that timed out may
  // be repeated: it keeps what the earlier ones saw.
  Status WaitUntilReady(Timeout timeout = std::nullopt);
  // Broadcasts one message (the concatenation of `parts`). Blocks while the
  // next chunk is still held by a slow reader; on timeout nothing is written.
  Status Write(std::span<const std::string_view> parts, Timeout timeout = std::nullopt);
  // Broadcasts one message.
  Status Write(std::string_view message, Timeout timeout = std::nullopt);
  // Marks the ring closed and wakes every sleeping reader. Idempotent.
  void Close();
  // Number of messages written so far.
  uint64_t messages_written() const;
  // Number of wake-up notifications sent (sleeping readers woken).
  uint64_t notifications_sent() const;

 private:
  struct Impl;
  explicit ShmRingWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ShmRingReader final {
 public:
  // Attaches local reader `local_rank` (0..num_local_readers-1) to the ring.
  static StatusOr<std::unique_ptr<ShmRingReader>> AttachLocal(const ShmRingHandle& handle,
                                                              uint32_t local_rank,
                                                              const WaitPolicy& wait = {});
  // Attaches a remote reader (another host): messages arrive over TCP.
  static StatusOr<std::unique_ptr<ShmRingReader>> AttachRemote(const ShmRingHandle& handle);
  ~ShmRingReader();
  ShmRingReader(const ShmRingReader&) = delete;
  ShmRingReader& operator=(const ShmRingReader&) = delete;

  // Blocks until the writer says READY.
  Status WaitUntilReady(Timeout timeout = std::nullopt);
  // Returns the next message, in order. The view stays valid until the next
  // Read or Release (it points into shared memory: the writer cannot reuse the
  // chunk before then). Timeout: kUnavailable with IsTimeout() true. Closed
  // ring, dead writer or Cancel: kUnavailable.
  StatusOr<std::string_view> Read(Timeout timeout = std::nullopt);
  // Gives the chunk of the last Read back to the writer.
  void Release();
  // Reads the next message into `out` and releases its chunk at once.
  Status ReadCopy(std::string* out, Timeout timeout = std::nullopt);
  // Makes a blocked or later Read return kUnavailable; thread- and
  // async-signal-safe (for a death-pipe monitor or a signal handler).
  void Cancel();
  // Number of times Read went to sleep (futex or notification socket); any
  // thread may ask.
  uint64_t sleeps() const;

 private:
  struct Impl;
  explicit ShmRingReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmserve::common::ipc
