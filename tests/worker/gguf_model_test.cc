// GGUF models: config and weights from a .gguf file. A tiny model exported
// as F32 GGUF runs bitwise like its safetensors original; quantized exports
// match scripts/ref_forward.py over the dequantised weights; bad files give
// errors naming the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>

#include "common/gguf/gguf_file.h"
#include "common/gguf/gguf_writer.h"
#include "tests/worker/worker_test_util.h"
#include "worker/gguf_export.h"
#include "worker/gguf_model_loader.h"

namespace llmserve::worker {
namespace {

using common::gguf::GgmlType;
using common::gguf::GgufFile;
using common::gguf::GgufWriter;
using testing::Prompt;
using testing::ScratchDir;

// Writes `spec` as safetensors into DIR/hf and as GGUF `type` into DIR/gguf/model.gguf.
void WriteBoth(const TestModelSpec& spec, const GgufWeightTypes& types, const ScratchDir& dir) {
  Status st = WriteTestModel(spec, dir / "hf");
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::filesystem::create_directories(dir / "gguf");
  st = ExportGguf(dir / "hf", types, dir / "gguf/model.gguf");
  ASSERT_TRUE(st.ok()) << st.ToString();
}

// Logits of `tokens` (f32 KV cache); `kept_layers` counts the layers whose
// qkv and down weights (every expert's gate_up and down) stayed quantized
// (Q8_0 or K-quants).
std::vector<float> Logits(const std::string& model_dir, const std::vector<int32_t>& tokens,
                          kernels::cpu::MatmulPrecision precision = kernels::cpu::MatmulPrecision::kF32,
                          size_t* kept_layers = nullptr) {
  kernels::cpu::ThreadPool pool(2);
  LoadOptions opts;
  opts.precision = precision;
  opts.show_progress = false;
  auto model = Model::Load(model_dir, opts, nullptr, &pool);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return {};
  if (kept_layers != nullptr) {
    auto kept = [](const kernels::cpu::LinearWeight& w) { return w.is_q8_0() || w.is_k_quant(); };
    *kept_layers = 0;
    for (const auto& layer : (*model)->weights().layers) {
      bool mlp = layer.moe.empty() ? kept(layer.down) : true;
      for (const auto& e : layer.moe.experts) mlp = mlp && kept(e.gate_up) && kept(e.down);
      *kept_layers += kept(layer.qkv) && mlp;
    }
  }
  KvCache cache((*model)->CacheShape(16, 8));
  return testing::RunPrompt(**model, cache, tokens, {5, 3}, testing::Blocks(1, 8));
}

void ExpectSameConfig(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_FLOAT_EQ(static_cast<float>(a.rms_norm_eps), static_cast<float>(b.rms_norm_eps));
  EXPECT_FLOAT_EQ(static_cast<float>(a.rope_theta), static_cast<float>(b.rope_theta));
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.qkv_bias, b.qkv_bias);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
}

void CheckF32MatchesSafetensors(const TestModelSpec& spec) {
  ScratchDir dir;
  WriteBoth(spec, GgmlType::kF32, dir);
  auto hf = LoadModelConfig(dir / "hf");
  auto gguf = LoadModelConfig(dir / "gguf");
  ASSERT_TRUE(hf.ok() && gguf.ok()) << hf.status().ToString() << gguf.status().ToString();
  const std::map<std::string, Architecture> arch = {
      {"qwen3", Architecture::kQwen3}, {"qwen2", Architecture::kQwen2}, {"llama", Architecture::kLlama},
      {"qwen3_moe", Architecture::kQwen3Moe}, {"mixtral", Architecture::kMixtral}};
  EXPECT_EQ(gguf->architecture, arch.at(spec.arch));
  EXPECT_EQ(gguf->moe.num_experts, hf->moe.num_experts);
  EXPECT_EQ(gguf->moe.num_experts_per_tok, hf->moe.num_experts_per_tok);
  EXPECT_EQ(gguf->moe.intermediate_size, hf->moe.intermediate_size);
  ExpectSameConfig(*hf, *gguf);
  const auto tokens = Prompt(13, spec.vocab_size);
  const auto a = Logits(dir / "hf", tokens), b = Logits(dir / "gguf", tokens);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b) << "F32 GGUF logits differ from safetensors";
}

TEST(GgufModel, LlamaF32MatchesSafetensorsBitwise) {
  auto s = testing::TinySpec("llama", 3);
  s.tie_word_embeddings = false;
  CheckF32MatchesSafetensors(s);
}

TEST(GgufModel, Qwen3F32MatchesSafetensorsBitwise) { CheckF32MatchesSafetensors(testing::TinySpec("qwen3", 4)); }

TEST(GgufModel, Qwen2BiasF32MatchesSafetensorsBitwise) {
  auto s = testing::TinySpec("qwen2", 5);
  s.tie_word_embeddings = false;
  CheckF32MatchesSafetensors(s);
}

TEST(GgufModel, LlamaPermutationRoundTrips) {
  for (size_t hd : {2u, 8u, 16u}) {
    std::vector<bool> seen(3 * hd);
    for (size_t r = 0; r < 3 * hd; ++r) {
      const size_t g = LlamaGgufRow(r, hd);
      ASSERT_LT(g, 3 * hd);
      EXPECT_EQ(g / hd, r / hd) << "rows stay in their head";
      EXPECT_FALSE(seen[g]);
      seen[g] = true;
    }
  }
  EXPECT_EQ(LlamaGgufRow(1, 8), 2u);  // HF [2, 4] → GGUF [4, 2]: row (0, 1) lands at (1, 0)
  EXPECT_EQ(LlamaGgufRow(4, 8), 1u);
}

// A spec whose matrices are whole 256-value K-quant super-blocks per row.
TestModelSpec KQuantSpec(const std::string& arch, uint64_t seed) {
  auto s = testing::TinySpec(arch, seed);
  s.hidden_size = 256;
  s.num_heads = 8;
  s.num_kv_heads = 4;
  s.head_dim = 32;
  s.intermediate_size = 256;
  s.tie_word_embeddings = false;
  return s;
}

class GgufQuantized : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufQuantized, MatchesNumpyOnDequantisedWeights) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  auto type = ParseGgufWeightType(GetParam());
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  const bool k_quant = std::string(GetParam()).find("_k") != std::string::npos;
  const auto s = k_quant ? KQuantSpec("llama", 9) : testing::TinySpec("qwen3", 9);
  ScratchDir dir;
  WriteBoth(s, *type, dir);
  const auto tokens = Prompt(11, s.vocab_size);
  const auto ours = Logits(dir / "gguf", tokens);
  const auto ref = testing::ReferenceLogits(dir / "gguf", tokens, s.vocab_size, dir / "ref.f32");
  const double err = testing::MaxRelativeError(ours, ref);
  EXPECT_LE(err, 1e-3) << "max relative error vs ref_forward.py";
  EXPECT_GT(err, 0.0) << "bitwise equal to numpy: suspicious";
}

// Mixtures of experts as llama.cpp writes them: qwen3moe, and Mixtral as
// llama with expert_count; the experts stacked in 3-d tensors.
TEST(GgufModel, Qwen3MoeF32MatchesSafetensorsBitwise) {
  auto s = testing::TinySpec("qwen3_moe", 6);
  s.num_experts = 6;
  s.num_experts_per_tok = 3;
  CheckF32MatchesSafetensors(s);
}

TEST(GgufModel, MixtralF32MatchesSafetensorsBitwise) {
  auto s = testing::TinySpec("mixtral", 7);
  s.tie_word_embeddings = false;
  CheckF32MatchesSafetensors(s);
}

// The model of spec `s` written as `type` runs with those weights kept
// quantized (every layer) and its activations quantized on the way in;
// ref_forward.py with `ref_flag` computes the same
// (testing::ExpectMatchesQuantizedReference). Returns (ours, reference) logits.
std::pair<std::vector<float>, std::vector<float>> CheckKeptQuantized(const TestModelSpec& s,
                                                                     const GgufWeightTypes& types,
                                                                     const std::string& ref_flag,
                                                                     const std::string& label) {
  ScratchDir dir;
  WriteBoth(s, types, dir);
  const auto tokens = Prompt(11, s.vocab_size);
  size_t kept_layers = 0;
  auto ours = Logits(dir / "gguf", tokens, kernels::cpu::MatmulPrecision::kBF16, &kept_layers);
  EXPECT_EQ(kept_layers, s.num_layers);
  auto q_ref = testing::ReferenceLogits(dir / "gguf", tokens, s.vocab_size, dir / "quantized.f32", ref_flag);
  const auto plain_ref = testing::ReferenceLogits(dir / "gguf", tokens, s.vocab_size, dir / "ref.f32");
  testing::ExpectMatchesQuantizedReference(label + " (" + ref_flag + ")", ours, q_ref, plain_ref, s.vocab_size);
  return {std::move(ours), std::move(q_ref)};
}

// Outside the f32 reference mode Q8_0 weights stay int8 and the activations
// entering them are quantized per block: ref_forward.py --q8-activations.
TEST(GgufModel, Q8_0KeptQuantizedMatchesNumpyWithQuantizedActivations) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  CheckKeptQuantized(testing::TinySpec("qwen3", 9), GgmlType::kQ8_0, "--q8-activations", "Q8_0 int8 path");
}

// Q4_0 and Q5_0 are scale × int8 per block too: they run on the same int8
// kernels (one byte a weight) with the same activation quantization.
TEST(GgufModel, Q4_0AndQ5_0KeptAsInt8MatchNumpyWithQuantizedActivations) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  CheckKeptQuantized(testing::TinySpec("llama", 10), GgmlType::kQ4_0, "--q8-activations", "Q4_0 int8 path");
  CheckKeptQuantized(testing::TinySpec("qwen3", 10), GgmlType::kQ5_0, "--q8-activations", "Q5_0 int8 path");
}

// Outside the f32 reference mode K-quant weights stay 4-, 5- or 6-bit and the
// activations entering them are quantized per 256 as llama.cpp's Q8_K:
// ref_forward.py --kquant-activations computes the same (llama: the q/k rows
// are permuted). Q4_K_M mixes Q4_K and Q6_K inside one stacked weight.
class GgufKQuantKept : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufKQuantKept, MatchesNumpyWithQuantizedActivations) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  auto types = ParseGgufWeightTypes(GetParam());
  ASSERT_TRUE(types.ok()) << types.status().ToString();
  const auto s = KQuantSpec("llama", 11);
  const auto [ours, q_ref] =
      CheckKeptQuantized(s, *types, "--kquant-activations", std::string(GetParam()) + " integer path");
  EXPECT_EQ(testing::ArgmaxPerRow(ours, s.vocab_size), testing::ArgmaxPerRow(q_ref, s.vocab_size));
}

INSTANTIATE_TEST_SUITE_P(Types, GgufKQuantKept, ::testing::Values("q4_k", "q5_k", "q6_k", "q4_k_m"));

INSTANTIATE_TEST_SUITE_P(Types, GgufQuantized,
                         ::testing::Values("f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k",
                                           "q6_k"));

// Copies `src` to `dst` with tensor `drop` left out, tensor `replace` given
// dims {cols, 3} of F32 zeros, and metadata `key` set to `value` (removed
// when `value` is empty).
void Rewrite(const std::string& src, const std::string& dst, const std::string& drop, const std::string& replace,
             const std::string& key, std::optional<common::gguf::GgufValue> value) {
  auto f = GgufFile::Open(src);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  GgufWriter w;
  for (const auto& [k, v] : (*f)->metadata().entries()) {
    if (k != "general.alignment" && k != key) w.Set(k, v);
  }
  if (!key.empty() && value.has_value()) w.Set(key, *value);
  for (const auto& t : (*f)->tensors()) {
    if (t.name == drop) continue;
    if (t.name == replace) {
      ASSERT_TRUE(w.Add(t.name, {t.dims[0], 3}, GgmlType::kF32, std::vector<float>(t.dims[0] * 3)).ok());
      continue;
    }
    ASSERT_TRUE(w.AddRaw(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.num_bytes)).ok());
  }
  std::filesystem::create_directories(std::filesystem::path(dst).parent_path());
  ASSERT_TRUE(w.WriteFile(dst).ok());
}

Status LoadAll(const std::string& path, size_t tp_size = 1) {
  LLMSERVE_ASSIGN_OR_RETURN(ModelConfig c, LoadModelConfig(path));
  LoadOptions o;
  o.tp_size = tp_size;
  o.show_progress = false;
  return LoadModelWeights(path, c, o).status();
}

void ExpectError(const Status& st, std::initializer_list<const char*> words) {
  ASSERT_FALSE(st.ok());
  for (const char* w : words) EXPECT_NE(st.ToString().find(w), std::string::npos) << st.ToString();
}

// A Q4_K_M file mixes types as llama.cpp's does (attn_v and ffn_down Q6_K in
// some layers, the output layer Q6_K): every matrix stays packed, the stacked
// q, k, v too, except in the f32 reference mode, which dequantizes them all.
TEST(GgufModel, Q4_K_MKeepsMixedStacksPacked) {
  auto s = KQuantSpec("qwen3", 12);
  s.num_layers = 4;  // layer 3 (the last eighth) and 2 ((2 - 4 / 8) % 3 == 2) get Q6_K
  ScratchDir dir;
  WriteBoth(s, GgufWeightTypes(GgmlType::kQ4_K, GgmlType::kQ6_K), dir);
  auto f = GgufFile::Open(dir / "gguf/model.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto type = [&](const std::string& name) { return (*f)->FindTensor(name)->type; };
  EXPECT_EQ(type("blk.2.attn_q.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type("blk.2.attn_v.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type("blk.1.attn_v.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type("blk.1.ffn_down.weight"), GgmlType::kQ4_K);
  EXPECT_EQ(type("blk.3.ffn_down.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type("output.weight"), GgmlType::kQ6_K);
  auto c = LoadModelConfig(dir / "gguf/model.gguf");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  LoadOptions o;
  o.precision = kernels::cpu::MatmulPrecision::kBF16;
  o.show_progress = false;
  auto weights = LoadModelWeights(dir / "gguf/model.gguf", *c, o);
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  for (const auto& l : weights->layers) {
    EXPECT_TRUE(l.qkv.is_k_quant() && l.o.is_k_quant() && l.gate_up.is_k_quant() && l.down.is_k_quant());
  }
  EXPECT_TRUE(weights->lm_head.is_k_quant());
  o.precision = kernels::cpu::MatmulPrecision::kF32;
  weights = LoadModelWeights(dir / "gguf/model.gguf", *c, o);
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  EXPECT_FALSE(weights->layers[0].qkv.is_k_quant());
}

// Tensor parallelism on Q4_K: each rank's column-parallel rows (qkv) are the
// full weight's rows bit for bit; the row-parallel shards (o), split on
// 256-value block boundaries, sum to the full product up to float rounding.
TEST(GgufModel, Q4_KShardsForTensorParallelism) {
  auto s = KQuantSpec("qwen3", 13);
  s.num_heads = 16;  // o: 512 columns, 256 per rank
  s.intermediate_size = 512;
  ScratchDir dir;
  WriteBoth(s, GgmlType::kQ4_K, dir);
  const std::string path = dir / "gguf/model.gguf";
  auto c = LoadModelConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto load = [&](size_t rank, size_t size) {
    LoadOptions o;
    o.precision = kernels::cpu::MatmulPrecision::kBF16;
    o.show_progress = false;
    o.tp_rank = rank;
    o.tp_size = size;
    return LoadModelWeights(path, *c, o);
  };
  auto full = load(0, 1), r0 = load(0, 2), r1 = load(1, 2);
  ASSERT_TRUE(full.ok() && r0.ok() && r1.ok()) << r1.status().ToString();
  const auto &f = full->layers[0], &a = r0->layers[0], &b = r1->layers[0];
  ASSERT_TRUE(f.qkv.is_k_quant() && a.qkv.is_k_quant() && a.o.is_k_quant() && b.down.is_k_quant());
  kernels::cpu::ThreadPool pool(2);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.f, 1.f);
  const size_t h = s.hidden_size, q = s.num_heads * s.head_dim, kv = s.num_kv_heads * s.head_dim;
  std::vector<float> x(h);
  for (float& v : x) v = dist(rng);
  std::vector<float> yf(f.qkv.rows()), y0(a.qkv.rows()), y1(b.qkv.rows());
  f.qkv.Apply(x.data(), 1, yf.data(), pool);
  a.qkv.Apply(x.data(), 1, y0.data(), pool);
  b.qkv.Apply(x.data(), 1, y1.data(), pool);
  // Rank r holds q rows [r q/2, (r+1) q/2), then k and v rows likewise.
  for (size_t r = 0; r < 2; ++r) {
    const std::vector<float>& y = r == 0 ? y0 : y1;
    for (size_t i = 0; i < q / 2; ++i) ASSERT_EQ(y[i], yf[r * q / 2 + i]) << "rank " << r << " q row " << i;
    for (size_t i = 0; i < kv / 2; ++i) {
      ASSERT_EQ(y[q / 2 + i], yf[q + r * kv / 2 + i]) << "rank " << r << " k row " << i;
      ASSERT_EQ(y[q / 2 + kv / 2 + i], yf[q + kv + r * kv / 2 + i]) << "rank " << r << " v row " << i;
    }
  }
  std::vector<float> xo(q), of(h), o0(h), o1(h);
  for (float& v : xo) v = dist(rng);
  f.o.Apply(xo.data(), 1, of.data(), pool);
  a.o.Apply(xo.data(), 1, o0.data(), pool);
  b.o.Apply(xo.data() + q / 2, 1, o1.data(), pool);
  for (size_t i = 0; i < h; ++i) EXPECT_NEAR(o0[i] + o1[i], of[i], 1e-5 * (std::fabs(of[i]) + 1)) << "o row " << i;
}

TEST(GgufModel, BadFilesGiveClearErrors) {
  ScratchDir dir;
  WriteBoth(testing::TinySpec("llama", 2), GgmlType::kQ8_0, dir);
  const std::string good = dir / "gguf/model.gguf";
  EXPECT_TRUE(LoadAll(good).ok()) << LoadAll(good).ToString();
  Rewrite(good, dir / "a.gguf", "blk.1.ffn_up.weight", "", "", std::nullopt);
  ExpectError(LoadAll(dir / "a.gguf"), {"blk.1.ffn_up.weight", "missing"});
  Rewrite(good, dir / "b.gguf", "", "blk.0.attn_k.weight", "", std::nullopt);
  ExpectError(LoadAll(dir / "b.gguf"), {"blk.0.attn_k.weight", "shape"});
  Rewrite(good, dir / "c.gguf", "", "", "general.architecture", std::string("gpt2"));
  ExpectError(LoadAll(dir / "c.gguf"), {"gpt2", "not supported"});
  Rewrite(good, dir / "d.gguf", "", "", "llama.block_count", std::nullopt);
  ExpectError(LoadAll(dir / "d.gguf"), {"llama.block_count", "missing"});
}

TEST(GgufModel, RowParallelSplitOffBlockBoundaryIsAnError) {
  auto s = testing::TinySpec("llama", 2);
  s.intermediate_size = 96;  // 48 columns per rank: not a whole number of 32-value Q8_0 blocks
  ScratchDir dir;
  WriteBoth(s, GgmlType::kQ8_0, dir);
  ExpectError(LoadAll(dir / "gguf/model.gguf", 2), {"ffn_down.weight", "block boundary"});
  EXPECT_TRUE(LoadAll(dir / "gguf/model.gguf", 1).ok());
}

// What llama.cpp's MoE files cannot say is refused at export.
TEST(GgufModel, MoeExportRefusesWhatGgufCannotHold) {
  ScratchDir dir;
  auto s = testing::TinySpec("qwen3_moe", 8);
  s.norm_topk_prob = false;
  ASSERT_TRUE(WriteTestModel(s, dir / "a").ok());
  ExpectError(ExportGguf(dir / "a", GgmlType::kF32, dir / "a.gguf"), {"norm_topk_prob"});
  s.norm_topk_prob = true;
  s.mlp_only_layers = {1};
  ASSERT_TRUE(WriteTestModel(s, dir / "b").ok());
  ExpectError(ExportGguf(dir / "b", GgmlType::kF32, dir / "b.gguf"), {"every layer"});
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("deepseek_v3", 8), dir / "c").ok());
  ExpectError(ExportGguf(dir / "c", GgmlType::kF32, dir / "c.gguf"), {"DeepSeek"});
}

// A Q4_K_M Qwen3-MoE: every expert stays packed (Q4_K gate/up, Q6_K down in
// some layers) and matches numpy with Q8_K activations.
TEST(GgufModel, Qwen3MoeQ4_K_MKeptMatchesNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  auto s = KQuantSpec("qwen3_moe", 13);
  s.moe_intermediate_size = 256;
  s.num_layers = 3;
  auto types = ParseGgufWeightTypes("q4_k_m");
  ASSERT_TRUE(types.ok());
  CheckKeptQuantized(s, *types, "--kquant-activations", "Q4_K_M Qwen3-MoE");
}

}  // namespace
}  // namespace llmserve::worker
