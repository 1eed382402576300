// Prompt logprobs from the model runner: against scripts/ref_forward.py's
// logits (numpy), and bitwise the same however the prompt is chunked and
// whatever else is in the batch.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>

#include "tests/worker/chunked_prefill.h"
#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::worker::prompt_logprobs_test {

using testing::ScratchDir;

class PromptLogprobsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 5), *dir_ / "m").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::unique_ptr<ModelRunner> NewRunner() {
    ModelRunnerConfig c;
    c.model_dir = *dir_ / "m";
    c.precision = kernels::cpu::MatmulPrecision::kF32;
    c.block_size = 4;
    c.num_threads = 2;
    c.max_num_batched_tokens = 64;
    c.max_num_seqs = 8;
    c.show_progress = false;
    auto r = ModelRunner::Create(c);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE((*r)->InitializeKvCache(64).ok());
    return std::move(r).value();
  }

  struct Req {
    std::string id;
    std::vector<int32_t> prompt;
    std::optional<int32_t> prompt_logprobs;
    std::vector<size_t> chunks;  // prefill chunk sizes, cycled
    int32_t first_block = 0;
  };

  // Prefills every request in `reqs` (each in its chunks, all in the same
  // steps) and returns the prompt rows each reported; `first_tokens` (if
  // given) gets each request's first token with its top-5 logprobs.
  static std::map<std::string, proto::Logprobs> Prefill(const std::vector<Req>& reqs,
                                                        std::map<std::string, proto::Logprobs>* first_tokens = nullptr) {
    auto runner = NewRunner();
    std::map<std::string, proto::Logprobs> got;
    std::vector<testing::ChunkedRequest> chunked;
    for (const Req& r : reqs) chunked.push_back({r.id, r.prompt, r.chunks, r.first_block});
    auto admit = [&](size_t i, proto::NewRequestData& nr) {
      nr.sampling_params.temperature = 0.0;
      nr.sampling_params.prompt_logprobs = reqs[i].prompt_logprobs;
      nr.sampling_params.logprobs = 5;
    };
    testing::RunChunkedPrefill(*runner, chunked, admit, [&](const proto::ModelRunnerOutput& out) {
      for (size_t i = 0; first_tokens != nullptr && i < out.req_ids.size(); ++i) {
        if (!out.sampled_token_ids[i].empty()) (*first_tokens)[out.req_ids[i]] = *out.logprobs[i];
      }
      for (const auto& [id, rows] : out.prompt_logprobs) {
        EXPECT_EQ(got.count(id), 0u) << id << ": prompt logprobs sent twice";
        got[id] = rows;
      }
    });
    return got;
  }

  static ScratchDir* dir_;
};

ScratchDir* PromptLogprobsTest::dir_ = nullptr;

TEST_F(PromptLogprobsTest, MatchesNumpyReference) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const size_t vocab = 512;
  const int32_t k = 5;
  const std::vector<int32_t> prompt = testing::Prompt(17, vocab, 3);
  const auto got = Prefill({{"r", prompt, k, {6, 4}}});
  ASSERT_EQ(got.count("r"), 1u);
  const proto::Logprobs& rows = got.at("r");
  ASSERT_EQ(rows.token_ids.size(), prompt.size() - 1);
  const std::vector<float> ref = testing::ReferenceLogits(*dir_ / "m", prompt, vocab, *dir_ / "ref.f32");
  std::vector<float> ours_lp, ref_lp;
  for (size_t p = 0; p + 1 < prompt.size(); ++p) {
    const float* l = ref.data() + p * vocab;
    double mx = *std::max_element(l, l + vocab), sum = 0;
    for (size_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(l[v]) - mx);
    const double lse = mx + std::log(sum);
    std::vector<int32_t> order(vocab);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
    const int32_t target = prompt[p + 1];
    int32_t rank = 1;
    for (size_t v = 0; v < vocab; ++v) rank += l[v] > l[target];
    ASSERT_EQ(rows.token_ids[p].size(), static_cast<size_t>(k + 1)) << "row " << p;
    EXPECT_EQ(rows.token_ids[p][0], target) << "row " << p;
    EXPECT_EQ(rows.sampled_token_ranks[p], rank) << "row " << p;
    for (int32_t j = 0; j <= k; ++j) {
      const int32_t id = j == 0 ? target : order[static_cast<size_t>(j - 1)];
      if (j > 0) {
        EXPECT_EQ(rows.token_ids[p][static_cast<size_t>(j)], id) << "row " << p << " top " << j;
      }
      ours_lp.push_back(rows.logprobs[p][static_cast<size_t>(j)]);
      ref_lp.push_back(static_cast<float>(l[id] - lse));
    }
  }
  const double err = testing::MaxRelativeError(ours_lp, ref_lp);
  EXPECT_LE(err, 1e-3) << "max relative error of the logprobs vs ref_forward.py";
  EXPECT_GT(err, 0.0) << "bitwise equal to numpy: suspicious";
}

TEST_F(PromptLogprobsTest, ZeroTopKGivesThePromptTokenOnlyAndOneTokenPromptNoRows) {
  const auto got = Prefill({{"a", {7, 300, 12, 9}, 0, {4}}, {"b", {42}, 3, {1}, 10}});
  ASSERT_EQ(got.at("a").token_ids.size(), 3u);
  for (const auto& row : got.at("a").token_ids) EXPECT_EQ(row.size(), 1u);
  EXPECT_EQ(got.at("a").token_ids[2], std::vector<int32_t>{9});
  EXPECT_TRUE(got.at("b").token_ids.empty());
}

TEST_F(PromptLogprobsTest, ChunkingAndBatchCompanyChangeNoBit) {
  const std::vector<int32_t> prompt = testing::Prompt(23, 512, 9);
  const auto alone = Prefill({{"r", prompt, 4, {23}}}).at("r");
  ASSERT_EQ(alone.token_ids.size(), 22u);
  for (const std::vector<size_t>& chunks : std::vector<std::vector<size_t>>{{1}, {3, 5}, {22, 1}, {4}, {7}}) {
    EXPECT_EQ(Prefill({{"r", prompt, 4, chunks}}).at("r"), alone) << "chunks of " << chunks[0];
  }
  // In company: another request with prompt logprobs and one without, in
  // other chunk sizes, sharing every step. The one without samples its
  // first token bitwise as alone, though the prompt rows of the others
  // change how the batch's last layer runs.
  std::map<std::string, proto::Logprobs> x_alone, firsts;
  Prefill({{"x", testing::Prompt(9, 512, 2), std::nullopt, {2}, 20}}, &x_alone);
  const auto mixed = Prefill({{"x", testing::Prompt(9, 512, 2), std::nullopt, {2}, 20},
                              {"r", prompt, 4, {5}},
                              {"y", testing::Prompt(15, 512, 4), 2, {6}, 40}},
                             &firsts);
  EXPECT_EQ(mixed.at("r"), alone);
  ASSERT_EQ(x_alone.count("x"), 1u);
  EXPECT_EQ(firsts.at("x"), x_alone.at("x"));
  EXPECT_EQ(mixed.count("x"), 0u);
  EXPECT_EQ(mixed.at("y").token_ids.size(), 14u);
}

}  // namespace llmserve::worker::prompt_logprobs_test
