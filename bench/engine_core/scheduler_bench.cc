// Scheduler and KV-cache-manager cost per operation.
//
//   build/bin/engine_core_bench [--benchmark_filter=...]
//
// BM_Schedule:  Schedule() alone (decision + the wire SchedulerOutput) with N
//               running requests all in decode; args: N, prefix caching on/off.
//               Its "Time" column is thread CPU time of Schedule() only.
// BM_Step:      Schedule() + UpdateFromOutput() for the same setup (the
//               engine's whole per-step bookkeeping apart from the model);
//               counter kv_waste: allocated KV slots holding no token / all
//               allocated slots, at the end (sequences of ~2070 tokens).
// BM_StepCold: BM_Step with a model step's memory traffic between Schedule()
//               and UpdateFromOutput() (256 MB streamed through the caches, as
//               the weights or a large batch's logits are on the serving path),
//               so both run from cold caches; "Time" is their thread CPU time,
//               counters schedule_us / update_us split it.
// BM_AllocateFree: AllocateSlots for a P-token request that misses the prefix
//               cache, then Free; items/s counts blocks.
// BM_BlockHash: hashing one 16-token block, SHA-256 vs XXH3-128.
// The reference point for the goals (<=20 us at 256, <=100 us at 1024) is
// vLLM's Python scheduler, which takes milliseconds per step at these sizes.

#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <glog/logging.h>

#include "engine_core/kv_cache_manager.h"
#include "engine_core/scheduler.h"

namespace llmserve::engine_core {
namespace {

constexpr int32_t kBlockSize = 16;
constexpr int32_t kPrompt = 64;
constexpr int32_t kSteps = 2000;  // iterations per benchmark run (fixed: requests grow)

// This thread's CPU time: the dev machines are shared, and wall time mostly
// measures other people's builds.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct DecodeSetup {
  std::unique_ptr<Scheduler> scheduler;
  proto::ModelRunnerOutput reply;  // one token per request, in the order a worker
                                   // iterating num_scheduled_tokens would answer
};

// Ids as long as real ones (heap-allocated strings).
std::string RequestId(int32_t i) {
  std::string id = "cmpl-";
  id += std::to_string(1000000 + i);
  id += "-0a1b2c3d4e5f";
  return id;
}

// Allocated KV slots not holding a computed token, as a fraction of all
// allocated slots (the partially filled last block of each request).
double KvWaste(const Scheduler& s, int32_t num_requests) {
  int64_t tokens = 0;
  for (int32_t i = 0; i < num_requests; ++i) tokens += s.FindRequest(RequestId(i))->num_computed_tokens;
  const BlockPool& pool = s.kv_cache_manager().pool();
  const int64_t slots =
      int64_t{pool.num_usable_blocks() - pool.num_free_blocks()} * s.kv_cache_manager().config().block_size;
  return 1.0 - static_cast<double>(tokens) / static_cast<double>(slots);
}

DecodeSetup MakeDecodeSetup(int32_t num_requests, bool caching) {
  SchedulerConfig sc;
  sc.max_num_seqs = num_requests;
  sc.max_num_batched_tokens = std::max(8192, num_requests);
  sc.max_model_len = 4096;
  sc.log_stats = false;
  KVCacheConfig kc;
  kc.block_size = kBlockSize;
  kc.max_model_len = sc.max_model_len;
  kc.enable_prefix_caching = caching;
  // Room for every request to grow by kSteps + a few warm-up steps.
  kc.num_blocks = num_requests * ((kPrompt + kSteps + 64) / kBlockSize + 2) + 1;
  auto s = Scheduler::Create(sc, kc);
  CHECK(s.ok()) << s.status().ToString();
  DecodeSetup d{std::move(s).value(), {}};
  for (int32_t i = 0; i < num_requests; ++i) {
    proto::EngineCoreRequest r;
    r.request_id = RequestId(i);
    r.prompt_token_ids.resize(kPrompt);
    std::iota(r.prompt_token_ids.begin(), r.prompt_token_ids.end(), i * kPrompt);
    r.sampling_params.max_tokens = 4000;
    CHECK(d.scheduler->AddRequest(std::move(r)).ok());
  }
  // Prefill everyone (one step fits all prompts when the budget allows; loop otherwise).
  while (true) {
    const proto::SchedulerOutput& so = d.scheduler->Schedule();
    proto::ModelRunnerOutput mro;
    bool all_decoding = true;
    for (const auto& [id, n] : so.num_scheduled_tokens) {
      const Request* r = d.scheduler->FindRequest(id);
      mro.req_ids.push_back(id);
      if (r->num_computed_tokens >= r->num_tokens()) {
        mro.sampled_token_ids.push_back({7});
      } else {
        mro.sampled_token_ids.push_back({});
        all_decoding = false;
      }
    }
    d.scheduler->UpdateFromOutput(so, mro);
    if (all_decoding && static_cast<int32_t>(so.num_scheduled_tokens.size()) == num_requests) {
      for (std::vector<int32_t>& t : mro.sampled_token_ids) t = {7};
      d.reply = std::move(mro);
      break;
    }
  }
  return d;
}

void BM_Schedule(benchmark::State& state) {
  DecodeSetup d = MakeDecodeSetup(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  std::vector<ClientOutputs> outs;
  for (auto _ : state) {
    const double t0 = ThreadCpuSeconds();
    const proto::SchedulerOutput& so = d.scheduler->Schedule();
    const double t1 = ThreadCpuSeconds();
    benchmark::DoNotOptimize(so.total_num_scheduled_tokens);
    state.SetIterationTime(t1 - t0);
    CHECK_EQ(so.total_num_scheduled_tokens, state.range(0));
    d.scheduler->UpdateFromOutput(so, d.reply, &outs);
  }
  state.counters["requests"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Schedule)
    ->ArgNames({"running", "caching"})
    ->Args({256, 1})->Args({256, 0})->Args({1024, 1})->Args({1024, 0})
    ->Iterations(kSteps)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_Step(benchmark::State& state) {
  DecodeSetup d = MakeDecodeSetup(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  std::vector<ClientOutputs> outs;
  for (auto _ : state) {
    const proto::SchedulerOutput& so = d.scheduler->Schedule();
    d.scheduler->UpdateFromOutput(so, d.reply, &outs);
    benchmark::DoNotOptimize(outs.data());
  }
  // Sequences end at 64 + 2000 + a few tokens, so this is the steady-state
  // waste of long decodes.
  state.counters["kv_waste"] = KvWaste(*d.scheduler, static_cast<int32_t>(state.range(0)));
}
BENCHMARK(BM_Step)
    ->ArgNames({"running", "caching"})
    ->Args({256, 1})->Args({256, 0})->Args({1024, 1})->Args({1024, 0})
    ->Iterations(kSteps)->Unit(benchmark::kMicrosecond);

void BM_StepCold(benchmark::State& state) {
  DecodeSetup d = MakeDecodeSetup(static_cast<int32_t>(state.range(0)), state.range(1) != 0);
  std::vector<ClientOutputs> outs;
  std::vector<uint64_t> flush((256u << 20) / sizeof(uint64_t), 1);
  uint64_t sink = 0;
  double schedule_s = 0, update_s = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < flush.size(); i += 8) sink += flush[i]++;
    const double t0 = ThreadCpuSeconds();
    const proto::SchedulerOutput& so = d.scheduler->Schedule();
    const double t1 = ThreadCpuSeconds();
    for (size_t i = 0; i < flush.size(); i += 8) sink += flush[i]++;
    const double t2 = ThreadCpuSeconds();
    d.scheduler->UpdateFromOutput(so, d.reply, &outs);
    const double t3 = ThreadCpuSeconds();
    schedule_s += t1 - t0;
    update_s += t3 - t2;
    state.SetIterationTime((t1 - t0) + (t3 - t2));
    benchmark::DoNotOptimize(outs.data());
  }
  benchmark::DoNotOptimize(sink);
  const double n = static_cast<double>(state.iterations());
  state.counters["schedule_us"] = schedule_s / n * 1e6;
  state.counters["update_us"] = update_s / n * 1e6;
}
BENCHMARK(BM_StepCold)
    ->ArgNames({"running", "caching"})
    ->Args({256, 1})->Args({1024, 1})
    ->Iterations(200)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_AllocateFree(benchmark::State& state) {
  const int32_t prompt = static_cast<int32_t>(state.range(0));
  KVCacheConfig kc;
  kc.num_blocks = 4097;
  kc.block_size = kBlockSize;
  kc.max_model_len = 8192;
  kc.enable_prefix_caching = state.range(1) != 0;
  KVCacheManager kv(kc);
  // Distinct prompts, cycled: by the time one comes round again its blocks
  // have been evicted, so every allocation misses the cache (0% hits) and,
  // with caching on, evicts old hashes and enters new ones.
  const int32_t blocks_per_request = (prompt + kBlockSize - 1) / kBlockSize;
  const int32_t num_requests = 2 * (kc.num_blocks - 1) / blocks_per_request;
  std::vector<std::unique_ptr<Request>> requests;
  for (int32_t i = 0; i < num_requests; ++i) {
    std::vector<int32_t> tokens(static_cast<size_t>(prompt));
    std::iota(tokens.begin(), tokens.end(), i * prompt);
    requests.push_back(std::make_unique<Request>(i, "bench", std::move(tokens), StopConditions{}));
    requests.back()->UpdateBlockHashes(kv.hasher(), kBlockSize);
  }
  size_t next = 0;
  for (auto _ : state) {
    Request& r = *requests[next];
    next = next + 1 == requests.size() ? 0 : next + 1;
    CHECK(kv.AllocateSlots(r, prompt));
    kv.Free(r);
  }
  state.SetItemsProcessed(state.iterations() * blocks_per_request);
}
BENCHMARK(BM_AllocateFree)
    ->ArgNames({"prompt", "caching"})
    ->Args({16, 0})->Args({16, 1})->Args({1024, 0})->Args({1024, 1})
    ->Unit(benchmark::kNanosecond);

void BM_BlockHash(benchmark::State& state) {
  BlockHasher h(state.range(0) == 0 ? HashAlgo::kSha256 : HashAlgo::kXxHash);
  std::vector<int32_t> tokens(kBlockSize);
  std::iota(tokens.begin(), tokens.end(), 0);
  BlockHash parent = h.Hash(nullptr, tokens, "", "");
  for (auto _ : state) {
    parent = h.Hash(&parent, tokens, "", "");
    benchmark::DoNotOptimize(parent);
  }
  state.SetLabel(state.range(0) == 0 ? "sha256" : "xxhash");
}
BENCHMARK(BM_BlockHash)->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace llmserve::engine_core

BENCHMARK_MAIN();
