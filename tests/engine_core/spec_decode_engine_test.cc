// Speculative decoding end to end (scheduler, n-gram proposer, model runner,
// rejection sampler) on a tiny random-weight model: greedy outputs with
// speculation are bitwise those without, alone and in mixed batches, with
// chunked prefill, at both matmul precisions. The drafts must really have
// been verified: some accepted and some rejected.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_core/engine_core.h"
#include "engine_core/inproc_executor.h"
#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::engine_core {
namespace spec_decode_engine_test {

using worker::testing::ScratchDir;

struct GenerateResult {
  std::map<std::string, std::vector<int32_t>> tokens;  // per request id
  SpecDecodingStats stats;
};

class SpecDecodeEngineTest : public ::testing::TestWithParam<kernels::cpu::MatmulPrecision> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    auto spec = worker::testing::TinySpec("qwen3", 3);
    ASSERT_TRUE(worker::WriteTestModel(spec, *dir_ / "m").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // Runs `requests` to completion in one engine; k = 0 turns speculation off;
  // `suffix` picks suffix decoding instead of the n-gram proposer.
  GenerateResult Generate(const std::vector<proto::EngineCoreRequest>& requests, int32_t k, int32_t budget = 256,
                          bool suffix = false) {
    worker::ModelRunnerConfig rc;
    rc.model_dir = *dir_ / "m";
    rc.precision = GetParam();
    rc.block_size = 4;
    rc.num_threads = 2;
    rc.max_num_batched_tokens = static_cast<size_t>(budget);
    rc.max_num_seqs = 8;
    rc.process_seed = 1;
    rc.show_progress = false;
    auto runner = worker::ModelRunner::Create(rc);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    EngineCoreConfig ec;
    ec.scheduler.max_num_batched_tokens = budget;
    ec.scheduler.max_num_seqs = 8;
    ec.scheduler.max_model_len = 160;
    ec.scheduler.num_speculative_tokens = k;
    ec.scheduler.ngram = NgramConfig{1, 3};
    ec.scheduler.suffix_decoding = suffix;
    ec.kv.block_size = 4;
    ec.kv.num_blocks = 400;
    auto core = EngineCore::Create(ec, std::make_unique<InProcExecutor>(std::move(runner).value()));
    EXPECT_TRUE(core.ok()) << core.status().ToString();
    GenerateResult run;
    for (const auto& r : requests) EXPECT_TRUE((*core)->AddRequest(r).ok());
    // A request that stops progressing must fail the test, not hang it.
    for (int step = 0; (*core)->HasRequests(); ++step) {
      if (step == 2000) {
        ADD_FAILURE() << "requests stopped progressing";
        break;
      }
      auto outs = (*core)->Step();
      EXPECT_TRUE(outs.ok()) << outs.status().ToString();
      if (!outs.ok()) break;
      for (const ClientOutputs& c : *outs) {
        for (const auto& o : c.outputs.outputs) {
          auto& t = run.tokens[o.request_id];
          t.insert(t.end(), o.new_token_ids.begin(), o.new_token_ids.end());
        }
      }
    }
    run.stats = (*core)->scheduler().spec_decoding_stats();
    return run;
  }

  static proto::EngineCoreRequest Request(const std::string& id, std::vector<int32_t> prompt, int32_t max_tokens,
                                          double temperature = 0.0) {
    proto::EngineCoreRequest r;
    r.request_id = id;
    r.prompt_token_ids = std::move(prompt);
    r.sampling_params.temperature = temperature;
    r.sampling_params.max_tokens = max_tokens;
    r.sampling_params.seed = 7;
    return r;
  }
  // A prompt that repeats a phrase, so the n-gram proposer finds matches.
  static std::vector<int32_t> Repeating(int32_t salt, size_t repeats) {
    std::vector<int32_t> phrase = {11 + salt, 40, 97, 3 + salt, 250, 61};
    std::vector<int32_t> p;
    for (size_t i = 0; i < repeats; ++i) p.insert(p.end(), phrase.begin(), phrase.end());
    return p;
  }

  static ScratchDir* dir_;
};

ScratchDir* SpecDecodeEngineTest::dir_ = nullptr;

void ExpectVerifiedSomeDrafts(const SpecDecodingStats& s) {
  EXPECT_GT(s.num_drafts, 0) << "the proposer proposed nothing";
  EXPECT_GT(s.num_accepted_tokens, 0) << "no draft was accepted";
  EXPECT_LT(s.num_accepted_tokens, s.num_draft_tokens) << "no draft was rejected";
}

TEST_P(SpecDecodeEngineTest, GreedyAloneIsBitwiseTheSame) {
  const std::vector<proto::EngineCoreRequest> reqs = {Request("a", Repeating(0, 4), 60)};
  const GenerateResult off = Generate(reqs, 0), on = Generate(reqs, 4);
  ASSERT_EQ(off.tokens.at("a").size(), 60u);
  EXPECT_EQ(on.tokens, off.tokens);
  EXPECT_EQ(off.stats.num_drafts, 0);
  ExpectVerifiedSomeDrafts(on.stats);
}

// A mixed batch: greedy requests beside a seeded random one and one that is
// still prefilling in chunks (a small budget also cuts drafts short).
TEST_P(SpecDecodeEngineTest, GreedyInAMixedBatchWithChunkedPrefillIsBitwiseTheSame) {
  std::vector<int32_t> long_prompt = Repeating(5, 9);
  for (int32_t i = 0; i < 20; ++i) long_prompt.push_back(300 + i);
  const std::vector<proto::EngineCoreRequest> reqs = {
      Request("a", Repeating(0, 3), 50), Request("b", Repeating(1, 2), 40),
      Request("r", Repeating(2, 3), 30, /*temperature=*/1.0), Request("c", long_prompt, 45),
      Request("d", {5, 6, 7, 8}, 35)};
  for (int32_t budget : {256, 13}) {
    const GenerateResult off = Generate(reqs, 0, budget), on = Generate(reqs, 3, budget);
    for (const char* id : {"a", "b", "c", "d"}) {
      EXPECT_EQ(on.tokens.at(id), off.tokens.at(id)) << "request " << id << ", budget " << budget;
    }
    EXPECT_EQ(on.tokens.at("r").size(), 30u);
    ExpectVerifiedSomeDrafts(on.stats);
  }
}

// Suffix decoding (drafts from the request's own tokens and from the other
// requests' outputs): the same bits, alone and in the mixed batch.
TEST_P(SpecDecodeEngineTest, GreedyWithSuffixDecodingIsBitwiseTheSame) {
  const std::vector<proto::EngineCoreRequest> alone = {Request("a", Repeating(0, 4), 60)};
  const GenerateResult off = Generate(alone, 0), on = Generate(alone, 5, 256, /*suffix=*/true);
  EXPECT_EQ(on.tokens, off.tokens);
  ExpectVerifiedSomeDrafts(on.stats);
  std::vector<int32_t> long_prompt = Repeating(5, 9);
  for (int32_t i = 0; i < 20; ++i) long_prompt.push_back(300 + i);
  const std::vector<proto::EngineCoreRequest> mixed = {
      Request("a", Repeating(0, 3), 50), Request("b", Repeating(1, 2), 40),
      Request("r", Repeating(2, 3), 30, /*temperature=*/1.0), Request("c", long_prompt, 45),
      Request("d", {5, 6, 7, 8}, 35), Request("e", Repeating(0, 3), 50)};
  for (int32_t budget : {256, 13}) {
    const GenerateResult base = Generate(mixed, 0, budget), spec = Generate(mixed, 4, budget, /*suffix=*/true);
    for (const char* id : {"a", "b", "c", "d", "e"}) {
      EXPECT_EQ(spec.tokens.at(id), base.tokens.at(id)) << "request " << id << ", budget " << budget;
    }
    EXPECT_EQ(spec.tokens.at("r").size(), 30u);
    ExpectVerifiedSomeDrafts(spec.stats);
  }
}

// Seeded random sampling with speculation reproduces itself.
TEST_P(SpecDecodeEngineTest, SeededRandomSamplingIsReproducible) {
  const std::vector<proto::EngineCoreRequest> reqs = {Request("r", Repeating(2, 3), 40, 0.7),
                                                      Request("g", Repeating(3, 3), 40)};
  const GenerateResult a = Generate(reqs, 4), b = Generate(reqs, 4, 11);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.tokens.at("r").size(), 40u);
}

INSTANTIATE_TEST_SUITE_P(Precisions, SpecDecodeEngineTest,
                         ::testing::Values(kernels::cpu::MatmulPrecision::kF32, kernels::cpu::MatmulPrecision::kBF16),
                         [](const auto& info) {
                           return info.param == kernels::cpu::MatmulPrecision::kF32 ? std::string("f32")
                                                                                    : std::string("bf16");
                         });

}  // namespace spec_decode_engine_test
}  // namespace llmserve::engine_core
