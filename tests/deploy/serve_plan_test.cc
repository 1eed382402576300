#include "deploy/serve_plan.h"

#include <gtest/gtest.h>

namespace llmserve::deploy {
namespace {

TEST(ServePlan, SingleNodeDefaults) {
  ServePlan plan;
  ASSERT_TRUE(MakeServePlan(ServeFlags{}, "/run/x", &plan).ok());
  EXPECT_EQ(plan.local_ranks, std::vector<uint32_t>{0});
  EXPECT_EQ(plan.api_server_count, 1);
  EXPECT_FALSE(plan.remote_engines);
  EXPECT_EQ(plan.handshake_address, "ipc:///run/x/handshake");
  ASSERT_EQ(plan.frontend_inputs.size(), 1u);
  EXPECT_EQ(plan.frontend_inputs[0].address, "ipc:///run/x/frontend0-in");
  EXPECT_EQ(plan.frontend_outputs[0].bind, "ipc:///run/x/frontend0-out");
  EXPECT_EQ(plan.metrics_dir, "") << "one API server shows its own metrics";
}

TEST(ServePlan, HeadNodeWithRemoteRanksUsesTcp) {
  ServeFlags f;
  f.data_parallel_size = 4;
  f.data_parallel_size_local = 2;
  f.data_parallel_address = "10.0.0.1";
  f.data_parallel_rpc_port = 13345;
  f.api_server_count = 2;
  ServePlan plan;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_EQ(plan.local_ranks, (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(plan.remote_engines);
  EXPECT_EQ(plan.handshake_address, "tcp://10.0.0.1:13345");
  EXPECT_EQ(plan.handshake_bind, "tcp://*:13345");
  EXPECT_EQ(plan.api_server_count, 2);
  EXPECT_EQ(plan.metrics_dir, "/r/metrics") << "API servers share metric snapshots on their node";
  // Engines on other nodes cannot reach ipc:// paths: every frontend socket they dial is TCP.
  ASSERT_EQ(plan.frontend_inputs.size(), 2u);
  EXPECT_EQ(plan.frontend_inputs[0].address, "tcp://10.0.0.1:13348");
  EXPECT_EQ(plan.frontend_outputs[0].address, "tcp://10.0.0.1:13349");
  EXPECT_EQ(plan.frontend_inputs[1].bind, "tcp://*:13350");
  EXPECT_EQ(plan.frontend_outputs[1].address, "tcp://10.0.0.1:13351");
  EXPECT_EQ(plan.coordinator_engine_stats_address, "tcp://10.0.0.1:13347");
  f.data_parallel_rpc_port = 65530;
  EXPECT_FALSE(MakeServePlan(f, "/r", &plan).ok());  // needs 8 ports
}

TEST(ServePlan, CoordinatorRunsOnTheHeadForDataParallel) {
  ServePlan plan;
  ASSERT_TRUE(MakeServePlan(ServeFlags{}, "/r", &plan).ok());
  EXPECT_FALSE(plan.run_coordinator);  // DP=1: nothing to coordinate
  ServeFlags f;
  f.data_parallel_size = 2;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_TRUE(plan.run_coordinator);
  EXPECT_EQ(plan.coordinator_frontend_address, "ipc:///r/coordinator-front");
  EXPECT_EQ(plan.coordinator_engine_publish_address, "ipc:///r/coordinator-back");
  EXPECT_EQ(plan.coordinator_engine_stats_address, "ipc:///r/coordinator-stats");
  // Remote engines reach it over TCP next to the handshake port.
  f.data_parallel_size = 4;
  f.data_parallel_size_local = 2;
  f.data_parallel_address = "10.0.0.1";
  f.data_parallel_rpc_port = 13345;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_EQ(plan.coordinator_engine_publish_bind, "tcp://*:13346");
  EXPECT_EQ(plan.coordinator_engine_publish_address, "tcp://10.0.0.1:13346");
  EXPECT_EQ(plan.coordinator_engine_stats_address, "tcp://10.0.0.1:13347");
  f.data_parallel_rpc_port = 65534;
  EXPECT_FALSE(MakeServePlan(f, "/r", &plan).ok());
  // Headless nodes never run it; their engines learn its address in the handshake.
  f.data_parallel_rpc_port = 13345;
  f.headless = true;
  f.data_parallel_start_rank = 2;
  f.data_parallel_size_local = 2;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_FALSE(plan.run_coordinator);
}

TEST(ServePlan, HeadlessNode) {
  ServeFlags f;
  f.data_parallel_size = 4;
  f.data_parallel_size_local = 2;
  f.data_parallel_start_rank = 2;
  f.data_parallel_address = "10.0.0.1";
  f.headless = true;
  ServePlan plan;
  ASSERT_TRUE(MakeServePlan(f, "/r", &plan).ok());
  EXPECT_EQ(plan.local_ranks, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(plan.api_server_count, 0);
  EXPECT_EQ(plan.handshake_address, "tcp://10.0.0.1:29550");
}

TEST(ServePlan, RejectsWhatVllmRejects) {
  auto error = [](ServeFlags f) {
    ServePlan plan;
    Status s = MakeServePlan(f, "/r", &plan);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  ServeFlags f;
  f.headless = true;
  f.data_parallel_size = 2;
  f.data_parallel_start_rank = 1;
  f.data_parallel_address = "h";
  f.api_server_count = 2;
  EXPECT_NE(error(f).find("--api-server-count cannot be used with --headless"), std::string::npos);
  ServeFlags g;
  g.data_parallel_size = 2;
  g.data_parallel_size_local = 3;
  EXPECT_NE(error(g).find("exceeds --data-parallel-size"), std::string::npos);
  ServeFlags h;
  h.headless = true;
  h.data_parallel_size = 4;
  h.data_parallel_size_local = 2;
  EXPECT_NE(error(h).find("--data-parallel-start-rank"), std::string::npos);
  ServeFlags i;
  i.headless = true;
  i.data_parallel_size = 4;
  i.data_parallel_size_local = 2;
  i.data_parallel_start_rank = 2;
  EXPECT_NE(error(i).find("--data-parallel-address"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::deploy
