// The scheduler's KV connector hooks, driven through a connector whose
// answers the test sets (the workers' reports are built by the test too):
// loaded prefixes are not computed again, a connector that cannot tell yet
// or loads asynchronously holds no one up, blocks are held while a transfer
// runs, and a failed load is recomputed (or fails the request).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine_core/scheduler.h"
#include "tests/engine_core/scheduler_test_util.h"

namespace llmserve::engine_core {
namespace kv_connector_scheduler_test {

using testing::ById;
using testing::MakeRequest;
using testing::MakeScheduler;
using testing::ReplyFor;

// Answers as the test says and records what the scheduler told it.
class ScriptedConnector final : public KVConnectorScheduler {
 public:
  struct Alloc {
    std::string id;
    std::vector<int32_t> block_ids;
    int32_t num_external;
  };
  struct View {
    std::string id;
    int32_t num_computed;
    int32_t num_scheduled;
  };

  std::map<std::string, ExternalMatch> matches;        // default: nothing to load
  std::map<std::string, FinishedTransfer> on_finish;   // default: free at once
  std::vector<std::pair<std::string, int32_t>> asked;  // GetNumNewMatchedTokens(id, computed)
  std::vector<Alloc> allocs;
  std::vector<std::vector<View>> steps;  // BuildConnectorMeta's view, per step
  std::vector<std::string> finished;
  std::vector<proto::KVConnectorOutput> reports;

  ExternalMatch GetNumNewMatchedTokens(const Request& r, int32_t computed) override {
    asked.emplace_back(r.request_id, computed);
    auto it = matches.find(r.request_id);
    return it == matches.end() ? ExternalMatch{} : it->second;
  }
  void UpdateStateAfterAlloc(const Request& r, std::span<const int32_t> blocks, int32_t external) override {
    allocs.push_back({r.request_id, {blocks.begin(), blocks.end()}, external});
  }
  proto::EncodedValue BuildConnectorMeta(const proto::SchedulerOutput&,
                                         std::span<const ScheduledRequest> scheduled) override {
    auto& view = steps.emplace_back();
    for (const ScheduledRequest& s : scheduled)
      view.push_back({s.request->request_id, s.num_computed_tokens, s.num_scheduled_tokens});
    return proto::EncodedValue{"\xa4step"};  // the msgpack string "step"
  }
  void UpdateConnectorOutput(const proto::KVConnectorOutput& o) override { reports.push_back(o); }
  FinishedTransfer RequestFinished(const Request& r, std::span<const int32_t>) override {
    finished.push_back(r.request_id);
    auto it = on_finish.find(r.request_id);
    return it == on_finish.end() ? FinishedTransfer{} : it->second;
  }
};

SchedulerConfig Config() {
  SchedulerConfig c;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = 8;
  c.max_model_len = 64;
  return c;
}

constexpr int32_t kBlocks = 40;  // null block included

struct Fixture {
  explicit Fixture(common::KVLoadFailurePolicy policy = common::KVLoadFailurePolicy::kRecompute)
      : s(MakeScheduler(Config(), kBlocks)) {
    auto owned = std::make_unique<ScriptedConnector>();
    c = owned.get();
    s->SetKVConnector(std::move(owned), policy);
  }
  std::unique_ptr<Scheduler> s;
  ScriptedConnector* c;
};

proto::ModelRunnerOutput WithReport(proto::ModelRunnerOutput mro, proto::KVConnectorOutput report) {
  mro.kv_connector_output = std::move(report);
  return mro;
}

TEST(KVConnectorScheduler, SynchronousLoadComputesOnlyTheTail) {
  Fixture f;
  f.c->matches["a"] = {12, false};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 20, 2)).ok());
  const proto::SchedulerOutput& so = f.s->Schedule();
  ASSERT_EQ(so.scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(so.scheduled_new_reqs[0].num_computed_tokens, 12);
  EXPECT_EQ(so.num_scheduled_tokens.at("a"), 8);
  EXPECT_EQ(so.kv_connector_metadata.msgpack, "\xa4step");
  ASSERT_EQ(f.c->asked.size(), 1u);
  EXPECT_EQ(f.c->asked[0], (std::pair<std::string, int32_t>{"a", 0}));
  ASSERT_EQ(f.c->allocs.size(), 1u);
  EXPECT_EQ(f.c->allocs[0].num_external, 12);
  EXPECT_EQ(f.c->allocs[0].block_ids.size(), 5u);  // 20 tokens of 4
  ASSERT_EQ(f.c->steps.size(), 1u);
  ASSERT_EQ(f.c->steps[0].size(), 1u);
  EXPECT_EQ(f.c->steps[0][0].num_computed, 12);
  EXPECT_EQ(f.c->steps[0][0].num_scheduled, 8);
  // The loaded blocks wait for the workers' word before others may share them.
  EXPECT_EQ(f.s->kv_cache_manager().pool().num_cached_blocks(), 0);
  auto outs = ById(f.s->UpdateFromOutput(so, ReplyFor(*f.s, so, testing::Constant)));
  EXPECT_EQ(f.s->kv_cache_manager().pool().num_cached_blocks(), 5);
  ASSERT_EQ(outs.count("a"), 1u);
  EXPECT_EQ(outs["a"].new_token_ids, std::vector<int32_t>{7});
  EXPECT_EQ(outs["a"].num_cached_tokens, 12);  // vLLM counts loaded tokens as cached
  EXPECT_EQ(f.s->FindRequest("a")->num_external_computed_tokens, 12);
  EXPECT_EQ(f.s->kv_connector_counters().loaded_requests, 1);
  EXPECT_EQ(f.s->kv_connector_counters().loaded_tokens, 12);
  // The next step is a decode; the connector is not asked again.
  testing::Step(*f.s);
  EXPECT_EQ(f.c->asked.size(), 1u);
  EXPECT_EQ(f.c->finished, std::vector<std::string>{"a"});
  EXPECT_FALSE(f.s->HasRequests());
}

TEST(KVConnectorScheduler, LocalHitComesFirstAndTheConnectorAddsToIt) {
  Fixture f;
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("warm", 20, 1)).ok());
  testing::Step(*f.s);  // its 5 full blocks enter the prefix cache
  f.c->matches["a"] = {8, false};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 30, 1)).ok());  // shares the first 20 tokens
  const proto::SchedulerOutput& so = f.s->Schedule();
  ASSERT_EQ(f.c->asked.back(), (std::pair<std::string, int32_t>{"a", 20}));
  EXPECT_EQ(so.scheduled_new_reqs.at(0).num_computed_tokens, 28);
  EXPECT_EQ(so.num_scheduled_tokens.at("a"), 2);
  EXPECT_EQ(f.c->allocs.back().block_ids.size(), 8u);  // 5 shared, 2 loaded, 1 computed
  f.s->UpdateFromOutput(so, ReplyFor(*f.s, so, testing::Constant));
}

TEST(KVConnectorScheduler, UndecidedMatchWaitsWithoutBlockingOthers) {
  Fixture f;
  f.c->matches["a"] = {std::nullopt, false};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 10, 1)).ok());
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("b", 10, 1)).ok());
  const proto::SchedulerOutput& so = f.s->Schedule();
  EXPECT_EQ(so.num_scheduled_tokens.count("a"), 0u);
  EXPECT_EQ(so.num_scheduled_tokens.count("b"), 1u);
  EXPECT_TRUE(f.s->FindRequest("a")->block_ids.empty());
  f.s->UpdateFromOutput(so, ReplyFor(*f.s, so, testing::Constant));
  f.c->matches.erase("a");
  const proto::SchedulerOutput& again = f.s->Schedule();
  EXPECT_EQ(again.num_scheduled_tokens.count("a"), 1u);
  f.s->UpdateFromOutput(again, ReplyFor(*f.s, again, testing::Constant));
  EXPECT_FALSE(f.s->HasRequests());
}

TEST(KVConnectorScheduler, AsynchronousLoadWaitsForRemoteKVsInItsBlocks) {
  Fixture f;
  f.c->matches["a"] = {12, true};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 20, 1)).ok());
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("b", 10, 3)).ok());
  const int32_t free_before = f.s->kv_cache_manager().num_free_blocks();
  const proto::SchedulerOutput* so = &f.s->Schedule();
  EXPECT_EQ(so->num_scheduled_tokens.count("a"), 0u);  // not computed, and not in the workers' batch
  EXPECT_EQ(so->num_scheduled_tokens.count("b"), 1u);  // nor in anybody's way
  const Request* a = f.s->FindRequest("a");
  EXPECT_EQ(a->status, RequestStatus::kWaitingForRemoteKVs);
  EXPECT_EQ(RequestStatusName(a->status), "WAITING_FOR_REMOTE_KVS");
  EXPECT_EQ(a->block_ids.size(), 3u);  // room for the 12 tokens being loaded
  EXPECT_EQ(f.s->kv_cache_manager().num_free_blocks(), free_before - 3 - 3);
  f.s->UpdateFromOutput(*so, ReplyFor(*f.s, *so, testing::Constant));
  so = &f.s->Schedule();  // no report yet: it keeps waiting
  EXPECT_EQ(so->num_scheduled_tokens.count("a"), 0u);
  EXPECT_EQ(f.s->FindRequest("a")->status, RequestStatus::kWaitingForRemoteKVs);
  f.s->UpdateFromOutput(*so, WithReport(ReplyFor(*f.s, *so, testing::Constant), {{}, {"a"}, {}}));
  EXPECT_EQ(f.c->reports.size(), 1u);
  so = &f.s->Schedule();
  ASSERT_EQ(so->num_scheduled_tokens.count("a"), 1u);
  EXPECT_EQ(so->num_scheduled_tokens.at("a"), 8);
  ASSERT_EQ(so->scheduled_new_reqs.size(), 1u);
  EXPECT_EQ(so->scheduled_new_reqs[0].num_computed_tokens, 12);
  EXPECT_EQ(so->scheduled_new_reqs[0].block_ids[0].size(), 5u);
  EXPECT_EQ(f.c->asked.size(), 2u);  // a and b, once each: the promoted request is not asked again
  auto outs = ById(f.s->UpdateFromOutput(*so, ReplyFor(*f.s, *so, testing::Constant)));
  EXPECT_EQ(outs["a"].num_cached_tokens, 12);
  EXPECT_EQ(outs["a"].finish_reason, proto::FinishReason::kLength);
}

TEST(KVConnectorScheduler, FinishedRequestKeepsItsBlocksUntilItsKVIsSent) {
  Fixture f;
  proto::EncodedValue params{"\x81\xa1x\x01"};  // {"x": 1}
  f.c->on_finish["a"] = {true, params};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 20, 1)).ok());
  const int32_t free_before = f.s->kv_cache_manager().num_free_blocks();
  auto outs = ById(testing::Step(*f.s));
  ASSERT_EQ(outs.count("a"), 1u);
  EXPECT_EQ(outs["a"].finish_reason, proto::FinishReason::kLength);
  EXPECT_EQ(outs["a"].kv_transfer_params, params);
  EXPECT_EQ(f.s->num_held_for_transfer(), 1);
  EXPECT_LT(f.s->kv_cache_manager().num_free_blocks(), free_before);
  EXPECT_TRUE(f.s->HasRequests());  // the workers must be stepped to report the send
  EXPECT_FALSE(f.s->AddRequest(MakeRequest("a", 5, 1)).ok());  // its id is still in use
  const proto::SchedulerOutput& idle = f.s->Schedule();
  EXPECT_EQ(idle.total_num_scheduled_tokens, 0);
  f.s->UpdateFromOutput(idle, WithReport({}, {{"a"}, {}, {}}));
  EXPECT_EQ(f.s->num_held_for_transfer(), 0);
  EXPECT_EQ(f.s->kv_cache_manager().num_free_blocks(), free_before);
  EXPECT_FALSE(f.s->HasRequests());
  EXPECT_EQ(f.c->finished, std::vector<std::string>{"a"});
}

TEST(KVConnectorScheduler, AbortDuringAnAsynchronousLoadHoldsBlocksUntilItEnds) {
  Fixture f;
  f.c->matches["a"] = {12, true};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 20, 1)).ok());
  const int32_t free_before = f.s->kv_cache_manager().num_free_blocks();
  testing::Step(*f.s);
  const std::vector<std::string> ids = {"a"};
  f.s->FinishRequests(ids, RequestStatus::kFinishedAborted);
  EXPECT_EQ(f.c->finished, std::vector<std::string>{"a"});
  EXPECT_EQ(f.s->num_held_for_transfer(), 1);  // the workers may still write into them
  EXPECT_EQ(f.s->kv_cache_manager().num_free_blocks(), free_before - 3);
  const proto::SchedulerOutput& so = f.s->Schedule();
  EXPECT_EQ(so.finished_req_ids, ids);
  f.s->UpdateFromOutput(so, WithReport({}, {{}, {"a"}, {}}));
  EXPECT_EQ(f.s->num_held_for_transfer(), 0);
  EXPECT_EQ(f.s->kv_cache_manager().num_free_blocks(), free_before);
}

TEST(KVConnectorScheduler, FailedLoadIsRecomputedFromTheFirstBadBlock) {
  Fixture f;
  f.c->matches["a"] = {12, false};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 20, 2)).ok());
  const proto::SchedulerOutput& so = f.s->Schedule();
  const std::vector<int32_t> blocks = f.s->FindRequest("a")->block_ids;
  // Blocks 1 and 2 of its 3 loaded ones did not arrive.
  auto outs = ById(f.s->UpdateFromOutput(so, WithReport(ReplyFor(*f.s, so, testing::Constant),
                                                        {{}, {}, {blocks[2], blocks[1]}})));
  EXPECT_EQ(outs.count("a"), 0u);  // the token sampled from bad KV is dropped
  const Request* a = f.s->FindRequest("a");
  EXPECT_EQ(a->num_computed_tokens, 4);
  EXPECT_EQ(a->num_output_tokens(), 0);
  EXPECT_TRUE(a->kv_load_failed);
  EXPECT_EQ(f.s->kv_connector_counters().failed_loads, 1);
  EXPECT_EQ(f.s->kv_connector_counters().recomputed_tokens, 8);
  EXPECT_EQ(f.s->kv_cache_manager().pool().num_cached_blocks(), 0);  // nothing bad was shared
  const proto::SchedulerOutput& again = f.s->Schedule();
  EXPECT_EQ(again.num_scheduled_tokens.at("a"), 16);
  ASSERT_EQ(again.scheduled_cached_reqs.req_ids, std::vector<std::string>{"a"});
  EXPECT_EQ(again.scheduled_cached_reqs.num_computed_tokens[0], 4);
  EXPECT_EQ(again.scheduled_cached_reqs.num_output_tokens[0], 0);
  outs = ById(f.s->UpdateFromOutput(again, ReplyFor(*f.s, again, testing::Constant)));
  ASSERT_EQ(outs.count("a"), 1u);
  EXPECT_EQ(outs["a"].num_cached_tokens, 4);
  testing::Step(*f.s);
  EXPECT_FALSE(f.s->HasRequests());
  EXPECT_EQ(f.c->asked.size(), 1u);
}

TEST(KVConnectorScheduler, FailedLoadFailsTheRequestUnderTheFailPolicy) {
  Fixture f(common::KVLoadFailurePolicy::kFail);
  f.c->matches["a"] = {12, false};
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("a", 20, 2)).ok());
  ASSERT_TRUE(f.s->AddRequest(MakeRequest("b", 20, 1, 5000)).ok());
  const proto::SchedulerOutput& so = f.s->Schedule();
  const int32_t bad = f.s->FindRequest("a")->block_ids[0];
  auto outs = ById(f.s->UpdateFromOutput(so, WithReport(ReplyFor(*f.s, so, testing::Constant), {{}, {}, {bad}})));
  ASSERT_EQ(outs.count("a"), 1u);
  EXPECT_EQ(outs["a"].finish_reason, proto::FinishReason::kError);
  EXPECT_TRUE(outs["a"].new_token_ids.empty());
  ASSERT_TRUE(outs["a"].error_message.has_value());
  EXPECT_NE(outs["a"].error_message->find("failed to load"), std::string::npos);
  EXPECT_EQ(outs["b"].finish_reason, proto::FinishReason::kLength);  // others are not affected
  EXPECT_EQ(f.s->FindRequest("a"), nullptr);
  EXPECT_FALSE(f.s->HasRequests());
}

TEST(KVConnectorScheduler, KVTransferParamsComeFromExtraArgs) {
  Fixture f;
  proto::EngineCoreRequest r = MakeRequest("a", 8, 1);
  r.sampling_params.extra_args.msgpack = std::string("\x81\xb2kv_transfer_params\x81\xa1x\x01");
  ASSERT_TRUE(f.s->AddRequest(r).ok());
  EXPECT_EQ(f.s->FindRequest("a")->kv_transfer_params.msgpack, "\x81\xa1x\x01");
  proto::EngineCoreRequest bad = MakeRequest("b", 8, 1);
  bad.sampling_params.extra_args.msgpack = "\xc1";  // not msgpack
  EXPECT_FALSE(f.s->AddRequest(bad).ok());
}

}  // namespace kv_connector_scheduler_test
}  // namespace llmserve::engine_core
