#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/ipc/shm_ring.h"
#include "common/ipc/zmq_socket.h"
#include "tests/common/ipc_test_util.h"
#include "tests/common/wait_until.h"

namespace llmserve::common::ipc {
namespace {

using std::chrono::milliseconds;
using testing::Child;
using testing::Scaled;
using testing::SplitMix;

constexpr auto kRingTimeout = milliseconds(20000);

// ---- payloads: [seq u64][checksum u64][body], size a pure function of seq ----

size_t SizeFor(uint64_t seq, uint64_t chunk_bytes, uint64_t overflow_every) {
  uint64_t s = seq * 0x2545f4914f6cdd1dull + 7;
  const uint64_t r = SplitMix(&s);
  if (overflow_every != 0 && r % overflow_every == 0) {
    return chunk_bytes + 1 + (r >> 20) % (2 * chunk_bytes);  // out of band
  }
  return 16 + (r >> 8) % 1009;  // 16 .. 1024 bytes
}

uint64_t Checksum(const char* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ull;
  return h;
}

void MakePayload(uint64_t seq, size_t size, std::string* out) {
  out->resize(size);
  uint64_t state = seq;
  for (size_t i = 16; i < size; i += 8) {
    const uint64_t w = SplitMix(&state);
    std::memcpy(out->data() + i, &w, std::min<size_t>(8, size - i));
  }
  const uint64_t sum = Checksum(out->data() + 16, size - 16);
  std::memcpy(out->data(), &seq, 8);
  std::memcpy(out->data() + 8, &sum, 8);
}

// Empty string if `msg` is message `seq` intact, else what is wrong.
std::string CheckPayload(std::string_view msg, uint64_t seq, size_t expected_size) {
  if (msg.size() != expected_size) {
    return "message " + std::to_string(seq) + ": size " + std::to_string(msg.size()) +
           " != " + std::to_string(expected_size);
  }
  uint64_t got_seq, sum;
  std::memcpy(&got_seq, msg.data(), 8);
  std::memcpy(&sum, msg.data() + 8, 8);
  if (got_seq != seq) {
    return "expected message " + std::to_string(seq) + ", got " + std::to_string(got_seq);
  }
  if (sum != Checksum(msg.data() + 16, msg.size() - 16)) {
    return "message " + std::to_string(seq) + ": checksum mismatch";
  }
  return "";
}

struct StressSpec {
  uint64_t messages = 0;        // how many to write (at most)
  uint64_t overflow_every = 0;  // about one in this many is out of band; 0: never
  uint64_t chunk_bytes = 0;
  uint64_t min_messages = 0;    // written even when max_seconds have passed
  std::chrono::seconds max_seconds{4};
};

// Body of a reader: attaches and reads verified messages until the writer's
// end marker (an 8-byte message holding the count), then expects the ring to
// be closed. Returns 0 on success.
int ReaderBody(const std::string& handle_text, int local_rank, const StressSpec& spec) {
  auto handle = ShmRingHandle::Parse(handle_text);
  if (!handle.ok()) {
    std::fprintf(stderr, "parse: %s\n", handle.status().ToString().c_str());
    return 2;
  }
  auto reader = local_rank >= 0 ? ShmRingReader::AttachLocal(*handle, local_rank)
                                : ShmRingReader::AttachRemote(*handle);
  if (!reader.ok()) {
    std::fprintf(stderr, "attach: %s\n", reader.status().ToString().c_str());
    return 3;
  }
  Status ready = (*reader)->WaitUntilReady(kRingTimeout);
  if (!ready.ok()) {
    std::fprintf(stderr, "ready: %s\n", ready.ToString().c_str());
    return 4;
  }
  for (uint64_t seq = 0;; ++seq) {
    auto msg = (*reader)->Read(kRingTimeout);
    if (!msg.ok()) {
      std::fprintf(stderr, "reader %d: read %llu: %s\n", local_rank,
                   static_cast<unsigned long long>(seq), msg.status().ToString().c_str());
      return 5;
    }
    if (msg->size() == 8) {  // end marker
      uint64_t count;
      std::memcpy(&count, msg->data(), 8);
      if (count != seq || count < spec.min_messages) {
        std::fprintf(stderr, "reader %d: writer sent %llu messages, read %llu\n", local_rank,
                     static_cast<unsigned long long>(count), static_cast<unsigned long long>(seq));
        return 8;
      }
      break;
    }
    const std::string error =
        CheckPayload(*msg, seq, SizeFor(seq, spec.chunk_bytes, spec.overflow_every));
    if (!error.empty()) {
      std::fprintf(stderr, "reader %d: %s\n", local_rank, error.c_str());
      return 6;
    }
  }
  auto end = (*reader)->Read(kRingTimeout);
  if (end.ok() || IsTimeout(end.status())) {
    std::fprintf(stderr, "reader %d: expected the ring closed, got %s\n", local_rank,
                 end.ok() ? "a message" : end.status().ToString().c_str());
    return 7;
  }
  return 0;
}

// Writes spec.messages payloads, or fewer if spec.max_seconds pass first (a
// loaded CI machine), then the end marker. Returns how many were written.
StatusOr<uint64_t> WriteAll(ShmRingWriter& writer, const StressSpec& spec) {
  std::string payload;
  const auto stop = std::chrono::steady_clock::now() + spec.max_seconds;
  uint64_t seq = 0;
  for (; seq < spec.messages; ++seq) {
    if ((seq & 1023) == 0 && seq >= spec.min_messages && std::chrono::steady_clock::now() > stop) {
      break;
    }
    MakePayload(seq, SizeFor(seq, spec.chunk_bytes, spec.overflow_every), &payload);
    LLMSERVE_RETURN_IF_ERROR(writer.Write(payload, kRingTimeout));
  }
  LLMSERVE_RETURN_IF_ERROR(writer.Write(std::string_view(reinterpret_cast<const char*>(&seq), 8), kRingTimeout));
  return seq;
}

// Writer in this process, `local` reader processes (+ `remote` over TCP).
void RunStress(uint32_t local, uint32_t remote, uint32_t chunks, const StressSpec& spec,
               RingWake wake = RingWake::kFutex) {
  std::vector<std::unique_ptr<Child>> children;
  for (uint32_t r = 0; r < local; ++r) {
    children.push_back(std::make_unique<Child>(
        [r, spec](const std::string& h) { return ReaderBody(h, static_cast<int>(r), spec); }));
  }
  for (uint32_t r = 0; r < remote; ++r) {
    children.push_back(
        std::make_unique<Child>([spec](const std::string& h) { return ReaderBody(h, -1, spec); }));
  }
  ShmRingConfig config;
  config.num_chunks = chunks;
  config.chunk_bytes = spec.chunk_bytes;
  config.num_local_readers = local;
  config.num_remote_readers = remote;
  config.wake = wake;
  auto writer = ShmRingWriter::Create(config);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (auto& child : children) child->Send((*writer)->handle().Serialize());
  ASSERT_TRUE((*writer)->WaitUntilReady(kRingTimeout).ok());
  const auto start = std::chrono::steady_clock::now();
  StatusOr<uint64_t> written = WriteAll(**writer, spec);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (*writer)->Close();
  for (size_t i = 0; i < children.size(); ++i) {
    EXPECT_EQ(children[i]->Wait(kRingTimeout), 0) << "reader " << i;
  }
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  std::printf("%llu messages to %u local + %u remote readers in %.2f s (%.0f msg/s), %llu wake-ups\n",
              static_cast<unsigned long long>(*written), local, remote, secs,
              static_cast<double>(*written) / secs,
              static_cast<unsigned long long>((*writer)->notifications_sent()));
}

// ---- handle ------------------------------------------------------------------

TEST(ShmRingHandle, RoundTripsAndRejectsMalformedText) {
  ShmRingHandle h;
  h.shm_name = "/llmserve-ring-1-abc";
  h.num_chunks = 10;
  h.chunk_bytes = 16 << 20;
  h.num_local_readers = 3;
  h.num_remote_readers = 1;
  h.local_endpoint = "ipc:///tmp/a";
  h.wake = RingWake::kZmq;
  h.notify_endpoint = "ipc:///tmp/b";
  h.remote_endpoint = "tcp://10.0.0.1:5555";
  auto parsed = ShmRingHandle::Parse(h.Serialize());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Serialize(), h.Serialize());
  EXPECT_EQ(parsed->chunk_bytes, h.chunk_bytes);

  const std::string good = h.Serialize();
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const std::string& bad :
       {std::string(), std::string("garbage"), replace("llmserve-shm-ring-v1", "v0"),
        replace("chunks=10", "chunks=ten"), replace("chunks=10", "chunks=0"),
        replace("chunk_bytes=16777216", "chunk_bytes=-1"), replace("shm=/", "shm="),
        replace("local=ipc://", "local=tcp://"), replace("remote=tcp://", "remote=ipc://"),
        replace("notify=", "nothing="), replace("wake=zmq", "wake=pigeon"),
        replace("notify=ipc://", "notify=tcp://"), good + "extra=1\n", good + "chunks=3\n",
        replace("local_readers=3", "local_readers=99999")}) {
    auto p = ShmRingHandle::Parse(bad);
    EXPECT_FALSE(p.ok()) << bad;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

// ---- in-process behaviour (readers on threads) ----------------------------------

struct InProcessRing {
  std::unique_ptr<ShmRingWriter> writer;
  std::vector<std::unique_ptr<ShmRingReader>> readers;
};

InProcessRing MakeRing(uint32_t readers, uint32_t chunks = 4, uint64_t chunk_bytes = 256,
                       RingWake wake = RingWake::kFutex) {
  InProcessRing ring;
  ShmRingConfig config;
  config.wake = wake;
  config.num_chunks = chunks;
  config.chunk_bytes = chunk_bytes;
  config.num_local_readers = readers;
  auto writer = ShmRingWriter::Create(config);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  ring.writer = std::move(writer).value();
  for (uint32_t r = 0; r < readers; ++r) {
    auto reader = ShmRingReader::AttachLocal(ring.writer->handle(), r);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    ring.readers.push_back(std::move(reader).value());
  }
  std::vector<std::thread> waits;
  for (auto& reader : ring.readers) {
    waits.emplace_back([&reader] { EXPECT_TRUE(reader->WaitUntilReady(kRingTimeout).ok()); });
  }
  EXPECT_TRUE(ring.writer->WaitUntilReady(kRingTimeout).ok());
  for (auto& t : waits) t.join();
  return ring;
}

TEST(ShmRing, BroadcastsInOrderIncludingEmptyPartsAndOverflow) {
  InProcessRing ring = MakeRing(2, 8);
  const std::string big(1000, 'b');  // > 256-byte chunks: out of band
  const std::string_view parts[] = {"con", "", "cat"};
  ASSERT_TRUE(ring.writer->Write("first").ok());
  ASSERT_TRUE(ring.writer->Write(parts).ok());
  ASSERT_TRUE(ring.writer->Write("").ok());
  ASSERT_TRUE(ring.writer->Write(big).ok());
  const std::string_view big_parts[] = {std::string_view(big).substr(0, 600),
                                        std::string_view(big).substr(600)};
  ASSERT_TRUE(ring.writer->Write(big_parts).ok());
  ASSERT_TRUE(ring.writer->Write("last").ok());
  for (auto& reader : ring.readers) {
    std::string got;
    for (const std::string& want : {std::string("first"), std::string("concat"), std::string(),
                                    big, big, std::string("last")}) {
      ASSERT_TRUE(reader->ReadCopy(&got, kRingTimeout).ok());
      EXPECT_EQ(got, want);
    }
  }
  EXPECT_EQ(ring.writer->messages_written(), 6u);
}

TEST(ShmRing, NamesAreRemovedOnceReadersAttached) {
  for (RingWake wake : {RingWake::kFutex, RingWake::kZmq}) {
    InProcessRing ring = MakeRing(1, 4, 256, wake);
    const ShmRingHandle& h = ring.writer->handle();
    auto late = ShmRingReader::AttachLocal(h, 0);
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.status().code(), StatusCode::kNotFound) << late.status().ToString();
    EXPECT_NE(::access(("/dev/shm" + h.shm_name).c_str(), F_OK), 0);
    EXPECT_NE(::access(h.local_endpoint.substr(6).c_str(), F_OK), 0) << h.local_endpoint;
    if (wake == RingWake::kZmq) {
      EXPECT_NE(::access(h.notify_endpoint.substr(6).c_str(), F_OK), 0) << h.notify_endpoint;
    }
    // The ring still works without its names.
    ASSERT_TRUE(ring.writer->Write("after unlink").ok());
    std::string got;
    ASSERT_TRUE(ring.readers[0]->ReadCopy(&got, kRingTimeout).ok());
    EXPECT_EQ(got, "after unlink");
  }
}

TEST(ShmRing, RejectsBadAttachAndEarlyWrite) {
  ShmRingConfig config;
  config.num_chunks = 2;
  config.chunk_bytes = 64;
  config.num_local_readers = 1;
  auto writer = ShmRingWriter::Create(config);
  ASSERT_TRUE(writer.ok());
  EXPECT_FALSE((*writer)->Write("too early").ok());
  EXPECT_FALSE(ShmRingReader::AttachLocal((*writer)->handle(), 1).ok());  // rank out of range
  EXPECT_FALSE(ShmRingReader::AttachRemote((*writer)->handle()).ok());    // no remote readers
  ShmRingHandle wrong = (*writer)->handle();
  wrong.chunk_bytes = 128;  // geometry does not match the segment
  EXPECT_FALSE(ShmRingReader::AttachLocal(wrong, 0).ok());
  auto first = ShmRingReader::AttachLocal((*writer)->handle(), 0);
  ASSERT_TRUE(first.ok());
  auto twice = ShmRingReader::AttachLocal((*writer)->handle(), 0);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("already attached"), std::string::npos);
  config.num_chunks = 0;
  EXPECT_FALSE(ShmRingWriter::Create(config).ok());
  config.num_chunks = 2;
  config.num_local_readers = 0;
  EXPECT_FALSE(ShmRingWriter::Create(config).ok());  // no readers at all
}

TEST(ShmRing, ReadyTimesOutWhenAReaderNeverAttaches) {
  ShmRingConfig config;
  config.num_local_readers = 2;
  config.chunk_bytes = 1024;
  auto writer = ShmRingWriter::Create(config);
  ASSERT_TRUE(writer.ok());
  auto reader = ShmRingReader::AttachLocal((*writer)->handle(), 0);
  ASSERT_TRUE(reader.ok());
  Status ready = (*writer)->WaitUntilReady(milliseconds(100));
  EXPECT_TRUE(IsTimeout(ready)) << ready.ToString();
  EXPECT_TRUE(IsTimeout((*reader)->WaitUntilReady(milliseconds(50))));
}

TEST(ShmRing, ReadTimesOutAndLaterReadsStillWork) {
  InProcessRing ring = MakeRing(1);
  const auto start = std::chrono::steady_clock::now();
  auto none = ring.readers[0]->Read(milliseconds(30));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(29));
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(IsTimeout(none.status())) << none.status().ToString();
  auto poll = ring.readers[0]->Read(milliseconds(0));
  EXPECT_TRUE(IsTimeout(poll.status()));
  ASSERT_TRUE(ring.writer->Write("after").ok());
  auto got = ring.readers[0]->Read(milliseconds(0));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "after");
}

class ShmRingWake : public ::testing::TestWithParam<RingWake> {};

TEST_P(ShmRingWake, SleepingReaderIsWokenByWriteAndByClose) {
  InProcessRing ring = MakeRing(1, 4, 256, GetParam());
  ShmRingReader& reader = *ring.readers[0];
  std::atomic<int> stage{0};
  uint64_t sleeps_in_first = 0;  // written before stage becomes 1
  std::string first;
  Status second;
  std::thread t([&] {
    auto msg = reader.Read();  // no timeout: sleeps on the notification socket
    if (msg.ok()) first = std::string(*msg);
    sleeps_in_first = reader.sleeps();
    stage = 1;
    second = reader.Read().status();  // woken by Close
    stage = 2;
  });
  // Wait until the reader has gone to sleep, so the wake-up path is exercised.
  EXPECT_TRUE(test_util::WaitUntil([&] { return reader.sleeps() >= 1; }, kRingTimeout));
  ASSERT_TRUE(ring.writer->Write("wake").ok());
  EXPECT_TRUE(test_util::WaitUntil([&] { return stage.load() >= 1; }, kRingTimeout));
  EXPECT_GE(ring.writer->notifications_sent(), 1u);
  // And asleep again in its second Read, so that Close has someone to wake.
  EXPECT_TRUE(test_util::WaitUntil([&] { return reader.sleeps() > sleeps_in_first; }, kRingTimeout));
  ring.writer->Close();
  t.join();
  EXPECT_EQ(first, "wake");
  EXPECT_EQ(second.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(IsTimeout(second)) << second.ToString();
  EXPECT_FALSE(ring.writer->Write("after close").ok());
}

TEST(ShmRing, MessagesWrittenBeforeCloseAreStillDelivered) {
  InProcessRing ring = MakeRing(1, 4, 64);
  ASSERT_TRUE(ring.writer->Write("a").ok());
  ASSERT_TRUE(ring.writer->Write(std::string(500, 'o')).ok());  // out of band
  ring.writer->Close();
  std::string got;
  ASSERT_TRUE(ring.readers[0]->ReadCopy(&got).ok());
  EXPECT_EQ(got, "a");
  ASSERT_TRUE(ring.readers[0]->ReadCopy(&got).ok());
  EXPECT_EQ(got, std::string(500, 'o'));
  EXPECT_EQ(ring.readers[0]->Read().status().code(), StatusCode::kUnavailable);
}

TEST_P(ShmRingWake, CancelWakesASleepingReader) {
  InProcessRing ring = MakeRing(1, 4, 256, GetParam());
  Status status;
  std::thread t([&] { status = ring.readers[0]->Read().status(); });
  EXPECT_TRUE(test_util::WaitUntil([&] { return ring.readers[0]->sleeps() >= 1; }, kRingTimeout));
  ring.readers[0]->Cancel();
  t.join();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("cancelled"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Wake, ShmRingWake, ::testing::Values(RingWake::kFutex, RingWake::kZmq),
                         [](const ::testing::TestParamInfo<RingWake>& info) {
                           return std::string(info.param == RingWake::kFutex ? "Futex" : "Zmq");
                         });

TEST(ShmRing, WriterBlockedBySlowReaderTimesOutThenResumes) {
  InProcessRing ring = MakeRing(2, 3, 64);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ring.writer->Write(std::to_string(i)).ok());
  // Reader 0 keeps up; reader 1 has read nothing, so chunk 0 is still held.
  std::string got;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ring.readers[0]->ReadCopy(&got).ok());
  Status full = ring.writer->Write("3", milliseconds(30));
  EXPECT_TRUE(IsTimeout(full)) << full.ToString();
  // Holding a message (Read without Release) also holds its chunk.
  auto held = ring.readers[1]->Read();
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(*held, "0");
  EXPECT_TRUE(IsTimeout(ring.writer->Write("3", milliseconds(10))));
  // A write without a timeout waits for the release and then goes through; it
  // cannot have finished before the release began.
  std::atomic<bool> releasing{false};
  bool finished_after_release = false;
  Status resumed;
  std::thread writer([&] {
    resumed = ring.writer->Write("3", kRingTimeout);
    finished_after_release = releasing.load();
  });
  releasing = true;
  ring.readers[1]->Release();
  writer.join();
  ASSERT_TRUE(resumed.ok()) << resumed.ToString();
  EXPECT_TRUE(finished_after_release);
  for (int i = 1; i < 4; ++i) {
    ASSERT_TRUE(ring.readers[1]->ReadCopy(&got).ok());
    EXPECT_EQ(got, std::to_string(i));
  }
  ASSERT_TRUE(ring.readers[0]->ReadCopy(&got).ok());
  EXPECT_EQ(got, "3");
}

// ---- processes -------------------------------------------------------------------

TEST(ShmRingStress, OneReaderProcess) {
  RunStress(1, 0, 32, {Scaled(2000000), 5000, 2048, Scaled(100000)});
}

TEST(ShmRingStress, TwoReaderProcesses) {
  RunStress(2, 0, 32, {Scaled(1000000), 5000, 2048, Scaled(100000)});
}

TEST(ShmRingStress, FourReaderProcesses) {
  RunStress(4, 0, 32, {Scaled(500000), 5000, 2048, Scaled(50000)});
}

TEST(ShmRingStress, TwoReaderProcessesWokenOverZmq) {
  RunStress(2, 0, 32, {Scaled(300000), 5000, 2048, Scaled(50000), std::chrono::seconds(3)},
            RingWake::kZmq);
}

TEST(ShmRingStress, OverflowHeavyWithVllmChunkCount) {
  RunStress(2, 0, 10, {Scaled(20000), 10, 4096, Scaled(20000)});
}

TEST(ShmRingStress, LocalAndRemoteReaders) {
  RunStress(2, 1, 16, {Scaled(100000), 2000, 2048, Scaled(20000)});
}

TEST(ShmRing, LateReaderGetsEverythingAfterReadiness) {
  const StressSpec spec{Scaled(20000), 100, 1024, Scaled(20000)};
  Child early([spec](const std::string& h) { return ReaderBody(h, 0, spec); });
  Child late([spec](const std::string& h) { return ReaderBody(h, 1, spec); });
  ShmRingConfig config;
  config.num_chunks = 8;
  config.chunk_bytes = spec.chunk_bytes;
  config.num_local_readers = 2;
  auto writer = ShmRingWriter::Create(config);
  ASSERT_TRUE(writer.ok());
  early.Send((*writer)->handle().Serialize());
  // The late reader has not been given the handle: the ring cannot be ready.
  Status without_late = (*writer)->WaitUntilReady(milliseconds(100));
  EXPECT_TRUE(IsTimeout(without_late)) << without_late.ToString();
  late.Send((*writer)->handle().Serialize());
  ASSERT_TRUE((*writer)->WaitUntilReady(kRingTimeout).ok());
  auto written = WriteAll(**writer, spec);
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, spec.messages);
  (*writer)->Close();
  EXPECT_EQ(early.Wait(kRingTimeout), 0);
  EXPECT_EQ(late.Wait(kRingTimeout), 0);
}

TEST_P(ShmRingWake, ReaderNoticesWriterDeath) {
  const RingWake wake = GetParam();
  // The writer is the child; it writes one message and dies without Close.
  int handle_pipe[2];
  ASSERT_EQ(::pipe(handle_pipe), 0);
  int die_pipe[2];  // the parent closes its end once the last words have arrived
  ASSERT_EQ(::pipe(die_pipe), 0);
  Child writer_child([&](const std::string&) {
    ShmRingConfig config;
    config.wake = wake;
    config.num_chunks = 4;
    config.chunk_bytes = 256;
    auto writer = ShmRingWriter::Create(config);
    if (!writer.ok()) return 2;
    const std::string h = (*writer)->handle().Serialize();
    if (::write(handle_pipe[1], h.data(), h.size()) != static_cast<ssize_t>(h.size())) return 3;
    ::close(handle_pipe[1]);
    if (!(*writer)->WaitUntilReady(kRingTimeout).ok()) return 4;
    if (!(*writer)->Write("last words").ok()) return 5;
    ::close(die_pipe[1]);
    char byte;
    (void)!::read(die_pipe[0], &byte, 1);  // EOF once the reader has the message
    ::_exit(0);  // crash: no Close, no destructors
  });
  ::close(handle_pipe[1]);
  ::close(die_pipe[0]);
  writer_child.Send("");
  std::string text;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(handle_pipe[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(handle_pipe[0]);
  auto handle = ShmRingHandle::Parse(text);
  ASSERT_TRUE(handle.ok()) << handle.status().ToString() << " [" << text << "]";
  auto reader = ShmRingReader::AttachLocal(*handle, 0);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE((*reader)->WaitUntilReady(kRingTimeout).ok());
  std::string got;
  ASSERT_TRUE((*reader)->ReadCopy(&got, kRingTimeout).ok());
  EXPECT_EQ(got, "last words");
  ::close(die_pipe[1]);
  EXPECT_EQ(writer_child.Wait(kRingTimeout), 0);
  const auto start = std::chrono::steady_clock::now();
  Status status = (*reader)->Read().status();  // no timeout: must not hang
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("writer process died"), std::string::npos) << status.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

TEST(ShmRing, WriterNoticesReaderDeath) {
  Child reader_child([](const std::string& h) {
    auto handle = ShmRingHandle::Parse(h);
    if (!handle.ok()) return 2;
    auto reader = ShmRingReader::AttachLocal(*handle, 0);
    if (!reader.ok() || !(*reader)->WaitUntilReady(kRingTimeout).ok()) return 3;
    ::pause();  // until the parent kills it
    return 0;
  });
  ShmRingConfig config;
  config.num_chunks = 2;
  config.chunk_bytes = 64;
  auto writer = ShmRingWriter::Create(config);
  ASSERT_TRUE(writer.ok());
  reader_child.Send((*writer)->handle().Serialize());
  ASSERT_TRUE((*writer)->WaitUntilReady(kRingTimeout).ok());
  ASSERT_TRUE((*writer)->Write("0").ok());
  ASSERT_TRUE((*writer)->Write("1").ok());
  reader_child.Kill();
  Status status = (*writer)->Write("2");  // ring full, reader dead: no hang
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("gone away"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace llmserve::common::ipc
