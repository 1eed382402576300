// The scheduler's side of speculative decoding: drafts proposed after a
// sampled token, scheduled after the request's last token within the budget,
// their KV rolled back when rejected, never in a cached block, and outputs
// cut at max_tokens and at stop tokens.
#include <gtest/gtest.h>

#include "tests/engine_core/scheduler_test_util.h"

namespace llmserve::engine_core {
namespace spec_decode_scheduler_test {

using testing::ById;
using testing::MakeScheduler;

SchedulerConfig SpecConfig(int32_t k, int32_t budget = 64) {
  SchedulerConfig sc;
  sc.max_model_len = 64;
  sc.max_num_batched_tokens = budget;
  sc.num_speculative_tokens = k;
  sc.ngram = NgramConfig{1, 2};
  return sc;
}

proto::EngineCoreRequest Req(const std::string& id, std::vector<int32_t> prompt, int32_t max_tokens = 20) {
  proto::EngineCoreRequest r;
  r.request_id = id;
  r.prompt_token_ids = std::move(prompt);
  r.sampling_params.max_tokens = max_tokens;
  return r;
}

// The workers' reply: `tokens` for each listed request.
proto::ModelRunnerOutput Reply(const std::map<std::string, std::vector<int32_t>>& tokens) {
  proto::ModelRunnerOutput mro;
  for (const auto& [id, t] : tokens) {
    mro.req_ids.push_back(id);
    mro.sampled_token_ids.push_back(t);
  }
  return mro;
}

// Every block in the prefix cache holds tokens whose KV is computed (and kept).
void ExpectCachedBlocksComputed(const Request& r, int32_t block_size) {
  EXPECT_LE(r.num_cached_blocks * block_size, r.num_computed_tokens);
  EXPECT_LE(r.num_cached_blocks * block_size, r.num_tokens());
}

TEST(SpecDecodeScheduler, DraftsAreVerifiedAndRejectedOnesRolledBack) {
  auto s = MakeScheduler(SpecConfig(3), 64);
  ASSERT_TRUE(s->AddRequest(Req("a", {1, 2, 3, 1, 2, 3, 1, 2})).ok());
  const proto::SchedulerOutput* so = &s->Schedule();
  EXPECT_EQ(so->num_scheduled_tokens.at("a"), 8);
  EXPECT_TRUE(so->scheduled_spec_decode_tokens.empty());  // no drafts for a prefill
  s->UpdateFromOutput(*so, Reply({{"a", {3}}}));
  const Request& r = *s->FindRequest("a");
  // [.. 1 2 3 1 2 3]: the suffix [2 3] first occurred at 1, followed by 1 2 3.
  EXPECT_EQ(r.spec_token_ids, (std::vector<int32_t>{1, 2, 3}));

  so = &s->Schedule();
  EXPECT_EQ(so->num_scheduled_tokens.at("a"), 4);  // the last token and 3 drafts
  EXPECT_EQ(so->total_num_scheduled_tokens, 4);
  EXPECT_EQ(so->scheduled_spec_decode_tokens.at("a"), (std::vector<int32_t>{1, 2, 3}));
  // Only real tokens are hashed and cached: 9 tokens, 2 full blocks.
  EXPECT_EQ(r.num_cached_blocks, 2);
  // Two drafts accepted, the third rejected (the target said 9 there).
  const std::vector<ClientOutputs> outs = s->UpdateFromOutput(*so, Reply({{"a", {1, 2, 9}}}));
  auto out = ById(outs);
  EXPECT_EQ(out.at("a").new_token_ids, (std::vector<int32_t>{1, 2, 9}));
  // The step's stats carry the counts since the last report.
  ASSERT_TRUE(outs.front().outputs.scheduler_stats && outs.front().outputs.scheduler_stats->spec_decoding_stats);
  EXPECT_EQ(*outs.front().outputs.scheduler_stats->spec_decoding_stats, (proto::SpecDecodingStats{3, 1, 3, 2, {1, 1, 0}}));
  EXPECT_EQ(r.num_tokens(), 12);
  EXPECT_EQ(r.num_computed_tokens, 11);  // position 11 (the rejected draft's) is recomputed
  ExpectCachedBlocksComputed(r, 4);
  const SpecDecodingStats& st = s->spec_decoding_stats();
  EXPECT_EQ(st.num_drafts, 1);
  EXPECT_EQ(st.num_draft_tokens, 3);
  EXPECT_EQ(st.num_accepted_tokens, 2);
  EXPECT_EQ(st.num_accepted_tokens_per_pos, (std::vector<int64_t>{1, 1}));

  // 9 never occurred before: no drafts; one token at position 11.
  so = &s->Schedule();
  EXPECT_EQ(so->num_scheduled_tokens.at("a"), 1);
  EXPECT_TRUE(so->scheduled_spec_decode_tokens.empty());
  EXPECT_EQ(so->scheduled_cached_reqs.num_computed_tokens[0], 11);
  const std::vector<ClientOutputs> next = s->UpdateFromOutput(*so, Reply({{"a", {4}}}));
  EXPECT_EQ(*next.front().outputs.scheduler_stats->spec_decoding_stats, (proto::SpecDecodingStats{3, 0, 0, 0, {0, 0, 0}}));
}

// A rejected draft's block enters the prefix cache only once it holds real
// tokens: a later request with the real tokens hits it, and the hashes never
// described the drafts.
TEST(SpecDecodeScheduler, ARejectedDraftNeverEntersACachedBlock) {
  auto s = MakeScheduler(SpecConfig(3), 64);
  ASSERT_TRUE(s->AddRequest(Req("a", {5, 6, 7, 5, 6, 7, 5})).ok());
  std::vector<std::vector<int32_t>> replies = {{6}, {7, 1}, {2}, {3}, {4}};
  for (const auto& reply : replies) {
    const proto::SchedulerOutput& so = s->Schedule();
    if (reply.size() == 2) {  // drafts [7 5 6] at positions 8..10: the second is rejected
      EXPECT_EQ(so.scheduled_spec_decode_tokens.at("a"), (std::vector<int32_t>{7, 5, 6}));
      EXPECT_EQ(s->FindRequest("a")->num_cached_blocks, 2);
    }
    s->UpdateFromOutput(so, Reply({{"a", reply}}));
    ExpectCachedBlocksComputed(*s->FindRequest("a"), 4);
  }
  const Request& a = *s->FindRequest("a");
  const std::vector<int32_t> real(a.all_token_ids().begin(), a.all_token_ids().end());
  ASSERT_EQ(real, (std::vector<int32_t>{5, 6, 7, 5, 6, 7, 5, 6, 7, 1, 2, 3, 4}));
  EXPECT_EQ(a.num_cached_blocks, 3);
  std::vector<int32_t> b_prompt(real.begin(), real.begin() + 12);
  b_prompt.push_back(50);
  ASSERT_TRUE(s->AddRequest(Req("b", b_prompt)).ok());
  ASSERT_TRUE(s->AddRequest(Req("c", {5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 9, 50})).ok());  // the drafts' tokens
  const proto::SchedulerOutput& so = s->Schedule();
  EXPECT_EQ(s->FindRequest("b")->num_computed_tokens - so.num_scheduled_tokens.at("b"), 12);
  EXPECT_EQ(s->FindRequest("c")->num_computed_tokens - so.num_scheduled_tokens.at("c"), 8);
}

TEST(SpecDecodeScheduler, DraftsAreCutToTheTokenBudget) {
  auto s = MakeScheduler(SpecConfig(3, 5), 64);
  ASSERT_TRUE(s->AddRequest(Req("a", {1, 2, 1})).ok());
  ASSERT_TRUE(s->AddRequest(Req("b", {3, 4})).ok());
  const proto::SchedulerOutput* so = &s->Schedule();
  s->UpdateFromOutput(*so, Reply({{"a", {2}}, {"b", {3}}}));
  EXPECT_EQ(s->FindRequest("a")->spec_token_ids, (std::vector<int32_t>{1, 2}));  // only 2 followed the match
  EXPECT_EQ(s->FindRequest("b")->spec_token_ids, (std::vector<int32_t>{4, 3}));
  so = &s->Schedule();
  EXPECT_EQ(so->num_scheduled_tokens.at("a"), 3);
  EXPECT_EQ(so->num_scheduled_tokens.at("b"), 2);  // 5 - 3 left: the last token and one draft
  EXPECT_EQ(so->scheduled_spec_decode_tokens.at("b"), (std::vector<int32_t>{4}));
  EXPECT_EQ(so->total_num_scheduled_tokens, 5);
  // b's one draft rejected: it computed its last token only.
  s->UpdateFromOutput(*so, Reply({{"a", {1, 2, 8}}, {"b", {9}}}));
  const Request& b = *s->FindRequest("b");
  EXPECT_EQ(b.num_computed_tokens, b.num_tokens() - 1);
  EXPECT_EQ(s->FindRequest("a")->num_computed_tokens, s->FindRequest("a")->num_tokens() - 1);
}

TEST(SpecDecodeScheduler, NoDraftsWhilePrefillingInChunks) {
  auto s = MakeScheduler(SpecConfig(3, 4), 64);
  ASSERT_TRUE(s->AddRequest(Req("a", {1, 2, 1, 2, 1, 2, 1, 2, 1, 2})).ok());
  for (int step = 0; step < 3; ++step) {
    const proto::SchedulerOutput& so = s->Schedule();
    EXPECT_TRUE(so.scheduled_spec_decode_tokens.empty());
    const bool last = step == 2;
    s->UpdateFromOutput(so, Reply({{"a", last ? std::vector<int32_t>{1} : std::vector<int32_t>{}}}));
    EXPECT_EQ(s->FindRequest("a")->spec_token_ids.empty(), !last);
  }
}

// A request preempted while it holds drafts drops them, and comes back with
// its real tokens only.
TEST(SpecDecodeScheduler, PreemptionDropsDrafts) {
  SchedulerConfig sc = SpecConfig(3);
  sc.max_model_len = 16;
  auto s = MakeScheduler(sc, 6);  // 5 usable blocks of 4 tokens
  ASSERT_TRUE(s->AddRequest(Req("a", {1, 2, 1, 2, 1, 2, 1}, 4)).ok());
  ASSERT_TRUE(s->AddRequest(Req("b", {3, 4, 3, 4, 3, 4, 3}, 4)).ok());
  const proto::SchedulerOutput* so = &s->Schedule();
  s->UpdateFromOutput(*so, Reply({{"a", {2}}, {"b", {4}}}));
  EXPECT_FALSE(s->FindRequest("b")->spec_token_ids.empty());
  // a's drafts take the last free block; b's find none and b is preempted.
  so = &s->Schedule();
  EXPECT_EQ(so->preempted_req_ids, (std::vector<std::string>{"b"}));
  EXPECT_EQ(so->scheduled_spec_decode_tokens.count("b"), 0u);
  EXPECT_EQ(so->scheduled_spec_decode_tokens.at("a").size(), 2u);
  const Request& b = *s->FindRequest("b");
  EXPECT_EQ(b.status, RequestStatus::kPreempted);
  EXPECT_TRUE(b.spec_token_ids.empty());
  s->UpdateFromOutput(*so, Reply({{"a", {1, 2, 5}}}));  // a is done (4 tokens)
  EXPECT_EQ(s->FindRequest("a"), nullptr);
  so = &s->Schedule();
  EXPECT_EQ(s->FindRequest("b")->num_computed_tokens, 8);  // its 8 real tokens (a cached block among them)
  EXPECT_TRUE(so->scheduled_spec_decode_tokens.empty());
  EXPECT_EQ(so->scheduled_cached_reqs.all_token_ids.at("b"), (std::vector<int32_t>{3, 4, 3, 4, 3, 4, 3, 4}));
}

TEST(SpecDecodeScheduler, MaxTokensCapsDraftsAndOutputs) {
  auto s = MakeScheduler(SpecConfig(4), 64);
  ASSERT_TRUE(s->AddRequest(Req("a", {1, 2, 1, 2, 1, 2}, /*max_tokens=*/3)).ok());
  const proto::SchedulerOutput* so = &s->Schedule();
  s->UpdateFromOutput(*so, Reply({{"a", {1}}}));
  // One output so far, two to go: one draft plus the token after it.
  EXPECT_EQ(s->FindRequest("a")->spec_token_ids, (std::vector<int32_t>{2}));
  so = &s->Schedule();
  auto out = ById(s->UpdateFromOutput(*so, Reply({{"a", {2, 1}}})));
  EXPECT_EQ(out.at("a").new_token_ids, (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(out.at("a").finish_reason, proto::FinishReason::kLength);
  EXPECT_EQ(s->FindRequest("a"), nullptr);
}

TEST(SpecDecodeScheduler, AStopTokenAmongAcceptedDraftsEndsTheOutput) {
  auto s = MakeScheduler(SpecConfig(3), 64);
  proto::EngineCoreRequest req = Req("a", {4, 5, 77, 4});
  req.sampling_params.stop_token_ids = {77};
  req.sampling_params.all_stop_token_ids = {77};
  ASSERT_TRUE(s->AddRequest(req).ok());
  const proto::SchedulerOutput* so = &s->Schedule();
  s->UpdateFromOutput(*so, Reply({{"a", {5}}}));
  so = &s->Schedule();
  EXPECT_EQ(so->scheduled_spec_decode_tokens.at("a"), (std::vector<int32_t>{77, 4, 5}));
  auto out = ById(s->UpdateFromOutput(*so, Reply({{"a", {77, 4, 5, 9}}})));
  EXPECT_EQ(out.at("a").new_token_ids, (std::vector<int32_t>{77}));
  EXPECT_EQ(out.at("a").finish_reason, proto::FinishReason::kStop);
  EXPECT_EQ(out.at("a").stop_token_id, 77);
}

// disable_by_batch_size: while as many requests run as the threshold, no
// drafts are proposed or verified; once the batch is smaller they come back.
TEST(SpecDecodeScheduler, NoDraftsWhileTheBatchReachesDisableByBatchSize) {
  SchedulerConfig sc = SpecConfig(3);
  sc.spec_disable_by_batch_size = 2;
  auto s = MakeScheduler(sc, 64);
  ASSERT_TRUE(s->AddRequest(Req("a", {1, 2, 1, 2, 1})).ok());
  ASSERT_TRUE(s->AddRequest(Req("b", {3, 4, 3}, /*max_tokens=*/2)).ok());
  const proto::SchedulerOutput* so = &s->Schedule();
  s->UpdateFromOutput(*so, Reply({{"a", {2}}, {"b", {4}}}));
  // Without the threshold both would hold drafts here ([1 2 1] and [3 4 ...]).
  EXPECT_TRUE(s->FindRequest("a")->spec_token_ids.empty());
  EXPECT_TRUE(s->FindRequest("b")->spec_token_ids.empty());
  so = &s->Schedule();
  EXPECT_TRUE(so->scheduled_spec_decode_tokens.empty());
  EXPECT_EQ(so->total_num_scheduled_tokens, 2);
  s->UpdateFromOutput(*so, Reply({{"a", {1}}, {"b", {3}}}));  // b is done (2 tokens)
  ASSERT_EQ(s->FindRequest("b"), nullptr);
  so = &s->Schedule();
  s->UpdateFromOutput(*so, Reply({{"a", {2}}}));
  EXPECT_EQ(s->FindRequest("a")->spec_token_ids, (std::vector<int32_t>{1, 2, 1}));  // alone: drafts again
  so = &s->Schedule();
  EXPECT_EQ(so->scheduled_spec_decode_tokens.at("a"), (std::vector<int32_t>{1, 2, 1}));
}

}  // namespace spec_decode_scheduler_test
}  // namespace llmserve::engine_core
