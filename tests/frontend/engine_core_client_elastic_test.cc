// EngineCoreClient under elastic scaling, over real ZMQ sockets: the test
// binds the coordinator's frontend XPUB and plays the engines. Membership in
// snapshots adds and removes ranks from routing; a rank that joins sends its
// ReadyResponse late; a request an engine refuses because it is shutting down
// moves to another rank without the client seeing an error.
#include <gtest/gtest.h>

#include <thread>

#include "frontend/engine_core_client.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/engine_socket_peer.h"
#include "proto/coordinator.pb.h"

namespace llmserve::frontend {
namespace {

using namespace std::chrono_literals;

// Rank `rank`; Adds() returns once 300 ms pass without an ADD.
struct Peer : EngineSocketPeer {
  Peer(zmq::context_t& ctx, const EngineCoreClient& client, uint32_t rank)
      : EngineSocketPeer(ctx, client, rank, 1024, 300) {}
};

// `peer` refuses `id` the way a draining engine does.
void RefuseShuttingDown(EngineSocketPeer& peer, const std::string& id) {
  proto::EngineCoreOutputs outs;
  outs.engine_index = static_cast<int32_t>(peer.rank);
  proto::EngineCoreOutput o;
  o.request_id = id;
  o.finish_reason = proto::FinishReason::kAbort;
  o.error_code = StatusCode::kUnavailable;
  o.error_message = "the engine is shutting down";
  outs.outputs.push_back(o);
  peer.Send(outs);
}

proto::LoadSnapshot WithMembership(uint64_t seq, uint64_t epoch, std::vector<uint32_t> active, bool scaling) {
  proto::LoadSnapshot s;
  for (uint32_t r = 0; r < 3; ++r) s.add_engines()->set_data_parallel_rank(r);
  s.set_sequence(seq);
  s.mutable_membership()->set_epoch(epoch);
  for (uint32_t r : active) s.mutable_membership()->add_active_ranks(r);
  s.mutable_membership()->set_scaling(scaling);
  return s;
}

// The client's thread applies snapshots and readiness: poll what it shows.
template <typename F>
bool WaitFor(F done) {
  return test_util::WaitUntil(done, 3000ms);
}

bool ReadyAndActive(const EngineCoreClient& c, uint32_t rank, bool active) {
  for (const auto& e : c.Engines())
    if (e.rank == rank) return e.ready && e.active == active;
  return false;
}

TEST(EngineCoreClientElastic, MembershipAddsAndRemovesRanksAndRefusalsMove) {
  zmq::context_t ctx;
  zmq::socket_t coord(ctx, zmq::socket_type::xpub);
  coord.set(zmq::sockopt::linger, 0);
  coord.bind("inproc://elastic-client-coordinator");
  EngineCoreClient::Options o{0, "tcp://127.0.0.1:*", "tcp://127.0.0.1:*", {0, 1}};
  o.coordinator_address = "inproc://elastic-client-coordinator";
  auto client = EngineCoreClient::Start(ctx, o);
  ASSERT_TRUE(client.ok()) << client.status().message();
  EngineCoreClient& c = **client;
  Peer e0(ctx, c, 0), e1(ctx, c, 1);
  ASSERT_TRUE(c.WaitUntilReady(5s).ok());
  zmq::message_t sub;
  ASSERT_TRUE(coord.recv(sub));  // the client's subscription

  // A scale-up starts: rank 2 is announced, then sends its ReadyResponse.
  coord.send(zmq::buffer(WithMembership(1, 1, {0, 1}, true).SerializeAsString()));
  ASSERT_TRUE(WaitFor([&] { return c.scaling(); }));
  Peer e2(ctx, c, 2);
  ASSERT_TRUE(WaitFor([&] { return ReadyAndActive(c, 2, false); })) << "rank 2 ready but not routed yet";
  EXPECT_TRUE(c.IsReady()) << "a joining rank does not make the server unready";
  proto::EngineCoreRequest pinned;
  pinned.request_id = "pinned-early";
  pinned.prompt_token_ids = {1, 2, 3};
  pinned.data_parallel_rank = 2;
  auto sink = std::make_shared<RecordingSink>();
  EXPECT_EQ(c.Submit(pinned, sink).code(), StatusCode::kUnavailable) << "rank 2 is not active yet";

  coord.send(zmq::buffer(WithMembership(2, 2, {0, 1, 2}, false).SerializeAsString()));
  ASSERT_TRUE(WaitFor([&] { return ReadyAndActive(c, 2, true) && !c.scaling(); }));
  proto::EngineCoreRequest req;
  req.prompt_token_ids = {1, 2, 3};
  for (int i = 0; i < 6; ++i) {
    req.request_id = "up-" + std::to_string(i);
    ASSERT_TRUE(c.Submit(req, sink).ok());
  }
  const size_t on2 = e2.Adds().size();
  EXPECT_EQ(on2 + e0.Adds().size() + e1.Adds().size(), 6u);
  EXPECT_EQ(on2, 2u) << "the joined rank takes its share";

  // Scale-down: rank 2 leaves routing; nothing new reaches it.
  coord.send(zmq::buffer(WithMembership(3, 3, {0, 1}, true).SerializeAsString()));
  ASSERT_TRUE(WaitFor([&] { return ReadyAndActive(c, 2, false); }));
  for (int i = 0; i < 4; ++i) {
    req.request_id = "down-" + std::to_string(i);
    ASSERT_TRUE(c.Submit(req, sink).ok());
  }
  EXPECT_TRUE(e2.Adds().empty());
  EXPECT_EQ(e0.Adds().size() + e1.Adds().size(), 4u);
  pinned.request_id = "pinned-late";
  EXPECT_EQ(c.Submit(pinned, sink).code(), StatusCode::kUnavailable);
  EXPECT_FALSE(c.IsDead());

  // A draining rank refuses a request that has not streamed: it moves on.
  req.request_id = "refused";
  ASSERT_TRUE(c.Submit(req, sink).ok());
  std::vector<std::string> got0 = e0.Adds(), got1 = e1.Adds();
  Peer& first = got0.empty() ? e1 : e0;
  Peer& other = got0.empty() ? e0 : e1;
  ASSERT_EQ(got0.size() + got1.size(), 1u);
  RefuseShuttingDown(first, "refused");
  EXPECT_EQ(other.Adds(), std::vector<std::string>{"refused"});
  {
    std::lock_guard<std::mutex> lock(sink->mu);
    EXPECT_TRUE(sink->errors.empty());
    EXPECT_TRUE(sink->outputs.empty()) << "the refusal is not delivered";
  }
  // The refusing rank gets nothing new until it says ready again.
  for (int i = 0; i < 3; ++i) {
    req.request_id = "after-" + std::to_string(i);
    ASSERT_TRUE(c.Submit(req, sink).ok());
  }
  EXPECT_TRUE(first.Adds().empty());
  EXPECT_EQ(other.Adds().size(), 3u);
  c.Stop();
}

}  // namespace
}  // namespace llmserve::frontend
