// The DP load-balancing policy: token-aware score, optimistic increments,
// per-frontend offsets, prefix affinity and its overload fallback.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "frontend/dp_load_balancer.h"

namespace llmserve::frontend {
namespace {

std::vector<int32_t> Prompt(int32_t first, size_t n) {
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), first);
  return p;
}

TEST(DpLoadBalancerTest, ParsesRoutingFlag) {
  EXPECT_EQ(*ParseDpRouting("score"), DpRouting::kScore);
  EXPECT_EQ(*ParseDpRouting("prefix"), DpRouting::kPrefix);
  auto bad = ParseDpRouting("random");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("score or prefix"), std::string::npos);
}

TEST(DpLoadBalancerTest, ScoreFormulas) {
  DpLoadBalancerConfig c;
  RankLoad l{/*waiting_reqs=*/2, /*running_reqs=*/3, /*waiting_tokens=*/1000};
  EXPECT_EQ(LoadScore(l, c), 1000 + c.request_tokens * 5);
  c.request_tokens = 10;
  EXPECT_EQ(LoadScore(l, c), 1050);
  c.score = ScorePolicy::kRequestCounts;
  EXPECT_EQ(LoadScore(l, c), 2 * 4 + 3);
}

TEST(DpLoadBalancerTest, TokenAwareAvoidsTheRankWithALongPromptQueued) {
  DpLoadBalancerConfig c;
  DpLoadBalancer token(c, 2);
  c.score = ScorePolicy::kRequestCounts;
  DpLoadBalancer counts(c, 2);
  // Rank 0: one waiting 8000-token prompt. Rank 1: five running requests.
  std::vector<RankLoad> snap = {{1, 0, 8000}, {0, 5, 0}};
  token.OnSnapshot(snap);
  counts.OnSnapshot(snap);
  const std::vector<bool> all = {true, true};
  EXPECT_EQ(*token.Pick(Prompt(0, 10), all), 1u);
  EXPECT_EQ(*counts.Pick(Prompt(0, 10), all), 0u);  // vLLM: 1*4 < 5
}

TEST(DpLoadBalancerTest, SkipsUnavailableRanksAndReportsNone) {
  DpLoadBalancer lb({}, 3);
  EXPECT_EQ(*lb.Pick(Prompt(0, 4), {false, false, true}), 2u);
  EXPECT_FALSE(lb.Pick(Prompt(0, 4), {false, false, false}).has_value());
  EXPECT_FALSE(DpLoadBalancer({}, 0).Pick(Prompt(0, 4), {}).has_value());
}

TEST(DpLoadBalancerTest, OptimisticIncrementsSpreadABurstUntilTheNextSnapshot) {
  DpLoadBalancerConfig c;
  c.client_count = 2;
  DpLoadBalancer lb(c, 2);
  lb.OnSnapshot(std::vector<RankLoad>(2));
  const std::vector<bool> all = {true, true};
  std::map<size_t, int> hits;
  for (int i = 0; i < 10; ++i) {
    size_t r = *lb.Pick(Prompt(0, 100), all);
    lb.OnDispatch(r, 100);
    hits[r]++;
  }
  EXPECT_EQ(hits[0], 5);
  EXPECT_EQ(hits[1], 5);
  // Own 5 requests plus one increment each for the other frontend.
  EXPECT_EQ(lb.EffectiveLoad(0).waiting_reqs, 10);
  EXPECT_EQ(lb.EffectiveLoad(0).waiting_tokens, 1000);
  // A snapshot replaces the others' share (snapshot minus own) and drops the
  // increments; own requests stay counted.
  lb.OnSnapshot(std::vector<RankLoad>{{0, 7, 0}, {1, 0, 50}});
  EXPECT_EQ(lb.EffectiveLoad(0).waiting_reqs, 5);   // own
  EXPECT_EQ(lb.EffectiveLoad(0).running_reqs, 2);   // 7 in the snapshot, 5 of them ours
  EXPECT_EQ(lb.EffectiveLoad(0).waiting_tokens, 500);
  EXPECT_EQ(lb.EffectiveLoad(1).waiting_reqs, 5);   // the snapshot had not seen ours yet
  EXPECT_EQ(lb.EffectiveLoad(1).waiting_tokens, 500);
  // Requests finishing show at once, without waiting for a snapshot.
  for (int i = 0; i < 5; ++i) lb.OnFinish(1, 100, false);
  EXPECT_EQ(lb.EffectiveLoad(1).waiting_reqs, 0);
  EXPECT_EQ(*lb.Pick(Prompt(0, 5), all), 1u);
}

TEST(DpLoadBalancerTest, OneFrontendSeesItsOwnRequestsExactlyDespiteStaleSnapshots) {
  DpLoadBalancer lb({}, 2);
  const std::vector<bool> all = {true, true};
  lb.OnDispatch(0, 10);
  lb.OnDispatch(0, 10);
  // A snapshot taken before the engines saw anything must not hide them.
  lb.OnSnapshot(std::vector<RankLoad>(2));
  EXPECT_EQ(lb.EffectiveLoad(0).waiting_reqs, 2);
  EXPECT_EQ(*lb.Pick(Prompt(0, 5), all), 1u);
  // A snapshot still showing finished requests must not keep them.
  lb.OnFinish(0, 10, false);
  lb.OnFinish(0, 10, false);
  lb.OnSnapshot(std::vector<RankLoad>{{0, 0, 0}, {0, 0, 0}});
  lb.OnDispatch(1, 10);
  EXPECT_EQ(*lb.Pick(Prompt(0, 5), all), 0u);
}

TEST(DpLoadBalancerTest, FrontendsStartTheirScanAtDifferentRanks) {
  std::vector<size_t> firsts;
  for (int32_t i = 0; i < 4; ++i) {
    DpLoadBalancerConfig c;
    c.client_index = i;
    c.client_count = 4;
    DpLoadBalancer lb(c, 4);
    lb.OnSnapshot(std::vector<RankLoad>(4));
    firsts.push_back(*lb.Pick(Prompt(0, 8), {true, true, true, true}));
  }
  EXPECT_EQ(firsts, (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(DpLoadBalancerTest, WithoutACoordinatorUsesItsOwnExactAccounting) {
  DpLoadBalancer lb({}, 2);
  const std::vector<bool> all = {true, true};
  EXPECT_FALSE(lb.has_snapshot());
  lb.OnDispatch(0, 3000);
  EXPECT_EQ(*lb.Pick(Prompt(0, 8), all), 1u);
  lb.OnDispatch(1, 10);
  lb.OnFirstToken(1, 10);
  EXPECT_EQ(lb.EffectiveLoad(1).running_reqs, 1);
  EXPECT_EQ(lb.EffectiveLoad(1).waiting_tokens, 0);
  EXPECT_EQ(*lb.Pick(Prompt(0, 8), all), 1u);  // 256 < 3000 + 256
  lb.OnFinish(0, 3000, /*started=*/false);
  lb.OnFinish(1, 10, /*started=*/true);
  EXPECT_EQ(LoadScore(lb.EffectiveLoad(0), lb.config()), 0);
  EXPECT_EQ(LoadScore(lb.EffectiveLoad(1), lb.config()), 0);
}

TEST(DpLoadBalancerTest, PrefixAffinitySendsSharedPrefixesToOneRank) {
  DpLoadBalancerConfig c;
  c.routing = DpRouting::kPrefix;
  c.affinity_tokens = 32;
  DpLoadBalancer lb(c, 4);
  lb.OnSnapshot(std::vector<RankLoad>(4));
  const std::vector<bool> all(4, true);
  // Same first 32 tokens, different tails: same rank.
  std::vector<int32_t> a = Prompt(100, 40), b = Prompt(100, 40);
  b[35] = 7;
  const size_t ra = *lb.Pick(a, all);
  EXPECT_EQ(*lb.Pick(b, all), ra);
  // Different prefixes spread over the ranks.
  std::map<size_t, int> spread;
  for (int32_t i = 0; i < 200; ++i) spread[*lb.Pick(Prompt(i * 1000, 32), all)]++;
  EXPECT_EQ(spread.size(), 4u);
  for (auto& [rank, n] : spread) EXPECT_GT(n, 20) << "rank " << rank;
  // Prompts shorter than the affinity window go by score (rank 0: all equal).
  EXPECT_EQ(*lb.Pick(Prompt(5, 8), all), 0u);
}

TEST(DpLoadBalancerTest, PrefixAffinityYieldsToTheScoreWhenThePreferredRankIsOverloaded) {
  DpLoadBalancerConfig c;
  c.routing = DpRouting::kPrefix;
  c.affinity_tokens = 16;
  c.affinity_threshold = 1000;
  DpLoadBalancer lb(c, 2);
  std::vector<int32_t> p = Prompt(42, 20);
  lb.OnSnapshot(std::vector<RankLoad>(2));
  const size_t preferred = *lb.Pick(p, {true, true});
  const size_t other = 1 - preferred;
  std::vector<RankLoad> snap(2);
  snap[preferred].waiting_tokens = 900;  // within the threshold: stays
  lb.OnSnapshot(snap);
  EXPECT_EQ(*lb.Pick(p, {true, true}), preferred);
  snap[preferred].waiting_tokens = 1100;  // beyond it: the least-loaded rank
  lb.OnSnapshot(snap);
  EXPECT_EQ(*lb.Pick(p, {true, true}), other);
  // The preferred rank gone: rendezvous picks among the rest.
  std::vector<bool> only_other(2, false);
  only_other[other] = true;
  EXPECT_EQ(*lb.Pick(p, only_other), other);
}

TEST(DpLoadBalancerTest, InsertedRankStartsIdleAndShiftsTheOthers) {
  DpLoadBalancer lb({}, 2);
  lb.OnDispatch(0, 100);
  lb.OnDispatch(1, 200);
  lb.InsertRank(1);  // a rank joins between the two (indices follow rank order)
  EXPECT_EQ(lb.EffectiveLoad(0).waiting_tokens, 100);
  EXPECT_EQ(lb.EffectiveLoad(1).waiting_tokens, 0);
  EXPECT_EQ(lb.EffectiveLoad(2).waiting_tokens, 200);
  EXPECT_EQ(*lb.Pick(Prompt(0, 4), {true, true, true}), 1u) << "the idle newcomer wins";
  lb.InsertRank(9);  // past the end: appended
  EXPECT_EQ(lb.EffectiveLoad(3).waiting_reqs, 0);
  lb.OnFinish(2, 200, false);
  EXPECT_EQ(lb.EffectiveLoad(2).waiting_tokens, 0);
}

}  // namespace
}  // namespace llmserve::frontend
