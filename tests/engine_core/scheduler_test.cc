#include "engine_core/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/engine_core/scheduler_test_util.h"

namespace llmserve::engine_core {
namespace {

using testing::ById;
using testing::MakeRequest;
using testing::MakeScheduler;
using testing::ReplyFor;
using testing::Step;

SchedulerConfig Config(int32_t budget = 256, int32_t max_seqs = 16, int32_t max_model_len = 64) {
  SchedulerConfig c;
  c.max_num_batched_tokens = budget;
  c.max_num_seqs = max_seqs;
  c.max_model_len = max_model_len;
  return c;
}

// Id(i) trips GCC 12's -Wrestrict false positive.
std::string Id(int i) {
  std::string s = "r";
  s += std::to_string(i);
  return s;
}

std::map<std::string, int32_t> Scheduled(const proto::SchedulerOutput& so) {
  return std::map<std::string, int32_t>(so.num_scheduled_tokens.begin(), so.num_scheduled_tokens.end());
}

TEST(SchedulerTest, ChunkedPrefillSpendsTheBudgetExactlyAndMixesWithDecode) {
  auto s = MakeScheduler(Config(64, 8, 256), 200);
  ASSERT_TRUE(s->AddRequest(MakeRequest("A", 100, 4, 1000)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("B", 40, 4, 5000)).ok());

  proto::SchedulerOutput so;
  auto outs = Step(*s, testing::Constant, &so);
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 64}}));
  EXPECT_EQ(so.total_num_scheduled_tokens, 64);
  ASSERT_EQ(so.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(so.scheduled_new_reqs[0].req_id, "A");
  EXPECT_EQ(so.scheduled_new_reqs[0].prompt_token_ids.size(), 100u);
  EXPECT_EQ(so.scheduled_new_reqs[0].block_ids[0].size(), 16u);  // 64 tokens / 4
  EXPECT_TRUE(ById(outs).empty());  // a partial prefill produces no output

  outs = Step(*s, testing::Constant, &so);
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 36}, {"B", 28}}));
  EXPECT_EQ(so.total_num_scheduled_tokens, 64);
  ASSERT_EQ(so.scheduled_cached_reqs.req_ids, std::vector<std::string>{"A"});
  EXPECT_EQ(so.scheduled_cached_reqs.num_computed_tokens[0], 64);
  EXPECT_EQ(so.scheduled_cached_reqs.num_output_tokens[0], 0);
  ASSERT_TRUE(so.scheduled_cached_reqs.new_block_ids[0].has_value());
  EXPECT_EQ((*so.scheduled_cached_reqs.new_block_ids[0])[0].size(), 9u);  // 100 tokens -> 25 blocks
  EXPECT_EQ(ById(outs).count("A"), 1u);  // A's prompt is done: first token
  EXPECT_EQ(ById(outs).count("B"), 0u);

  // Decode for A and the rest of B's prompt in one step.
  Step(*s, testing::Constant, &so);
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 1}, {"B", 12}}));
}

TEST(SchedulerTest, LongPrefillThresholdCapsChunks) {
  SchedulerConfig c = Config(64, 8, 256);
  c.long_prefill_token_threshold = 16;
  auto s = MakeScheduler(c, 200);
  ASSERT_TRUE(s->AddRequest(MakeRequest("A", 50, 4, 1000)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("B", 50, 4, 2000)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("C", 10, 4, 3000)).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 16}, {"B", 16}, {"C", 10}}));
  Step(*s, testing::Constant, &so);
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 16}, {"B", 16}, {"C", 1}}));
}

TEST(SchedulerTest, DiffSendsNewRequestsOnceAndNewBlocksOnlyWhenAdded) {
  auto s = MakeScheduler(Config(), 64);
  ASSERT_TRUE(s->AddRequest(MakeRequest("A", 6, 8)).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);  // 6 prompt tokens -> 2 blocks, token 7 sampled
  ASSERT_EQ(so.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(so.scheduled_new_reqs[0].block_ids[0].size(), 2u);
  Step(*s, testing::Constant, &so);  // computes token 7 (slot 7 of 8): no new block
  EXPECT_TRUE(so.scheduled_new_reqs.empty());
  ASSERT_EQ(so.scheduled_cached_reqs.req_ids.size(), 1u);
  EXPECT_FALSE(so.scheduled_cached_reqs.new_block_ids[0].has_value());
  EXPECT_TRUE(so.scheduled_cached_reqs.all_token_ids.empty());
  EXPECT_EQ(so.scheduled_cached_reqs.num_computed_tokens[0], 6);
  EXPECT_EQ(so.scheduled_cached_reqs.num_output_tokens[0], 1);
  Step(*s, testing::Constant, &so);  // slot 8
  EXPECT_FALSE(so.scheduled_cached_reqs.new_block_ids[0].has_value());
  Step(*s, testing::Constant, &so);  // slot 9: a third block
  ASSERT_TRUE(so.scheduled_cached_reqs.new_block_ids[0].has_value());
  EXPECT_EQ((*so.scheduled_cached_reqs.new_block_ids[0])[0].size(), 1u);
}

TEST(SchedulerTest, PrefixHitAfterFirstRequestFinishes) {
  auto s = MakeScheduler(Config(), 64);
  ASSERT_TRUE(s->AddRequest(MakeRequest("A", 18, 1)).ok());
  Step(*s);
  EXPECT_FALSE(s->HasRequests());
  ASSERT_TRUE(s->AddRequest(MakeRequest("B", 18, 1)).ok());
  proto::SchedulerOutput so;
  auto outs = Step(*s, testing::Constant, &so);
  ASSERT_EQ(so.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(so.scheduled_new_reqs[0].num_computed_tokens, 16);
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"B", 2}}));
  EXPECT_EQ(ById(outs)["B"].num_cached_tokens, 16);
  ASSERT_TRUE(outs[0].outputs.scheduler_stats.has_value());
  EXPECT_EQ(outs[0].outputs.scheduler_stats->prefix_cache_queries, 18);
  EXPECT_EQ(outs[0].outputs.scheduler_stats->prefix_cache_hits, 16);
}

TEST(SchedulerTest, CacheSaltIsolatesThroughTheScheduler) {
  auto s = MakeScheduler(Config(), 64);
  auto a = MakeRequest("A", 18, 1);
  a.cache_salt = "alice";
  ASSERT_TRUE(s->AddRequest(a).ok());
  Step(*s);
  auto b = MakeRequest("B", 18, 1);
  b.cache_salt = "bob";
  ASSERT_TRUE(s->AddRequest(b).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);
  EXPECT_EQ(so.scheduled_new_reqs[0].num_computed_tokens, 0);
}

// Three requests fill a 16-block cache; when decode needs a block, the victim
// is the last admitted (FCFS) or the max (priority, arrival) (PRIORITY).
class PreemptionTest : public ::testing::TestWithParam<SchedulingPolicy> {};

TEST_P(PreemptionTest, VictimFollowsPolicy) {
  SchedulerConfig c = Config();
  c.policy = GetParam();
  auto s = MakeScheduler(c, 17);  // 16 usable blocks of 4
  // Admitted one per step, so running order is A, B, C under both policies.
  auto a = MakeRequest("A", 18, 40, 1000);
  a.priority = 5;
  a.arrival_time = 1;
  auto b = MakeRequest("B", 18, 40, 2000);
  b.priority = 1;
  b.arrival_time = 2;
  auto cr = MakeRequest("C", 18, 40, 3000);
  cr.priority = 0;
  cr.arrival_time = 3;
  proto::SchedulerOutput so;
  ASSERT_TRUE(s->AddRequest(a).ok());
  Step(*s);
  ASSERT_TRUE(s->AddRequest(b).ok());
  Step(*s);
  ASSERT_TRUE(s->AddRequest(cr).ok());
  Step(*s, testing::Constant, &so);  // 15 blocks held, 1 free
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 1}, {"B", 1}, {"C", 18}}));
  Step(*s, testing::Constant, &so);  // A takes the last block
  EXPECT_TRUE(so.preempted_req_ids.empty());
  EXPECT_EQ(s->kv_cache_manager().num_free_blocks(), 0);

  auto outs = Step(*s, testing::Constant, &so);  // B needs a 6th block
  if (GetParam() == SchedulingPolicy::kFcfs) {
    EXPECT_EQ(so.preempted_req_ids, std::vector<std::string>{"C"});
    EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"A", 1}, {"B", 1}}));
    EXPECT_EQ(s->FindRequest("C")->status, RequestStatus::kPreempted);
    EXPECT_EQ(s->FindRequest("C")->num_preemptions, 1);
    EXPECT_EQ(s->FindRequest("C")->num_computed_tokens, 0);
  } else {
    // A (priority 5) goes although it was already scheduled this step: its
    // token is given back and B takes the freed blocks.
    EXPECT_EQ(so.preempted_req_ids, std::vector<std::string>{"A"});
    EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"B", 1}, {"C", 1}}));
    EXPECT_EQ(so.total_num_scheduled_tokens, 2);
    EXPECT_EQ(s->FindRequest("A")->status, RequestStatus::kPreempted);
    EXPECT_EQ(ById(outs).count("A"), 0u);
  }
  EXPECT_EQ(s->num_waiting(), 1);
  EXPECT_EQ(s->num_running(), 2);
  ASSERT_TRUE(outs.front().outputs.scheduler_stats.has_value());
  EXPECT_EQ(outs.front().outputs.scheduler_stats->num_preemptions, 1);
}

// A request that cannot grow even after every later request was preempted
// preempts itself and stops the running pass (vLLM semantics).
TEST(SchedulerTest, PriorityVictimCanBeTheRequestItself) {
  SchedulerConfig c = Config();
  c.policy = SchedulingPolicy::kPriority;
  auto s = MakeScheduler(c, 17);
  auto a = MakeRequest("A", 18, 40, 1000);
  a.priority = 5;
  auto b = MakeRequest("B", 18, 40, 2000);
  b.priority = 1;
  auto cr = MakeRequest("C", 18, 40, 3000);
  cr.priority = 0;
  ASSERT_TRUE(s->AddRequest(a).ok());
  ASSERT_TRUE(s->AddRequest(b).ok());
  Step(*s);  // admitted by priority: running B, A
  ASSERT_TRUE(s->AddRequest(cr).ok());
  Step(*s);  // running B, A, C
  Step(*s);
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);  // B takes the last block; A needs one: A is the max
  EXPECT_EQ(so.preempted_req_ids, std::vector<std::string>{"A"});
  EXPECT_EQ(Scheduled(so), (std::map<std::string, int32_t>{{"B", 1}}));  // C waits a step
}

INSTANTIATE_TEST_SUITE_P(Policies, PreemptionTest,
                         ::testing::Values(SchedulingPolicy::kFcfs, SchedulingPolicy::kPriority));

TEST(SchedulerTest, PreemptedRequestResumesWithItsTokensAndPrefixHits) {
  auto s = MakeScheduler(Config(), 17);
  ASSERT_TRUE(s->AddRequest(MakeRequest("A", 20, 2, 1000)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("B", 20, 40, 2000)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("C", 20, 40, 3000)).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);  // 15 blocks held, 1 free; each has 21 tokens
  auto outs = Step(*s, testing::Constant, &so);
  EXPECT_EQ(so.preempted_req_ids, std::vector<std::string>{"C"});
  EXPECT_EQ(ById(outs)["A"].finish_reason, proto::FinishReason::kLength);  // A is done

  outs = Step(*s, testing::Constant, &so);  // C comes back
  EXPECT_EQ(so.finished_req_ids, std::vector<std::string>{"A"});
  EXPECT_TRUE(so.scheduled_new_reqs.empty());
  EXPECT_EQ(so.scheduled_cached_reqs.resumed_req_ids, std::vector<std::string>{"C"});
  const auto& c = so.scheduled_cached_reqs;
  const size_t ci = static_cast<size_t>(std::find(c.req_ids.begin(), c.req_ids.end(), "C") - c.req_ids.begin());
  ASSERT_LT(ci, c.req_ids.size());
  // Blocks 0-3 of C survived on the free list (its tail block was reused by B).
  EXPECT_EQ(c.num_computed_tokens[ci], 16);
  EXPECT_EQ(Scheduled(so)["C"], 5);
  ASSERT_EQ(c.all_token_ids.count("C"), 1u);
  EXPECT_EQ(c.all_token_ids.at("C").size(), 21u);  // prompt + its first output token
  EXPECT_EQ(c.all_token_ids.at("C").back(), 7);
  ASSERT_TRUE(c.new_block_ids[ci].has_value());
  EXPECT_EQ((*c.new_block_ids[ci])[0].size(), 6u);  // the whole table, replacing the old one
  EXPECT_EQ(ById(outs)["C"].new_token_ids, std::vector<int32_t>{7});
}

TEST(SchedulerTest, WaitingOrderFollowsPolicy) {
  for (SchedulingPolicy policy : {SchedulingPolicy::kFcfs, SchedulingPolicy::kPriority}) {
    SchedulerConfig c = Config(256, 1);
    c.policy = policy;
    auto s = MakeScheduler(c, 64);
    const std::vector<std::pair<std::string, int32_t>> reqs = {{"X", 3}, {"Y", 1}, {"Z", 2}};
    for (const auto& [id, prio] : reqs) {
      auto r = MakeRequest(id, 4, 1);
      r.priority = prio;
      ASSERT_TRUE(s->AddRequest(r).ok());
    }
    std::vector<std::string> order;
    while (s->HasRequests()) {
      for (const auto& [id, o] : ById(Step(*s))) order.push_back(id);
    }
    if (policy == SchedulingPolicy::kFcfs) {
      EXPECT_EQ(order, (std::vector<std::string>{"X", "Y", "Z"}));
    } else {
      EXPECT_EQ(order, (std::vector<std::string>{"Y", "Z", "X"}));
    }
  }
}

TEST(SchedulerTest, MaxNumSeqsBoundsRunningRequests) {
  auto s = MakeScheduler(Config(256, 2), 64);
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(s->AddRequest(MakeRequest(id, 4, 3)).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);
  EXPECT_EQ(so.num_scheduled_tokens.size(), 2u);
  EXPECT_EQ(s->num_running(), 2);
  EXPECT_EQ(s->num_waiting(), 1);
}

// ---- stop conditions -------------------------------------------------------

struct StopCase {
  const char* name;
  int32_t max_tokens;
  int32_t min_tokens;
  bool ignore_eos;
  std::vector<int32_t> stop_token_ids;
  int32_t sampled;  // every step samples this token
  size_t expect_len;
  proto::FinishReason expect_reason;
  std::optional<int32_t> expect_stop_token;
};

TEST(SchedulerTest, StopConditions) {
  const int32_t kEos = 2;
  const std::vector<StopCase> cases = {
      {"max_tokens", 3, 0, false, {}, 7, 3, proto::FinishReason::kLength, std::nullopt},
      {"eos", 10, 0, false, {}, kEos, 1, proto::FinishReason::kStop, std::nullopt},
      {"ignore_eos", 4, 0, true, {}, kEos, 4, proto::FinishReason::kLength, std::nullopt},
      {"stop_token", 10, 0, false, {9}, 9, 1, proto::FinishReason::kStop, 9},
      {"stop_token_despite_ignore_eos", 10, 0, true, {9}, 9, 1, proto::FinishReason::kStop, 9},
      {"min_tokens_suppresses_eos", 10, 3, false, {}, kEos, 3, proto::FinishReason::kStop, std::nullopt},
      {"min_tokens_suppresses_stop_ids", 10, 2, false, {9}, 9, 2, proto::FinishReason::kStop, 9},
  };
  for (const StopCase& sc : cases) {
    SCOPED_TRACE(sc.name);
    auto s = MakeScheduler(Config(), 64);
    auto r = MakeRequest("r", 5, sc.max_tokens);
    r.sampling_params.min_tokens = sc.min_tokens;
    r.sampling_params.ignore_eos = sc.ignore_eos;
    r.sampling_params.stop_token_ids = sc.stop_token_ids;
    r.sampling_params.all_stop_token_ids = sc.stop_token_ids;
    r.sampling_params.all_stop_token_ids.push_back(kEos);
    ASSERT_TRUE(s->AddRequest(r).ok());
    std::vector<int32_t> tokens;
    std::optional<proto::EngineCoreOutput> last;
    for (int i = 0; i < 20 && s->HasRequests(); ++i) {
      auto by_id = ById(Step(*s, [&](const Request&) { return sc.sampled; }));
      ASSERT_EQ(by_id.count("r"), 1u);
      tokens.insert(tokens.end(), by_id["r"].new_token_ids.begin(), by_id["r"].new_token_ids.end());
      last = by_id["r"];
    }
    EXPECT_FALSE(s->HasRequests());
    EXPECT_EQ(tokens.size(), sc.expect_len);
    ASSERT_TRUE(last && last->finish_reason);
    EXPECT_EQ(*last->finish_reason, sc.expect_reason);
    EXPECT_EQ(last->stop_token_id, sc.expect_stop_token);
    EXPECT_EQ(s->kv_cache_manager().num_free_blocks(), 63);
  }
}

TEST(SchedulerTest, MaxModelLenCapsGeneration) {
  auto s = MakeScheduler(Config(256, 4, 32), 64);
  auto r = MakeRequest("r", 29, 100);  // room for 3 tokens
  ASSERT_TRUE(s->AddRequest(r).ok());
  size_t n = 0;
  std::optional<proto::FinishReason> reason;
  while (s->HasRequests()) {
    auto o = ById(Step(*s))["r"];
    n += o.new_token_ids.size();
    reason = o.finish_reason;
  }
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(reason, proto::FinishReason::kLength);
}

// ---- admission and abort ---------------------------------------------------

TEST(SchedulerTest, RejectsBadRequests) {
  auto s = MakeScheduler(Config(256, 4, 32), 64);
  EXPECT_EQ(s->AddRequest(MakeRequest("empty", 0)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->AddRequest(MakeRequest("long", 32)).code(), StatusCode::kInvalidArgument);
  auto zero = MakeRequest("zero", 4, 0);
  EXPECT_EQ(s->AddRequest(zero).code(), StatusCode::kInvalidArgument);
  auto min_gt_max = MakeRequest("mm", 4, 2);
  min_gt_max.sampling_params.min_tokens = 3;
  EXPECT_EQ(s->AddRequest(min_gt_max).code(), StatusCode::kInvalidArgument);
  auto bad_client = MakeRequest("client", 4);
  bad_client.client_index = -1;
  EXPECT_EQ(s->AddRequest(bad_client).code(), StatusCode::kInvalidArgument);
  auto negative_token = MakeRequest("neg", 4);
  negative_token.prompt_token_ids[1] = -5;
  EXPECT_EQ(s->AddRequest(negative_token).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(s->AddRequest(MakeRequest("dup", 4)).ok());
  EXPECT_EQ(s->AddRequest(MakeRequest("dup", 4)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->num_waiting(), 1);
  auto unlimited = MakeRequest("unlimited", 4);
  unlimited.sampling_params.max_tokens.reset();  // up to max_model_len
  ASSERT_TRUE(s->AddRequest(unlimited).ok());
  EXPECT_EQ(s->FindRequest("unlimited")->stop.max_tokens, 28);
}

TEST(SchedulerTest, RejectsKvCacheSmallerThanOneMaxLengthRequest) {
  KVCacheConfig kc;
  kc.num_blocks = 16;  // 15 usable blocks of 4 = 60 tokens
  kc.block_size = 4;
  kc.max_model_len = 64;
  auto s = Scheduler::Create(Config(), kc);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
}

TEST(SchedulerTest, WaitingQueueIsBounded) {
  SchedulerConfig c = Config(256, 1);
  c.max_waiting_requests = 2;
  auto s = MakeScheduler(c, 64);
  ASSERT_TRUE(s->AddRequest(MakeRequest("a", 4, 5)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("b", 4, 5)).ok());
  const Status full = s->AddRequest(MakeRequest("c", 4, 5));
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  Step(*s);  // "a" starts running: one waiting slot opens
  EXPECT_TRUE(s->AddRequest(MakeRequest("c", 4, 5)).ok());
  EXPECT_EQ(s->AddRequest(MakeRequest("d", 4, 5)).code(), StatusCode::kResourceExhausted);
}

TEST(SchedulerTest, AbortIsIdempotentAndReported) {
  auto s = MakeScheduler(Config(256, 1), 64);
  auto running = MakeRequest("run", 8, 10);
  running.client_index = 1;
  ASSERT_TRUE(s->AddRequest(running).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("wait", 8, 10)).ok());
  Step(*s);
  ASSERT_EQ(s->num_running(), 1);
  const std::vector<std::string> ids = {"run", "wait", "unknown"};
  s->FinishRequests(ids, RequestStatus::kFinishedAborted);
  s->FinishRequests(ids, RequestStatus::kFinishedAborted);  // again: no effect
  EXPECT_FALSE(s->HasRequests());
  EXPECT_EQ(s->kv_cache_manager().num_free_blocks(), 63);
  EXPECT_EQ(s->FindRequest("run"), nullptr);

  const proto::SchedulerOutput& so = s->Schedule();
  EXPECT_EQ(std::set<std::string>(so.finished_req_ids.begin(), so.finished_req_ids.end()),
            (std::set<std::string>{"run", "wait"}));
  auto outs = s->UpdateFromOutput(so, proto::ModelRunnerOutput{});
  std::map<int32_t, std::vector<std::string>> finished;
  for (const ClientOutputs& c : outs) {
    EXPECT_TRUE(c.outputs.outputs.empty());  // aborts produce no token outputs
    if (c.outputs.finished_requests) finished[c.client_index] = *c.outputs.finished_requests;
  }
  EXPECT_EQ(finished[1], std::vector<std::string>{"run"});
  EXPECT_EQ(finished[0], std::vector<std::string>{"wait"});
  // The id can be used again.
  EXPECT_TRUE(s->AddRequest(MakeRequest("run", 8, 10)).ok());
}

TEST(SchedulerTest, AnEngineIdledByAbortsReportsItWithoutAStep) {
  auto s = MakeScheduler(Config(256, 1), 64);
  auto running = MakeRequest("run", 8, 10);
  running.client_index = 1;
  ASSERT_TRUE(s->AddRequest(running).ok());
  Step(*s);
  ASSERT_EQ(s->num_running(), 1);
  const std::vector<std::string> ids = {"run"};
  s->FinishRequests(ids, RequestStatus::kFinishedAborted);
  ASSERT_FALSE(s->HasRequests());

  std::vector<ClientOutputs> outs;
  s->TakeIdleOutputs(&outs);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].client_index, 1);
  EXPECT_TRUE(outs[0].outputs.outputs.empty());
  ASSERT_TRUE(outs[0].outputs.finished_requests.has_value());
  EXPECT_EQ(*outs[0].outputs.finished_requests, ids);
  ASSERT_TRUE(outs[0].outputs.scheduler_stats.has_value());
  EXPECT_EQ(outs[0].outputs.scheduler_stats->num_running_reqs, 0);
  EXPECT_EQ(outs[0].outputs.scheduler_stats->kv_cache_usage, 0.0);
  // Taken once: nothing finished since, only fresh stats.
  s->TakeIdleOutputs(&outs);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_FALSE(outs[0].outputs.finished_requests.has_value());
  EXPECT_TRUE(outs[0].outputs.scheduler_stats.has_value());
}

TEST(SchedulerTest, TokensOfRequestsAbortedMidStepAreDropped) {
  auto s = MakeScheduler(Config(), 64);
  ASSERT_TRUE(s->AddRequest(MakeRequest("a", 8, 10, 100)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("b", 8, 10, 200)).ok());
  const proto::SchedulerOutput& so = s->Schedule();
  proto::ModelRunnerOutput mro = ReplyFor(*s, so, testing::Constant);
  const std::vector<std::string> abort = {"a"};
  s->FinishRequests(abort, RequestStatus::kFinishedAborted);
  // A new request reusing the freed slot must not receive a's token either.
  ASSERT_TRUE(s->AddRequest(MakeRequest("c", 8, 10, 300)).ok());
  auto outs = ById(s->UpdateFromOutput(so, mro));
  EXPECT_EQ(outs.count("a"), 0u);
  EXPECT_EQ(outs.count("c"), 0u);
  EXPECT_EQ(outs["b"].new_token_ids, std::vector<int32_t>{7});
  EXPECT_EQ(s->FindRequest("c")->num_output_tokens(), 0);
}

TEST(SchedulerTest, OutputsAreGroupedPerClientWithStatsOnOne) {
  auto s = MakeScheduler(Config(), 64);
  for (int i = 0; i < 4; ++i) {
    auto r = MakeRequest(Id(i), 4, 2, 100 * i);
    r.client_index = i % 2;
    ASSERT_TRUE(s->AddRequest(r).ok());
  }
  auto outs = Step(*s);
  ASSERT_EQ(outs.size(), 2u);
  int with_stats = 0;
  for (const ClientOutputs& c : outs) {
    EXPECT_EQ(c.outputs.outputs.size(), 2u);
    for (const auto& o : c.outputs.outputs) {
      EXPECT_EQ(std::stoi(o.request_id.substr(1)) % 2, c.client_index);
      // Events so far: queued, then scheduled.
      ASSERT_EQ(o.events.size(), 2u);
      EXPECT_EQ(o.events[0].type, 1);
      EXPECT_EQ(o.events[1].type, 2);
      EXPECT_LE(o.events[0].timestamp, o.events[1].timestamp);
    }
    with_stats += c.outputs.scheduler_stats.has_value();
  }
  EXPECT_EQ(with_stats, 1);
  const proto::SchedulerStats st = *outs[0].outputs.scheduler_stats;
  EXPECT_EQ(st.num_running_reqs, 4);
  EXPECT_EQ(st.num_waiting_reqs, 0);
  EXPECT_EQ(st.step_counter, 1);
  EXPECT_EQ(st.iteration_tokens, std::vector<int32_t>{16});
  EXPECT_GT(st.kv_cache_usage, 0.0);
}

TEST(SchedulerTest, StatsCountWaitingTokens) {
  auto s = MakeScheduler(Config(8, 4), 64);
  ASSERT_TRUE(s->AddRequest(MakeRequest("a", 20, 2, 100)).ok());
  ASSERT_TRUE(s->AddRequest(MakeRequest("b", 12, 2, 200)).ok());
  Step(*s);  // a: 8 of 20; b waits
  const proto::SchedulerStats st = s->MakeStats();
  EXPECT_EQ(st.num_running_reqs, 1);
  EXPECT_EQ(st.num_waiting_reqs, 1);
  EXPECT_EQ(st.num_waiting_tokens, 12);
}

// FCFS liveness under constant KV pressure: the oldest unfinished request is
// scheduled in every step, and everything finishes.
TEST(SchedulerTest, NoRequestStarves) {
  auto s = MakeScheduler(Config(32, 8, 64), 17, 4);
  std::vector<std::string> order;
  for (int i = 0; i < 30; ++i) {
    order.push_back(Id(i));
    ASSERT_TRUE(s->AddRequest(MakeRequest(order.back(), 6 + (i * 7) % 20, 12 + i % 9, 1000 * i)).ok());
  }
  std::set<std::string> done;
  int steps = 0;
  int64_t preemptions = 0;
  while (s->HasRequests()) {
    ASSERT_LT(++steps, 2000);
    const std::string* oldest = nullptr;
    for (const std::string& id : order) {
      if (!done.count(id)) {
        oldest = &id;
        break;
      }
    }
    const proto::SchedulerOutput& so = s->Schedule();
    EXPECT_EQ(so.num_scheduled_tokens.count(*oldest), 1u) << "step " << steps << " skipped " << *oldest;
    for (const ClientOutputs& c : s->UpdateFromOutput(so, ReplyFor(*s, so, testing::Constant))) {
      for (const auto& o : c.outputs.outputs) {
        if (o.finish_reason) done.insert(o.request_id);
      }
      if (c.outputs.scheduler_stats) preemptions += c.outputs.scheduler_stats->num_preemptions;
    }
  }
  EXPECT_EQ(done.size(), 30u);
  EXPECT_GT(preemptions, 0);  // the test did exercise preemption
  EXPECT_EQ(s->kv_cache_manager().num_free_blocks(), 16);
}

}  // namespace
}  // namespace llmserve::engine_core

namespace llmserve::engine_core {
namespace {

// Reusing the output vector across steps (the engine's hot path) gives the
// same outputs as fresh vectors, including after finishes, aborts and client
// changes that shrink and regrow the buffers.
TEST(SchedulerTest, ReusedOutputBuffersMatchFreshOnes) {
  SchedulerConfig c = Config(48, 8, 64);
  c.log_stats = false;
  auto fresh = MakeScheduler(c, 40);
  auto reused = MakeScheduler(c, 40);
  std::vector<ClientOutputs> buffers;
  int next = 0;
  for (int step = 0; step < 300; ++step) {
    if (step % 3 == 0 && next < 60) {
      auto r = MakeRequest(Id(next), 3 + next % 17, 1 + (next * 5) % 13, 50 * next);
      r.client_index = next % 3;
      r.sampling_params.all_stop_token_ids = {2};
      ++next;
      ASSERT_TRUE(fresh->AddRequest(r).ok());
      ASSERT_TRUE(reused->AddRequest(r).ok());
    }
    if (step % 17 == 5) {
      const std::vector<std::string> ids = {Id(step % next)};
      fresh->FinishRequests(ids, RequestStatus::kFinishedAborted);
      reused->FinishRequests(ids, RequestStatus::kFinishedAborted);
    }
    auto token = [](const Request& r) { return r.num_tokens() % 7 == 0 ? 2 : 11; };
    const proto::SchedulerOutput& a = fresh->Schedule();
    const proto::SchedulerOutput& b = reused->Schedule();
    ASSERT_EQ(a, b) << "step " << step;
    std::vector<ClientOutputs> expect = fresh->UpdateFromOutput(a, ReplyFor(*fresh, a, token));
    reused->UpdateFromOutput(b, ReplyFor(*reused, b, token), &buffers);
    ASSERT_EQ(expect.size(), buffers.size()) << "step " << step;
    for (size_t i = 0; i < expect.size(); ++i) {
      expect[i].outputs.timestamp = buffers[i].outputs.timestamp = 0;
      EXPECT_EQ(expect[i].client_index, buffers[i].client_index);
      EXPECT_EQ(expect[i].outputs, buffers[i].outputs) << "step " << step;
    }
  }
  EXPECT_GT(next, 50);
}

TEST(SchedulerTest, PeekStatsDoesNotConsumeDeltas) {
  SchedulerConfig c = Config();
  c.log_stats = false;
  auto s = MakeScheduler(c, 64);
  ASSERT_TRUE(s->AddRequest(MakeRequest("a", 10, 1)).ok());
  Step(*s);
  ASSERT_TRUE(s->AddRequest(MakeRequest("b", 10, 1)).ok());
  Step(*s);
  EXPECT_EQ(s->PeekStats().prefix_cache_hits, 8);
  EXPECT_EQ(s->PeekStats().prefix_cache_hits, 8);
  EXPECT_EQ(s->PeekStats().step_counter, 2);
  EXPECT_EQ(s->MakeStats().prefix_cache_queries, 20);
  EXPECT_EQ(s->MakeStats().prefix_cache_queries, 0);
  EXPECT_EQ(s->PeekStats().prefix_cache_hits, 0);
}

}  // namespace
}  // namespace llmserve::engine_core
