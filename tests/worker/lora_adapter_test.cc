// Loading PEFT LoRA adapters: the scale from lora_alpha / r (or rsLoRA's
// √r), tensor-parallel shards, fused qkv_proj / gate_up_proj split into their
// parts, bf16 factors kept in bf16, and a clear error for each kind of bad
// adapter.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <vector>

#include "tests/worker/worker_test_util.h"
#include "worker/lora_adapter.h"
#include "worker/model_loader.h"
#include "worker/safetensors.h"
#include "worker/safetensors_writer.h"
#include "worker/test_lora_adapter.h"

namespace llmserve::worker::lora_adapter_test {
namespace {

using testing::ScratchDir;

class LoraAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = testing::TinySpec("qwen3", 71);
    ASSERT_TRUE(WriteTestModel(spec, model_dir()).ok());
    auto c = LoadModelConfig(model_dir());
    ASSERT_TRUE(c.ok());
    config_ = *c;
    auto d = ComputeShardDims(config_, 0, 1);
    ASSERT_TRUE(d.ok());
    shard_ = *d;
  }
  std::string model_dir() const { return dir_ / "m"; }
  StatusOr<std::shared_ptr<const LoraAdapter>> Load(const std::string& adapter, size_t max_rank = 16) {
    LoraLimits limits;
    limits.max_rank = max_rank;
    return LoadLoraAdapter("x", adapter, config_, shard_, limits);
  }
  // Writes an adapter, then replaces adapter_config.json's `key` by `value` (JSON text).
  std::string Adapter(const TestLoraSpec& spec, const std::string& name) {
    const std::string out = dir_ / name;
    EXPECT_TRUE(WriteTestLoraAdapter(spec, model_dir(), out).ok());
    return out;
  }
  void EditConfig(const std::string& adapter, const std::string& from, const std::string& to) {
    const std::string path = adapter + "/adapter_config.json";
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in " << text;
    text.replace(at, from.size(), to);
    std::ofstream(path) << text;
  }
  void ExpectError(const StatusOr<std::shared_ptr<const LoraAdapter>>& r, const std::string& needle) {
    ASSERT_FALSE(r.ok()) << "expected an error containing: " << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().ToString();
  }

  ScratchDir dir_;
  ModelConfig config_;
  ShardDims shard_;
};

TEST_F(LoraAdapterTest, ScaleIsAlphaOverRankOrOverItsRoot) {
  TestLoraSpec s;
  s.rank = 4;
  s.lora_alpha = 16;
  auto a = Load(Adapter(s, "plain"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->rank, 4u);
  EXPECT_FLOAT_EQ((*a)->scale, 4.f);
  EXPECT_FALSE((*a)->layers[1][static_cast<size_t>(LoraTarget::kDown)].empty());
  s.use_rslora = true;
  auto r = Load(Adapter(s, "rs"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FLOAT_EQ((*r)->scale, 8.f);
  // A stays [in × rank] transposed: element (k, i) is A[i, k].
  const auto f = (*r)->Factors(0, LoraTarget::kQ);
  EXPECT_EQ(f.in, config_.hidden_size);
  EXPECT_EQ(f.out, config_.num_heads * config_.head_dim);
}

TEST_F(LoraAdapterTest, TensorParallelShardsSplitBOfColumnAndAOfRowProjections) {
  TestLoraSpec s;
  s.rank = 4;
  const std::string ad = Adapter(s, "tp");
  auto whole = Load(ad);
  ASSERT_TRUE(whole.ok());
  auto d1 = ComputeShardDims(config_, 1, 2);
  ASSERT_TRUE(d1.ok());
  LoraLimits limits;
  auto half = LoadLoraAdapter("x", ad, config_, *d1, limits);
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  const auto& wq = (*whole)->layers[0][static_cast<size_t>(LoraTarget::kQ)];
  const auto& hq = (*half)->layers[0][static_cast<size_t>(LoraTarget::kQ)];
  ASSERT_EQ(hq.out * 2, wq.out);
  EXPECT_EQ(hq.a_t, wq.a_t);  // all of A
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(hq.b_t[i * hq.out], wq.b_t[i * wq.out + hq.out]);  // rank 1's rows of B
  const auto& wo = (*whole)->layers[0][static_cast<size_t>(LoraTarget::kO)];
  const auto& ho = (*half)->layers[0][static_cast<size_t>(LoraTarget::kO)];
  ASSERT_EQ(ho.in * 2, wo.in);
  EXPECT_EQ(ho.b_t, wo.b_t);  // all of B
  EXPECT_EQ(ho.a_t[0], wo.a_t[ho.in * 4]);  // rank 1's columns of A
}

// vLLM's packed modules: qkv_proj's A serves q, k and v; its B stacks their
// outputs (gate_up_proj likewise), split here per part and per shard.
TEST_F(LoraAdapterTest, FusedModulesSplitIntoTheirPartsPerShard) {
  TestLoraSpec s;
  s.rank = 4;
  s.targets = {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"};
  const std::string ad = Adapter(s, "fused");
  auto file = SafetensorsFile::Open(ad + "/adapter_model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto f32 = [&](const std::string& name) {
    const TensorView* v = (*file)->Find("base_model.model.model.layers.1." + name);
    EXPECT_NE(v, nullptr) << name;
    const float* p = reinterpret_cast<const float*>(v->data);
    return std::vector<float>(p, p + v->num_elements());
  };
  const auto qkv_a = f32("self_attn.qkv_proj.lora_A.weight"), qkv_b = f32("self_attn.qkv_proj.lora_B.weight");
  const auto gu_b = f32("mlp.gate_up_proj.lora_B.weight");
  const size_t h = config_.hidden_size, hd = config_.head_dim, q = config_.num_heads * hd;
  const size_t kv = config_.num_kv_heads * hd, ff = config_.intermediate_size, r = 4;
  for (size_t rank = 0; rank < 2; ++rank) {
    auto d = ComputeShardDims(config_, rank, 2);
    ASSERT_TRUE(d.ok());
    auto a = LoadLoraAdapter("x", ad, config_, *d, LoraLimits());
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    const auto& layer = (*a)->layers[1];
    // (target, first row of its full output in the fused B, its full width)
    const std::vector<std::tuple<LoraTarget, size_t, size_t>> parts = {
        {LoraTarget::kQ, 0, q}, {LoraTarget::kK, q, kv}, {LoraTarget::kV, q + kv, kv}};
    for (const auto& [t, first, width] : parts) {
      const LoraProjection& p = layer[static_cast<size_t>(t)];
      ASSERT_EQ(p.in, h);
      ASSERT_EQ(p.out * 2, width) << LoraTargetName(t);
      for (size_t k = 0; k < h; ++k)
        for (size_t i = 0; i < r; ++i) ASSERT_EQ(p.a_t[k * r + i], qkv_a[i * h + k]);  // all of the shared A
      for (size_t i = 0; i < r; ++i)
        for (size_t j = 0; j < p.out; ++j)
          ASSERT_EQ(p.b_t[i * p.out + j], qkv_b[(first + rank * p.out + j) * r + i]) << LoraTargetName(t);
    }
    const LoraProjection& up = layer[static_cast<size_t>(LoraTarget::kUp)];
    ASSERT_EQ(up.out * 2, ff);
    for (size_t i = 0; i < r; ++i)
      for (size_t j = 0; j < up.out; ++j) ASSERT_EQ(up.b_t[i * up.out + j], gu_b[(ff + rank * up.out + j) * r + i]);
    EXPECT_FALSE(layer[static_cast<size_t>(LoraTarget::kGate)].empty());
  }
}

// A bf16 adapter keeps its factors in bf16, bit for bit (half the bytes
// every step streams); an fp32 one in fp32.
TEST_F(LoraAdapterTest, Bf16AdapterKeepsItsFactorsInBf16) {
  TestLoraSpec s;
  s.rank = 4;
  s.dtype = "bf16";
  const std::string ad = Adapter(s, "bf16");
  auto a = Load(ad);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const LoraProjection& down = (*a)->layers[1][static_cast<size_t>(LoraTarget::kDown)];
  ASSERT_TRUE(down.bf16());
  EXPECT_TRUE(down.a_t.empty());
  const auto f = (*a)->Factors(1, LoraTarget::kDown);
  EXPECT_EQ(f.dtype, kernels::cpu::LoraDType::kBF16);
  EXPECT_EQ(f.a_t, down.a_t16.data());
  auto file = SafetensorsFile::Open(ad + "/adapter_model.safetensors");
  ASSERT_TRUE(file.ok());
  const TensorView* av = (*file)->Find("base_model.model.model.layers.1.mlp.down_proj.lora_A.weight");
  const TensorView* bv = (*file)->Find("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight");
  ASSERT_TRUE(av != nullptr && bv != nullptr);
  const auto* a_bits = reinterpret_cast<const uint16_t*>(av->data);
  const auto* b_bits = reinterpret_cast<const uint16_t*>(bv->data);
  for (size_t k = 0; k < down.in; ++k)
    for (size_t i = 0; i < 4; ++i) ASSERT_EQ(down.a_t16[k * 4 + i], a_bits[i * down.in + k]);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < down.out; ++j) ASSERT_EQ(down.b_t16[i * down.out + j], b_bits[j * 4 + i]);
  auto f32 = Load(Adapter(TestLoraSpec(), "f32"));
  ASSERT_TRUE(f32.ok());
  EXPECT_FALSE((*f32)->layers[1][static_cast<size_t>(LoraTarget::kDown)].bf16());
  EXPECT_EQ((*f32)->Factors(1, LoraTarget::kDown).dtype, kernels::cpu::LoraDType::kF32);
}

TEST_F(LoraAdapterTest, ProjectionAdaptedAloneAndFusedIsRejected) {
  TestLoraSpec s;
  s.targets = {"k_proj", "qkv_proj"};
  ExpectError(Load(Adapter(s, "both")), "qkv_proj and k_proj both adapt layer 0's k_proj");
}

TEST_F(LoraAdapterTest, RankAboveTheLimitIsRejected) {
  TestLoraSpec s;
  s.rank = 32;
  ExpectError(Load(Adapter(s, "big"), 16), "LoRA rank 32 is greater than max_lora_rank 16");
}

TEST_F(LoraAdapterTest, UnknownTargetModuleIsRejected) {
  const std::string ad = Adapter(TestLoraSpec(), "lm");
  EditConfig(ad, "\"down_proj\"", "\"lm_head\"");
  ExpectError(Load(ad), "unknown target module 'lm_head'");
}

TEST_F(LoraAdapterTest, TensorOfAnUnsupportedModuleIsRejected) {
  const std::string ad = dir_ / "embed";
  std::filesystem::create_directories(ad);
  std::ofstream(ad + "/adapter_config.json") << R"({"r": 4, "lora_alpha": 8, "target_modules": ["q_proj"]})";
  TensorToWrite t;
  t.name = "base_model.model.model.embed_tokens.lora_A.weight";
  t.shape = {4, 8};
  t.dtype = "F32";
  t.fill = [](uint8_t* out) { std::fill(out, out + 4 * 8 * 4, 0); };
  ASSERT_TRUE(WriteSafetensorsFile(ad + "/adapter_model.safetensors", {t}).ok());
  ExpectError(Load(ad), "is not a LoRA factor of a supported target module");
}

TEST_F(LoraAdapterTest, AdapterOfAnotherModelShapeIsRejected) {
  auto other = testing::TinySpec("qwen3", 72);
  other.hidden_size = 32;
  ASSERT_TRUE(WriteTestModel(other, dir_ / "other").ok());
  ASSERT_TRUE(WriteTestLoraAdapter(TestLoraSpec(), dir_ / "other", dir_ / "mismatch").ok());
  ExpectError(Load(dir_ / "mismatch"), "has shape [32, 8], expected [64, 8]");
}

TEST_F(LoraAdapterTest, MissingFilesAreNamed) {
  ExpectError(Load(dir_ / "nowhere"), "is not a directory");
  const std::string ad = Adapter(TestLoraSpec(), "nofile");
  std::filesystem::remove(ad + "/adapter_model.safetensors");
  ExpectError(Load(ad), "adapter_model.safetensors: no such file");
  std::filesystem::remove(ad + "/adapter_config.json");
  ExpectError(Load(ad), "adapter_config.json: cannot be read");
}

TEST_F(LoraAdapterTest, BadJsonIsRejected) {
  const std::string ad = Adapter(TestLoraSpec(), "json");
  EditConfig(ad, "{", "{,");
  ExpectError(Load(ad), "adapter_config.json: not valid JSON");
  const std::string r0 = Adapter(TestLoraSpec(), "r0");
  EditConfig(r0, "\"r\": 8", "\"r\": \"eight\"");
  ExpectError(Load(r0), "\"r\" (the rank) must be a positive integer");
}

// Found with peft_adapter_fuzzer: an alpha past the float range gave an
// infinite scale, so the adapter would have turned every output into NaN.
TEST_F(LoraAdapterTest, AlphaBeyondTheFloatRangeIsRejected) {
  const std::string ad = Adapter(TestLoraSpec(), "huge_alpha");
  EditConfig(ad, "\"lora_alpha\": 16.0", "\"lora_alpha\": 1e40");
  ExpectError(Load(ad), "\"lora_alpha\" 1e+40 gives a scale outside the float range");
}

TEST_F(LoraAdapterTest, FactorWithoutItsPartnerIsRejected) {
  const std::string ad = dir_ / "half";
  std::filesystem::create_directories(ad);
  std::ofstream(ad + "/adapter_config.json") << R"({"r": 2, "lora_alpha": 4, "target_modules": ["v_proj"]})";
  TensorToWrite t;
  t.name = "base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight";
  t.shape = {2, 64};
  t.dtype = "F32";
  t.fill = [](uint8_t* out) { std::fill(out, out + 2 * 64 * 4, 0); };
  ASSERT_TRUE(WriteSafetensorsFile(ad + "/adapter_model.safetensors", {t}).ok());
  ExpectError(Load(ad), "layer 0 v_proj has lora_A but no lora_B");
}

TEST_F(LoraAdapterTest, MlpTargetOnAnExpertLayerIsRejected) {
  auto moe = testing::TinySpec("qwen3_moe", 73);
  ASSERT_TRUE(WriteTestModel(moe, dir_ / "moe").ok());
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 73), dir_ / "dense").ok());
  // An adapter written for the dense twin has MLP factors on every layer.
  ASSERT_TRUE(WriteTestLoraAdapter(TestLoraSpec(), dir_ / "dense", dir_ / "mlp").ok());
  auto c = LoadModelConfig(dir_ / "moe");
  ASSERT_TRUE(c.ok());
  auto d = ComputeShardDims(*c, 0, 1);
  ASSERT_TRUE(d.ok());
  auto r = LoadLoraAdapter("x", dir_ / "mlp", *c, *d, LoraLimits());
  ExpectError(r, "targets the MLP of a mixture-of-experts layer");
}

TEST_F(LoraAdapterTest, NameAlreadyLoadedIsRejected) {
  kernels::cpu::ThreadPool pool(1);
  LoadOptions o;
  o.show_progress = false;
  auto model = Model::Load(model_dir(), o, nullptr, &pool);
  ASSERT_TRUE(model.ok());
  const std::string ad = Adapter(TestLoraSpec(), "dup");
  ASSERT_TRUE((*model)->LoadLoraAdapter("a", ad, LoraLimits()).ok());
  auto again = (*model)->LoadLoraAdapter("a", ad, LoraLimits());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already loaded"), std::string::npos);
  EXPECT_EQ((*model)->LoraSlot("a"), 0);
  EXPECT_TRUE((*model)->RemoveLoraAdapter("a").ok());
  EXPECT_EQ((*model)->LoraSlot("a"), -1);
  EXPECT_FALSE((*model)->RemoveLoraAdapter("a").ok());
}

}  // namespace
}  // namespace llmserve::worker::lora_adapter_test
