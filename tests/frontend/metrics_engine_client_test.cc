// What the engine client hands the metrics: every SchedulerStats report once,
// with its engine rank, before that message's outputs; each output's origin
// (rank and the engine's timestamp); and the rank a request was routed to.
// The peer is the test acting as an engine's socket pair over real ZMQ.
#include <gtest/gtest.h>

#include <thread>

#include "frontend/engine_core_client.h"
#include "tests/common/wait_until.h"

namespace llmserve::frontend {
namespace {

using namespace std::chrono_literals;

// Everything the client told the metrics side, in order.
struct Journal {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(std::string e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(e));
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return events.size();
  }
};

class OriginSink : public OutputSink {
 public:
  explicit OriginSink(Journal* j) : journal(j) {}
  void OnOutput(const proto::EngineCoreOutput&) override { journal->Add("output without origin"); }
  void OnOutputFrom(const proto::EngineCoreOutput& o, const OutputOrigin& origin) override {
    journal->Add("output " + o.request_id + " rank " + std::to_string(origin.engine_rank) + " at " +
                 std::to_string(origin.engine_timestamp));
  }
  void OnError(const Status&) override { journal->Add("error"); }
  void OnRouted(uint32_t rank) override { journal->Add("routed " + std::to_string(rank)); }
  Journal* journal;
};

TEST(MetricsEngineClient, StatsOnceBeforeOutputsAndOutputsWithTheirOrigin) {
  zmq::context_t ctx;
  auto client = EngineCoreClient::Start(ctx, {0, "tcp://127.0.0.1:*", "tcp://127.0.0.1:*", {0, 1}});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto& c = **client;
  Journal journal;
  c.SetStatsListener([&](uint32_t rank, const proto::SchedulerStats& s) {
    journal.Add("stats rank " + std::to_string(rank) + " running " + std::to_string(s.num_running_reqs));
  });
  // Engine rank 1's sockets.
  zmq::socket_t input(ctx, zmq::socket_type::dealer), output(ctx, zmq::socket_type::push);
  input.set(zmq::sockopt::routing_id, std::string{1, 0});
  input.set(zmq::sockopt::linger, 0);
  output.set(zmq::sockopt::linger, 0);
  input.connect(c.input_address());
  output.connect(c.output_address());
  proto::ReadyResponse ready;
  ready.set_data_parallel_rank(1);
  ready.set_max_model_len(512);
  input.send(zmq::buffer(ready.SerializeAsString()));
  ASSERT_TRUE(test_util::WaitUntil([&] { return c.Engines()[1].ready; }, 5000ms));

  proto::EngineCoreRequest req;
  req.request_id = "r";
  req.prompt_token_ids = {1, 2};
  req.data_parallel_rank = 1;
  ASSERT_TRUE(c.Submit(req, std::make_shared<OriginSink>(&journal)).ok());
  ASSERT_EQ(journal.size(), 1u);  // OnRouted ran inside Submit

  proto::EngineCoreOutputs outs;
  outs.engine_index = 1;
  outs.timestamp = 1234.5;
  outs.outputs.resize(1);
  outs.outputs[0].request_id = "r";
  outs.outputs[0].new_token_ids = {5};
  outs.scheduler_stats.emplace();
  outs.scheduler_stats->num_running_reqs = 1;
  output.send(zmq::buffer(proto::Encode(outs)));
  outs.timestamp = 1235.0;
  outs.scheduler_stats.reset();  // a message without stats: no listener call
  outs.outputs[0].finish_reason = proto::FinishReason::kLength;
  output.send(zmq::buffer(proto::Encode(outs)));
  proto::EngineCoreOutputs idle;  // stats alone (a step with no outputs for this client)
  idle.engine_index = 1;
  idle.scheduler_stats.emplace();
  output.send(zmq::buffer(proto::Encode(idle)));
  EXPECT_TRUE(test_util::WaitUntil([&] { return journal.size() >= 5; }, 5000ms));
  c.SetStatsListener(nullptr);
  std::lock_guard<std::mutex> lock(journal.mu);
  EXPECT_EQ(journal.events, (std::vector<std::string>{"routed 1", "stats rank 1 running 1",
                                                     "output r rank 1 at 1234.500000", "output r rank 1 at 1235.000000",
                                                     "stats rank 1 running 0"}));
  c.Stop();
}

}  // namespace
}  // namespace llmserve::frontend
