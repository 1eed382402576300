// LoRA adapters in the forward pass: greedy outputs against
// scripts/ref_forward.py's numpy forward over merged weights W + s·B·A, and
// a mixed batch of several adapters plus base rows giving each row bitwise
// what it gives alone.
#include <gtest/gtest.h>

#include "tests/worker/worker_test_util.h"
#include "worker/test_lora_adapter.h"

namespace llmserve::worker::lora_model_test {
namespace {

using kernels::cpu::MatmulPrecision;
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

std::unique_ptr<Model> LoadModel(const std::string& dir, MatmulPrecision precision, kernels::cpu::ThreadPool* pool) {
  LoadOptions opts;
  opts.precision = precision;
  opts.show_progress = false;
  auto model = Model::Load(dir, opts, nullptr, pool);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

int32_t LoadAdapter(Model& model, const std::string& name, const std::string& dir, size_t max_rank = 64) {
  LoraLimits limits;
  limits.max_rank = max_rank;
  auto slot = model.LoadLoraAdapter(name, dir, limits);
  EXPECT_TRUE(slot.ok()) << slot.status().ToString();
  return slot.ok() ? *slot : -1;
}

// Prefills `prompt` in `chunks` with adapter `slot` (-1: none), then decodes
// `new_tokens` greedily; returns every token and the logits of every position.
std::pair<std::vector<int32_t>, std::vector<float>> Greedy(Model& model, KvCache& cache, int32_t slot,
                                                           const std::vector<int32_t>& prompt,
                                                           const std::vector<size_t>& chunks, size_t new_tokens) {
  const size_t vocab = model.config().vocab_size, bs = cache.shape().block_size;
  const auto blocks = Blocks(0, 12);
  std::vector<int32_t> tokens;
  std::vector<float> logits;
  size_t ci = 0;
  while (tokens.size() < prompt.size() + new_tokens - 1) {
    std::vector<int32_t> chunk;
    if (tokens.size() < prompt.size()) {
      const size_t n = std::min(chunks[ci++ % chunks.size()], prompt.size() - tokens.size());
      chunk.assign(prompt.begin() + tokens.size(), prompt.begin() + tokens.size() + n);
    } else {
      chunk.push_back(Argmax(&logits[(tokens.size() - 1) * vocab], vocab));
    }
    ForwardBatch b;
    b.AddRequest(chunk, static_cast<int32_t>(tokens.size()), blocks, bs, false, slot);
    for (size_t i = 0; i < chunk.size(); ++i) b.logits_indices.push_back(static_cast<int32_t>(i));
    b.FinishBlockTables();
    std::vector<float> step;
    Status st = model.Forward(b, cache, &step);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) break;
    logits.insert(logits.end(), step.begin(), step.end());
    tokens.insert(tokens.end(), chunk.begin(), chunk.end());
  }
  tokens.push_back(Argmax(&logits[(tokens.size() - 1) * vocab], vocab));
  return {tokens, logits};
}

// Our f32 logits with the adapter within 1e-4 (relative) of numpy's over
// the merged weights, the same greedy tokens, and far from the base model's.
void CheckAgainstReference(const TestModelSpec& spec, const TestLoraSpec& lora, size_t prompt_len,
                           const std::vector<size_t>& chunks) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  ScratchDir dir;
  const std::string model_dir = dir / "model", adapter_dir = dir / "adapter";
  ASSERT_TRUE(WriteTestModel(spec, model_dir).ok());
  Status st = WriteTestLoraAdapter(lora, model_dir, adapter_dir);
  ASSERT_TRUE(st.ok()) << st.ToString();
  kernels::cpu::ThreadPool pool(2);
  auto model = LoadModel(model_dir, MatmulPrecision::kF32, &pool);
  ASSERT_NE(model, nullptr);
  const int32_t slot = LoadAdapter(*model, "ad", adapter_dir);
  ASSERT_GE(slot, 0);
  KvCache cache(model->CacheShape(16, 8));
  const size_t vocab = spec.vocab_size, new_tokens = 6;
  const auto [tokens, ours] = Greedy(*model, cache, slot, Prompt(prompt_len, vocab, 5), chunks, new_tokens);
  const std::vector<int32_t> fed(tokens.begin(), tokens.end() - 1);
  const auto ref = testing::ReferenceLogits(model_dir, fed, vocab, dir / "ref.f32", "--lora " + adapter_dir);
  const auto base = testing::ReferenceLogits(model_dir, fed, vocab, dir / "base.f32");
  ASSERT_EQ(ours.size(), ref.size());
  const double err = testing::MaxRelativeError(ours, ref), base_err = testing::MaxRelativeError(ours, base);
  EXPECT_LE(err, 1e-4) << "max relative error vs ref_forward.py --lora";
  EXPECT_GT(err, 0.0) << "bitwise equal to numpy: suspicious";
  EXPECT_GT(base_err, 100 * err) << "the adapter barely changes the logits: the test could not tell";
  std::printf("%s rank %zu: max relative error vs merged numpy %.3g, vs base %.3g\n", spec.arch.c_str(), lora.rank,
              err, base_err);
  for (size_t p = prompt_len; p < tokens.size(); ++p) {
    EXPECT_EQ(tokens[p], Argmax(&ref[(p - 1) * vocab], vocab)) << "greedy token at position " << p;
  }
}

TEST(LoraReference, Qwen3AllSevenProjectionsMatchMergedNumpy) {
  auto s = testing::TinySpec("qwen3", 51);
  s.dtype = "f32";
  TestLoraSpec l;
  l.rank = 8;
  l.lora_alpha = 16;
  CheckAgainstReference(s, l, 13, {5, 1, 7});
}

TEST(LoraReference, LlamaRsLoraAttentionOnlyBf16FactorsMatchMergedNumpy) {
  auto s = testing::TinySpec("llama", 52);
  s.tie_word_embeddings = false;
  TestLoraSpec l;
  l.rank = 16;
  l.lora_alpha = 8;
  l.use_rslora = true;
  l.targets = {"q_proj", "v_proj", "o_proj"};
  l.dtype = "bf16";
  l.std = 0.08;
  CheckAgainstReference(s, l, 11, {11});
}

TEST(LoraReference, Qwen3MoeAttentionAdapterMatchesMergedNumpy) {
  auto s = testing::TinySpec("qwen3_moe", 53);
  s.num_layers = 3;
  s.mlp_only_layers = {1};  // the dense layer takes the MLP targets
  TestLoraSpec l;
  l.rank = 4;
  CheckAgainstReference(s, l, 9, {4, 5});
}

// Four adapters and base rows in one batch, prefill chunks and decodes mixed:
// each request's logits are bitwise what it gives alone, at both precisions.
class LoraInvarianceTest : public ::testing::TestWithParam<MatmulPrecision> {};

TEST_P(LoraInvarianceTest, MixedAdaptersGiveEachRowWhatItGivesAlone) {
  ScratchDir dir;
  auto spec = testing::TinySpec("qwen3", 61);
  ASSERT_TRUE(WriteTestModel(spec, dir / "m").ok());
  kernels::cpu::ThreadPool pool(2);
  auto model = LoadModel(dir / "m", GetParam(), &pool);
  ASSERT_NE(model, nullptr);
  std::vector<int32_t> slots = {-1};
  for (int i = 0; i < 4; ++i) {
    TestLoraSpec l;
    l.rank = 4 << (i % 3);  // ranks 4, 8, 16, 4
    l.seed = 100 + i;
    if (i == 3) l.targets = {"v_proj", "down_proj"};
    const std::string ad = dir / ("a" + std::to_string(i));
    ASSERT_TRUE(WriteTestLoraAdapter(l, dir / "m", ad).ok());
    slots.push_back(LoadAdapter(*model, "a" + std::to_string(i), ad));
  }
  const size_t vocab = model->config().vocab_size, bs = 4, n = slots.size();
  KvCache cache(model->CacheShape(128, bs));
  std::vector<std::vector<int32_t>> prompts;
  for (size_t r = 0; r < n; ++r) prompts.push_back(Prompt(6 + 3 * r, vocab, static_cast<uint32_t>(r)));
  // Alone: each request prefilled in one step, then 3 decode steps of fixed tokens.
  const std::vector<int32_t> decodes = {7, 11, 13};
  auto run_alone = [&](size_t r) {
    std::vector<float> out;
    const auto blocks = Blocks(static_cast<int32_t>(r * 6), 6);
    int32_t pos = 0;
    for (size_t step = 0; step <= decodes.size(); ++step) {
      ForwardBatch b;
      const std::vector<int32_t> chunk = step == 0 ? prompts[r] : std::vector<int32_t>{decodes[step - 1]};
      b.AddRequest(chunk, pos, blocks, bs, true, slots[r]);
      b.FinishBlockTables();
      std::vector<float> logits;
      EXPECT_TRUE(model->Forward(b, cache, &logits).ok());
      out.insert(out.end(), logits.begin(), logits.end());
      pos += static_cast<int32_t>(chunk.size());
    }
    return out;
  };
  std::vector<std::vector<float>> alone(n);
  for (size_t r = 0; r < n; ++r) alone[r] = run_alone(r);
  // The base row differs from every adapter's (the adapters act).
  for (size_t r = 1; r < n; ++r) EXPECT_FALSE(alone[r] == alone[0]) << "adapter " << r - 1 << " changes nothing";
  // Together, in reverse order, in other blocks; requests join one step apart.
  std::vector<std::vector<float>> mixed(n);
  std::vector<int32_t> pos(n, 0);
  std::vector<size_t> steps_done(n, 0);
  for (size_t step = 0; step < n + decodes.size(); ++step) {
    ForwardBatch b;
    std::vector<size_t> in_batch;
    for (size_t k = 0; k < n; ++k) {
      const size_t r = n - 1 - k;
      if (r > step || steps_done[r] > decodes.size()) continue;
      const size_t s = steps_done[r];
      const std::vector<int32_t> chunk = s == 0 ? prompts[r] : std::vector<int32_t>{decodes[s - 1]};
      b.AddRequest(chunk, pos[r], Blocks(static_cast<int32_t>(64 + r * 6), 6), bs, true, slots[r]);
      pos[r] += static_cast<int32_t>(chunk.size());
      ++steps_done[r];
      in_batch.push_back(r);
    }
    b.FinishBlockTables();
    std::vector<float> logits;
    ASSERT_TRUE(model->Forward(b, cache, &logits).ok());
    for (size_t i = 0; i < in_batch.size(); ++i) {
      mixed[in_batch[i]].insert(mixed[in_batch[i]].end(), logits.begin() + i * vocab, logits.begin() + (i + 1) * vocab);
    }
  }
  for (size_t r = 0; r < n; ++r) {
    ASSERT_EQ(mixed[r].size(), alone[r].size()) << "request " << r;
    EXPECT_TRUE(mixed[r] == alone[r]) << "request " << r << " (adapter slot " << slots[r] << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, LoraInvarianceTest, ::testing::Values(MatmulPrecision::kF32, MatmulPrecision::kBF16),
                         [](const ::testing::TestParamInfo<MatmulPrecision>& info) {
                           return info.param == MatmulPrecision::kF32 ? std::string("F32") : std::string("Bf16");
                         });

// A batch naming a slot that holds no adapter is an error, not a crash.
TEST(LoraModel, UnknownSlotIsAnError) {
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 62), dir / "m").ok());
  kernels::cpu::ThreadPool pool(1);
  auto model = LoadModel(dir / "m", MatmulPrecision::kF32, &pool);
  ASSERT_NE(model, nullptr);
  KvCache cache(model->CacheShape(8, 4));
  ForwardBatch b;
  b.AddRequest({1, 2, 3}, 0, Blocks(0, 1), 4, true, 0);
  b.FinishBlockTables();
  std::vector<float> logits;
  const Status st = model->Forward(b, cache, &logits);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no LoRA adapter in slot 0"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace llmserve::worker::lora_model_test
