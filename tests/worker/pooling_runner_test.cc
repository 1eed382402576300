// The pooling runner (--runner pooling): pooled final hidden states against
// scripts/ref_embed.py (numpy), and bitwise the same however a prompt is
// chunked and whatever else is in the batch.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "tests/worker/chunked_prefill.h"
#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::worker::pooling_runner_test {

using testing::ScratchDir;

class PoolingRunnerTest : public ::testing::TestWithParam<PoolingType> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 7), *dir_ / "m").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  using Req = testing::ChunkedRequest;

  // Prefills every request in `reqs` (each in its chunks, all in the same
  // steps) and returns the vector each reported.
  static std::map<std::string, std::vector<float>> Pool(PoolingType type, const std::vector<Req>& reqs) {
    ModelRunnerConfig c;
    c.model_dir = *dir_ / "m";
    c.precision = kernels::cpu::MatmulPrecision::kF32;
    c.block_size = 4;
    c.num_threads = 2;
    c.max_num_batched_tokens = 64;
    c.max_num_seqs = 8;
    c.show_progress = false;
    c.pooling = type;
    auto runner = ModelRunner::Create(c);
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    EXPECT_TRUE((*runner)->InitializeKvCache(64).ok());
    std::map<std::string, std::vector<float>> got;
    auto admit = [](size_t, proto::NewRequestData& nr) {
      nr.sampling_params.max_tokens = 1;
      nr.pooling_params.emplace();
    };
    testing::RunChunkedPrefill(**runner, reqs, admit, [&](const proto::ModelRunnerOutput& out) {
      for (const auto& tokens : out.sampled_token_ids) EXPECT_TRUE(tokens.empty()) << "a pooling step sampled";
      for (const auto& [id, v] : out.pooler_output) {
        EXPECT_EQ(got.count(id), 0u) << id << ": pooled twice";
        got[id] = v;
      }
    });
    return got;
  }

  static ScratchDir* dir_;
};

ScratchDir* PoolingRunnerTest::dir_ = nullptr;

const char* PoolName(PoolingType t) { return t == PoolingType::kLast ? "last" : t == PoolingType::kMean ? "mean" : "cls"; }

TEST_P(PoolingRunnerTest, MatchesNumpyReference) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const std::vector<int32_t> a = testing::Prompt(17, 512, 3), b = testing::Prompt(6, 512, 5);
  const auto got = Pool(GetParam(), {{"a", a, {5}}, {"b", b, {6}, 20}});
  ASSERT_EQ(got.size(), 2u);
  auto list = [](const std::vector<int32_t>& p) {
    std::string s;
    for (int32_t t : p) s += (s.empty() ? "" : ",") + std::to_string(t);
    return s;
  };
  const std::string out = *dir_ / "ref.f32";
  const std::string cmd = std::string("/usr/bin/python3 scripts/ref_embed.py ") + (*dir_ / "m") + " --pool " +
                          PoolName(GetParam()) + " --prompts " + list(a) + " " + list(b) + " --out " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const size_t h = got.at("a").size();
  std::vector<float> ref(2 * h);
  std::ifstream in(out, std::ios::binary);
  in.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size() * 4));
  ASSERT_TRUE(in.good()) << "short reference output";
  std::vector<float> ours = got.at("a");
  ours.insert(ours.end(), got.at("b").begin(), got.at("b").end());
  const double err = testing::MaxRelativeError(ours, ref);
  EXPECT_LE(err, 1e-5) << "max relative error of the pooled vectors vs ref_embed.py";
  EXPECT_GT(err, 0.0) << "bitwise equal to numpy: suspicious";
}

TEST_P(PoolingRunnerTest, ChunkingAndBatchCompanyChangeNoBit) {
  const std::vector<int32_t> prompt = testing::Prompt(23, 512, 9);
  const auto alone = Pool(GetParam(), {{"r", prompt, {23}}}).at("r");
  for (const std::vector<size_t>& chunks : std::vector<std::vector<size_t>>{{1}, {3, 5}, {22, 1}, {7}}) {
    EXPECT_EQ(Pool(GetParam(), {{"r", prompt, chunks}}).at("r"), alone) << "chunks of " << chunks[0];
  }
  const auto mixed = Pool(GetParam(), {{"x", testing::Prompt(9, 512, 2), {2}, 20},
                                       {"r", prompt, {5}},
                                       {"y", testing::Prompt(15, 512, 4), {6}, 40}});
  EXPECT_EQ(mixed.at("r"), alone);
  EXPECT_EQ(mixed.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Pooling, PoolingRunnerTest,
                         ::testing::Values(PoolingType::kLast, PoolingType::kMean, PoolingType::kCls),
                         [](const auto& info) { return std::string(PoolName(info.param)); });

}  // namespace llmserve::worker::pooling_runner_test
