#include "engine_core/zmq_kv_event_publisher.h"

#include <array>
#include <chrono>

#include <glog/logging.h>

#include "common/ipc/zmq_socket.h"
#include "engine_core/kv_event_endpoint.h"

namespace llmserve::engine_core {

namespace {

using common::ipc::MakeSocket;
using common::ipc::SocketMode;
using common::ipc::SocketOptions;

std::array<char, 8> SeqFrame(uint64_t v) {
  std::array<char, 8> out;
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

uint64_t SeqOfFrame(const zmq::message_t& m) {
  uint64_t v = 0;
  const auto* p = static_cast<const unsigned char*>(m.data());
  for (size_t i = 0; i < m.size() && i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// How long the thread waits for a batch before it looks at the replay socket
// again: the worst-case delay of a replay answer. Without replay it only
// wakes for batches (and the stop marker).
constexpr std::chrono::milliseconds kReplayPollInterval{10};
constexpr std::chrono::milliseconds kIdleWaitWithoutReplay{1000};

}  // namespace

ZmqKVEventPublisher::ZmqKVEventPublisher(const proto::KVEventsConfig& config, int32_t dp_rank)
    : dp_rank_(dp_rank),
      topic_(config.topic()),
      buffer_steps_(config.buffer_steps()),
      context_(1),
      queue_(config.max_queue_size()) {}

StatusOr<std::unique_ptr<ZmqKVEventPublisher>> ZmqKVEventPublisher::Start(const proto::KVEventsConfig& config,
                                                                          int32_t dp_rank) {
  std::unique_ptr<ZmqKVEventPublisher> p(new ZmqKVEventPublisher(config, dp_rank));
  LLMSERVE_ASSIGN_OR_RETURN(std::string endpoint, KVEventEndpointForRank(config.endpoint(), dp_rank));
  SocketOptions pub_options;
  pub_options.send_hwm = static_cast<int>(config.hwm());
  const bool bind = KVEventEndpointBinds(endpoint);
  auto pub = MakeSocket(p->context_, zmq::socket_type::pub, endpoint,
                        bind ? SocketMode::kBind : SocketMode::kConnect, pub_options);
  if (!pub.ok()) return pub.status().WithContext("KV events endpoint " + endpoint);
  p->pub_ = std::move(pub).value();
  p->endpoint_ = endpoint;
  if (bind && endpoint.starts_with("tcp://")) {
    LLMSERVE_ASSIGN_OR_RETURN(p->endpoint_, common::ipc::LastEndpoint(p->pub_));
  }
  if (!config.replay_endpoint().empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(std::string replay, KVEventEndpointForRank(config.replay_endpoint(), dp_rank));
    auto router = MakeSocket(p->context_, zmq::socket_type::router, replay, SocketMode::kBind);
    if (!router.ok()) return router.status().WithContext("KV events replay endpoint " + replay);
    p->replay_.emplace(std::move(router).value());
    p->replay_endpoint_ = replay;
    if (replay.starts_with("tcp://")) {
      LLMSERVE_ASSIGN_OR_RETURN(p->replay_endpoint_, common::ipc::LastEndpoint(*p->replay_));
    }
  }
  LOG(INFO) << "KV events: publishing on " << p->endpoint_
            << (p->replay_endpoint_.empty() ? "" : ", replay on " + p->replay_endpoint_);
  // The sockets move to the thread; starting it orders the writes above before its reads.
  p->thread_ = std::thread([raw = p.get()] { raw->Run(); });
  return p;
}

ZmqKVEventPublisher::~ZmqKVEventPublisher() {
  if (thread_.joinable()) {
    queue_.Push(std::nullopt);
    thread_.join();
  }
}

void ZmqKVEventPublisher::Publish(proto::KVEventBatch batch) {
  if (!batch.data_parallel_rank) batch.data_parallel_rank = dp_rank_;
  queue_.Push(std::move(batch));
}

void ZmqKVEventPublisher::Run() {
  const std::chrono::milliseconds wait = replay_ ? kReplayPollInterval : kIdleWaitWithoutReplay;
  while (true) {
    if (replay_) ServeReplay();
    std::optional<std::optional<proto::KVEventBatch>> item = queue_.Pop(wait);
    if (!item) continue;
    if (!item->has_value()) return;  // stop: everything before it has been sent
    Send(**item);
  }
}

void ZmqKVEventPublisher::Send(const proto::KVEventBatch& batch) {
  const uint64_t seq = next_seq_++;
  std::string payload = proto::EncodeKVEventBatch(batch);
  const std::array<char, 8> seq_bytes = SeqFrame(seq);
  const std::array<zmq::const_buffer, 3> frames = {zmq::buffer(topic_), zmq::buffer(seq_bytes),
                                                   zmq::buffer(payload)};
  // A PUB never blocks: at its high-water mark ZeroMQ drops, and replay covers the gap.
  if (Status s = common::ipc::SendMultipart(pub_, frames); !s.ok())
    LOG(WARNING) << "KV events: sending batch " << seq << " failed: " << s.message();
  if (buffer_steps_ == 0) return;
  if (buffer_.size() == buffer_steps_) buffer_.pop_front();
  buffer_.emplace_back(seq, std::move(payload));
}

void ZmqKVEventPublisher::ServeReplay() {
  while (true) {
    auto request = common::ipc::RecvMultipart(*replay_, std::chrono::milliseconds(0));
    if (!request.ok()) return;  // nothing waiting (or a receive error, already gone)
    // [client id, "", start seq]: what a REQ client's request looks like at a ROUTER.
    if (request->size() != 3) {
      LOG(WARNING) << "KV events: ignoring a replay request of " << request->size() << " frames";
      continue;
    }
    const zmq::message_t& id = (*request)[0];
    const uint64_t start = SeqOfFrame((*request)[2]);
    const std::string client(static_cast<const char*>(id.data()), id.size());
    for (const auto& [seq, payload] : buffer_) {
      if (seq < start) continue;
      const std::array<char, 8> seq_bytes = SeqFrame(seq);
      const std::array<zmq::const_buffer, 4> frames = {zmq::buffer(client), zmq::const_buffer(nullptr, 0),
                                                       zmq::buffer(seq_bytes), zmq::buffer(payload)};
      (void)common::ipc::SendMultipart(*replay_, frames);
    }
    const std::array<char, 8> end = SeqFrame(~uint64_t{0});  // -1 as a signed 8-byte integer
    const std::array<zmq::const_buffer, 4> frames = {zmq::buffer(client), zmq::const_buffer(nullptr, 0),
                                                     zmq::buffer(end), zmq::const_buffer(nullptr, 0)};
    (void)common::ipc::SendMultipart(*replay_, frames);
  }
}

}  // namespace llmserve::engine_core
