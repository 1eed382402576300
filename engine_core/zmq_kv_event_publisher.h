#pragma once
// vLLM's ZmqEventPublisher: a thread that encodes KV event batches and sends
// each as the multipart message [topic, seq (8-byte big-endian, from 0),
// msgpack payload] on a PUB socket, and keeps the last `buffer_steps`
// (seq, payload) pairs for replay. A subscriber that sees a gap in the
// sequence asks the ROUTER on `replay_endpoint` (REQ frame: 8-byte
// big-endian start seq) and gets [seq, payload] for every buffered seq >=
// start, then [-1 as signed 8-byte big-endian, ""].
//
// The engine's main loop only moves the batch into a queue bounded by
// `max_queue_size` (it waits when the thread falls that far behind, as
// vLLM's Queue.put does); encoding and sockets stay on the thread.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <zmq.hpp>

#include "base/bounded_queue.h"
#include "base/status_or.h"
#include "engine_core/kv_event_publisher.h"
#include "proto/engine_config.pb.h"

namespace llmserve::engine_core {

class ZmqKVEventPublisher final : public KVEventPublisher {
 public:
  // Opens the sockets for DP rank `dp_rank` (endpoints offset by the rank)
  // and starts the thread. Fails when an endpoint cannot be bound/connected.
  static StatusOr<std::unique_ptr<ZmqKVEventPublisher>> Start(const proto::KVEventsConfig& config,
                                                              int32_t dp_rank);
  // Sends what is queued, then stops the thread and closes the sockets.
  ~ZmqKVEventPublisher() override;
  ZmqKVEventPublisher(const ZmqKVEventPublisher&) = delete;
  ZmqKVEventPublisher& operator=(const ZmqKVEventPublisher&) = delete;

  void Publish(proto::KVEventBatch batch) override;

  // The PUB endpoint: the bound address (with the real port for "tcp://h:*"),
  // or the endpoint it connected to.
  const std::string& endpoint() const { return endpoint_; }
  // The bound replay endpoint, or "" without replay.
  const std::string& replay_endpoint() const { return replay_endpoint_; }

 private:
  ZmqKVEventPublisher(const proto::KVEventsConfig& config, int32_t dp_rank);
  void Run();
  void Send(const proto::KVEventBatch& batch);
  void ServeReplay();

  const int32_t dp_rank_;
  const std::string topic_;
  const size_t buffer_steps_;
  zmq::context_t context_;
  zmq::socket_t pub_;
  std::optional<zmq::socket_t> replay_;
  std::string endpoint_;
  std::string replay_endpoint_;
  base::BoundedQueue<std::optional<proto::KVEventBatch>> queue_;  // nullopt: stop
  // Publisher thread only:
  uint64_t next_seq_ = 0;
  std::deque<std::pair<uint64_t, std::string>> buffer_;  // (seq, payload), oldest first
  std::thread thread_;
};

}  // namespace llmserve::engine_core
