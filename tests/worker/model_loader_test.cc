#include "worker/model_loader.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "tests/worker/worker_test_util.h"
#include "worker/safetensors_writer.h"

namespace llmserve::worker {
namespace {

using testing::EditConfig;
using testing::ScratchDir;

Status LoadStatus(const std::string& dir) {
  kernels::cpu::ThreadPool pool(1);
  LoadOptions o;
  o.show_progress = false;
  return Model::Load(dir, o, nullptr, &pool).status();
}

class ModelLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3"), dir_.path()).ok()); }
  ScratchDir dir_;
};

TEST_F(ModelLoaderTest, LoadsGeneratedModelAndReadsConfigs) {
  auto c = LoadModelConfig(dir_.path());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->architecture, Architecture::kQwen3);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_EQ(c->head_dim, 16u);
  auto g = LoadGenerationConfig(dir_.path());
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_TRUE(LoadStatus(dir_.path()).ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ / "tokenizer.json"));
}

TEST_F(ModelLoaderTest, MissingTensorNamesTheTensor) {
  EditConfig(dir_.path(), [](nlohmann::json& j) { j["num_hidden_layers"] = 3; });
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("model.layers.2.input_layernorm.weight"), std::string::npos) << s.message();
}

TEST_F(ModelLoaderTest, WrongShapeNamesFileTensorAndShapes) {
  EditConfig(dir_.path(), [](nlohmann::json& j) { j["intermediate_size"] = 256; });
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("model.safetensors: tensor model.layers.0.mlp.gate_proj.weight has shape [128, 64], "
                             "expected [256, 64]"),
            std::string::npos)
      << s.message();
}

TEST_F(ModelLoaderTest, UntiedWithoutLmHeadIsAnError) {
  EditConfig(dir_.path(), [](nlohmann::json& j) { j["tie_word_embeddings"] = false; });
  const Status s = LoadStatus(dir_.path());
  EXPECT_NE(s.message().find("lm_head.weight"), std::string::npos) << s.message();
}

TEST_F(ModelLoaderTest, SizesThatAreNotNonNegativeIntegersAreErrors) {
  for (const nlohmann::json& bad : {nlohmann::json(1e30), nlohmann::json(-2), nlohmann::json(2.5)}) {
    EditConfig(dir_.path(), [&](nlohmann::json& j) { j["num_key_value_heads"] = bad; });
    const Status s = LoadStatus(dir_.path());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("'num_key_value_heads' must be a non-negative integer, not " + bad.dump()),
              std::string::npos)
        << s.message();
  }
  EditConfig(dir_.path(), [](nlohmann::json& j) {
    j.erase("num_key_value_heads");
    j["max_position_embeddings"] = 1e300;
  });
  EXPECT_NE(LoadStatus(dir_.path()).message().find("'max_position_embeddings' must be"), std::string::npos);
}

TEST_F(ModelLoaderTest, UnsupportedArchitectureAndRopeType) {
  EditConfig(dir_.path(), [](nlohmann::json& j) { j["architectures"] = {"GPT2LMHeadModel"}; });
  Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("config.json: architecture 'GPT2LMHeadModel' is not supported"), std::string::npos)
      << s.message();
  EditConfig(dir_.path(), [](nlohmann::json& j) {
    j["architectures"] = {"Qwen3ForCausalLM"};
    j["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 2.0}};
  });
  s = LoadStatus(dir_.path());
  EXPECT_NE(s.message().find("rope_scaling type 'longrope'"), std::string::npos) << s.message();
}

TEST_F(ModelLoaderTest, UnsupportedDtypeAndCorruptFilesAreErrors) {
  std::vector<TensorToWrite> t(1);
  t[0].name = "model.embed_tokens.weight";
  t[0].shape = {4};
  t[0].dtype = "F32";
  t[0].fill = [](uint8_t* out) { std::fill_n(out, 16, 0); };
  ScratchDir other;
  ASSERT_TRUE(WriteSafetensors(other.path(), t, 1).ok());
  // Patch the dtype string in place: "F32" -> "U32" (same length keeps offsets valid).
  std::fstream f(other / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes.replace(bytes.find("\"F32\""), 5, "\"U32\"");
  f.seekp(0);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  auto st = SafetensorsFile::Open(other / "model.safetensors");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("model.safetensors: tensor model.embed_tokens.weight has dtype U32"),
            std::string::npos)
      << st.status().message();
  // Truncated file: header length past the end.
  std::ofstream(other / "bad.safetensors", std::ios::binary) << std::string("\xff\xff\x00\x00\x00\x00\x00\x00{}", 10);
  auto bad = SafetensorsFile::Open(other / "bad.safetensors");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  // A shape whose byte size wraps past 2^64 to the 4 bytes it has (found with
  // safetensors_fuzzer): [2^63 + 1, 2] of BF16.
  const std::string header = R"({"x": {"dtype": "BF16", "shape": [9223372036854775809, 2], "data_offsets": [0, 4]}})";
  std::string wrap(8, '\0');
  for (int i = 0; i < 8; ++i) wrap[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  std::ofstream(other / "wrap.safetensors", std::ios::binary) << wrap << header << std::string(4, '\0');
  auto wrapped = SafetensorsFile::Open(other / "wrap.safetensors");
  ASSERT_FALSE(wrapped.ok());
  EXPECT_NE(wrapped.status().message().find("tensor x has shape [9223372036854775809, 2] too large"),
            std::string::npos)
      << wrapped.status().message();
  // A dimension past 2^64 is a JSON float, and a negative one is not a size
  // either (the first was undefined behaviour; found by safetensors_fuzzer).
  for (const char* shape : {"[461168601842018427387904, 4]", "[-1, 4]", "[2.5]", "4"}) {
    const std::string h = std::string(R"({"x": {"dtype": "F32", "shape": )") + shape + R"(, "data_offsets": [0, 0]}})";
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((h.size() >> (8 * i)) & 0xFF);
    std::ofstream(other / "float.safetensors", std::ios::binary) << len << h;
    auto r = SafetensorsFile::Open(other / "float.safetensors");
    ASSERT_FALSE(r.ok()) << shape;
    EXPECT_NE(r.status().message().find("must be lists of non-negative integers"), std::string::npos)
        << r.status().message();
  }
  // No checkpoint at all.
  ScratchDir empty;
  EXPECT_EQ(Checkpoint::Open(empty.path()).status().code(), StatusCode::kNotFound);
}

TEST(ModelLoaderShards, ShardDimsSplitHeadsMlpAndVocab) {
  ModelConfig c;
  c.num_heads = 16;
  c.num_kv_heads = 8;
  c.intermediate_size = 3072;
  c.vocab_size = 151937;
  auto d = ComputeShardDims(c, 1, 2);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->num_heads, 8u);
  EXPECT_EQ(d->num_kv_heads, 4u);
  EXPECT_EQ(d->intermediate_size, 1536u);
  EXPECT_EQ(d->vocab_begin, 75969u);
  EXPECT_EQ(d->vocab_end, 151937u);
  EXPECT_FALSE(ComputeShardDims(c, 0, 3).ok());  // 16 heads do not split 3 ways
  EXPECT_FALSE(ComputeShardDims(c, 2, 2).ok());
}

}  // namespace
}  // namespace llmserve::worker
