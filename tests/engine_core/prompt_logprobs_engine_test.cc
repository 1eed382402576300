// Prompt logprobs through the engine (scheduler, KV cache manager, model
// runner) on a tiny random-weight model: chunked prefill at several chunk
// sizes, a prompt whose blocks sit in the prefix cache and a preemption in
// the middle of the prefill give bitwise the prompt logprobs of one whole
// prefill, sent once, with the first token.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_core/engine_core.h"
#include "engine_core/inproc_executor.h"
#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::engine_core {
namespace prompt_logprobs_engine_test {

using worker::testing::ScratchDir;

// What one request got back.
struct Result {
  std::vector<int32_t> tokens;
  std::vector<proto::Logprobs> prompt_logprobs;  // one per output that carried them
  int32_t num_cached_tokens = 0;
  bool preempted_in_prefill = false;  // a PREEMPTED event came with its first token
};

class PromptLogprobsEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    ASSERT_TRUE(worker::WriteTestModel(worker::testing::TinySpec("qwen3", 7), *dir_ / "m").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::unique_ptr<EngineCore> NewEngine(int32_t chunk, int32_t num_blocks = 200, int32_t max_model_len = 128) {
    worker::ModelRunnerConfig rc;
    rc.model_dir = *dir_ / "m";
    rc.block_size = 4;
    rc.num_threads = 2;
    rc.max_num_batched_tokens = 256;
    rc.max_num_seqs = 8;
    rc.process_seed = 1;
    rc.show_progress = false;
    auto runner = worker::ModelRunner::Create(rc);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    EngineCoreConfig ec;
    ec.scheduler.max_num_batched_tokens = 256;
    ec.scheduler.long_prefill_token_threshold = chunk;
    ec.scheduler.max_num_seqs = 8;
    ec.scheduler.max_model_len = max_model_len;
    ec.kv.block_size = 4;
    ec.kv.num_blocks = num_blocks;
    auto core = EngineCore::Create(ec, std::make_unique<InProcExecutor>(std::move(runner).value()));
    EXPECT_TRUE(core.ok()) << core.status().ToString();
    return std::move(core).value();
  }

  // Runs `requests` (all queued at once) to completion.
  static std::map<std::string, Result> Run(EngineCore& core, const std::vector<proto::EngineCoreRequest>& requests) {
    std::map<std::string, Result> got;
    for (const auto& r : requests) EXPECT_TRUE(core.AddRequest(r).ok());
    for (int step = 0; core.HasRequests(); ++step) {
      if (step == 1000) {
        ADD_FAILURE() << "requests stopped progressing";
        break;
      }
      auto outs = core.Step();
      EXPECT_TRUE(outs.ok()) << outs.status().ToString();
      if (!outs.ok()) break;
      for (const ClientOutputs& c : *outs) {
        for (const auto& o : c.outputs.outputs) {
          Result& r = got[o.request_id];
          if (o.new_prompt_logprobs) {
            EXPECT_TRUE(r.tokens.empty()) << o.request_id << ": prompt logprobs after the first token";
            EXPECT_FALSE(o.new_token_ids.empty()) << o.request_id << ": prompt logprobs without a token";
            r.prompt_logprobs.push_back(*o.new_prompt_logprobs);
          }
          for (const auto& e : o.events) r.preempted_in_prefill |= e.type == 3 && r.tokens.empty();
          r.tokens.insert(r.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
          r.num_cached_tokens = std::max(r.num_cached_tokens, o.num_cached_tokens);
        }
      }
    }
    return got;
  }

  static proto::EngineCoreRequest Request(const std::string& id, std::vector<int32_t> prompt,
                                          std::optional<int32_t> prompt_logprobs, int32_t max_tokens = 3) {
    proto::EngineCoreRequest r;
    r.request_id = id;
    r.prompt_token_ids = std::move(prompt);
    r.sampling_params.temperature = 0.0;
    r.sampling_params.max_tokens = max_tokens;
    r.sampling_params.prompt_logprobs = prompt_logprobs;
    return r;
  }

  static ScratchDir* dir_;
};

ScratchDir* PromptLogprobsEngineTest::dir_ = nullptr;

TEST_F(PromptLogprobsEngineTest, ChunkedPrefillGivesTheWholePrefillsRows) {
  const std::vector<int32_t> prompt = worker::testing::Prompt(30, 512, 1);
  auto whole_engine = NewEngine(0);
  const Result whole = Run(*whole_engine, {Request("r", prompt, 3)}).at("r");
  ASSERT_EQ(whole.prompt_logprobs.size(), 1u);
  ASSERT_EQ(whole.prompt_logprobs[0].token_ids.size(), prompt.size() - 1);
  for (int32_t chunk : {1, 4, 7, 29}) {
    auto engine = NewEngine(chunk);
    const Result r = Run(*engine, {Request("r", prompt, 3), Request("other", worker::testing::Prompt(11, 512, 2), 1)})
                         .at("r");
    ASSERT_EQ(r.prompt_logprobs.size(), 1u) << "chunk " << chunk;
    EXPECT_EQ(r.prompt_logprobs[0], whole.prompt_logprobs[0]) << "chunk " << chunk;
    EXPECT_EQ(r.tokens, whole.tokens) << "chunk " << chunk;
  }
}

TEST_F(PromptLogprobsEngineTest, PrefixCacheHitIsSkippedAndRowsStayTheSame) {
  const std::vector<int32_t> prompt = worker::testing::Prompt(26, 512, 5);
  auto fresh = NewEngine(0);
  const Result want = Run(*fresh, {Request("r", prompt, 2)}).at("r");
  ASSERT_EQ(want.prompt_logprobs.size(), 1u);
  auto engine = NewEngine(0);
  // Warm the prefix cache with the same prompt; a plain request then hits it.
  Run(*engine, {Request("warm", prompt, std::nullopt)});
  EXPECT_GT(Run(*engine, {Request("plain", prompt, std::nullopt)}).at("plain").num_cached_tokens, 0)
      << "the cache was not warm: this test would prove nothing";
  const Result got = Run(*engine, {Request("r", prompt, 2)}).at("r");
  EXPECT_EQ(got.num_cached_tokens, 0) << "a prompt_logprobs request must compute every position";
  ASSERT_EQ(got.prompt_logprobs.size(), 1u);
  EXPECT_EQ(got.prompt_logprobs[0], want.prompt_logprobs[0]);
  EXPECT_EQ(got.tokens, want.tokens);
}

TEST_F(PromptLogprobsEngineTest, PreemptedMidPrefillItRecomputesAndSendsThemOnce) {
  const std::vector<int32_t> prompt = worker::testing::Prompt(28, 512, 6);
  auto roomy = NewEngine(4);
  const Result want = Run(*roomy, {Request("a", prompt, 2)}).at("a");
  // 8 usable blocks of 4 tokens: "b" (admitted first) grows while "a"
  // prefills 4 tokens a step, until "b" needs a block and "a", the latest,
  // is preempted; it comes back once "b" is done.
  auto tight = NewEngine(4, 9, 32);
  const auto got = Run(*tight, {Request("b", {5, 6, 7, 8}, std::nullopt, 14), Request("a", prompt, 2)});
  ASSERT_TRUE(got.at("a").preempted_in_prefill) << "no preemption in its prefill: this test would prove nothing";
  ASSERT_EQ(got.at("a").prompt_logprobs.size(), 1u);
  EXPECT_EQ(got.at("a").prompt_logprobs[0], want.prompt_logprobs[0]);
  EXPECT_EQ(got.at("a").tokens, want.tokens);
}

TEST_F(PromptLogprobsEngineTest, RequestsWithoutThemGetNone) {
  auto engine = NewEngine(5);
  const auto got = Run(*engine, {Request("a", worker::testing::Prompt(12, 512, 3), std::nullopt)});
  EXPECT_TRUE(got.at("a").prompt_logprobs.empty());
  EXPECT_EQ(got.at("a").tokens.size(), 3u);
}

}  // namespace prompt_logprobs_engine_test
}  // namespace llmserve::engine_core
