// Engine and frontend run the startup handshake over real ZMQ TCP sockets on
// 127.0.0.1: HELLO -> reply with addresses and per-rank config -> READY.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>

#include "engine_core/startup_handshake.h"
#include "frontend/handshake_server.h"

namespace llmserve::frontend {
namespace {

using namespace std::chrono_literals;

proto::HandshakeReply Template() {
  proto::HandshakeReply reply;
  reply.mutable_addresses()->add_inputs("tcp://127.0.0.1:5555");
  reply.mutable_addresses()->add_outputs("tcp://127.0.0.1:5556");
  reply.mutable_config()->mutable_model()->set_model_dir("/m");
  reply.mutable_config()->mutable_parallel()->set_data_parallel_size(2);
  return reply;
}

TEST(Handshake, LocalAndHeadlessEnginesBecomeReady) {
  zmq::context_t ctx;
  HandshakeServer server(ctx, Template());
  ASSERT_TRUE(server.Bind("tcp://127.0.0.1:*").ok());
  server.Expect(0, /*local=*/true);
  server.Expect(1, /*local=*/false);
  std::latch server_done(1);  // each engine keeps its socket open until then, so READY arrives
  auto engine = [&](uint32_t rank, bool local, bool headless) {
    auto h = engine_core::StartupHandshake::Connect(ctx, server.address(), rank, local, headless, 10s);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ((*h)->reply().config().parallel().data_parallel_rank(), rank);
    EXPECT_EQ((*h)->reply().addresses().inputs(0), "tcp://127.0.0.1:5555");
    ASSERT_TRUE((*h)->SendReady(42).ok());
    server_done.wait();
  };
  std::thread e0(engine, 0, true, false), e1(engine, 1, false, true);
  std::vector<std::string> progress;
  Status s = server.WaitForEngines(10s, 1s, [&](const std::string& line) { progress.push_back(line); });
  server_done.count_down();
  e0.join();
  e1.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(server.ReadyRanks(), (std::vector<uint32_t>{0, 1}));
}

TEST(Handshake, WrongPlacementIsRefusedAndTimeoutNamesMissingRanks) {
  zmq::context_t ctx;
  HandshakeServer server(ctx, Template());
  ASSERT_TRUE(server.Bind("tcp://127.0.0.1:*").ok());
  server.Expect(0, /*local=*/true);
  server.Expect(1, /*local=*/true);
  // Rank 1 claims to be remote: the server refuses it, so it never gets a reply.
  std::thread liar([&] {
    auto h = engine_core::StartupHandshake::Connect(ctx, server.address(), 1, false, true, 1500ms);
    EXPECT_FALSE(h.ok());
    EXPECT_NE(h.status().message().find("no handshake reply"), std::string::npos);
  });
  std::vector<std::string> progress;
  Status s = server.WaitForEngines(1s, 300ms, [&](const std::string& line) { progress.push_back(line); });
  liar.join();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("rank 0: has not connected"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("rank 1: has not connected"), std::string::npos) << s.message();
  EXPECT_FALSE(progress.empty());
}

TEST(Handshake, UnknownServerTimesOutWithTheAddress) {
  zmq::context_t ctx;
  auto h = engine_core::StartupHandshake::Connect(ctx, "tcp://127.0.0.1:1", 0, true, false, 300ms);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("tcp://127.0.0.1:1"), std::string::npos);
}

TEST(Handshake, HelloFromALaterRankWaitsUntilAScaleUpAdmitsIt) {
  zmq::context_t ctx;
  HandshakeServer server(ctx, Template());
  ASSERT_TRUE(server.Bind("tcp://127.0.0.1:*").ok());
  server.Expect(0, /*local=*/true);
  // A headless engine for rank 2 starts before the deployment has a rank 2.
  std::atomic<bool> answered{false};
  std::latch server_done(1);  // the engine keeps its socket open until then, so READY arrives
  std::thread late([&] {
    auto h = engine_core::StartupHandshake::Connect(ctx, server.address(), 2, false, true, 10s);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    answered = true;
    EXPECT_EQ((*h)->reply().config().parallel().data_parallel_rank(), 2u);
    ASSERT_TRUE((*h)->SendReady(7).ok());
    server_done.wait();
  });
  for (int i = 0; i < 50 && !server.HasHeldHello(2); ++i) server.PollOnce(20ms);
  ASSERT_TRUE(server.HasHeldHello(2));
  server.PollOnce(200ms);
  EXPECT_FALSE(answered) << "held, not answered, before the scale";
  server.Expect(2, /*local=*/false);  // the scale-up admits it
  EXPECT_FALSE(server.HasHeldHello(2));
  std::vector<uint32_t> ready;
  for (int i = 0; i < 100 && ready.empty(); ++i) ready = server.PollOnce(50ms);
  server_done.count_down();
  late.join();
  EXPECT_TRUE(answered);
  EXPECT_EQ(ready, std::vector<uint32_t>{2});
  // A scale-down forgets it; the rank is no longer expected.
  server.Forget(2);
  EXPECT_EQ(server.MissingDescription(), "rank 0: has not connected");
}

}  // namespace
}  // namespace llmserve::frontend
