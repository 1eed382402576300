// EngineCoreClient with a DP coordinator: the test binds the coordinator's
// frontend XPUB and plays two engines over real ZMQ sockets, and checks that
// snapshots steer routing, requests carry the published wave, and the first
// request while the engines are idle is announced to the coordinator.
#include <gtest/gtest.h>

#include <thread>

#include "frontend/engine_core_client.h"
#include "tests/frontend/engine_socket_peer.h"
#include "tests/common/wait_until.h"
#include "proto/coordinator.pb.h"

namespace llmserve::frontend {
namespace {

using namespace std::chrono_literals;

proto::LoadSnapshot Snapshot(uint64_t seq, uint64_t wave, bool running, uint64_t tokens0, uint64_t tokens1) {
  proto::LoadSnapshot s;
  for (uint32_t r = 0; r < 2; ++r) {
    auto* e = s.add_engines();
    e->set_data_parallel_rank(r);
    e->set_num_waiting_reqs(1);
    e->set_num_waiting_tokens(r == 0 ? tokens0 : tokens1);
    e->set_alive(true);
  }
  s.set_current_wave(wave);
  s.set_engines_running(running);
  s.set_sequence(seq);
  return s;
}

// Messages the frontend sent upstream on the coordinator socket (subscriptions skipped).
std::vector<proto::FrontendNotice> Notices(zmq::socket_t& xpub, std::chrono::milliseconds wait) {
  std::vector<proto::FrontendNotice> out;
  zmq::pollitem_t item{xpub.handle(), 0, ZMQ_POLLIN, 0};
  while (zmq::poll(&item, 1, wait) > 0) {
    zmq::message_t m;
    (void)xpub.recv(m);
    if (m.size() > 0 && static_cast<const uint8_t*>(m.data())[0] <= 1) continue;
    proto::FrontendNotice n;
    EXPECT_TRUE(n.ParseFromArray(m.data(), static_cast<int>(m.size())));
    out.push_back(n);
  }
  return out;
}

TEST(EngineCoreClientDp, SnapshotsSteerRoutingAndWavesAreStamped) {
  zmq::context_t ctx;
  zmq::socket_t coord(ctx, zmq::socket_type::xpub);
  coord.set(zmq::sockopt::linger, 0);
  coord.set(zmq::sockopt::xpub_verbose, 1);
  coord.bind("inproc://dp-client-coordinator");
  EngineCoreClient::Options o{0, "tcp://127.0.0.1:*", "tcp://127.0.0.1:*", {0, 1}};
  o.coordinator_address = "inproc://dp-client-coordinator";
  auto client = EngineCoreClient::Start(ctx, o);
  ASSERT_TRUE(client.ok()) << client.status().message();
  EngineCoreClient& c = **client;
  EngineSocketPeer e0(ctx, c, 0), e1(ctx, c, 1);
  ASSERT_TRUE(c.WaitUntilReady(5s).ok());
  // The client subscribed; rank 0 holds a long prompt, the engines are idle in wave 3.
  zmq::message_t sub;
  zmq::pollitem_t item{coord.handle(), 0, ZMQ_POLLIN, 0};
  ASSERT_EQ(zmq::poll(&item, 1, 3000ms), 1);
  (void)coord.recv(sub);
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_EQ(static_cast<const uint8_t*>(sub.data())[0], 1);
  coord.send(zmq::buffer(Snapshot(1, 3, false, 5000, 0).SerializeAsString()));
  ASSERT_TRUE(test_util::WaitUntil([&] { return c.snapshots_received() >= 1; }, 3000ms));
  ASSERT_EQ(c.snapshots_received(), 1u);

  proto::EngineCoreRequest req;
  req.prompt_token_ids = {1, 2, 3, 4};
  auto sink = std::make_shared<RecordingSink>();
  for (std::string id : {std::string("req-a"), std::string("req-b")}) {
    req.request_id = id;
    ASSERT_TRUE(c.Submit(req, sink).ok());
    auto got = e1.NextAdd();  // the lightly loaded rank
    ASSERT_TRUE(got) << id;
    EXPECT_EQ(got->request_id, id);
    EXPECT_EQ(got->current_wave, 3);
  }
  // Only the first request of the idle period is announced.
  auto notices = Notices(coord, 200ms);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].first_request().data_parallel_rank(), 1u);
  EXPECT_EQ(notices[0].first_request().wave(), 3u);
  // Optimistic increments on rank 1 until the next snapshot.
  auto loads = c.EffectiveLoads();
  EXPECT_EQ(loads[1].waiting_reqs, 1 + 2);
  EXPECT_EQ(loads[1].waiting_tokens, 0 + 8);

  // A newer snapshot: rank 1 is now the loaded one; the wave is running.
  coord.send(zmq::buffer(Snapshot(2, 4, true, 0, 9000).SerializeAsString()));
  ASSERT_TRUE(test_util::WaitUntil([&] { return c.snapshots_received() >= 2; }, 3000ms));
  EXPECT_EQ(c.EffectiveLoads()[1].waiting_tokens, 9000);
  const std::string third = "req-c";
  req.request_id = third;
  ASSERT_TRUE(c.Submit(req, sink).ok());
  auto got = e0.NextAdd();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->request_id, third);
  EXPECT_EQ(got->current_wave, 4);
  EXPECT_TRUE(Notices(coord, 100ms).empty());
  c.Stop();
}

}  // namespace
}  // namespace llmserve::frontend
