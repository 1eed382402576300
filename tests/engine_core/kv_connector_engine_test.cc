// The SharedStorageConnector through two engines (scheduler, KV cache
// manager, model runner, connector both sides) on a tiny random-weight model
// in float32: a producer computes some prompts and saves their KV; a consumer
// given the same prompts loads it, computes only each prompt's tail, and
// samples bitwise the producer's greedy tokens and logprobs. Folders that are
// incomplete, or whose files are missing or corrupt, are computed instead.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/kv_transfer/shared_storage_layout.h"
#include "engine_core/engine_core.h"
#include "engine_core/inproc_executor.h"
#include "engine_core/kv_connector/shared_storage_connector_scheduler.h"
#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::engine_core {
namespace kv_connector_engine_test {

using worker::testing::ScratchDir;

constexpr int32_t kBlockSize = 4;
constexpr int32_t kMaxModelLen = 128;

// What a request got back.
struct Result {
  std::vector<int32_t> tokens;
  std::vector<proto::Logprobs> logprobs;
  int32_t num_cached_tokens = 0;
  std::optional<proto::FinishReason> finish_reason;
};

struct RunResults {
  std::map<std::string, Result> results;
  int64_t scheduled_tokens = 0;  // over every step (SchedulerStats.iteration_tokens)
  int64_t preemptions = 0;
};

class KVConnectorEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_dir_ = new ScratchDir();
    ASSERT_TRUE(worker::WriteTestModel(worker::testing::TinySpec("qwen3", 11), *model_dir_ / "m").ok());
  }
  static void TearDownTestSuite() {
    delete model_dir_;
    model_dir_ = nullptr;
  }

  common::KVTransferConfig Config(const std::string& role) const {
    auto c = common::ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": ")" + role +
                                           R"(", "kv_connector_extra_config": {"shared_storage_path": ")" +
                                           storage_.path() + "\"}}");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }

  // An engine on the tiny model in float32 with an explicit cache of `num_blocks`.
  std::unique_ptr<EngineCore> NewEngine(const std::string& role, int32_t num_blocks = 200) const {
    worker::ModelRunnerConfig rc;
    rc.model_dir = *model_dir_ / "m";
    rc.block_size = kBlockSize;
    rc.num_threads = 2;
    rc.max_num_batched_tokens = 256;
    rc.max_num_seqs = 8;
    rc.process_seed = 1;
    rc.show_progress = false;
    rc.kv_transfer = Config(role);
    auto runner = worker::ModelRunner::Create(rc);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    EngineCoreConfig ec;
    ec.scheduler.max_num_batched_tokens = 256;
    ec.scheduler.max_num_seqs = 8;
    ec.scheduler.max_model_len = kMaxModelLen;
    ec.kv.block_size = kBlockSize;
    ec.kv.num_blocks = num_blocks;
    ec.kv_transfer = rc.kv_transfer;
    auto core = EngineCore::Create(ec, std::make_unique<InProcExecutor>(std::move(runner).value()));
    EXPECT_TRUE(core.ok()) << core.status().ToString();
    return std::move(core).value();
  }

  static proto::EngineCoreRequest Request(const std::string& id, const std::vector<int32_t>& prompt,
                                          int32_t max_tokens = 5) {
    proto::EngineCoreRequest r;
    r.request_id = id;
    r.prompt_token_ids = prompt;
    r.sampling_params.temperature = 0.0;
    r.sampling_params.max_tokens = max_tokens;
    r.sampling_params.logprobs = 2;
    return r;
  }

  // Prompts of 9, 17, 23 and 42 tokens: stored prefixes of 8, 16, 20 and 40.
  static std::map<std::string, std::vector<int32_t>> Prompts() {
    std::map<std::string, std::vector<int32_t>> p;
    uint32_t salt = 1;
    for (size_t n : {9, 17, 23, 42}) p["p" + std::to_string(n)] = worker::testing::Prompt(n, 512, salt++);
    return p;
  }

  // Runs the prompts (all queued at once) to completion.
  static RunResults RunAll(EngineCore& core, const std::map<std::string, std::vector<int32_t>>& prompts,
                           int32_t max_tokens = 5) {
    RunResults run;
    for (const auto& [id, prompt] : prompts) EXPECT_TRUE(core.AddRequest(Request(id, prompt, max_tokens)).ok());
    for (int step = 0; core.HasRequests(); ++step) {
      if (step == 1000) {
        ADD_FAILURE() << "requests stopped progressing";
        break;
      }
      auto outs = core.Step();
      EXPECT_TRUE(outs.ok()) << outs.status().ToString();
      if (!outs.ok()) break;
      for (const ClientOutputs& c : *outs) {
        if (c.outputs.scheduler_stats) {
          for (int32_t n : c.outputs.scheduler_stats->iteration_tokens) run.scheduled_tokens += n;
          run.preemptions += c.outputs.scheduler_stats->num_preemptions;
        }
        for (const auto& o : c.outputs.outputs) {
          Result& r = run.results[o.request_id];
          r.tokens.insert(r.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
          if (o.new_logprobs) r.logprobs.push_back(*o.new_logprobs);
          r.num_cached_tokens = std::max(r.num_cached_tokens, o.num_cached_tokens);
          if (o.finish_reason) r.finish_reason = o.finish_reason;
        }
      }
    }
    return run;
  }

  // The folder the producer stored `prompt` in.
  std::string Folder(const std::vector<int32_t>& prompt) const {
    auto r = engine_core::Request::Create(0, Request("x", prompt), kMaxModelLen);
    EXPECT_TRUE(r.ok());
    const int32_t prefix = common::SharedStoragePrefixTokens(static_cast<int32_t>(prompt.size()), kBlockSize);
    return common::SharedStorageFolder(storage_.path(), SharedStorageConnectorScheduler::Key(**r, prefix));
  }

  static int32_t Prefix(const std::vector<int32_t>& prompt) {
    return common::SharedStoragePrefixTokens(static_cast<int32_t>(prompt.size()), kBlockSize);
  }

  static ScratchDir* model_dir_;
  ScratchDir storage_;
};

ScratchDir* KVConnectorEngineTest::model_dir_ = nullptr;

TEST_F(KVConnectorEngineTest, ConsumerComputesOnlyTheTailAndSamplesTheProducersTokens) {
  const auto prompts = Prompts();
  auto producer_engine = NewEngine("kv_producer");
  const RunResults producer = RunAll(*producer_engine, prompts);
  EXPECT_EQ(producer_engine->scheduler().kv_connector_counters().loaded_tokens, 0);  // a producer never loads
  int64_t stored = 0;
  for (const auto& [id, prompt] : prompts) {
    EXPECT_TRUE(std::filesystem::exists(Folder(prompt) + "/rank0.complete")) << id;
    EXPECT_EQ(producer.results.at(id).num_cached_tokens, 0) << id;
    stored += Prefix(prompt);
  }
  producer_engine.reset();

  auto consumer_engine = NewEngine("kv_consumer");
  const RunResults consumer = RunAll(*consumer_engine, prompts);
  for (const auto& [id, prompt] : prompts) {
    const Result& want = producer.results.at(id);
    const Result& got = consumer.results.at(id);
    ASSERT_EQ(want.tokens.size(), 5u) << id;
    EXPECT_EQ(got.tokens, want.tokens) << id;
    EXPECT_EQ(got.logprobs, want.logprobs) << id << ": logprobs differ (bitwise)";
    EXPECT_EQ(got.num_cached_tokens, Prefix(prompt)) << id << ": the loaded prefix counts as cached";
  }
  // The consumer computed everything but the loaded prefixes.
  EXPECT_EQ(consumer.scheduled_tokens, producer.scheduled_tokens - stored);
  const KVConnectorCounters& counters = consumer_engine->scheduler().kv_connector_counters();
  EXPECT_EQ(counters.loaded_requests, static_cast<int64_t>(prompts.size()));
  EXPECT_EQ(counters.loaded_tokens, stored);
  EXPECT_EQ(counters.failed_loads, 0);
}

TEST_F(KVConnectorEngineTest, MissingOrCorruptFilesAreComputedInstead) {
  const auto prompts = Prompts();
  const RunResults producer = RunAll(*NewEngine("kv_both"), prompts);
  // p9: a layer file missing; p17: a layer file corrupt; p23: the marker gone
  // (as if its producer were still writing); p42 intact.
  std::filesystem::remove(Folder(prompts.at("p9")) + "/model.layers.1.self_attn.attn.safetensors");
  {
    std::fstream f(Folder(prompts.at("p17")) + "/model.layers.0.self_attn.attn.safetensors",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f << "\xff\xff\xff\xff\xff\xff\xff\x7f not a header";
  }
  std::filesystem::remove(Folder(prompts.at("p23")) + "/rank0.complete");

  auto engine = NewEngine("kv_consumer");
  const RunResults consumer = RunAll(*engine, prompts);
  for (const auto& [id, prompt] : prompts) {
    const Result& got = consumer.results.at(id);
    EXPECT_EQ(got.finish_reason, proto::FinishReason::kLength) << id;
    EXPECT_EQ(got.tokens, producer.results.at(id).tokens) << id;
    EXPECT_EQ(got.logprobs, producer.results.at(id).logprobs) << id;
  }
  EXPECT_EQ(consumer.results.at("p42").num_cached_tokens, Prefix(prompts.at("p42")));
  EXPECT_EQ(consumer.results.at("p23").num_cached_tokens, 0);
  const KVConnectorCounters& counters = engine->scheduler().kv_connector_counters();
  EXPECT_EQ(counters.loaded_requests, 3);  // p23 was never offered
  EXPECT_EQ(counters.failed_loads, 2);
  EXPECT_EQ(counters.recomputed_tokens, Prefix(prompts.at("p9")) + Prefix(prompts.at("p17")));
  // p42 skipped its prefix; p9 and p17 computed their tails on bad KV, then
  // everything again; p23 computed everything once.
  const auto tail = [&](const char* id) {
    return static_cast<int64_t>(prompts.at(id).size()) - Prefix(prompts.at(id));
  };
  EXPECT_EQ(consumer.scheduled_tokens,
            producer.scheduled_tokens - Prefix(prompts.at("p42")) + tail("p9") + tail("p17"));
}

TEST_F(KVConnectorEngineTest, PreemptedConsumerRequestsLoadAgainAndFinishTheSame) {
  std::map<std::string, std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 6; ++i) prompts["q" + std::to_string(i)] = worker::testing::Prompt(30 + 3 * i, 512, 40 + i);
  const RunResults producer = RunAll(*NewEngine("kv_producer"), prompts, 16);
  EXPECT_EQ(producer.preemptions, 0);
  // 40 blocks of 4 tokens hold about three of these requests at their full length.
  auto consumer_engine = NewEngine("kv_consumer", 40);
  const RunResults consumer = RunAll(*consumer_engine, prompts, 16);
  EXPECT_GT(consumer.preemptions, 0) << "nothing was preempted: this test would prove nothing";
  for (const auto& [id, prompt] : prompts) {
    EXPECT_EQ(consumer.results.at(id).tokens, producer.results.at(id).tokens) << id;
    EXPECT_EQ(consumer.results.at(id).logprobs, producer.results.at(id).logprobs) << id;
  }
  // Each loaded once, and a preempted one again (its blocks had left the prefix cache).
  EXPECT_GT(consumer_engine->scheduler().kv_connector_counters().loaded_requests, 6);
  EXPECT_EQ(consumer_engine->scheduler().kv_connector_counters().failed_loads, 0);
}

TEST_F(KVConnectorEngineTest, CudaDeviceAndUnknownConnectorsAreRefused) {
  worker::ModelRunnerConfig rc;
  rc.model_dir = *model_dir_ / "m";
  rc.device = "cuda";
  rc.kv_transfer = Config("kv_both");
  auto runner = worker::ModelRunner::Create(rc);
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.status().message().find("CPU backend"), std::string::npos) << runner.status().message();
}

}  // namespace kv_connector_engine_test
}  // namespace llmserve::engine_core
