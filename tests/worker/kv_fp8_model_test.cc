// A model over an fp8 KV cache (--kv-cache-dtype fp8 / fp8_e4m3 / fp8_e5m2):
// the per-layer scales come from the checkpoint, a block takes half the bytes
// of a bf16 one, and in float32 the logits equal numpy's forward whose K and V
// pass through the same fp8 rounding (scripts/ref_forward.py
// --kv-cache-dtype, written independently of the C++ conversions).
#include <gtest/gtest.h>

#include <string>

#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"
#include "worker/quantized_export.h"

namespace llmserve::worker {
namespace {

using kernels::cpu::KvDType;
using kernels::cpu::MatmulPrecision;
using testing::Blocks;
using testing::ScratchDir;

TEST(KvFp8Model, ScalesComeFromTheCheckpoint) {
  ScratchDir dir;
  auto spec = testing::TinySpec("qwen3", 3);
  spec.kv_cache_scale = 0.25f;
  ASSERT_TRUE(WriteTestModel(spec, dir / "scaled").ok());
  spec.kv_cache_scale = 0.f;
  ASSERT_TRUE(WriteTestModel(spec, dir / "plain").ok());
  kernels::cpu::ThreadPool pool(1);
  auto scaled = testing::LoadModel(dir / "scaled", MatmulPrecision::kF32, "", pool);
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  for (const LayerWeights& l : (*scaled)->weights().layers) {
    EXPECT_TRUE(l.has_kv_scales);
    EXPECT_EQ(l.k_scale, 0.25f);
    EXPECT_EQ(l.v_scale, 0.5f);
  }
  auto plain = testing::LoadModel(dir / "plain", MatmulPrecision::kF32, "", pool);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  for (const LayerWeights& l : (*plain)->weights().layers) {
    EXPECT_FALSE(l.has_kv_scales);
    EXPECT_EQ(l.k_scale, 1.f);
    EXPECT_EQ(l.v_scale, 1.f);
  }
}

// compressed-tensors declares the scales with kv_cache_scheme: static fp8 per
// tensor loads (the scales with it), anything else is named.
TEST(KvFp8Model, CompressedTensorsKvCacheSchemeCarriesTheScales) {
  ScratchDir dir;
  auto spec = testing::TinySpec("qwen3", 3);
  spec.kv_cache_scale = 0.25f;
  ASSERT_TRUE(WriteTestModel(spec, dir / "hf").ok());
  ASSERT_TRUE(ExportCompressedTensorsInt8(dir / "hf", dir / "m").ok());
  testing::EditConfig(dir / "m", [](nlohmann::json& j) {
    j["quantization_config"]["kv_cache_scheme"] = {
        {"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}, {"dynamic", false}, {"symmetric", true}};
  });
  kernels::cpu::ThreadPool pool(1);
  auto m = testing::LoadModel(dir / "m", MatmulPrecision::kBF16, "", pool);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->weights().layers[1].v_scale, 0.5f);
  testing::EditConfig(dir / "m",
                      [](nlohmann::json& j) { j["quantization_config"]["kv_cache_scheme"]["dynamic"] = true; });
  testing::ExpectErrorMentions(testing::LoadStatus(dir / "m"), "kv_cache_scheme.dynamic");
}

TEST(KvFp8Model, ANonPositiveScaleIsAnErrorNamingTheTensor) {
  ScratchDir dir;
  auto spec = testing::TinySpec("qwen3", 3);
  spec.kv_cache_scale = -0.25f;
  ASSERT_TRUE(WriteTestModel(spec, dir / "m").ok());
  testing::ExpectErrorMentions(testing::LoadStatus(dir / "m"), "model.layers.0.self_attn.k_scale");
}

TEST(KvFp8Model, ABlockTakesHalfTheBytesOfBf16) {
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 3), dir / "m").ok());
  kernels::cpu::ThreadPool pool(1);
  auto m = testing::LoadModel(dir / "m", MatmulPrecision::kBF16, "", pool);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const size_t bf16 = (*m)->CacheShape(1, 16, KvDType::kBF16).bytes_per_block();
  EXPECT_EQ((*m)->CacheShape(1, 16, KvDType::kFp8E4M3).bytes_per_block() * 2, bf16);
  EXPECT_EQ((*m)->CacheShape(1, 16, KvDType::kFp8E5M2).bytes_per_block() * 2, bf16);
  EXPECT_EQ(KvDTypeFor("fp8", MatmulPrecision::kBF16), KvDType::kFp8E4M3);  // vLLM's fp8 is e4m3
  EXPECT_EQ(KvDTypeFor("fp8_e4m3", MatmulPrecision::kF32), KvDType::kFp8E4M3);
  EXPECT_EQ(KvDTypeFor("fp8_e5m2", MatmulPrecision::kF32), KvDType::kFp8E5M2);
}

TEST(KvFp8Model, Float32LogitsMatchNumpyThroughTheSameFp8Cache) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "numpy not importable by /usr/bin/python3";
  ScratchDir dir;
  auto spec = testing::TinySpec("qwen3", 5);
  spec.kv_cache_scale = 0.05f;  // K / 0.05 and V / 0.1: well inside both formats' ranges
  ASSERT_TRUE(WriteTestModel(spec, dir / "m").ok());
  kernels::cpu::ThreadPool pool(2);
  auto m = testing::LoadModel(dir / "m", MatmulPrecision::kF32, "", pool);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const size_t vocab = (*m)->config().vocab_size;
  const auto tokens = testing::Prompt(40, vocab, 2);
  const auto plain_ref = testing::ReferenceLogits(dir / "m", tokens, vocab, dir / "plain.bin");
  for (const auto& [dtype, name] : {std::pair{KvDType::kFp8E4M3, "fp8_e4m3"}, {KvDType::kFp8E5M2, "fp8_e5m2"}}) {
    KvCache cache((*m)->CacheShape(8, 16, dtype));
    const auto ours = testing::RunPrompt(**m, cache, tokens, {17, 1, 22}, Blocks(0, 3));
    const auto q_ref = testing::ReferenceLogits(dir / "m", tokens, vocab, dir / (std::string(name) + ".bin"),
                                                std::string("--kv-cache-dtype ") + name);
    testing::ExpectMatchesQuantizedReference(name, ours, q_ref, plain_ref, vocab);
  }
}

}  // namespace
}  // namespace llmserve::worker
