// The pure parts of an elastic scale: planning (which ranks come and go, bad
// sizes refused), the membership published, drain detection from coordinator
// snapshots, and the serve plan with --admin-api-key.
#include <gtest/gtest.h>

#include "deploy/elastic_plan.h"
#include "deploy/serve_plan.h"

namespace llmserve::deploy {
namespace {

proto::ScaleRequest Request(uint32_t size) {
  proto::ScaleRequest r;
  r.set_new_data_parallel_size(size);
  r.set_drain_timeout_s(120);
  return r;
}

TEST(ElasticPlan, PlansAddedAndRemovedRanks) {
  ScaleStep step;
  ASSERT_FALSE(PlanScale(2, Request(4), 64, &step));
  EXPECT_EQ(step.added, (std::vector<uint32_t>{2, 3}));
  EXPECT_TRUE(step.removed.empty());
  ASSERT_FALSE(PlanScale(4, Request(1), 64, &step));
  EXPECT_EQ(step.removed, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_TRUE(step.added.empty());
  ASSERT_FALSE(PlanScale(3, Request(3), 64, &step));
  EXPECT_TRUE(step.added.empty() && step.removed.empty());
  auto refused = PlanScale(2, Request(0), 64, &step);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->http_status(), 400u);
  EXPECT_EQ(refused->data_parallel_size(), 2u);
  refused = PlanScale(2, Request(65), 64, &step);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->http_status(), 400u);
  EXPECT_NE(refused->message().find("at most 64"), std::string::npos);
}

TEST(ElasticPlan, DrainedOnlyOnceTheSnapshotCarriesTheMembershipAndRanksAreIdle) {
  proto::LoadSnapshot snap;
  for (uint32_t r = 0; r < 4; ++r) {
    auto* e = snap.add_engines();
    e->set_data_parallel_rank(r);
    e->set_num_running_reqs(r == 3 ? 1 : 0);
    e->set_num_waiting_reqs(r == 0 ? 5 : 0);  // a staying rank's load does not matter
  }
  EXPECT_FALSE(RanksDrained(snap, 2, {2, 3})) << "no membership in the snapshot yet";
  *snap.mutable_membership() = MakeMembership(1, FirstRanks(2), true, 4);
  EXPECT_FALSE(RanksDrained(snap, 2, {2, 3})) << "an older membership";
  *snap.mutable_membership() = MakeMembership(2, FirstRanks(2), true, 4);
  EXPECT_FALSE(RanksDrained(snap, 2, {2, 3})) << "rank 3 still runs a request";
  EXPECT_TRUE(RanksDrained(snap, 2, {2}));
  snap.mutable_engines(3)->set_num_running_reqs(0);
  EXPECT_TRUE(RanksDrained(snap, 2, {2, 3}));
  EXPECT_EQ(snap.membership().active_ranks_size(), 2);
  EXPECT_TRUE(snap.membership().scaling());
  EXPECT_EQ(snap.membership().tracked_ranks(), 4u);
}

TEST(ElasticPlan, AdminKeyRunsTheCoordinatorAndTheControlSocket) {
  ServeFlags f;
  f.elastic = true;
  ServePlan plan;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_TRUE(plan.run_coordinator) << "membership goes through the coordinator even at DP 1";
  EXPECT_EQ(plan.control_address, "ipc:///r/control");
  EXPECT_FALSE(plan.remote_engines);
  f.data_parallel_address = "10.0.0.1";  // headless nodes may join later: TCP
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_TRUE(plan.remote_engines);
  EXPECT_EQ(plan.handshake_address, "tcp://10.0.0.1:29550");
  f.elastic = false;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_TRUE(plan.control_address.empty());
  EXPECT_FALSE(plan.run_coordinator);
}

}  // namespace
}  // namespace llmserve::deploy
