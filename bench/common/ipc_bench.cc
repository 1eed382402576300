// Latency of the inter-process primitives, between real processes (fork).
//
//   build/bin/ipc_bench                       # everything
//   build/bin/ipc_bench --benchmark_filter=Ring
//
// Reported counters (microseconds):
//   p50_us / p99_us      one-way latency: from Write to the *last* reader
//                        having the message (clock: CLOCK_MONOTONIC, shared by
//                        all processes), or per collective for the all-reduce;
//   rtt_p50_us / rtt_p99_us  broadcast + every reader's answer on its own
//                        single-reader response ring (the executor's pattern).
// Baselines measured in the same run: BM_CacheLinePingPong (two processes
// handing one shared cache line back and forth: the physical floor of any
// shared-memory hand-off on this machine) and BM_ZmqIpcPingPong (ZeroMQ over
// ipc://, what a socket-only design would pay per hop).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include "common/ipc/shm_allreduce.h"
#include "common/ipc/shm_ring.h"
#include "common/ipc/spin_wait.h"
#include "common/ipc/zmq_socket.h"
#include "tests/common/ipc_test_util.h"

namespace llmserve::common::ipc {
namespace {

using std::chrono::milliseconds;
using testing::Child;

constexpr auto kLong = milliseconds(60000);

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

void ReportPercentiles(benchmark::State& state, const std::vector<double>& one_way_us,
                       const std::vector<double>& rtt_us) {
  state.counters["p50_us"] = Percentile(one_way_us, 0.50);
  state.counters["p99_us"] = Percentile(one_way_us, 0.99);
  if (!rtt_us.empty()) {
    state.counters["rtt_p50_us"] = Percentile(rtt_us, 0.50);
    state.counters["rtt_p99_us"] = Percentile(rtt_us, 0.99);
  }
}

// A pipe the child writes one length-prefixed string to.
struct BackChannel {
  int fds[2];
  BackChannel() {
    if (::pipe(fds) != 0) std::abort();
  }
  ~BackChannel() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void Put(const std::string& s) {
    const uint64_t n = s.size();
    if (::write(fds[1], &n, 8) != 8 ||
        ::write(fds[1], s.data(), s.size()) != static_cast<ssize_t>(s.size())) {
      std::abort();
    }
  }
  std::string Get() {
    uint64_t n = 0;
    if (::read(fds[0], &n, 8) != 8) return "";
    std::string s(n, '\0');
    size_t off = 0;
    while (off < n) {
      const ssize_t r = ::read(fds[0], s.data() + off, n - off);
      if (r <= 0) return "";
      off += static_cast<size_t>(r);
    }
    return s;
  }
};

// Reader process: answers each broadcast [send_ns][...] with its one-way
// latency in ns on its own response ring; an empty message ends it.
int RingReaderProcess(const std::string& handle_text, uint32_t rank, BackChannel* back) {
  auto handle = ShmRingHandle::Parse(handle_text);
  if (!handle.ok()) return 2;
  auto reader = ShmRingReader::AttachLocal(*handle, rank);
  if (!reader.ok()) return 3;
  ShmRingConfig config;
  config.num_chunks = 4;
  config.chunk_bytes = 4096;
  config.wake = handle->wake;
  auto response = ShmRingWriter::Create(config);
  if (!response.ok()) return 4;
  back->Put((*response)->handle().Serialize());
  if (!(*reader)->WaitUntilReady(kLong).ok() || !(*response)->WaitUntilReady(kLong).ok()) return 5;
  for (;;) {
    auto msg = (*reader)->Read(kLong);
    if (!msg.ok()) return 6;
    if (msg->empty()) return 0;
    int64_t sent;
    std::memcpy(&sent, msg->data(), 8);
    const int64_t latency = NowNs() - sent;
    (*reader)->Release();
    if (!(*response)->Write(std::string_view(reinterpret_cast<const char*>(&latency), 8), kLong).ok()) {
      return 7;
    }
  }
}

// Broadcast `size`-byte messages to state.range(0) reader processes; each
// message waits for every answer, then (state.range(2) > 0) idles that many µs
// so that readers fall asleep and the notification path is measured.
void BM_RingBroadcast(benchmark::State& state) {
  const uint32_t readers = static_cast<uint32_t>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  const auto idle = std::chrono::microseconds(state.range(2));
  const RingWake wake = state.range(3) == 1 ? RingWake::kZmq : RingWake::kFutex;
  std::vector<std::unique_ptr<BackChannel>> backs;
  std::vector<std::unique_ptr<Child>> children;
  for (uint32_t r = 0; r < readers; ++r) {
    backs.push_back(std::make_unique<BackChannel>());
    BackChannel* back = backs.back().get();
    children.push_back(std::make_unique<Child>(
        [r, back](const std::string& h) { return RingReaderProcess(h, r, back); }));
  }
  ShmRingConfig config;  // vLLM's geometry: 10 chunks of 16 MiB
  config.num_local_readers = readers;
  config.wake = wake;
  auto writer = ShmRingWriter::Create(config);
  if (!writer.ok()) {
    state.SkipWithError(writer.status().ToString().c_str());
    return;
  }
  for (auto& child : children) child->Send((*writer)->handle().Serialize());
  std::vector<std::unique_ptr<ShmRingReader>> responses;
  for (auto& back : backs) {
    auto handle = ShmRingHandle::Parse(back->Get());
    auto response = handle.ok() ? ShmRingReader::AttachLocal(*handle, 0)
                                : StatusOr<std::unique_ptr<ShmRingReader>>(handle.status());
    if (!response.ok()) {
      state.SkipWithError(response.status().ToString().c_str());
      return;
    }
    responses.push_back(std::move(response).value());
  }
  if (!(*writer)->WaitUntilReady(kLong).ok()) {
    state.SkipWithError("broadcast ring not ready");
    return;
  }
  for (auto& response : responses) {
    if (!response->WaitUntilReady(kLong).ok()) {
      state.SkipWithError("response ring not ready");
      return;
    }
  }
  std::string message(size, 'm');
  std::vector<double> one_way_us, rtt_us;
  for (auto _ : state) {
    const int64_t start = NowNs();
    std::memcpy(message.data(), &start, 8);
    if (!(*writer)->Write(message, kLong).ok()) {
      state.SkipWithError("write failed");
      break;
    }
    int64_t worst = 0;
    for (auto& response : responses) {
      auto answer = response->Read(kLong);
      if (!answer.ok() || answer->size() != 8) {
        state.SkipWithError("no answer");
        break;
      }
      int64_t latency;
      std::memcpy(&latency, answer->data(), 8);
      worst = std::max(worst, latency);
      response->Release();
    }
    rtt_us.push_back(static_cast<double>(NowNs() - start) / 1e3);
    one_way_us.push_back(static_cast<double>(worst) / 1e3);
    // Pacing, not synchronisation: the idle gap lets the readers fall asleep.
    if (idle.count() > 0) std::this_thread::sleep_for(idle);
  }
  (void)(*writer)->Write("", kLong);
  for (auto& child : children) child->Wait(kLong);
  ReportPercentiles(state, one_way_us, rtt_us);
  state.counters["reader_wakeups"] = static_cast<double>((*writer)->notifications_sent());
}
BENCHMARK(BM_RingBroadcast)
    ->ArgNames({"readers", "bytes", "idle_us", "zmq_wake"})
    ->Args({1, 64, 0, 0})->Args({2, 64, 0, 0})->Args({4, 64, 0, 0})
    ->Args({1, 4096, 0, 0})->Args({2, 4096, 0, 0})
    ->Iterations(20000)->UseRealTime()->Unit(benchmark::kMicrosecond);
// Readers idle past their spin/yield budget (1 ms): every message wakes them.
BENCHMARK(BM_RingBroadcast)
    ->ArgNames({"readers", "bytes", "idle_us", "zmq_wake"})
    ->Args({1, 64, 3000, 0})->Args({1, 64, 3000, 1})->Args({2, 64, 3000, 0})->Args({2, 64, 3000, 1})
    ->Iterations(300)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Two processes hand one shared cache line back and forth (spinning): the
// floor for any shared-memory hand-off. Reports one-way time (half a round).
void BM_CacheLinePingPong(benchmark::State& state) {
  void* mem = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  auto* line = new (mem) std::atomic<int64_t>(0);
  const int64_t rounds = state.max_iterations;
  Child peer([line, rounds](const std::string&) {
    for (int64_t i = 0; i < rounds; ++i) {
      while (line->load(std::memory_order_acquire) != 2 * i + 1) CpuRelax();
      line->store(2 * i + 2, std::memory_order_release);
    }
    return 0;
  });
  peer.Send("");
  std::vector<double> one_way_us;
  int64_t i = 0;
  for (auto _ : state) {
    const int64_t start = NowNs();
    line->store(2 * i + 1, std::memory_order_release);
    while (line->load(std::memory_order_acquire) != 2 * i + 2) CpuRelax();
    one_way_us.push_back(static_cast<double>(NowNs() - start) / 2e3);
    ++i;
  }
  peer.Wait(kLong);
  ::munmap(mem, 4096);
  ReportPercentiles(state, one_way_us, {});
}
BENCHMARK(BM_CacheLinePingPong)->Iterations(20000)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ZeroMQ PAIR over ipc:// between two processes; one-way = half a round trip.
void BM_ZmqIpcPingPong(benchmark::State& state) {
  auto endpoint = MakeIpcEndpoint("bench");
  if (!endpoint.ok()) {
    state.SkipWithError("no ipc endpoint");
    return;
  }
  const int64_t rounds = state.max_iterations;
  Child peer([rounds](const std::string& ep) {
    zmq::context_t context(1);
    auto socket = MakeSocket(context, zmq::socket_type::pair, ep, SocketMode::kConnect);
    if (!socket.ok()) return 2;
    for (int64_t i = 0; i < rounds; ++i) {
      auto msg = RecvMultipart(*socket);
      if (!msg.ok() || !SendBytes(*socket, (*msg)[0].to_string_view()).ok()) return 3;
    }
    return 0;
  });
  zmq::context_t context(1);
  auto socket = MakeSocket(context, zmq::socket_type::pair, *endpoint, SocketMode::kBind);
  if (!socket.ok()) {
    state.SkipWithError(socket.status().ToString().c_str());
    return;
  }
  peer.Send(*endpoint);
  struct Cleanup {
    std::string endpoint;
    ~Cleanup() { RemoveIpcFile(endpoint); }
  } cleanup{*endpoint};
  const std::string payload(64, 'z');
  std::vector<double> one_way_us;
  for (auto _ : state) {
    const int64_t start = NowNs();
    if (!SendBytes(*socket, payload).ok() || !RecvMultipart(*socket).ok()) {
      state.SkipWithError("zmq ping-pong failed");
      break;
    }
    one_way_us.push_back(static_cast<double>(NowNs() - start) / 2e3);
  }
  peer.Wait(kLong);
  ReportPercentiles(state, one_way_us, {});
}
BENCHMARK(BM_ZmqIpcPingPong)->Iterations(20000)->UseRealTime()->Unit(benchmark::kMicrosecond);

// All-reduce of state.range(1) floats across state.range(0) processes
// (rank 0 is this process). state.range(2) == 1 runs Barrier only.
void BM_ShmAllReduce(benchmark::State& state) {
  const int world = static_cast<int>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  const bool barrier_only = state.range(2) == 1;
  const int64_t rounds = state.max_iterations;
  const std::string name = ShmCommunicator::NewGroupName();
  std::vector<std::unique_ptr<Child>> peers;
  for (int r = 1; r < world; ++r) {
    peers.push_back(std::make_unique<Child>([=](const std::string&) {
      ShmCommunicatorConfig config;
      config.name = name;
      config.rank = r;
      config.world_size = world;
      config.timeout = kLong;
      auto comm = ShmCommunicator::Create(config);
      if (!comm.ok()) return 2;
      std::vector<float> data(n, static_cast<float>(r));
      for (int64_t i = 0; i < rounds; ++i) {
        Status s = barrier_only ? (*comm)->Barrier() : (*comm)->AllReduceSum(data.data(), n);
        if (!s.ok()) return 3;
      }
      return 0;
    }));
  }
  for (auto& peer : peers) peer->Send("");
  ShmCommunicatorConfig config;
  config.name = name;
  config.world_size = world;
  config.timeout = kLong;
  auto comm = ShmCommunicator::Create(config);
  if (!comm.ok()) {
    state.SkipWithError(comm.status().ToString().c_str());
    return;
  }
  std::vector<float> data(n, 1.0f);
  std::vector<double> op_us;
  for (auto _ : state) {
    const int64_t start = NowNs();
    Status s = barrier_only ? (*comm)->Barrier() : (*comm)->AllReduceSum(data.data(), n);
    op_us.push_back(static_cast<double>(NowNs() - start) / 1e3);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  for (auto& peer : peers) peer->Wait(kLong);
  ReportPercentiles(state, op_us, {});
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n) * 4);
}
BENCHMARK(BM_ShmAllReduce)
    ->ArgNames({"ranks", "floats", "barrier_only"})
    ->Args({2, 0, 1})->Args({2, 1024, 0})->Args({2, 4096, 0})
    ->Iterations(20000)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ShmAllReduce)
    ->ArgNames({"ranks", "floats", "barrier_only"})
    ->Args({2, 1 << 20, 0})->Args({4, 1024, 0})
    ->Iterations(500)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace llmserve::common::ipc

BENCHMARK_MAIN();
