// The pieces of `llmserve bench latency|throughput`: option extraction,
// percentiles, dataset sampling and the timed batch run on a real tiny model.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "deploy/bench/offline_batch.h"
#include "deploy/bench/offline_dataset.h"
#include "deploy/bench/offline_options.h"
#include "engine_core/engine_factory.h"
#include "worker/test_model.h"

namespace llmserve::deploy {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_offline_bench_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A tiny model with a 300-token vocabulary (fast steps) and the real tokenizer.
std::string WriteTinyModel(const std::string& dir) {
  auto spec = worker::TestModelPreset("tiny", "qwen3");
  EXPECT_TRUE(spec.ok());
  spec->vocab_size = 300;
  spec->seed = 11;
  Status s = worker::WriteTestModel(*spec, dir + "/model");
  EXPECT_TRUE(s.ok()) << s.ToString();
  return dir + "/model";
}

TEST(OfflineOptions, TakesItsOptionsOutOfArgvInBothSpellings) {
  OfflineOptions o({{"input-len", "32", "in"}, {"num-prompts", "10", "n"}, {"quiet", "", "q", true}});
  std::vector<std::string> args = {"prog", "--input-len", "7", "--dtype=float32", "--num_prompts=3", "DIR", "--quiet"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  ASSERT_TRUE(o.Extract(&argc, argv.data()).ok());
  ASSERT_EQ(argc, 3);
  EXPECT_STREQ(argv[1], "--dtype=float32");
  EXPECT_STREQ(argv[2], "DIR");
  EXPECT_EQ(*o.Int("input-len", 1), 7);
  EXPECT_EQ(*o.Int("num-prompts", 1), 3);
  EXPECT_EQ(o.Get("quiet"), "true");
  EXPECT_TRUE(o.Given("input-len"));
  EXPECT_FALSE(o.Int("input-len", 8).ok());  // below the minimum

  OfflineOptions bad({{"input-len", "32", "in"}});
  std::vector<std::string> args2 = {"prog", "--input-len"};
  std::vector<char*> argv2 = {args2[0].data(), args2[1].data(), nullptr};
  int argc2 = 2;
  EXPECT_FALSE(bad.Extract(&argc2, argv2.data()).ok());
  OfflineOptions words({{"input-len", "abc", "in"}});
  EXPECT_FALSE(words.Int("input-len", 0).ok());
}

TEST(OfflineOptions, PercentileInterpolatesLikeNumpy) {
  const std::vector<double> v = {4, 1, 3, 2};  // numpy.percentile(v, p)
  EXPECT_DOUBLE_EQ(Percentile(v, 10), 1.3);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(v, 99), 3.97);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(Percentile({5}, 75), 5);
}

TEST(OfflineDataset, RandomPromptsHaveTheAskedLengthsAndASharedPrefix) {
  OfflineDatasetOptions o;
  o.num_prompts = 50;
  o.input_len = 20;
  o.output_len = 10;
  o.range_ratio = 0.5;
  o.prefix_len = 4;
  auto r = LoadOfflineDataset(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 50u);
  bool varied = false;
  for (const auto& q : *r) {
    EXPECT_GE(q.prompt_token_ids.size(), 4u + 10);
    EXPECT_LE(q.prompt_token_ids.size(), 4u + 30);
    EXPECT_GE(q.max_tokens, 5);
    EXPECT_LE(q.max_tokens, 15);
    EXPECT_TRUE(std::equal(q.prompt_token_ids.begin(), q.prompt_token_ids.begin() + 4, (*r)[0].prompt_token_ids.begin()));
    varied |= q.prompt_token_ids.size() != (*r)[0].prompt_token_ids.size();
  }
  EXPECT_TRUE(varied);
  auto again = LoadOfflineDataset(o);
  EXPECT_EQ((*again)[7].prompt_token_ids, (*r)[7].prompt_token_ids);  // reproducible from the seed
  o.input_len.reset();
  EXPECT_FALSE(LoadOfflineDataset(o).ok());  // --input-len required without a dataset
  o.input_len = 100;
  o.max_model_len = 64;
  EXPECT_FALSE(LoadOfflineDataset(o).ok());
}

TEST(OfflineDataset, ShareGptSkipsUnusablePairsAndRepeatsToReachTheCount) {
  TempDir tmp;
  const std::string model = WriteTinyModel(tmp.path());
  const std::string path = tmp.path() + "/sharegpt.json";
  std::ofstream(path) << R"([
    {"conversations": [{"from": "human", "value": "Tell me about the history of the printing press please."},
                       {"from": "gpt", "value": "The printing press was invented around 1440 by Gutenberg."}]},
    {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello to you as well"}]},
    {"conversations": [{"from": "human", "value": "only one turn here"}]}
  ])";
  OfflineDatasetOptions o;
  o.path = path;
  o.model_dir = model;
  o.num_prompts = 3;
  auto r = LoadOfflineDataset(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);  // one usable pair, repeated
  for (const auto& q : *r) {
    EXPECT_EQ(q.prompt_token_ids, (*r)[0].prompt_token_ids);
    EXPECT_GE(q.prompt_token_ids.size(), 8u);
    EXPECT_GE(q.max_tokens, 8);  // the answer's token count
  }
}

TEST(OfflineDataset, JsonLinesNeedAnOutputLengthAndMustFit) {
  TempDir tmp;
  const std::string path = tmp.path() + "/prompts.jsonl";
  std::ofstream(path) << "{\"prompt_token_ids\": [1, 2, 3], \"output_len\": 4}\n"
                         "\n"
                         "{\"prompt_token_ids\": [5, 6], \"max_tokens\": 2}\n";
  OfflineDatasetOptions o;
  o.path = path;
  o.num_prompts = 2;
  auto r = LoadOfflineDataset(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].prompt_token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ((*r)[0].max_tokens, 4);
  EXPECT_EQ((*r)[1].max_tokens, 2);
  o.max_model_len = 5;
  EXPECT_FALSE(LoadOfflineDataset(o).ok());  // 3 + 4 > 5
  o.max_model_len = 0;
  std::ofstream(path) << "{\"prompt_token_ids\": [1, 2, 3]}\n";
  auto missing = LoadOfflineDataset(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("output_len"), std::string::npos);
  o.output_len = 3;
  EXPECT_TRUE(LoadOfflineDataset(o).ok());
  std::ofstream(path) << "not json\n";
  EXPECT_FALSE(LoadOfflineDataset(o).ok());
  o.path = tmp.path() + "/absent.jsonl";
  EXPECT_FALSE(LoadOfflineDataset(o).ok());
}

StatusOr<engine_core::BuiltEngine> TinyEngine(const std::string& model, bool prefix_caching) {
  proto::EngineConfig config;
  config.mutable_model()->set_model_dir(model);
  config.mutable_model()->set_max_model_len(256);
  config.mutable_model()->set_dtype("float32");
  config.mutable_parallel()->set_tensor_parallel_size(1);
  config.mutable_parallel()->set_device("cpu");
  config.mutable_cache()->set_block_size(16);
  config.mutable_cache()->set_enable_prefix_caching(prefix_caching);
  config.mutable_cache()->set_num_kv_blocks_override(256);
  config.mutable_scheduler()->set_max_num_seqs(16);
  config.mutable_scheduler()->set_max_num_batched_tokens(1024);
  config.mutable_scheduler()->set_enable_chunked_prefill(true);
  return engine_core::BuildEngineCore(config, 0);
}

TEST(OfflineBatch, TimesPrefillAndDecodeStepsApartOnARealModel) {
  TempDir tmp;
  auto engine = TinyEngine(WriteTinyModel(tmp.path()), /*prefix_caching=*/true);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::vector<OfflineRequest> batch;
  for (int i = 0; i < 5; ++i) {
    OfflineRequest r;
    for (int t = 0; t < 20 + 9 * i; ++t) r.prompt_token_ids.push_back((t * 7 + i * 31) % 290 + 1);
    r.max_tokens = 3 + i;
    batch.push_back(r);
  }
  size_t last_done = 0;
  auto r = RunOfflineBatch(*engine->core, batch, BenchmarkSampling(), [&](size_t done, size_t total) {
    EXPECT_EQ(done, last_done + 1);
    EXPECT_EQ(total, 5u);
    last_done = done;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(last_done, 5u);
  EXPECT_EQ(r->prompt_tokens, 20 + 29 + 38 + 47 + 56);
  EXPECT_EQ(r->output_tokens, 3 + 4 + 5 + 6 + 7);
  EXPECT_EQ(r->cached_tokens, 0);
  // All prompts fit one step's budget: one prefill step, then decode-only steps.
  EXPECT_EQ(r->prefill_tokens, r->prompt_tokens);
  EXPECT_EQ(r->decode_tokens, r->output_tokens - 5);
  EXPECT_EQ(r->num_steps, 7);
  EXPECT_GT(r->prefill_time_s, 0);
  EXPECT_GT(r->decode_time_s, 0);
  EXPECT_LE(r->prefill_time_s + r->decode_time_s, r->elapsed_s);
  EXPECT_GE(r->add_requests_s, 0);
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& t = r->requests[i];
    EXPECT_EQ(t.output_tokens, batch[i].max_tokens);
    EXPECT_EQ(t.prompt_tokens, static_cast<int32_t>(batch[i].prompt_token_ids.size()));
    EXPECT_GT(t.ttft_s, 0);
    EXPECT_LT(t.ttft_s, t.latency_s);
    EXPECT_LE(t.latency_s, r->elapsed_s);
  }
  EXPECT_DOUBLE_EQ(r->prefill_tokens_per_second(), r->prefill_tokens / r->prefill_time_s);

  // The same batch again hits the prefix cache: full blocks of each prompt
  // (capped below the prompt length) are not computed again.
  auto again = RunOfflineBatch(*engine->core, batch, BenchmarkSampling());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  int64_t expected_hits = 0;
  for (const auto& q : batch) expected_hits += (static_cast<int64_t>(q.prompt_token_ids.size()) - 1) / 16 * 16;
  EXPECT_EQ(again->cached_tokens, expected_hits);
  EXPECT_EQ(again->prefill_tokens, again->prompt_tokens - expected_hits);
  EXPECT_FALSE(engine->core->HasRequests());
}

TEST(OfflineBatch, ABadRequestIsAnErrorAndLeavesTheEngineEmpty) {
  TempDir tmp;
  auto engine = TinyEngine(WriteTinyModel(tmp.path()), /*prefix_caching=*/false);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::vector<OfflineRequest> batch(2);
  batch[0].prompt_token_ids = {1, 2, 3};
  batch[1].prompt_token_ids = std::vector<int32_t>(300, 5);  // longer than max_model_len 256
  auto r = RunOfflineBatch(*engine->core, batch, BenchmarkSampling());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("request 1"), std::string::npos) << r.status().message();
  EXPECT_FALSE(engine->core->HasRequests());
  batch.pop_back();
  EXPECT_TRUE(RunOfflineBatch(*engine->core, batch, BenchmarkSampling()).ok());
}

}  // namespace
}  // namespace llmserve::deploy
