// FP8 checkpoints (vLLM's "fp8" method: F8_E4M3 weights with 128 × 128 block
// scales or one scale per tensor): scaled to the model's float type at load,
// they match scripts/ref_forward.py (which decodes E4M3 on its own, in
// ref_fp8.py) in the f32 reference mode; bad checkpoints are errors naming
// the tensor or key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "tests/worker/worker_test_util.h"
#include "worker/quantized_export.h"
#include "worker/safetensors.h"

namespace llmserve::worker::fp8_model_test {
namespace {

using kernels::cpu::MatmulPrecision;
using testing::Prompt;
using testing::ScratchDir;
using testing::EditConfig;
using testing::ExpectErrorMentions;
using testing::LoadStatus;

std::vector<float> Logits(const std::string& dir, const std::vector<int32_t>& tokens, MatmulPrecision precision) {
  kernels::cpu::ThreadPool pool(2);
  auto model = testing::LoadModel(dir, precision, "", pool);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return {};
  KvCache cache((*model)->CacheShape(16, 8));
  return testing::RunPrompt(**model, cache, tokens, {5, 3}, testing::Blocks(1, 8));
}

// `spec` as float safetensors in DIR/hf and as FP8 (blocks of `block`) in DIR/fp8.
void WriteBoth(const TestModelSpec& spec, size_t block, const ScratchDir& dir) {
  Status st = WriteTestModel(spec, dir / "hf");
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = ExportFp8(dir / "hf", block, dir / "fp8");
  ASSERT_TRUE(st.ok()) << st.ToString();
}

// Blocks of 32 on a model whose matrices are 64 to 256 wide (several blocks,
// partial ones at the k/v edges), and one scale per tensor.
void CheckAgainstNumpy(const TestModelSpec& s, size_t block) {
  SCOPED_TRACE("block " + std::to_string(block));
  ScratchDir dir;
  WriteBoth(s, block, dir);
  const auto tokens = Prompt(9, s.vocab_size);
  const auto ours = Logits(dir / "fp8", tokens, MatmulPrecision::kF32);
  const auto ref = testing::ReferenceLogits(dir / "fp8", tokens, s.vocab_size, dir / "ref.f32");
  const double err = testing::MaxRelativeError(ours, ref);
  EXPECT_LE(err, 1e-4) << "f32 reference mode vs ref_forward.py";
  EXPECT_EQ(testing::ArgmaxPerRow(ours, s.vocab_size), testing::ArgmaxPerRow(ref, s.vocab_size));
  // E4M3 keeps 3 mantissa bits: the float checkpoint's logits differ by far more.
  const auto float_ref = testing::ReferenceLogits(dir / "hf", tokens, s.vocab_size, dir / "float.f32");
  EXPECT_GT(testing::MaxRelativeError(float_ref, ref), 10 * err);
  // The bf16 mode multiplies the same scaled weights rounded to bf16.
  const auto bf16 = Logits(dir / "fp8", tokens, MatmulPrecision::kBF16);
  EXPECT_LE(testing::MaxRelativeError(bf16, ref), 3e-2) << "bf16 mode";
}

TEST(Fp8Model, MatchesNumpyWithBlockAndTensorScales) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  auto wide = testing::TinySpec("llama", 41);
  wide.hidden_size = 128;
  wide.num_heads = 4;
  wide.num_kv_heads = 2;
  wide.head_dim = 32;
  wide.intermediate_size = 256;
  CheckAgainstNumpy(wide, 32);
  CheckAgainstNumpy(testing::TinySpec("qwen3", 42), 0);
  CheckAgainstNumpy(testing::TinySpec("qwen3", 43), 128);  // one partial block per matrix
}

// compressed-tensors FP8 (float-quantized, one scale per output channel):
// against ref_forward.py in the f32 reference mode; static input scales and
// misshapen channel scales are errors.
TEST(Fp8Model, CompressedTensorsChannelScalesMatchNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const auto s = testing::TinySpec("qwen3", 45);
  ScratchDir dir;
  ASSERT_TRUE(WriteTestModel(s, dir / "hf").ok());
  ASSERT_TRUE(ExportCompressedTensorsFp8(dir / "hf", dir / "ct").ok());
  const auto tokens = Prompt(9, s.vocab_size);
  const auto ours = Logits(dir / "ct", tokens, MatmulPrecision::kF32);
  const auto ref = testing::ReferenceLogits(dir / "ct", tokens, s.vocab_size, dir / "ref.f32");
  const double err = testing::MaxRelativeError(ours, ref);
  EXPECT_LE(err, 1e-4) << "f32 reference mode vs ref_forward.py";
  const auto float_ref = testing::ReferenceLogits(dir / "hf", tokens, s.vocab_size, dir / "float.f32");
  EXPECT_GT(testing::MaxRelativeError(float_ref, ref), 10 * err) << "the FP8 rounding shows";
  EXPECT_TRUE(LoadStatus(dir / "ct", "compressed-tensors").ok());
  EditConfig(dir / "ct", [](nlohmann::json& j) {
    j["quantization_config"]["config_groups"]["group_0"]["input_activations"]["dynamic"] = false;
  });
  ExpectErrorMentions(LoadStatus(dir / "ct"), "input_activations.dynamic");
  EditConfig(dir / "ct", [](nlohmann::json& j) {
    j["quantization_config"]["config_groups"]["group_0"]["input_activations"] = nullptr;  // W8A16: fine
    j["quantization_config"]["config_groups"]["group_0"]["weights"]["strategy"] = "tensor";
  });
  ExpectErrorMentions(LoadStatus(dir / "ct"), "expected a float tensor of shape [] or [1]");
}

TEST(Fp8Model, UnsupportedConfigsAndBadTensorsAreClearErrors) {
  const auto s = testing::TinySpec("qwen3", 44);
  ScratchDir dir;
  WriteBoth(s, 32, dir);
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& j) { j["quantization_config"]["fmt"] = "e5m2"; }, "fmt = \"e5m2\""},
      {[](nlohmann::json& j) { j["quantization_config"]["activation_scheme"] = "static"; }, "activation_scheme"},
      {[](nlohmann::json& j) { j["quantization_config"]["weight_block_size"] = {128}; }, "weight_block_size"},
      // Block scales read as one per tensor: NAME_scale is not there.
      {[](nlohmann::json& j) { j["quantization_config"]["weight_block_size"] = nullptr; }, "_scale is missing"},
      // Blocks of 16 want scale tensors of another shape.
      {[](nlohmann::json& j) { j["quantization_config"]["weight_block_size"] = {16, 16}; }, "expected a float tensor"},
      // FP8 tensors without an FP8 quantization_config.
      {[](nlohmann::json& j) { j.erase("quantization_config"); }, "declares no FP8 quantization_config"},
  };
  for (const auto& [edit, mention] : cases) {
    ScratchDir copy;
    std::filesystem::copy(dir / "fp8", copy.path(), std::filesystem::copy_options::recursive);
    EditConfig(copy.path(), edit);
    ExpectErrorMentions(LoadStatus(copy.path()), mention);
  }
  EXPECT_TRUE(LoadStatus(dir / "fp8", "fp8").ok());
  ExpectErrorMentions(LoadStatus(dir / "hf", "fp8"), "not quantized");
  ExpectErrorMentions(LoadStatus(dir / "fp8", "int8"), "already quantized (fp8)");
}

}  // namespace
}  // namespace llmserve::worker::fp8_model_test
