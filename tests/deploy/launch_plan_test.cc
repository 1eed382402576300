// LaunchPlan: which children a node starts, in which order, typed by role and
// rank, and the command line each gets (what the launcher used to assemble
// inline); ChildId names as the launcher's log lines print them.
#include "deploy/launch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace llmserve::deploy {
namespace {

bool Has(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

LaunchPlan Plan(const ServeFlags& flags, ServeOptions options = {}) {
  ServePlan plan;
  EXPECT_TRUE(MakeServePlan(flags, "/run/x", &plan).ok());
  options.bin_dir = "/opt/bin";
  proto::EngineConfig config;
  config.mutable_model()->set_model_dir("/models/tiny");
  config.mutable_model()->set_served_model_name("tiny");
  config.mutable_cache()->set_block_size(32);
  return LaunchPlan(std::move(options), std::move(plan), std::move(config));
}

TEST(ChildId, NamesAreTheLauncherLogLabels) {
  EXPECT_EQ(ChildId::Coordinator().Name(), "coordinator");
  EXPECT_EQ(ChildId::Frontend(1).Name(), "frontend1");
  EXPECT_EQ(ChildId::Engine(12).Name(), "engine12");
  EXPECT_NE(ChildId::Engine(1), ChildId::Frontend(1));
  EXPECT_LT(ChildId::Coordinator(), ChildId::Frontend(0));
}

TEST(LaunchPlan, SingleNodeRunsOneFrontendAndOneEngine) {
  LaunchPlan plan = Plan(ServeFlags{});
  EXPECT_EQ(plan.Children(), (std::vector<ChildId>{ChildId::Frontend(0), ChildId::Engine(0)}));
  const auto engine = plan.Argv(ChildId::Engine(0), 1);
  EXPECT_EQ(engine[0], "/opt/bin/llmserve-engine");
  EXPECT_TRUE(Has(engine, "--handshake-address=ipc:///run/x/handshake"));
  EXPECT_TRUE(Has(engine, "--data-parallel-rank=0"));
  EXPECT_TRUE(Has(engine, "--local"));
  EXPECT_TRUE(Has(engine, "--noheadless"));
  const auto frontend = plan.Argv(ChildId::Frontend(0), 1);
  EXPECT_EQ(frontend[0], "/opt/bin/llmserve-frontend");
  EXPECT_TRUE(Has(frontend, "--model=/models/tiny"));
  EXPECT_TRUE(Has(frontend, "--engine-ranks=0"));
  EXPECT_TRUE(Has(frontend, "--input-address=ipc:///run/x/frontend0-in"));
  EXPECT_TRUE(Has(frontend, "--dp-prefix-affinity-tokens=128"));  // 4 blocks of 32 tokens
  EXPECT_FALSE(std::any_of(frontend.begin(), frontend.end(),
                           [](const std::string& a) { return a.rfind("--coordinator-address", 0) == 0; }));
  EXPECT_FALSE(std::any_of(frontend.begin(), frontend.end(),
                           [](const std::string& a) { return a.rfind("--api-key", 0) == 0; }));
  EXPECT_FALSE(std::any_of(frontend.begin(), frontend.end(),
                           [](const std::string& a) { return a.rfind("--metrics-dir", 0) == 0; }));
  const proto::HandshakeReply reply = plan.HandshakeReply();
  EXPECT_EQ(reply.config().model().model_dir(), "/models/tiny");
  ASSERT_EQ(reply.addresses().inputs_size(), 1);
  EXPECT_EQ(reply.addresses().inputs(0), "ipc:///run/x/frontend0-in");
  EXPECT_EQ(reply.addresses().coordinator_input(), "");
}

TEST(LaunchPlan, DataParallelHeadStartsTheCoordinatorFirst) {
  ServeFlags flags;
  flags.data_parallel_size = 4;
  flags.data_parallel_size_local = 2;
  flags.data_parallel_address = "10.0.0.1";
  flags.api_server_count = 2;
  ServeOptions options;
  options.api_key = "k";
  options.max_logprobs = 7;
  options.chat_template = "{{ messages }}\n";
  options.log_stats_interval_s = 0;
  LaunchPlan plan = Plan(flags, options);
  EXPECT_EQ(plan.Children(), (std::vector<ChildId>{ChildId::Coordinator(), ChildId::Frontend(0),
                                                   ChildId::Frontend(1), ChildId::Engine(0), ChildId::Engine(1)}));
  EXPECT_TRUE(plan.IsLocal(1));
  EXPECT_FALSE(plan.IsLocal(2));
  const auto coordinator = plan.Argv(ChildId::Coordinator(), 4);
  EXPECT_EQ(coordinator[0], "/opt/bin/llmserve-coordinator");
  EXPECT_TRUE(Has(coordinator, "--data-parallel-size=4"));
  const auto frontend = plan.Argv(ChildId::Frontend(1), 4);
  EXPECT_TRUE(Has(frontend, "--client-index=1"));
  EXPECT_TRUE(Has(frontend, "--api-server-count=2"));
  EXPECT_TRUE(Has(frontend, "--metrics-dir=/run/x/metrics"));
  EXPECT_TRUE(Has(frontend, "--engine-ranks=0,1,2,3"));
  EXPECT_TRUE(Has(frontend, "--api-key=k"));
  EXPECT_TRUE(Has(frontend, "--max-logprobs=7"));
  EXPECT_TRUE(Has(frontend, "--chat-template-source={{ messages }}\n"));
  EXPECT_TRUE(Has(frontend, "--disable-log-stats"));
  EXPECT_TRUE(Has(frontend, "--allowed-origins=[\"*\"]"));
  EXPECT_FALSE(Has(frontend, "--allow-credentials"));
  EXPECT_TRUE(Has(frontend, "--coordinator-address=ipc:///run/x/coordinator-front"));
  // A frontend restarted after an elastic scale routes to the ranks in effect.
  EXPECT_TRUE(Has(plan.Argv(ChildId::Frontend(1), 2), "--engine-ranks=0,1"));
  const proto::HandshakeReply reply = plan.HandshakeReply();
  EXPECT_EQ(reply.addresses().inputs_size(), 2);
  EXPECT_EQ(reply.addresses().coordinator_input(), "tcp://10.0.0.1:29551");
}

TEST(LaunchPlan, HeadlessNodeRunsOnlyItsEngines) {
  ServeFlags flags;
  flags.data_parallel_size = 4;
  flags.data_parallel_size_local = 2;
  flags.data_parallel_start_rank = 2;
  flags.data_parallel_address = "10.0.0.1";
  flags.headless = true;
  LaunchPlan plan = Plan(flags);
  EXPECT_EQ(plan.Children(), (std::vector<ChildId>{ChildId::Engine(2), ChildId::Engine(3)}));
  const auto engine = plan.Argv(ChildId::Engine(3), 4);
  EXPECT_TRUE(Has(engine, "--handshake-address=tcp://10.0.0.1:29550"));
  EXPECT_TRUE(Has(engine, "--data-parallel-rank=3"));
  EXPECT_TRUE(Has(engine, "--headless"));
  EXPECT_TRUE(Has(engine, "--nolocal"));
}

TEST(LaunchPlan, ElasticScalingGivesFrontendsTheControlSocket) {
  ServeFlags flags;
  flags.elastic = true;
  ServeOptions options;
  options.admin_api_key = "admin";
  LaunchPlan plan = Plan(flags, options);
  EXPECT_EQ(plan.Children().front(), ChildId::Coordinator());  // elastic: a coordinator even at DP 1
  const auto frontend = plan.Argv(ChildId::Frontend(0), 1);
  EXPECT_TRUE(Has(frontend, "--control-address=ipc:///run/x/control"));
  EXPECT_TRUE(Has(frontend, "--admin-api-key=admin"));
}

TEST(RestartPolicy, ParsesTheFlagValues) {
  EXPECT_EQ(ParseRestartPolicy("never").value(), RestartPolicy::kNever);
  EXPECT_EQ(ParseRestartPolicy("on-failure").value(), RestartPolicy::kOnFailure);
  auto bad = ParseRestartPolicy("always");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--restart-policy"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::deploy
