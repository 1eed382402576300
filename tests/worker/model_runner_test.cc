#include "worker/model_runner.h"

#include <gtest/gtest.h>

#include "tests/worker/worker_test_util.h"

namespace llmserve::worker {
namespace {

using testing::ScratchDir;

class ModelRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 21), dir_ / "m").ok());
    ModelRunnerConfig c;
    c.model_dir = dir_ / "m";
    c.block_size = 4;
    c.num_threads = 2;
    c.max_num_batched_tokens = 64;
    c.max_num_seqs = 8;
    c.show_progress = false;
    auto r = ModelRunner::Create(c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    runner_ = std::move(r).value();
    ASSERT_TRUE(runner_->InitializeKvCache(64).ok());
  }

  static proto::NewRequestData NewReq(const std::string& id, std::vector<int32_t> prompt, std::vector<int32_t> blocks,
                                      double temperature = 0.0) {
    proto::NewRequestData n;
    n.req_id = id;
    n.prompt_token_ids = std::move(prompt);
    n.sampling_params.temperature = temperature;
    n.block_ids = {std::move(blocks)};
    return n;
  }
  static void AddCached(proto::SchedulerOutput* s, const std::string& id, int32_t computed,
                        std::vector<int32_t> new_blocks = {}) {
    auto& c = s->scheduled_cached_reqs;
    c.req_ids.push_back(id);
    c.num_computed_tokens.push_back(computed);
    if (new_blocks.empty()) {
      c.new_block_ids.emplace_back();
    } else {
      c.new_block_ids.emplace_back(std::vector<std::vector<int32_t>>{new_blocks});
    }
  }

  // Greedy continuation of `prompt` by the model alone (one request, no runner).
  std::vector<int32_t> Greedy(const std::vector<int32_t>& prompt, size_t n) {
    KvCache cache(runner_->model().CacheShape(8, 4));
    std::vector<int32_t> tokens = prompt, out;
    size_t done = 0;
    while (out.size() < n) {
      ForwardBatch b;
      b.AddRequest(std::vector<int32_t>(tokens.begin() + done, tokens.end()), static_cast<int32_t>(done),
                   testing::Blocks(0, 8), 4, true);
      b.FinishBlockTables();
      std::vector<float> logits;
      EXPECT_TRUE(runner_->model().Forward(b, cache, &logits).ok());
      const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      out.push_back(best);
      done = tokens.size();
      tokens.push_back(best);
    }
    return out;
  }

  ScratchDir dir_;
  std::unique_ptr<ModelRunner> runner_;
};

TEST_F(ModelRunnerTest, DiffStepsMixChunkedPrefillAndDecode) {
  const std::vector<int32_t> pa = {5, 9, 200, 31, 7, 8, 100, 101, 3, 4}, pb = {42, 43, 44};
  const auto want_a = Greedy(pa, 3), want_b = Greedy(pb, 4);
  // Step 1: A's first 6 prompt tokens (no sample), B's whole prompt (samples).
  proto::SchedulerOutput s1;
  s1.scheduled_new_reqs = {NewReq("a", pa, {0, 1}), NewReq("b", pb, {5})};
  s1.num_scheduled_tokens = {{"a", 6}, {"b", 3}};
  s1.total_num_scheduled_tokens = 9;
  auto o1 = runner_->Execute(s1);
  ASSERT_FALSE(o1.error.has_value()) << *o1.error;
  ASSERT_EQ(o1.req_ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(o1.sampled_token_ids[0].empty());
  EXPECT_EQ(o1.sampled_token_ids[1], std::vector<int32_t>{want_b[0]});
  // Step 2: A's remaining 4 prompt tokens (+1 block), B decodes.
  proto::SchedulerOutput s2;
  AddCached(&s2, "a", 6, {2});
  AddCached(&s2, "b", 3, {6});
  s2.num_scheduled_tokens = {{"a", 4}, {"b", 1}};
  auto o2 = runner_->Execute(s2);
  ASSERT_FALSE(o2.error.has_value()) << *o2.error;
  EXPECT_EQ(o2.sampled_token_ids[0], std::vector<int32_t>{want_a[0]});
  EXPECT_EQ(o2.sampled_token_ids[1], std::vector<int32_t>{want_b[1]});
  // Steps 3-4: both decode; B finishes after step 4, A continues alone.
  for (int step = 0; step < 2; ++step) {
    proto::SchedulerOutput s;
    AddCached(&s, "a", 10 + step);
    AddCached(&s, "b", 4 + step);
    s.num_scheduled_tokens = {{"a", 1}, {"b", 1}};
    auto o = runner_->Execute(s);
    ASSERT_FALSE(o.error.has_value()) << *o.error;
    EXPECT_EQ(o.sampled_token_ids[0], std::vector<int32_t>{want_a[1 + step]});
    EXPECT_EQ(o.sampled_token_ids[1], std::vector<int32_t>{want_b[2 + step]});
  }
  EXPECT_EQ(runner_->num_requests(), 2u);
  proto::SchedulerOutput fin;
  fin.finished_req_ids = {"a", "b"};
  auto of = runner_->Execute(fin);
  EXPECT_FALSE(of.error.has_value());
  EXPECT_TRUE(of.req_ids.empty());
  EXPECT_EQ(runner_->num_requests(), 0u);
}

TEST_F(ModelRunnerTest, SeededSamplingReproducesAcrossBatchesAndLogprobsReported) {
  auto run = [&](bool with_company) {
    std::vector<int32_t> got;
    proto::SchedulerOutput s;
    auto a = NewReq("seeded", {1, 2, 3, 4, 5}, {0, 1, 2}, 1.0);
    a.sampling_params.seed = 77;
    a.sampling_params.logprobs = 2;
    s.scheduled_new_reqs = {a};
    s.num_scheduled_tokens = {{"seeded", 5}};
    if (with_company) {
      s.scheduled_new_reqs.push_back(NewReq("other", {9, 9, 9, 9, 9, 9, 9}, {10, 11, 12, 13}, 1.0));
      s.num_scheduled_tokens["other"] = 7;
    }
    for (int step = 0; step < 6; ++step) {
      auto o = runner_->Execute(s);
      EXPECT_FALSE(o.error.has_value());
      const size_t i = std::find(o.req_ids.begin(), o.req_ids.end(), "seeded") - o.req_ids.begin();
      got.push_back(o.sampled_token_ids[i][0]);
      EXPECT_TRUE(o.logprobs[i].has_value());
      if (o.logprobs[i]) {
        EXPECT_EQ(o.logprobs[i]->token_ids[0].size(), 3u);  // sampled + top 2
        EXPECT_EQ(o.logprobs[i]->token_ids[0][0], got.back());
        EXPECT_LE(o.logprobs[i]->logprobs[0][1], 0.0f);
      }
      s = proto::SchedulerOutput();
      AddCached(&s, "seeded", 5 + step);
      s.num_scheduled_tokens = {{"seeded", 1}};
      if (with_company) {
        AddCached(&s, "other", 7 + step);
        s.num_scheduled_tokens["other"] = 1;
      }
    }
    proto::SchedulerOutput fin;
    fin.finished_req_ids = {"seeded", "other"};
    runner_->Execute(fin);
    return got;
  };
  const auto alone = run(false);
  EXPECT_EQ(run(true), alone);
}

TEST_F(ModelRunnerTest, BadDiffsAreErrorsNotCrashes) {
  proto::SchedulerOutput s;
  AddCached(&s, "ghost", 3);
  s.num_scheduled_tokens = {{"ghost", 1}};
  auto o = runner_->Execute(s);
  ASSERT_TRUE(o.error.has_value());
  EXPECT_NE(o.error->find("ghost"), std::string::npos);

  proto::SchedulerOutput t;
  t.scheduled_new_reqs = {NewReq("x", {1, 2, 3, 4, 5, 6}, {0})};  // 6 tokens need 2 blocks of 4
  t.num_scheduled_tokens = {{"x", 6}};
  o = runner_->Execute(t);
  ASSERT_TRUE(o.error.has_value());
  EXPECT_NE(o.error->find("block table"), std::string::npos);

  proto::SchedulerOutput u;
  u.scheduled_new_reqs = {NewReq("y", {1, 999999}, {0})};  // token outside the vocabulary
  u.num_scheduled_tokens = {{"y", 2}};
  o = runner_->Execute(u);
  ASSERT_TRUE(o.error.has_value());
  EXPECT_NE(o.error->find("vocabulary"), std::string::npos);
}

TEST_F(ModelRunnerTest, ProfileFitsKvBlocksInTheBudget) {
  const size_t per_block = runner_->model().CacheShape(1, 4).bytes_per_block();
  ModelRunnerConfig c = runner_->config();
  auto budget = runner_->ProfileKvCache();
  ASSERT_TRUE(budget.ok()) << budget.status().ToString();
  EXPECT_EQ(budget->bytes_per_block, per_block);
  EXPECT_GT(budget->activation_peak_bytes, 64u * 64 * 4);  // at least the hidden states of 64 tokens
  EXPECT_GT(budget->weight_bytes, 0u);
  EXPECT_GT(budget->num_blocks, 0u);
  // An explicit KV budget is used as is.
  c.kv_cache_memory_bytes = 10 * per_block + 5;
  auto r = ModelRunner::Create(c);
  ASSERT_TRUE(r.ok());
  auto b2 = (*r)->ProfileKvCache();
  ASSERT_TRUE(b2.ok());
  EXPECT_EQ(b2->num_blocks, 10u);
  c.kv_cache_memory_bytes = per_block / 2;
  r = ModelRunner::Create(c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->ProfileKvCache().status().code(), StatusCode::kResourceExhausted);
  // A cache larger than the address space is an error, not a crash.
  EXPECT_EQ((*r)->InitializeKvCache(size_t{1} << 50).code(), StatusCode::kResourceExhausted);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__has_feature)
  // (Sanitizer allocators abort on huge requests instead of throwing.)
  EXPECT_EQ((*r)->InitializeKvCache((size_t{1} << 47) / per_block).code(), StatusCode::kResourceExhausted);
#endif
  EXPECT_EQ((*r)->InitializeKvCache(0).code(), StatusCode::kInvalidArgument);
  // A bf16 cache fits twice the blocks in the same budget.
  c.kv_cache_memory_bytes = 10 * per_block + 5;
  c.kv_cache_dtype = kernels::cpu::KvDType::kBF16;
  r = ModelRunner::Create(c);
  ASSERT_TRUE(r.ok());
  auto b3 = (*r)->ProfileKvCache();
  ASSERT_TRUE(b3.ok());
  EXPECT_EQ(b3->num_blocks, 20u);
}

TEST_F(ModelRunnerTest, DummyWeightsAreRefusedOnTheCpu) {
  ModelRunnerConfig c = runner_->config();
  c.dummy_weights = true;
  auto r = ModelRunner::Create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("--load-format dummy (random weights) runs on --device cuda only"),
            std::string::npos)
      << r.status().ToString();
}

TEST(KvDTypeFor, AutoFollowsTheMatmulPrecision) {
  using kernels::cpu::KvDType;
  using kernels::cpu::MatmulPrecision;
  EXPECT_EQ(KvDTypeFor("auto", MatmulPrecision::kBF16), KvDType::kBF16);
  EXPECT_EQ(KvDTypeFor("", MatmulPrecision::kBF16), KvDType::kBF16);  // a config from before the field
  EXPECT_EQ(KvDTypeFor("auto", MatmulPrecision::kF32), KvDType::kF32);
  EXPECT_EQ(KvDTypeFor("float32", MatmulPrecision::kBF16), KvDType::kF32);
  EXPECT_EQ(KvDTypeFor("bfloat16", MatmulPrecision::kF32), KvDType::kBF16);
}

}  // namespace
}  // namespace llmserve::worker
