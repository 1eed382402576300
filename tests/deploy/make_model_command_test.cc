#include "deploy/make_model_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "worker/lora_adapter.h"
#include "worker/model_config.h"
#include "worker/model_loader.h"

namespace llmserve::deploy {
namespace {

int MakeModel(std::vector<std::string> args) {
  args.insert(args.begin(), "llmserve make-model");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return RunMakeModelCommand(static_cast<int>(args.size()), argv.data());
}

TEST(MakeModelCommand, WritesALoadableShardedModelWithTheTokenizer) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_make_model_XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  ASSERT_EQ(MakeModel({"--out", dir + "/m", "--arch", "mistral", "--preset", "tiny", "--seed=5", "--vocab", "300",
                 "--shards", "2", "--dtype", "f16", "--tie", "false", "--sliding-window", "8"}),
            0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/m/model.safetensors.index.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/m/model-00002-of-00002.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/m/tokenizer.json"));
  auto c = worker::LoadModelConfig(dir + "/m");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->architecture, worker::Architecture::kMistral);
  EXPECT_EQ(c->vocab_size, 300u);
  EXPECT_EQ(c->sliding_window, 8u);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--arch", "gpt2"}), 2);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--layers", "two"}), 2);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--frobnicate", "1"}), 2);
  EXPECT_EQ(MakeModel({"--arch", "llama"}), 2);  // --out is required
  std::filesystem::remove_all(dir);
}

TEST(MakeModelCommand, ConfigFormatWritesTheConfigAndTokenizerOnly) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_make_model_XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  ASSERT_EQ(MakeModel({"--out", dir + "/m", "--preset", "qwen3-8b", "--format", "config"}), 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/m/tokenizer.json"));
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/m"))
    EXPECT_NE(entry.path().extension(), ".safetensors") << entry.path();
  auto c = worker::LoadModelConfig(dir + "/m");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hidden_size, 4096u);
  EXPECT_EQ(c->num_layers, 36u);
  EXPECT_EQ(c->intermediate_size, 12288u);
  EXPECT_FALSE(c->tie_word_embeddings);
  std::filesystem::remove_all(dir);
}

TEST(MakeModelCommand, WritesALoraAdapterTheWorkerLoads) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_make_model_XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  ASSERT_EQ(MakeModel({"--out", dir + "/m", "--vocab", "300"}), 0);
  ASSERT_EQ(MakeModel({"--lora-adapter", dir + "/ad", "--base", dir + "/m", "--lora-rank", "4", "--lora-alpha", "8",
                       "--lora-targets", "q_proj,down_proj", "--rslora", "true", "--seed", "3"}),
            0);
  auto c = worker::LoadModelConfig(dir + "/m");
  ASSERT_TRUE(c.ok());
  auto d = worker::ComputeShardDims(*c, 0, 1);
  ASSERT_TRUE(d.ok());
  auto a = worker::LoadLoraAdapter("ad", dir + "/ad", *c, *d, worker::LoraLimits());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->rank, 4u);
  EXPECT_FLOAT_EQ((*a)->scale, 4.f);  // rsLoRA: 8 / sqrt(4)
  EXPECT_FALSE((*a)->layers[0][static_cast<size_t>(worker::LoraTarget::kQ)].empty());
  EXPECT_TRUE((*a)->layers[0][static_cast<size_t>(worker::LoraTarget::kV)].empty());
  EXPECT_EQ(MakeModel({"--lora-adapter", dir + "/x"}), 2);  // --base is required
  EXPECT_EQ(MakeModel({"--lora-adapter", dir + "/x", "--base", dir + "/m", "--lora-rank", "0"}), 2);
  EXPECT_EQ(MakeModel({"--lora-adapter", dir + "/x", "--base", dir + "/m", "--layers", "2"}), 2);
  EXPECT_EQ(MakeModel({"--lora-adapter", dir + "/x", "--base", dir + "/m", "--lora-targets", "lm_head"}), 1);
  std::filesystem::remove_all(dir);
}

TEST(MakeModelCommand, WritesAGgufModel) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_make_model_XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  ASSERT_EQ(MakeModel({"--out", dir + "/g", "--arch", "llama", "--vocab", "300", "--tie", "false", "--format",
                       "gguf", "--gguf-type", "q8_0"}),
            0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/g/model.gguf"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/g/tokenizer.json"));  // until the GGUF carries the tokenizer
  EXPECT_FALSE(std::filesystem::exists(dir + "/g/config.json"));
  auto c = worker::LoadModelConfig(dir + "/g");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->architecture, worker::Architecture::kLlama);
  EXPECT_EQ(c->vocab_size, 300u);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--format", "gguf", "--gguf-type", "q3_k"}), 2);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--format", "onnx"}), 2);
  std::filesystem::remove_all(dir);
}

TEST(MakeModelCommand, WritesMixtureOfExpertsModels) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_make_model_XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  ASSERT_EQ(MakeModel({"--out", dir + "/q", "--arch", "qwen3_moe", "--vocab", "300", "--experts", "6",
                       "--experts-per-tok", "3", "--moe-intermediate", "16", "--norm-topk-prob", "false",
                       "--decoder-sparse-step", "2"}),
            0);
  auto q = worker::LoadModelConfig(dir + "/q");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->architecture, worker::Architecture::kQwen3Moe);
  EXPECT_EQ(q->moe.num_experts, 6u);
  EXPECT_EQ(q->moe.num_experts_per_tok, 3u);
  EXPECT_EQ(q->moe.intermediate_size, 16u);
  EXPECT_FALSE(q->moe.norm_topk_prob);
  EXPECT_FALSE(q->IsMoeLayer(0));
  EXPECT_TRUE(q->IsMoeLayer(1));
  ASSERT_EQ(MakeModel({"--out", dir + "/m", "--arch", "mixtral", "--vocab", "300", "--experts", "4"}), 0);
  auto m = worker::LoadModelConfig(dir + "/m");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->architecture, worker::Architecture::kMixtral);
  EXPECT_EQ(m->moe.num_experts, 4u);
  EXPECT_EQ(m->moe.intermediate_size, m->intermediate_size);
  EXPECT_TRUE(m->moe.norm_topk_prob);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--arch", "mixtral", "--experts", "2", "--experts-per-tok", "3"}), 1);
  // GGUF holds Mixtral (llama with experts); not weights it would renormalise, nor DeepSeek.
  EXPECT_EQ(MakeModel({"--out", dir + "/g", "--arch", "mixtral", "--vocab", "300", "--format", "gguf"}), 0);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--arch", "qwen3_moe", "--norm-topk-prob", "false", "--format", "gguf"}),
            1);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--arch", "deepseek_v3", "--format", "gguf"}), 1);
  EXPECT_EQ(MakeModel({"--out", dir + "/x", "--arch", "qwen3", "--preset", "qwen3-30b-a3b"}), 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmserve::deploy
