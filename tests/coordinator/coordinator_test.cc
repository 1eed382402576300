// The coordinator's socket loop over real ZMQ sockets (inproc and ipc): the
// test plays two engines (SUB + PUSH) and a frontend (XSUB).
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "coordinator/coordinator.h"
#include "proto/messages.h"

namespace llmserve::coordinator {
namespace {

using namespace std::chrono_literals;

class CoordinatorTest : public ::testing::Test {
 protected:
  void StartCoordinator(CoordinatorOptions options) {
    auto c = Coordinator::Create(ctx_, options);
    ASSERT_TRUE(c.ok()) << c.status().message();
    coordinator_ = std::move(c).value();
    thread_ = std::thread([this] { run_status_ = coordinator_->Run(stop_); });
  }
  void TearDown() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_.message();
  }
  // Receives one multipart message within `timeout`, or an empty vector.
  static std::vector<std::string> Recv(zmq::socket_t& s, std::chrono::milliseconds timeout = 3000ms) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    std::vector<std::string> frames;
    if (zmq::poll(&item, 1, timeout) == 0) return frames;
    zmq::message_t m;
    do {
      (void)s.recv(m);
      frames.push_back(m.to_string());
    } while (m.more());
    return frames;
  }
  // The next snapshot on the frontend socket for which `pred` holds (others skipped).
  template <typename Pred>
  std::optional<proto::LoadSnapshot> AwaitSnapshot(zmq::socket_t& s, Pred pred) {
    for (int i = 0; i < 100; ++i) {
      auto frames = Recv(s);
      if (frames.empty()) return std::nullopt;
      proto::LoadSnapshot snap;
      EXPECT_TRUE(snap.ParseFromString(frames[0]));
      if (pred(snap)) return snap;
    }
    return std::nullopt;
  }
  void Report(zmq::socket_t& push, const proto::EngineReport& r) { push.send(zmq::buffer(r.SerializeAsString())); }

  zmq::context_t ctx_;
  std::unique_ptr<Coordinator> coordinator_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  Status run_status_;
};

TEST(CoordinatorOptions, ValidateNamesTheFlagOutOfRange) {
  CoordinatorOptions options;
  EXPECT_TRUE(options.Validate().ok());
  options.state.num_ranks = 0;
  EXPECT_NE(options.Validate().message().find("--data-parallel-size"), std::string::npos);
  options.state.num_ranks = 65537;
  EXPECT_EQ(options.Validate().code(), StatusCode::kInvalidArgument);
  options.state.num_ranks = 2;
  options.state.heartbeat_interval = options.state.publish_interval / 2;
  EXPECT_NE(options.Validate().message().find("--heartbeat-interval-ms"), std::string::npos);
}

TEST_F(CoordinatorTest, RelaysLoadsAndRunsAWave) {
  CoordinatorOptions o;
  o.state = {2, 20ms, 200ms};
  o.frontend_publish_bind = "inproc://coord-front";
  o.engine_publish_bind = "inproc://coord-back";
  o.engine_stats_bind = "inproc://coord-stats";
  StartCoordinator(o);

  // Engines subscribe and hear READY.
  std::vector<zmq::socket_t> subs, pushes;
  for (int r = 0; r < 2; ++r) {
    subs.emplace_back(ctx_, zmq::socket_type::sub);
    subs.back().set(zmq::sockopt::subscribe, "");
    subs.back().connect(coordinator_->engine_publish_address());
    auto ready = Recv(subs.back());
    ASSERT_EQ(ready.size(), 1u) << "rank " << r;
    EXPECT_EQ(ready[0], kCoordinatorReady);
    pushes.emplace_back(ctx_, zmq::socket_type::push);
    pushes.back().set(zmq::sockopt::linger, 0);
    pushes.back().connect(coordinator_->engine_stats_address());
  }
  zmq::socket_t front(ctx_, zmq::socket_type::xsub);
  front.set(zmq::sockopt::linger, 0);
  front.connect(coordinator_->frontend_publish_address());
  front.send(zmq::buffer(std::string("\x01", 1)));

  // Loads reach the frontend.
  proto::EngineReport report;
  auto* load = report.mutable_load();
  load->set_data_parallel_rank(1);
  load->set_num_waiting_reqs(2);
  load->set_num_running_reqs(5);
  load->set_num_waiting_tokens(777);
  load->set_kv_cache_usage(0.25);
  load->set_step_counter(42);
  Report(pushes[1], report);
  auto snap = AwaitSnapshot(front, [](const proto::LoadSnapshot& s) { return s.engines(1).num_waiting_tokens() == 777; });
  ASSERT_TRUE(snap) << "no snapshot carried rank 1's load";
  EXPECT_EQ(snap->engines_size(), 2);
  EXPECT_EQ(snap->engines(1).num_running_reqs(), 5u);
  EXPECT_EQ(snap->engines(1).step_counter(), 42u);
  EXPECT_DOUBLE_EQ(snap->engines(1).kv_cache_usage(), 0.25);
  EXPECT_FALSE(snap->engines_running());

  // A frontend's first request starts wave 0 on every other engine.
  proto::FrontendNotice notice;
  notice.mutable_first_request()->set_data_parallel_rank(0);
  notice.mutable_first_request()->set_wave(0);
  front.send(zmq::buffer(notice.SerializeAsString()));
  for (int r = 0; r < 2; ++r) {
    auto frames = Recv(subs[r]);
    while (frames.size() == 1 && frames[0] == kCoordinatorReady) frames = Recv(subs[r]);  // a later engine's READY
    ASSERT_EQ(frames.size(), 2u) << "rank " << r;
    EXPECT_EQ(static_cast<uint8_t>(frames[0][0]), static_cast<uint8_t>(proto::RequestType::kStartDpWave));
    proto::StartDpWave wave;
    ASSERT_TRUE(proto::Decode(frames[1], &wave).ok());
    EXPECT_EQ(wave.wave, 0);
    EXPECT_EQ(wave.exclude_engine_index, 0);
  }
  ASSERT_TRUE(AwaitSnapshot(front, [](const proto::LoadSnapshot& s) { return s.engines_running(); }));

  // Both engines go idle: wave 1, not running.
  for (uint32_t r = 0; r < 2; ++r) {
    proto::EngineReport done;
    done.mutable_wave()->set_data_parallel_rank(r);
    done.mutable_wave()->set_wave_complete(0);
    Report(pushes[r], done);
  }
  snap = AwaitSnapshot(front, [](const proto::LoadSnapshot& s) { return s.current_wave() == 1; });
  ASSERT_TRUE(snap);
  EXPECT_FALSE(snap->engines_running());
}

TEST_F(CoordinatorTest, HeartbeatsOverIpcAndAnswersALateSubscriberWithReady) {
  const std::string dir = "/tmp/llmserve-coord-test-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  CoordinatorOptions o;
  o.state = {1, 20ms, 50ms};
  o.frontend_publish_bind = "ipc://" + dir + "/front";
  o.engine_publish_bind = "ipc://" + dir + "/back";
  o.engine_stats_bind = "ipc://" + dir + "/stats";
  StartCoordinator(o);
  zmq::socket_t front(ctx_, zmq::socket_type::xsub);
  front.set(zmq::sockopt::linger, 0);
  front.connect(coordinator_->frontend_publish_address());
  front.send(zmq::buffer(std::string("\x01", 1)));
  // Unchanged loads still arrive as heartbeats with increasing sequence numbers.
  auto a = AwaitSnapshot(front, [](const proto::LoadSnapshot&) { return true; });
  auto b = AwaitSnapshot(front, [](const proto::LoadSnapshot&) { return true; });
  ASSERT_TRUE(a && b);
  EXPECT_GT(b->sequence(), a->sequence());
  // A malformed notice is dropped without harm.
  front.send(zmq::buffer(std::string("\xff\xff\xff", 3)));
  for (int i = 0; i < 2; ++i) {  // an engine, then the same rank restarted
    zmq::socket_t sub(ctx_, zmq::socket_type::sub);
    sub.set(zmq::sockopt::subscribe, "");
    sub.set(zmq::sockopt::linger, 0);
    sub.connect(coordinator_->engine_publish_address());
    auto ready = Recv(sub);
    ASSERT_EQ(ready.size(), 1u);
    EXPECT_EQ(ready[0], kCoordinatorReady);
  }
  stop_ = true;
  thread_.join();
  std::filesystem::remove_all(dir);
}

TEST_F(CoordinatorTest, PublishesMembershipAtOnceAndRelaysDrainsToEngines) {
  CoordinatorOptions o;
  o.state = {1, 20ms, 5000ms};  // heartbeats far apart: a membership must not wait for one
  o.frontend_publish_bind = "inproc://coord-front-elastic";
  o.engine_publish_bind = "inproc://coord-back-elastic";
  o.engine_stats_bind = "inproc://coord-stats-elastic";
  StartCoordinator(o);
  zmq::socket_t engine(ctx_, zmq::socket_type::sub);
  engine.set(zmq::sockopt::subscribe, "");
  engine.set(zmq::sockopt::linger, 0);
  engine.connect(coordinator_->engine_publish_address());
  ASSERT_EQ(Recv(engine), std::vector<std::string>{kCoordinatorReady});
  zmq::socket_t launcher(ctx_, zmq::socket_type::xsub);  // the launcher talks like a frontend
  launcher.set(zmq::sockopt::linger, 0);
  launcher.connect(coordinator_->frontend_publish_address());
  launcher.send(zmq::buffer(std::string("\x01", 1)));

  proto::FrontendNotice notice;
  auto* m = notice.mutable_membership();
  m->set_epoch(1);
  m->add_active_ranks(0);
  m->add_active_ranks(1);
  m->set_scaling(true);
  m->set_tracked_ranks(2);
  const auto sent = std::chrono::steady_clock::now();
  launcher.send(zmq::buffer(notice.SerializeAsString()));
  auto snap = AwaitSnapshot(launcher, [](const proto::LoadSnapshot& s) { return s.membership().epoch() == 1; });
  ASSERT_TRUE(snap);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 2000ms) << "published at once, not at the next heartbeat";
  EXPECT_TRUE(snap->membership().scaling());
  EXPECT_EQ(snap->engines_size(), 2) << "the joining rank is tracked";

  notice.Clear();
  notice.mutable_drain()->add_data_parallel_ranks(1);
  launcher.send(zmq::buffer(notice.SerializeAsString()));
  auto frames = Recv(engine);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], kDrainFrame);
  proto::DrainCommand drain;
  ASSERT_TRUE(drain.ParseFromString(frames[1]));
  ASSERT_EQ(drain.data_parallel_ranks_size(), 1);
  EXPECT_EQ(drain.data_parallel_ranks(0), 1u);
}

TEST_F(CoordinatorTest, ReportsAnAddressInUse) {
  zmq::socket_t taken(ctx_, zmq::socket_type::pull);
  taken.bind("inproc://coord-taken");
  CoordinatorOptions o;
  o.engine_stats_bind = "inproc://coord-taken";
  auto c = Coordinator::Create(ctx_, o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("inproc://coord-taken"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::coordinator
