// Int8 models: compressed-tensors W8A8 checkpoints and float checkpoints
// quantized at load (--quantization int8). In the f32 reference mode they
// match scripts/ref_forward.py over the dequantized weights; on the int8
// kernels they match it with the activations quantized as the kernels do;
// the two ways to an int8 model give the same bits; bad checkpoints and
// flags give errors naming the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/worker/worker_test_util.h"
#include "worker/quantized_export.h"
#include "worker/quantization_config.h"
#include "worker/safetensors.h"
#include "worker/safetensors_writer.h"

// A namespace of its own: the unity build puts several test files in one
// translation unit.
namespace llmserve::worker::int8_model_test {
namespace {

using kernels::cpu::MatmulPrecision;
using testing::Prompt;
using testing::ScratchDir;
using testing::EditConfig;
using testing::ExpectErrorMentions;
using testing::LoadStatus;

// Writes `spec` as safetensors into DIR/hf and as a compressed-tensors W8A8
// checkpoint into DIR/int8.
void WriteBoth(const TestModelSpec& spec, const ScratchDir& dir) {
  Status st = WriteTestModel(spec, dir / "hf");
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = ExportCompressedTensorsInt8(dir / "hf", dir / "int8");
  ASSERT_TRUE(st.ok()) << st.ToString();
}

// Logits of `tokens`; `int8_layers` counts the layers whose qkv and down
// weights take the int8 kernels.
std::vector<float> Logits(const std::string& dir, const std::vector<int32_t>& tokens, MatmulPrecision precision,
                          const std::string& quantization = "", size_t* int8_layers = nullptr) {
  kernels::cpu::ThreadPool pool(2);
  auto model = testing::LoadModel(dir, precision, quantization, pool);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return {};
  if (int8_layers != nullptr) {
    *int8_layers = 0;
    for (const auto& l : (*model)->weights().layers) *int8_layers += l.qkv.is_q8_0() && l.down.is_q8_0();
  }
  KvCache cache((*model)->CacheShape(16, 8));
  return testing::RunPrompt(**model, cache, tokens, {5, 3}, testing::Blocks(1, 8));
}

TEST(Int8Model, F32ReferenceModeMatchesNumpyOnDequantizedWeights) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const auto s = testing::TinySpec("qwen3", 21);
  ScratchDir dir;
  WriteBoth(s, dir);
  const auto tokens = Prompt(11, s.vocab_size);
  size_t int8_layers = 0;
  const auto ours = Logits(dir / "int8", tokens, MatmulPrecision::kF32, "", &int8_layers);
  EXPECT_EQ(int8_layers, 0u) << "the f32 reference mode multiplies dequantized weights";
  const auto ref = testing::ReferenceLogits(dir / "int8", tokens, s.vocab_size, dir / "ref.f32");
  const double err = testing::MaxRelativeError(ours, ref);
  EXPECT_LE(err, 1e-4) << "max relative error vs ref_forward.py";
  EXPECT_EQ(testing::ArgmaxPerRow(ours, s.vocab_size), testing::ArgmaxPerRow(ref, s.vocab_size));
  // The int8 weights are not the float ones: the reference over the float
  // checkpoint differs by more than our error.
  const auto float_ref = testing::ReferenceLogits(dir / "hf", tokens, s.vocab_size, dir / "float.f32");
  EXPECT_GT(testing::MaxRelativeError(float_ref, ref), 10 * err);
}

// Outside the reference mode the weights stay int8 and the activations
// entering them are quantized per block of 32: ref_forward.py --q8-activations.
// The output layer stays bf16, its activations rounded to bf16: --bf16-head.
TEST(Int8Model, Int8KernelsMatchNumpyWithQuantizedActivations) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const auto s = testing::TinySpec("qwen3", 22);
  ScratchDir dir;
  WriteBoth(s, dir);
  const auto tokens = Prompt(11, s.vocab_size);
  size_t int8_layers = 0;
  const auto ours = Logits(dir / "int8", tokens, MatmulPrecision::kBF16, "", &int8_layers);
  EXPECT_EQ(int8_layers, s.num_layers);
  const auto q_ref = testing::ReferenceLogits(dir / "int8", tokens, s.vocab_size, dir / "q.f32", "--q8-activations --bf16-head");
  const auto plain_ref = testing::ReferenceLogits(dir / "int8", tokens, s.vocab_size, dir / "ref.f32");
  testing::ExpectMatchesQuantizedReference("W8A8 int8 path", ours, q_ref, plain_ref, s.vocab_size);
}

// --quantization int8 on the float checkpoint and the checkpoint exported as
// compressed-tensors are the same int8 model, in both modes.
TEST(Int8Model, QuantizingAtLoadEqualsTheExportedCheckpoint) {
  const auto s = testing::TinySpec("llama", 23);
  ScratchDir dir;
  WriteBoth(s, dir);
  const auto tokens = Prompt(9, s.vocab_size);
  for (MatmulPrecision p : {MatmulPrecision::kF32, MatmulPrecision::kBF16}) {
    const auto at_load = Logits(dir / "hf", tokens, p, "int8");
    const auto exported = Logits(dir / "int8", tokens, p);
    ASSERT_FALSE(at_load.empty());
    EXPECT_TRUE(at_load == exported) << (p == MatmulPrecision::kF32 ? "f32" : "int8 kernels");
  }
}

// Mixture-of-experts layers: every expert's weights quantized at load, the
// routers left in float, against ref_forward.py --quantize-int8.
TEST(Int8Model, MoeExpertsQuantizedAtLoadMatchNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  auto s = testing::TinySpec("qwen3_moe", 24);
  s.moe_intermediate_size = 64;
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(s, dir / "hf").ok());
  const auto tokens = Prompt(7, s.vocab_size);
  const auto ours = Logits(dir / "hf", tokens, MatmulPrecision::kBF16, "int8");
  const auto q_ref = testing::ReferenceLogits(dir / "hf", tokens, s.vocab_size, dir / "q.f32",
                                              "--quantize-int8 --q8-activations --bf16-head");
  EXPECT_LE(testing::MaxRelativeError(ours, q_ref), 1e-4);
  const auto f32 = Logits(dir / "hf", tokens, MatmulPrecision::kF32, "int8");
  const auto f32_ref = testing::ReferenceLogits(dir / "hf", tokens, s.vocab_size, dir / "r.f32", "--quantize-int8");
  EXPECT_LE(testing::MaxRelativeError(f32, f32_ref), 1e-4);
}

// config.json of `dir`, edited by `edit`.
TEST(Int8Model, UnsupportedQuantizationConfigsNameWhatIsNotSupported) {
  const auto s = testing::TinySpec("qwen3", 25);
  ScratchDir dir;
  WriteBoth(s, dir);
  auto group = [](nlohmann::json& j) -> nlohmann::json& { return j["quantization_config"]["config_groups"]["group_0"]; };
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& j) { j["quantization_config"] = {{"quant_method", "fp8"}}; }, "activation_scheme"},
      {[](nlohmann::json& j) { j["quantization_config"] = {{"quant_method", "bitsandbytes"}}; }, "\"bitsandbytes\""},
      {[](nlohmann::json& j) { j["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128},
                                                            {"version", "gemv"}}; }, "version"},
      {[](nlohmann::json& j) { j["quantization_config"]["format"] = "pack-quantized"; }, "pack-quantized"},
      {[&](nlohmann::json& j) { group(j)["weights"]["num_bits"] = 4; }, "weights.num_bits = 4"},
      {[&](nlohmann::json& j) { group(j)["weights"]["symmetric"] = false; }, "weights.symmetric"},
      {[&](nlohmann::json& j) { group(j)["weights"]["strategy"] = "group"; }, "weights.strategy"},
      {[&](nlohmann::json& j) { group(j)["input_activations"] = nullptr; }, "input_activations is missing"},
      {[&](nlohmann::json& j) { group(j)["input_activations"]["dynamic"] = false; }, "input_activations.dynamic"},
      {[](nlohmann::json& j) { j["quantization_config"]["kv_cache_scheme"] = {{"num_bits", 8}}; }, "kv_cache_scheme"},
  };
  for (const auto& [edit, mention] : cases) {
    ScratchDir copy;
    std::filesystem::copy(dir / "int8", copy.path(), std::filesystem::copy_options::recursive);
    EditConfig(copy.path(), edit);
    ExpectErrorMentions(LoadModelConfig(copy.path()).status(), mention);
    ExpectErrorMentions(LoadStatus(copy.path()), mention);
  }
}

// The checkpoint's tensors again, without `drop`, with `extra`.
void Rewrite(const std::string& from, const std::string& to, const std::string& drop,
             const std::vector<TensorToWrite>& extra = {}) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  auto ckpt = Checkpoint::Open(from);
  ASSERT_TRUE(ckpt.ok());
  std::vector<TensorToWrite> tensors = extra;
  for (const auto& name : (*ckpt)->TensorNames()) {
    if (name == drop) continue;
    const TensorView t = *(*ckpt)->Find(name);
    const char* dtype = t.dtype == kernels::cpu::WeightDType::kI8    ? "I8"
                        : t.dtype == kernels::cpu::WeightDType::kI32 ? "I32"
                        : t.dtype == kernels::cpu::WeightDType::kF32 ? "F32"
                        : t.dtype == kernels::cpu::WeightDType::kF16 ? "F16"
                                                                     : "BF16";
    const size_t bytes = t.num_elements() * t.element_size();
    tensors.push_back({name, t.shape, dtype, [t, bytes](uint8_t* out) { std::memcpy(out, t.data, bytes); }});
  }
  ASSERT_TRUE(WriteSafetensors(to, tensors, 1).ok());
}

TEST(Int8Model, BadTensorsAreClearErrors) {
  const auto s = testing::TinySpec("qwen3", 26);
  ScratchDir dir;
  WriteBoth(s, dir);
  const std::string w = "model.layers.1.mlp.down_proj.weight";
  {
    ScratchDir out;
    Rewrite(dir / "int8", out / "m", w + "_scale");
    ExpectErrorMentions(LoadStatus(out / "m"), w + "_scale are missing");
  }
  {
    ScratchDir out;
    const std::vector<uint8_t> zeros(s.hidden_size);
    Rewrite(dir / "int8", out / "m", "",
            {{w + "_zero_point", {s.hidden_size, 1}, "I8", [&](uint8_t* o) { std::memset(o, 0, zeros.size()); }}});
    ExpectErrorMentions(LoadStatus(out / "m"), "zero point");
  }
  {
    ScratchDir out;
    Rewrite(dir / "int8", out / "m", w + "_scale",
            {{w + "_scale", {3}, "F32", [](uint8_t* o) { std::memset(o, 0, 12); }}});
    ExpectErrorMentions(LoadStatus(out / "m"), "has shape [3]");
  }
}

// GPTQ 4-bit: the quants minus their zero points fit int8, so the weights run
// on the int8 kernels with one scale per group; ref_forward.py unpacks the
// checkpoint on its own. Groups of 128 on a 256-wide model, and of 32.
void CheckInt4(const TestModelSpec& s, size_t group_size, bool awq = false, bool desc_act = false) {
  SCOPED_TRACE(std::string(awq ? "AWQ" : "GPTQ") + ", group size " + std::to_string(group_size) +
               (desc_act ? ", act-order" : ""));
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(s, dir / "hf").ok());
  const Status st =
      awq ? ExportAwq(dir / "hf", group_size, dir / "gptq") : ExportGptq(dir / "hf", group_size, dir / "gptq", desc_act);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const auto tokens = Prompt(9, s.vocab_size);
  const auto f32 = Logits(dir / "gptq", tokens, MatmulPrecision::kF32);
  const auto ref = testing::ReferenceLogits(dir / "gptq", tokens, s.vocab_size, dir / "ref.f32");
  EXPECT_LE(testing::MaxRelativeError(f32, ref), 1e-4) << "f32 reference mode";
  size_t int8_layers = 0;
  const auto ours = Logits(dir / "gptq", tokens, MatmulPrecision::kBF16, "", &int8_layers);
  EXPECT_EQ(int8_layers, s.num_layers);
  const auto q_ref = testing::ReferenceLogits(dir / "gptq", tokens, s.vocab_size, dir / "q.f32",
                                              "--q8-activations --bf16-head");
  testing::ExpectMatchesQuantizedReference(awq ? "AWQ int8 path" : "GPTQ int8 path", ours, q_ref, ref, s.vocab_size);
  if (awq || desc_act) return;
  // gptq_v2 stores the zero points as they are: the same files read
  // otherwise, by both sides.
  EditConfig(dir / "gptq", [](nlohmann::json& j) { j["quantization_config"]["checkpoint_format"] = "gptq_v2"; });
  const auto v2 = Logits(dir / "gptq", tokens, MatmulPrecision::kF32);
  const auto v2_ref = testing::ReferenceLogits(dir / "gptq", tokens, s.vocab_size, dir / "v2.f32");
  EXPECT_LE(testing::MaxRelativeError(v2, v2_ref), 1e-4) << "gptq_v2";
  EXPECT_GT(testing::MaxRelativeError(v2, f32), 1e-3) << "the zero offset matters";
}

TEST(Int8Model, GptqMatchesNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  auto wide = testing::TinySpec("llama", 28);
  wide.hidden_size = 256;
  wide.num_heads = 8;
  wide.num_kv_heads = 4;
  wide.head_dim = 32;
  wide.intermediate_size = 256;
  CheckInt4(wide, 128);
  CheckInt4(testing::TinySpec("qwen3", 29), 32);
}

// compressed-tensors W4A16 (pack-quantized), symmetric and with zero points:
// widened to int8 groups like GPTQ's, against ref_forward.py's own unpacking.
TEST(Int8Model, CompressedTensorsW4A16MatchesNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const auto s = testing::TinySpec("qwen3", 33);
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(s, dir / "hf").ok());
  for (const auto& [symmetric, act_order] : {std::pair{true, false}, {false, false}, {true, true}}) {
    const std::string name = std::string(symmetric ? "sym" : "asym") + (act_order ? "-actorder" : "");
    SCOPED_TRACE(name);
    const std::string m = dir / name;
    ASSERT_TRUE(ExportCompressedTensorsW4A16(dir / "hf", 32, symmetric, m, act_order).ok());
    const auto tokens = Prompt(9, s.vocab_size);
    const auto ref = testing::ReferenceLogits(m, tokens, s.vocab_size, m + "/ref.f32");
    EXPECT_LE(testing::MaxRelativeError(Logits(m, tokens, MatmulPrecision::kF32), ref), 1e-4) << "f32 reference mode";
    size_t int8_layers = 0;
    const auto ours = Logits(m, tokens, MatmulPrecision::kBF16, "compressed-tensors", &int8_layers);
    EXPECT_EQ(int8_layers, s.num_layers);
    const auto q_ref =
        testing::ReferenceLogits(m, tokens, s.vocab_size, m + "/q.f32", "--q8-activations --bf16-head");
    testing::ExpectMatchesQuantizedReference("W4A16 int8 path", ours, q_ref, ref, s.vocab_size);
  }
  // A config this build does not take is an error naming the key.
  const std::string m = dir / "sym";
  EditConfig(m, [](nlohmann::json& j) {
    j["quantization_config"]["config_groups"]["group_0"]["weights"]["num_bits"] = 8;
  });
  ExpectErrorMentions(LoadStatus(m), "weights.num_bits = 8");
}

// Act-order (desc_act): each weight's groups hold shuffled input columns; the
// int8 kernels take them sorted by group, the activations gathered to match.
TEST(Int8Model, GptqActOrderMatchesNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  CheckInt4(testing::TinySpec("qwen3", 29), 32, /*awq=*/false, /*desc_act=*/true);
}

// q/k/v in different column orders cannot share one gather: that layer's
// fused weight is dequantized (f32) instead, still equal to numpy's.
TEST(Int8Model, GptqActOrderSlicesInDifferentOrdersAreDequantized) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const auto s = testing::TinySpec("qwen3", 29);
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(s, dir / "hf").ok());
  ASSERT_TRUE(ExportGptq(dir / "hf", 32, dir / "gptq", /*desc_act=*/true).ok());
  const std::string k = "model.layers.0.self_attn.k_proj.g_idx";
  std::vector<int32_t> g_idx(s.hidden_size);
  for (size_t i = 0; i < g_idx.size(); ++i) g_idx[i] = static_cast<int32_t>(i % 2);  // two groups, interleaved
  ScratchDir out;
  Rewrite(dir / "gptq", out / "m", k,
          {{k, {g_idx.size()}, "I32", [&](uint8_t* o) { std::memcpy(o, g_idx.data(), g_idx.size() * 4); }}});
  const auto tokens = Prompt(9, s.vocab_size);
  const auto ref = testing::ReferenceLogits(out / "m", tokens, s.vocab_size, out / "ref.f32");
  EXPECT_LE(testing::MaxRelativeError(Logits(out / "m", tokens, MatmulPrecision::kF32), ref), 1e-4);
  size_t int8_layers = 0;
  const auto mixed = Logits(out / "m", tokens, MatmulPrecision::kBF16, "", &int8_layers);
  EXPECT_EQ(int8_layers, s.num_layers - 1) << "layer 0's q/k/v dequantized, the rest int8";
  EXPECT_LE(testing::MaxRelativeError(mixed, ref), 0.1) << "int8 activations elsewhere: near, not equal";
}

TEST(Int8Model, AwqMatchesNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  CheckInt4(testing::TinySpec("qwen2", 31), 32, /*awq=*/true);
}

TEST(Int8Model, GptqBadGroupIndexAndTensorsAreClearErrors) {
  const auto s = testing::TinySpec("qwen3", 30);
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(s, dir / "hf").ok());
  ASSERT_TRUE(ExportGptq(dir / "hf", 32, dir / "gptq").ok());
  const std::string p = "model.layers.0.mlp.down_proj";
  {
    ScratchDir out;
    // Group 0 given 33 columns, group 3 31.
    std::vector<int32_t> g_idx(s.intermediate_size);
    for (size_t i = 0; i < g_idx.size(); ++i) g_idx[i] = static_cast<int32_t>(i / 32);
    g_idx[32] = 0;
    Rewrite(dir / "gptq", out / "m", p + ".g_idx",
            {{p + ".g_idx", {g_idx.size()}, "I32", [&](uint8_t* o) { std::memcpy(o, g_idx.data(), g_idx.size() * 4); }}});
    ExpectErrorMentions(LoadStatus(out / "m"), "puts 33 columns in group 0");
  }
  {
    ScratchDir out;
    Rewrite(dir / "gptq", out / "m", p + ".qzeros");
    ExpectErrorMentions(LoadStatus(out / "m"), p + ".qzeros is missing");
  }
  ScratchDir bits;
  std::filesystem::copy(dir / "gptq", bits.path(), std::filesystem::copy_options::recursive);
  EditConfig(bits.path(), [](nlohmann::json& j) { j["quantization_config"]["bits"] = 8; });
  ExpectErrorMentions(LoadStatus(bits.path()), "bits = 8");
  ExpectErrorMentions(LoadStatus(dir / "gptq", "int8"), "already quantized (gptq)");
  ExpectErrorMentions(LoadStatus(dir / "gptq", "awq"), "does not match the model, which is gptq");
  EXPECT_TRUE(LoadStatus(dir / "gptq", "gptq_marlin").ok());
}

TEST(Int8Model, QuantizationFlagMustMatchTheModel) {
  const auto s = testing::TinySpec("qwen3", 27);
  ScratchDir dir;
  WriteBoth(s, dir);
  ExpectErrorMentions(LoadStatus(dir / "int8", "int8"), "already quantized (compressed-tensors)");
  ExpectErrorMentions(LoadStatus(dir / "hf", "compressed-tensors"), "not quantized");
  ExpectErrorMentions(LoadStatus(dir / "hf", "gguf"), "not quantized");
  EXPECT_TRUE(LoadStatus(dir / "int8", "compressed-tensors").ok());
  EXPECT_TRUE(LoadStatus(dir / "hf", "None").ok());
  const Status modelopt = ValidateQuantizationFlag("modelopt");
  EXPECT_EQ(modelopt.code(), StatusCode::kUnimplemented);
  ExpectErrorMentions(modelopt, "not supported yet");
  ExpectErrorMentions(ValidateQuantizationFlag("int4"), "not a quantization method");
}

}  // namespace
}  // namespace llmserve::worker::int8_model_test
