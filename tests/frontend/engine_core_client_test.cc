// The frontend's engine client speaks the engine wire protocol over real ZMQ
// sockets. The peer here is the test itself acting as an engine's socket pair
// (DEALER with the rank identity + PUSH), checking every frame it receives.
#include <gtest/gtest.h>

#include <thread>

#include "frontend/engine_core_client.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/engine_socket_peer.h"

namespace llmserve::frontend {
namespace {

using namespace std::chrono_literals;

// Rank `rank` with max_model_len 4096 + rank, waiting up to 5 s for each message.
struct EnginePeer : EngineSocketPeer {
  EnginePeer(zmq::context_t& ctx, const EngineCoreClient& client, uint32_t rank)
      : EngineSocketPeer(ctx, client, rank, 4096 + rank, 5000) {}
};

// The client's threads deliver outputs to the sinks: poll them.
template <typename F>
void WaitForOutputs(F done) {
  ASSERT_TRUE(test_util::WaitUntil(done, 5000ms));
}

TEST(EngineCoreClient, RequestsOutputsAbortsAndUtilities) {
  zmq::context_t ctx;
  auto client = EngineCoreClient::Start(ctx, {3, "tcp://127.0.0.1:*", "tcp://127.0.0.1:*", {0, 1}});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto& c = **client;
  auto sink = std::make_shared<RecordingSink>();
  proto::EngineCoreRequest req;
  req.request_id = "r1";
  req.prompt_token_ids = {1, 2, 3};
  EXPECT_EQ(c.Submit(req, sink).code(), StatusCode::kUnavailable);  // nobody ready yet

  EnginePeer e0(ctx, c, 0), e1(ctx, c, 1);
  ASSERT_TRUE(c.WaitUntilReady(5s).ok());
  EXPECT_EQ(c.max_model_len(), 4096);
  EXPECT_TRUE(c.IsReady());
  EXPECT_FALSE(c.IsDead());

  req.data_parallel_rank = 1;  // pinned
  ASSERT_TRUE(c.Submit(req, sink).ok());
  auto [type, body] = e1.Receive();
  EXPECT_EQ(type, proto::RequestType::kAdd);
  proto::EngineCoreRequest got;
  ASSERT_TRUE(proto::Decode(body, &got).ok());
  EXPECT_EQ(got.request_id, "r1");
  EXPECT_EQ(got.client_index, 3);  // stamped by the client
  EXPECT_EQ(got.prompt_token_ids, req.prompt_token_ids);

  proto::EngineCoreOutputs outs;
  outs.engine_index = 1;
  outs.outputs.resize(1);
  outs.outputs[0].request_id = "r1";
  outs.outputs[0].new_token_ids = {7};
  e1.Send(outs);
  outs.outputs[0].new_token_ids = {8};
  outs.outputs[0].finish_reason = proto::FinishReason::kLength;
  e1.Send(outs);
  WaitForOutputs([&] { return sink->count() == 2; });
  EXPECT_EQ(sink->outputs[1].finish_reason, proto::FinishReason::kLength);
  for (const auto& e : c.Engines()) EXPECT_EQ(e.in_flight, 0);

  // Abort goes to the owning engine; later outputs for it are dropped.
  auto sink2 = std::make_shared<RecordingSink>();
  req.request_id = "r2";
  req.data_parallel_rank.reset();
  ASSERT_TRUE(c.Submit(req, sink2).ok());
  auto owner = c.Engines()[0].in_flight == 1 ? &e0 : &e1;
  EXPECT_EQ(owner->Receive().first, proto::RequestType::kAdd);
  c.Abort({"r2", "unknown"});
  auto [abort_type, abort_body] = owner->Receive();
  EXPECT_EQ(abort_type, proto::RequestType::kAbort);
  std::vector<std::string> ids;
  ASSERT_TRUE(proto::Decode(abort_body, &ids).ok());
  EXPECT_EQ(ids, std::vector<std::string>{"r2"});

  // A utility call reaches every engine and collects both answers.
  std::thread answer([&] {
    for (EnginePeer* e : {&e0, &e1}) {
      auto [t, b] = e->Receive();
      EXPECT_EQ(t, proto::RequestType::kUtility);
      proto::UtilityRequest u;
      ASSERT_TRUE(proto::Decode(b, &u).ok());
      EXPECT_EQ(u.method, "reset_prefix_cache");
      proto::EngineCoreOutputs reply;
      reply.engine_index = static_cast<int32_t>(e->rank);
      reply.utility_output = proto::UtilityOutput{u.call_id, std::nullopt, "ok" + std::to_string(e->rank)};
      e->Send(reply);
    }
  });
  auto results = c.CallUtility("reset_prefix_cache", {}, 5s);
  answer.join();
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ(*results, (std::vector<std::string>{"ok0", "ok1"}));

  // An engine that reports its death fails its in-flight requests only.
  auto sink3 = std::make_shared<RecordingSink>();
  req.request_id = "r3";
  req.data_parallel_rank = 0;
  ASSERT_TRUE(c.Submit(req, sink3).ok());
  e0.Receive();
  e0.output.send(zmq::buffer(std::string(proto::kEngineCoreDead)), zmq::send_flags::sndmore);
  e0.output.send(zmq::buffer(std::string{0, 0}));
  WaitForOutputs([&] { return sink3->count() == 1; });
  ASSERT_EQ(sink3->errors.size(), 1u);
  EXPECT_EQ(sink3->errors[0].code(), StatusCode::kUnavailable);
  EXPECT_EQ(c.Submit(req, sink3).code(), StatusCode::kUnavailable);  // rank 0 is dead
  req.data_parallel_rank.reset();
  req.request_id = "r4";
  EXPECT_TRUE(c.Submit(req, sink3).ok());  // rank 1 still serves
  EXPECT_EQ(e1.Receive().first, proto::RequestType::kAdd);
  c.Stop();
}

}  // namespace
}  // namespace llmserve::frontend
