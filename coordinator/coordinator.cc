#include "coordinator/coordinator.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/ipc/cluster_key.h"
#include "common/ipc/zmq_socket.h"
#include "proto/messages.h"

namespace llmserve::coordinator {

namespace {
constexpr std::chrono::milliseconds kMaxPoll{50};
}

Status CoordinatorOptions::Validate() const {
  if (state.num_ranks < 1 || state.num_ranks > 65536)
    return Status::InvalidArgument("--data-parallel-size must be in 1..65536");
  if (state.publish_interval.count() < 1 || state.heartbeat_interval < state.publish_interval)
    return Status::InvalidArgument(
        "--publish-interval-ms must be at least 1 and --heartbeat-interval-ms at least that");
  return Status::Ok();
}

Coordinator::Coordinator(zmq::context_t& context, CoordinatorOptions options)
    : options_(std::move(options)),
      state_(options_.state),
      frontend_pub_(context, zmq::socket_type::xpub),
      engine_pub_(context, zmq::socket_type::xpub),
      engine_pull_(context, zmq::socket_type::pull) {}

StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(zmq::context_t& context, CoordinatorOptions options) {
  std::unique_ptr<Coordinator> c(new Coordinator(context, std::move(options)));
  const std::pair<zmq::socket_t*, const std::string*> binds[] = {
      {&c->frontend_pub_, &c->options_.frontend_publish_bind},
      {&c->engine_pub_, &c->options_.engine_publish_bind},
      {&c->engine_pull_, &c->options_.engine_stats_bind}};
  std::string* bound[] = {&c->frontend_publish_address_, &c->engine_publish_address_, &c->engine_stats_address_};
  for (size_t i = 0; i < 3; ++i) {
    zmq::socket_t& s = *binds[i].first;
    try {
      s.set(zmq::sockopt::linger, 0);
      s.set(zmq::sockopt::sndhwm, 0);
      s.set(zmq::sockopt::rcvhwm, 0);
      if (i < 2) s.set(zmq::sockopt::xpub_verbose, 1);
      Status secured = common::ipc::SecureTcpSocket(s, *binds[i].second, common::ipc::SocketMode::kBind);
      if (!secured.ok()) return secured;
      s.bind(*binds[i].second);
      *bound[i] = s.get(zmq::sockopt::last_endpoint);
    } catch (const zmq::error_t& e) {
      return Status::Unavailable("coordinator: cannot bind " + *binds[i].second + ": " + e.what());
    }
  }
  return c;
}

void Coordinator::Publish() {
  auto snapshot = state_.MaybePublish(CoordinatorState::Clock::now());
  if (!snapshot) return;
  const std::string bytes = snapshot->SerializeAsString();
  (void)common::ipc::SendBytes(frontend_pub_, bytes);
}

void Coordinator::Broadcast(const proto::StartDpWave& wave) {
  VLOG(1) << "coordinator: START_DP_WAVE " << wave.wave << " (exclude " << wave.exclude_engine_index << ")";
  const auto type = static_cast<uint8_t>(proto::RequestType::kStartDpWave);
  const std::string body = proto::Encode(wave);
  const zmq::const_buffer frames[] = {zmq::buffer(&type, 1), zmq::buffer(body)};
  if (Status s = common::ipc::SendMultipart(engine_pub_, frames); !s.ok())
    LOG(ERROR) << "coordinator: " << s.message();
}

void Coordinator::HandleFrontendMessages() {
  zmq::message_t msg;
  while (frontend_pub_.recv(msg, zmq::recv_flags::dontwait)) {
    const auto* data = static_cast<const uint8_t*>(msg.data());
    if (msg.size() > 0 && (data[0] == 0 || data[0] == 1)) continue;  // (un)subscription
    proto::FrontendNotice notice;
    if (!notice.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
      LOG(WARNING) << "coordinator: malformed frontend notice (" << msg.size() << " bytes)";
      continue;
    }
    if (notice.has_first_request()) {
      if (auto wave = state_.OnFirstRequest(notice.first_request())) Broadcast(*wave);
    } else if (notice.has_membership()) {
      LOG(INFO) << "coordinator: membership epoch " << notice.membership().epoch() << ": "
                << notice.membership().active_ranks_size() << " active rank(s)"
                << (notice.membership().scaling() ? ", scaling" : "");
      state_.OnMembership(notice.membership());
    } else if (notice.has_rank_down()) {
      state_.OnRankDown(notice.rank_down());
    } else if (notice.has_drain()) {
      const std::string body = notice.drain().SerializeAsString();
      const zmq::const_buffer frames[] = {zmq::buffer(std::string_view(kDrainFrame)), zmq::buffer(body)};
      if (Status s = common::ipc::SendMultipart(engine_pub_, frames); !s.ok())
        LOG(ERROR) << "coordinator: " << s.message();
    }
  }
}

void Coordinator::HandleEngineSubscriptions() {
  zmq::message_t msg;
  bool subscribed = false;
  while (engine_pub_.recv(msg, zmq::recv_flags::dontwait)) {
    const auto* data = static_cast<const uint8_t*>(msg.data());
    if (msg.size() > 0 && data[0] == 1) subscribed = true;
  }
  // Every engine (including a restarted one) waits for READY after subscribing.
  if (subscribed) (void)common::ipc::SendBytes(engine_pub_, kCoordinatorReady);
}

void Coordinator::HandleEngineReports() {
  zmq::message_t msg;
  while (engine_pull_.recv(msg, zmq::recv_flags::dontwait)) {
    proto::EngineReport report;
    if (!report.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
      LOG(WARNING) << "coordinator: malformed engine report (" << msg.size() << " bytes)";
      continue;
    }
    if (report.has_load()) {
      state_.OnEngineLoad(report.load());
    } else if (report.has_wave()) {
      if (auto wave = state_.OnWaveNotice(report.wave())) Broadcast(*wave);
    }
  }
}

Status Coordinator::Run(const std::atomic<bool>& stop) {
  LOG(INFO) << "coordinator: tracking " << options_.state.num_ranks << " ranks; frontends subscribe at "
            << frontend_publish_address_ << ", engines at " << engine_publish_address_ << " and report to "
            << engine_stats_address_;
  zmq::pollitem_t items[] = {{frontend_pub_.handle(), 0, ZMQ_POLLIN, 0},
                             {engine_pub_.handle(), 0, ZMQ_POLLIN, 0},
                             {engine_pull_.handle(), 0, ZMQ_POLLIN, 0}};
  while (!stop) {
    try {
      const auto wait = std::min(kMaxPoll, state_.TimeUntilNextPublish(CoordinatorState::Clock::now()));
      zmq::poll(items, 3, wait);
      if (items[0].revents & ZMQ_POLLIN) HandleFrontendMessages();
      if (items[1].revents & ZMQ_POLLIN) HandleEngineSubscriptions();
      if (items[2].revents & ZMQ_POLLIN) HandleEngineReports();
      Publish();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return Status::Ok();
      return Status::Unavailable(std::string("coordinator socket error: ") + e.what());
    }
  }
  return Status::Ok();
}

}  // namespace llmserve::coordinator
