// --max-cpu-loras through the ModelRunner: with room for one adapter, requests
// alternating between two (each switch evicts one and reads the other again
// from its directory) give the same tokens as with both resident; an
// adapter a running request holds is never evicted or removed under it.
#include <gtest/gtest.h>

#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"
#include "worker/test_lora_adapter.h"

namespace llmserve::worker::lora_cache_test {
namespace {

using testing::ScratchDir;

constexpr int kDecodeSteps = 3;

class LoraCacheTest : public ::testing::Test {
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
  std::unique_ptr<ModelRunner> Runner(size_t max_cpu_loras) {
    ModelRunnerConfig c;
    c.model_dir = dir_ / "m";
    c.block_size = 4;
    c.num_threads = 2;
    c.max_num_batched_tokens = 64;
    c.max_num_seqs = 8;
    c.show_progress = false;
    c.lora_modules = {{"alpha", dir_ / "ad0"}, {"beta", dir_ / "ad1"}};
    c.max_cpu_loras = max_cpu_loras;
    auto r = ModelRunner::Create(c);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return nullptr;
    EXPECT_TRUE((*r)->InitializeKvCache(64).ok());
    return std::move(r).value();
  }
  // A new request of the same 6 prompt tokens in blocks [8k, 8k+3), greedy.
  static proto::NewRequestData NewReq(const std::string& id, int k, const std::string& lora) {
    proto::NewRequestData n;
    n.req_id = id;
    n.prompt_token_ids = {5, 9, 200, 31, 7, 8};
    n.sampling_params.temperature = 0.0;
    n.block_ids = {testing::Blocks(8 * k, 3)};
    if (!lora.empty()) n.lora_name = lora;
    return n;
  }
  // Decode step `step` (0-based) of the running requests `ids`.
  static proto::SchedulerOutput Decode(const std::vector<std::string>& ids, int step) {
    proto::SchedulerOutput s;
    for (const auto& id : ids) {
      s.scheduled_cached_reqs.req_ids.push_back(id);
      s.scheduled_cached_reqs.num_computed_tokens.push_back(6 + step);
      s.scheduled_cached_reqs.new_block_ids.emplace_back();
      s.num_scheduled_tokens[id] = 1;
    }
    return s;
  }
  // Runs `s` and appends each request's tokens to `got`.
  static void Run(ModelRunner& r, const proto::SchedulerOutput& s, std::map<std::string, std::vector<int32_t>>* got) {
    auto o = r.Execute(s);
    ASSERT_FALSE(o.error.has_value()) << *o.error;
    for (size_t k = 0; k < o.req_ids.size(); ++k)
      (*got)[o.req_ids[k]].insert((*got)[o.req_ids[k]].end(), o.sampled_token_ids[k].begin(),
                                  o.sampled_token_ids[k].end());
  }
  // Requests one after another, each with adapter loras[i], finishing before the next starts.
  static std::map<std::string, std::vector<int32_t>> Alternate(ModelRunner& r, const std::vector<std::string>& loras,
                                                               size_t max_resident) {
    std::map<std::string, std::vector<int32_t>> got;
    std::vector<std::string> finished;
    for (size_t i = 0; i < loras.size(); ++i) {
      const std::string id = "r" + std::to_string(i);
      proto::SchedulerOutput s;
      s.finished_req_ids = finished;
      s.scheduled_new_reqs = {NewReq(id, static_cast<int>(i), loras[i])};
      s.num_scheduled_tokens[id] = 6;
      Run(r, s, &got);
      for (int step = 0; step < kDecodeSteps; ++step) Run(r, Decode({id}, step), &got);
      EXPECT_LE(r.ResidentLoras().size(), max_resident) << "after request " << i;
      finished = {id};
    }
    return got;
  }

  ScratchDir dir_;
};

TEST_F(LoraCacheTest, OneResidentAdapterAlternatingMatchesBothResident) {
  const std::vector<std::string> loras = {"alpha", "beta", "alpha", "", "beta", "beta", "alpha"};
  auto both = Runner(0);
  auto one = Runner(1);
  ASSERT_TRUE(both && one);
  EXPECT_EQ(one->ResidentLoras(), (std::vector<std::string>{"beta"}));  // alpha was evicted loading beta at start
  const auto want = Alternate(*both, loras, 2);
  const auto got = Alternate(*one, loras, 1);
  EXPECT_EQ(got, want);
  EXPECT_NE(want.at("r0"), want.at("r1"));  // the adapters answer differently, so a wrong one would show
  EXPECT_NE(want.at("r0"), want.at("r3"));
  EXPECT_EQ(want.at("r0"), want.at("r2"));
}

TEST_F(LoraCacheTest, HeldAdaptersAreNotEvictedWhileTheirRequestsRun) {
  std::vector<std::map<std::string, std::vector<int32_t>>> results;
  for (size_t capacity : {size_t{0}, size_t{1}}) {
    auto r = Runner(capacity);
    ASSERT_TRUE(r);
    std::map<std::string, std::vector<int32_t>> got;
    proto::SchedulerOutput s;
    s.scheduled_new_reqs = {NewReq("a", 0, "alpha"), NewReq("b", 1, "beta")};
    s.num_scheduled_tokens = {{"a", 6}, {"b", 6}};
    Run(*r, s, &got);
    EXPECT_EQ(r->ResidentLoras(), (std::vector<std::string>{"alpha", "beta"}));  // past the capacity while held
    for (int step = 0; step < kDecodeSteps; ++step) Run(*r, Decode({"a", "b"}, step), &got);
    proto::SchedulerOutput done;
    done.finished_req_ids = {"a", "b"};
    Run(*r, done, &got);
    EXPECT_LE(r->ResidentLoras().size(), capacity == 0 ? 2u : 1u);
    results.push_back(got);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_NE(results[0].at("a"), results[0].at("b"));
}

TEST_F(LoraCacheTest, RemovedAdapterStaysWithTheRequestsUsingIt) {
  auto r = Runner(2);
  ASSERT_TRUE(r);
  std::map<std::string, std::vector<int32_t>> want, got;
  {
    auto ref = Runner(2);
    proto::SchedulerOutput s;
    s.scheduled_new_reqs = {NewReq("a", 0, "alpha")};
    s.num_scheduled_tokens = {{"a", 6}};
    Run(*ref, s, &want);
    for (int step = 0; step < kDecodeSteps; ++step) Run(*ref, Decode({"a"}, step), &want);
  }
  proto::SchedulerOutput s;
  s.scheduled_new_reqs = {NewReq("a", 0, "alpha")};
  s.num_scheduled_tokens = {{"a", 6}};
  Run(*r, s, &got);
  ASSERT_TRUE(r->RemoveLora("alpha").ok());
  EXPECT_EQ(r->RemoveLora("alpha").code(), StatusCode::kNotFound);
  EXPECT_EQ(r->AddLora("alpha", dir_ / "ad1").code(), StatusCode::kInvalidArgument);  // its old copy is in use
  for (int step = 0; step < kDecodeSteps; ++step) Run(*r, Decode({"a"}, step), &got);
  EXPECT_EQ(got, want);
  proto::SchedulerOutput done;
  done.finished_req_ids = {"a"};
  Run(*r, done, &got);
  EXPECT_EQ(r->ResidentLoras(), (std::vector<std::string>{"beta"}));
  // A new request may no longer name it; a fresh load under another name works.
  proto::SchedulerOutput late;
  late.scheduled_new_reqs = {NewReq("c", 1, "alpha")};
  late.num_scheduled_tokens = {{"c", 6}};
  EXPECT_TRUE(r->Execute(late).error.has_value());
  EXPECT_TRUE(r->AddLora("alpha#1", dir_ / "ad0").ok());
  EXPECT_EQ(r->AddLora("gamma", dir_ / "missing").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace llmserve::worker::lora_cache_test
