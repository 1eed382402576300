// LoRA through the ModelRunner: adapters loaded at start from the config,
// requests choosing one by lora_name in the scheduler's diff.
#include <gtest/gtest.h>

#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"
#include "worker/test_lora_adapter.h"

namespace llmserve::worker::lora_runner_test {
namespace {

using testing::ScratchDir;

class LoraRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 81), dir_ / "m").ok());
    for (int i = 0; i < 2; ++i) {
      TestLoraSpec l;
      l.seed = 7 + i;
      l.rank = 8;
      ASSERT_TRUE(WriteTestLoraAdapter(l, dir_ / "m", dir_ / ("ad" + std::to_string(i))).ok());
    }
  }
  ModelRunnerConfig Config() {
    ModelRunnerConfig c;
    c.model_dir = dir_ / "m";
    c.block_size = 4;
    c.num_threads = 2;
    c.max_num_batched_tokens = 64;
    c.max_num_seqs = 8;
    c.show_progress = false;
    c.lora_modules = {{"alpha", dir_ / "ad0"}, {"beta", dir_ / "ad1"}};
    return c;
  }
  static proto::NewRequestData NewReq(const std::string& id, std::vector<int32_t> prompt, std::vector<int32_t> blocks,
                                      const std::string& lora) {
    proto::NewRequestData n;
    n.req_id = id;
    n.prompt_token_ids = std::move(prompt);
    n.sampling_params.temperature = 0.0;
    n.block_ids = {std::move(blocks)};
    if (!lora.empty()) n.lora_name = lora;
    return n;
  }
  // Greedy continuation by the model alone with adapter `slot`.
  static std::vector<int32_t> Greedy(Model& model, const std::vector<int32_t>& prompt, size_t n, int32_t slot) {
    KvCache cache(model.CacheShape(8, 4));
    std::vector<int32_t> tokens = prompt, out;
    size_t done = 0;
    while (out.size() < n) {
      ForwardBatch b;
      b.AddRequest(std::vector<int32_t>(tokens.begin() + done, tokens.end()), static_cast<int32_t>(done),
                   testing::Blocks(0, 8), 4, true, slot);
      b.FinishBlockTables();
      std::vector<float> logits;
      EXPECT_TRUE(model.Forward(b, cache, &logits).ok());
      const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      out.push_back(best);
      done = tokens.size();
      tokens.push_back(best);
    }
    return out;
  }

  ScratchDir dir_;
};

TEST_F(LoraRunnerTest, RequestsPickTheirAdapterByName) {
  auto r = ModelRunner::Create(Config());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto& runner = **r;
  ASSERT_TRUE(runner.InitializeKvCache(64).ok());
  const std::vector<int32_t> prompt = {5, 9, 200, 31, 7, 8};
  const std::vector<std::string> ids = {"base", "a", "b"}, loras = {"", "alpha", "beta"};
  std::vector<std::vector<int32_t>> want;
  for (const auto& l : loras) want.push_back(Greedy(runner.model(), prompt, 4, l.empty() ? -1 : runner.model().LoraSlot(l)));
  EXPECT_NE(want[1], want[0]);
  EXPECT_NE(want[2], want[0]);
  std::vector<std::vector<int32_t>> got(3);
  proto::SchedulerOutput s;
  for (size_t i = 0; i < 3; ++i) {
    s.scheduled_new_reqs.push_back(NewReq(ids[i], prompt, {static_cast<int32_t>(10 * i), static_cast<int32_t>(10 * i + 1),
                                                           static_cast<int32_t>(10 * i + 2)}, loras[i]));
    s.num_scheduled_tokens[ids[i]] = 6;
  }
  for (int step = 0; step < 4; ++step) {
    auto o = runner.Execute(s);
    ASSERT_FALSE(o.error.has_value()) << *o.error;
    for (size_t k = 0; k < o.req_ids.size(); ++k) {
      const size_t i = std::find(ids.begin(), ids.end(), o.req_ids[k]) - ids.begin();
      got[i].insert(got[i].end(), o.sampled_token_ids[k].begin(), o.sampled_token_ids[k].end());
    }
    s = proto::SchedulerOutput();
    for (size_t i = 0; i < 3; ++i) {
      auto& c = s.scheduled_cached_reqs;
      c.req_ids.push_back(ids[i]);
      c.num_computed_tokens.push_back(6 + step);
      c.new_block_ids.emplace_back();
      s.num_scheduled_tokens[ids[i]] = 1;
    }
  }
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], want[i]) << ids[i];
}

TEST_F(LoraRunnerTest, UnknownAdapterNameIsAStepError) {
  auto r = ModelRunner::Create(Config());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE((*r)->InitializeKvCache(16).ok());
  proto::SchedulerOutput s;
  s.scheduled_new_reqs = {NewReq("x", {1, 2, 3}, {0}, "gamma")};
  s.num_scheduled_tokens = {{"x", 3}};
  auto o = (*r)->Execute(s);
  ASSERT_TRUE(o.error.has_value());
  EXPECT_NE(o.error->find("no LoRA adapter named 'gamma' is loaded"), std::string::npos) << *o.error;
  EXPECT_EQ((*r)->num_requests(), 0u);
}

TEST_F(LoraRunnerTest, BadAdapterFailsStartWithItsName) {
  auto c = Config();
  c.lora_limits.max_rank = 4;
  auto r = ModelRunner::Create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("LoRA adapter 'alpha': "), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("greater than max_lora_rank 4"), std::string::npos) << r.status().ToString();
  c = Config();
  c.device = "cuda";
  r = ModelRunner::Create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("CPU backend only"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace llmserve::worker::lora_runner_test
