// The mixture-of-experts architectures (Qwen3-MoE, Mixtral) against
// scripts/ref_forward.py (numpy, from the Hugging Face modeling equations) on
// generated checkpoints, and their batch invariance.
#include <gtest/gtest.h>

#include "common/gguf/ggml_type.h"
#include "tests/worker/worker_test_util.h"
#include "worker/gguf_export.h"
#include "worker/model_runner.h"

// A named namespace: the unity build puts this file beside others with the same helper names.
namespace llmserve::worker::moe_model_test {
namespace {

using testing::Blocks;
using testing::Prompt;
using testing::ScratchDir;

int32_t Argmax(const float* row, size_t n) {
  size_t best = 0;
  for (size_t v = 1; v < n; ++v) {
    if (row[v] > row[best]) best = v;
  }
  return static_cast<int32_t>(best);
}

std::unique_ptr<Model> LoadModel(const std::string& dir, kernels::cpu::MatmulPrecision precision,
                                 kernels::cpu::ThreadPool* pool) {
  LoadOptions opts;
  opts.precision = precision;
  opts.show_progress = false;
  auto model = Model::Load(dir, opts, nullptr, pool);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

// Prefills `prompt` in `chunks`, then decodes `new_tokens` greedily one step
// at a time; returns every token and the logits of every position.
std::pair<std::vector<int32_t>, std::vector<float>> Greedy(Model& model, KvCache& cache,
                                                           const std::vector<int32_t>& prompt,
                                                           const std::vector<size_t>& chunks, size_t new_tokens) {
  const size_t vocab = model.config().vocab_size;
  const auto blocks = Blocks(2, 12);
  std::vector<int32_t> tokens = prompt;
  std::vector<float> logits = testing::RunPrompt(model, cache, prompt, chunks, blocks);
  for (size_t i = 0; i < new_tokens; ++i) {
    tokens.push_back(Argmax(&logits[(tokens.size() - 1) * vocab], vocab));
    if (i + 1 == new_tokens) break;
    ForwardBatch b;
    b.AddRequest({tokens.back()}, static_cast<int32_t>(tokens.size() - 1), blocks, cache.shape().block_size, true);
    b.FinishBlockTables();
    std::vector<float> step;
    Status st = model.Forward(b, cache, &step);
    EXPECT_TRUE(st.ok()) << st.ToString();
    logits.insert(logits.end(), step.begin(), step.end());
  }
  return {tokens, logits};
}

// Our f32 logits within 1e-4 (relative to the largest) of numpy's at every
// position, and the greedy tokens numpy's argmax would pick.
void CheckAgainstReference(const TestModelSpec& spec, size_t prompt_len, const std::vector<size_t>& chunks) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  ScratchDir dir;
  const std::string model_dir = dir / "model";
  Status st = WriteTestModel(spec, model_dir);
  ASSERT_TRUE(st.ok()) << st.ToString();
  kernels::cpu::ThreadPool pool(2);
  auto model = LoadModel(model_dir, kernels::cpu::MatmulPrecision::kF32, &pool);
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->config().has_moe());
  KvCache cache(model->CacheShape(16, 8));
  const size_t vocab = spec.vocab_size, new_tokens = 6;
  const auto [tokens, ours] = Greedy(*model, cache, Prompt(prompt_len, vocab, static_cast<uint32_t>(spec.seed)),
                                     chunks, new_tokens);
  // The reference over every token but the last (whose logits we did not compute).
  const std::vector<int32_t> fed(tokens.begin(), tokens.end() - 1);
  const auto ref = testing::ReferenceLogits(model_dir, fed, vocab, dir / "ref.f32");
  ASSERT_EQ(ours.size(), ref.size());
  const double err = testing::MaxRelativeError(ours, ref);
  EXPECT_LE(err, 1e-4) << "max relative error vs ref_forward.py";
  EXPECT_GT(err, 0.0) << "bitwise equal to numpy: suspicious";
  std::printf("%s: max relative error vs ref_forward.py: %.3g\n", spec.arch.c_str(), err);
  for (size_t p = 0; p < fed.size(); ++p) {
    EXPECT_EQ(Argmax(&ours[p * vocab], vocab), Argmax(&ref[p * vocab], vocab)) << "position " << p;
  }
  for (size_t p = prompt_len; p < tokens.size(); ++p) {
    EXPECT_EQ(tokens[p], Argmax(&ref[(p - 1) * vocab], vocab)) << "greedy token at position " << p;
  }
}

TEST(MoeReference, Qwen3MoeNormTopKMatchesNumpy) {
  auto s = testing::TinySpec("qwen3_moe", 21);
  s.num_layers = 3;
  s.mlp_only_layers = {1};  // a dense layer between two sparse ones
  CheckAgainstReference(s, 17, {5, 1, 7});
}

TEST(MoeReference, Qwen3MoeUnnormalisedSparseStepMatchesNumpy) {
  auto s = testing::TinySpec("qwen3_moe", 22);
  s.num_layers = 4;
  s.norm_topk_prob = false;
  s.decoder_sparse_step = 2;  // layers 1 and 3 sparse
  s.num_experts = 6;
  s.num_experts_per_tok = 3;
  s.tie_word_embeddings = false;
  CheckAgainstReference(s, 15, {15});
}

TEST(MoeReference, MixtralSlidingWindowMatchesNumpy) {
  auto s = testing::TinySpec("mixtral", 23);
  s.tie_word_embeddings = false;
  s.sliding_window = 6;
  s.rope_theta = 1000000;
  s.num_experts = 4;
  s.intermediate_size = 48;
  s.dtype = "f32";
  CheckAgainstReference(s, 16, {4, 2});
}

// DeepSeek-V3 (absorbed latent attention here, the naive form in numpy): a
// q LoRA; sigmoid scores plus the correction bias, 2 of 4 groups by their
// top-2 sums, weights renormalised then scaled by 2.5; a shared expert; one
// dense layer first; yarn's mscale² in the softmax scale.
TEST(MoeReference, DeepseekV3MatchesNumpy) {
  auto s = testing::TinySpec("deepseek_v3", 24);
  s.num_layers = 3;
  s.routed_scaling_factor = 2.5;
  s.rope_scaling_json = R"({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
                            "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0})";
  CheckAgainstReference(s, 17, {5, 1, 7});
}

// DeepSeek-V2: q_proj without a LoRA, softmax scores, 2 of 4 groups by their
// best expert, weights not renormalised, two shared experts, every layer MoE.
TEST(MoeReference, DeepseekV2MatchesNumpy) {
  auto s = testing::TinySpec("deepseek_v2", 25);
  s.num_layers = 2;
  s.q_lora_rank = 0;
  s.norm_topk_prob = false;
  s.n_shared_experts = 2;
  s.first_k_dense_replace = 0;
  s.num_experts_per_tok = 3;
  s.routed_scaling_factor = 1.5;
  s.tie_word_embeddings = false;
  s.dtype = "f32";
  CheckAgainstReference(s, 15, {15});
}

// The cache holds one latent row (kv_lora_rank + qk_rope_head_dim values) a
// token and layer, not a K and a V per head.
TEST(MoeModel, DeepseekCacheHoldsOnlyTheLatent) {
  ScratchDir dir;
  auto s = testing::TinySpec("deepseek_v3", 26);
  ASSERT_TRUE(WriteTestModel(s, dir / "m").ok());
  kernels::cpu::ThreadPool pool(1);
  auto model = LoadModel(dir / "m", kernels::cpu::MatmulPrecision::kBF16, &pool);
  ASSERT_NE(model, nullptr);
  const KvCacheShape shape = model->CacheShape(10, 16, kernels::cpu::KvDType::kBF16);
  EXPECT_TRUE(shape.latent);
  EXPECT_EQ(shape.bytes_per_block(), s.num_layers * 16 * (s.kv_lora_rank + s.qk_rope_head_dim) * 2);
  KvCache cache(shape);
  EXPECT_EQ(cache.bytes(), 10 * shape.bytes_per_block());
  const auto lora = model->LoadLoraAdapter("a", dir / "none", LoraLimits{});
  EXPECT_NE(lora.status().message().find("multi-head latent attention"), std::string::npos)
      << lora.status().ToString();
  KvCache fp8(model->CacheShape(10, 16, kernels::cpu::KvDType::kFp8E4M3));
  ForwardBatch b;
  b.AddRequest({1, 2, 3}, 0, Blocks(0, 1), 16, true);
  b.FinishBlockTables();
  std::vector<float> logits;
  const Status st = model->Forward(b, fp8, &logits);
  EXPECT_NE(st.message().find("fp8 KV cache is not supported"), std::string::npos) << st.ToString();
}

// A rotary part wider than MlaLayer takes is a config error, not a crash.
TEST(MoeModel, DeepseekTooWideRotaryPartIsAConfigError) {
  ScratchDir dir;
  auto s = testing::TinySpec("deepseek_v2", 27);
  s.qk_rope_head_dim = 2 * kMaxMlaRopeDim;
  ASSERT_TRUE(WriteTestModel(s, dir / "m", /*with_weights=*/false).ok());
  const auto config = LoadModelConfig(dir / "m");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("qk_rope_head_dim"), std::string::npos) << config.status().ToString();
}

// A request's logits are bitwise the same alone and in batches with others
// (which change which rows each expert gets), at both matmul precisions.
class MoeInvarianceTest : public ::testing::TestWithParam<kernels::cpu::MatmulPrecision> {};

void ExpectBatchInvariant(const TestModelSpec& spec, kernels::cpu::MatmulPrecision precision,
                          kernels::cpu::KvDType kv_dtype);

TEST_P(MoeInvarianceTest, BatchCompositionDoesNotChangeLogits) {
  auto spec = testing::TinySpec("qwen3_moe", 31);
  spec.num_layers = 3;
  spec.num_experts = 6;
  spec.num_experts_per_tok = 3;  // three terms: the order of the sum matters
  ExpectBatchInvariant(spec, GetParam(), kernels::cpu::KvDType::kF32);
}

// DeepSeek-V3: latent attention over a bf16 cache, grouped routing, a shared expert.
TEST_P(MoeInvarianceTest, DeepseekBatchCompositionDoesNotChangeLogits) {
  auto spec = testing::TinySpec("deepseek_v3", 32);
  spec.num_layers = 3;
  spec.num_experts_per_tok = 3;
  spec.routed_scaling_factor = 2.5;
  ExpectBatchInvariant(spec, GetParam(), kernels::cpu::KvDType::kBF16);
}

void ExpectBatchInvariant(const TestModelSpec& spec, kernels::cpu::MatmulPrecision precision,
                          kernels::cpu::KvDType kv_dtype) {
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(spec, dir / "m").ok());
  kernels::cpu::ThreadPool pool(2);
  auto model = LoadModel(dir / "m", precision, &pool);
  ASSERT_NE(model, nullptr);
  KvCache cache(model->CacheShape(64, 4, kv_dtype));
  const size_t vocab = model->config().vocab_size;
  const auto x = Prompt(11, vocab, 1);
  const auto alone = testing::RunPrompt(*model, cache, x, {8, 1}, Blocks(0, 3));
  const auto other = Prompt(30, vocab, 2), third = Prompt(9, vocab, 3);
  std::vector<float> mixed;
  size_t done = 0, other_done = 0;
  for (size_t step = 0; done < x.size(); ++step) {
    const size_t n = done == 0 ? 8 : 1;
    ForwardBatch b;
    if (step % 2 == 0) b.AddRequest(third, 0, Blocks(40, 3), 4, true);
    const size_t on = std::min<size_t>(step % 2 ? 7 : 3, other.size() - other_done);
    if (on > 0) {
      b.AddRequest(std::vector<int32_t>(other.begin() + other_done, other.begin() + other_done + on),
                   static_cast<int32_t>(other_done), Blocks(20, 8), 4, true);
    }
    const size_t first_x = b.num_tokens(), logits_before = b.logits_indices.size();
    b.AddRequest(std::vector<int32_t>(x.begin() + done, x.begin() + done + n), static_cast<int32_t>(done),
                 Blocks(50, 3), 4, false);
    for (size_t i = 0; i < n; ++i) b.logits_indices.push_back(static_cast<int32_t>(first_x + i));
    b.FinishBlockTables();
    std::vector<float> logits;
    ASSERT_TRUE(model->Forward(b, cache, &logits).ok());
    mixed.insert(mixed.end(), logits.begin() + logits_before * vocab, logits.begin() + (logits_before + n) * vocab);
    done += n;
    other_done += on;
  }
  ASSERT_EQ(mixed.size(), alone.size());
  EXPECT_TRUE(mixed == alone);
  // And chunking the prompt differently changes nothing either.
  const auto chunked = testing::RunPrompt(*model, cache, x, {3, 1, 4}, Blocks(10, 3));
  EXPECT_TRUE(chunked == alone);
}

INSTANTIATE_TEST_SUITE_P(Precisions, MoeInvarianceTest,
                         ::testing::Values(kernels::cpu::MatmulPrecision::kF32, kernels::cpu::MatmulPrecision::kBF16),
                         [](const ::testing::TestParamInfo<kernels::cpu::MatmulPrecision>& info) {
                           return info.param == kernels::cpu::MatmulPrecision::kF32 ? std::string("F32")
                                                                                    : std::string("Bf16");
                         });

// What does not run MoE yet says so: the CUDA backend, GGUF export of DeepSeek.
TEST(MoeModel, CudaAndGgufRefuseClearly) {
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("mixtral", 41), dir / "m").ok());
  ModelRunnerConfig c;
  c.model_dir = dir / "m";
  c.device = "cuda";
  c.block_size = 4;
  c.num_threads = 1;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 8;
  c.show_progress = false;
  auto runner = ModelRunner::Create(c);
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.status().message().find("MixtralForCausalLM (mixture of experts) runs on the CPU backend only"),
            std::string::npos)
      << runner.status().ToString();
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("deepseek_v2", 41), dir / "d").ok());
  const Status gguf = ExportGguf(dir / "d", common::gguf::GgmlType::kF16, dir / "d.gguf");
  EXPECT_NE(gguf.message().find("multi-head latent attention"), std::string::npos) << gguf.ToString();
  c.device = "cpu";
  EXPECT_TRUE(ModelRunner::Create(c).ok());
}

}  // namespace
}  // namespace llmserve::worker::moe_model_test
