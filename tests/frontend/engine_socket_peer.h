#pragma once
// For EngineCoreClient tests: the engine side of one rank's sockets, played by
// the test over real ZMQ (a DEALER with the rank's identity that announces the
// rank with a ReadyResponse, and a PUSH for outputs), and a sink that records
// what the client delivers.

#include <gtest/gtest.h>
#include <zmq.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/engine_core_client.h"

namespace llmserve::frontend {

class RecordingSink : public OutputSink {
 public:
  void OnOutput(const proto::EngineCoreOutput& output) override {
    std::lock_guard<std::mutex> lock(mu);
    outputs.push_back(output);
  }
  void OnError(const Status& status) override {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(status);
  }
  // Outputs and errors delivered so far.
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return outputs.size() + errors.size();
  }
  std::mutex mu;
  std::vector<proto::EngineCoreOutput> outputs;
  std::vector<Status> errors;
};

struct EngineSocketPeer {
  // Connects to `client` as `rank` and sends its ReadyResponse; receives wait
  // at most `receive_timeout_ms`.
  EngineSocketPeer(zmq::context_t& ctx, const EngineCoreClient& client, uint32_t rank, uint32_t max_model_len = 1024,
                   int receive_timeout_ms = 3000)
      : rank(rank), input(ctx, zmq::socket_type::dealer), output(ctx, zmq::socket_type::push) {
    input.set(zmq::sockopt::routing_id, std::string{static_cast<char>(rank), 0});
    input.set(zmq::sockopt::linger, 0);
    input.set(zmq::sockopt::rcvtimeo, receive_timeout_ms);
    output.set(zmq::sockopt::linger, 0);
    input.connect(client.input_address());
    output.connect(client.output_address());
    proto::ReadyResponse ready;
    ready.set_data_parallel_rank(rank);
    ready.set_max_model_len(max_model_len);
    ready.set_num_kv_blocks(100);
    ready.mutable_cache()->set_block_size(16);
    ready.mutable_cache()->set_enable_prefix_caching(true);
    input.send(zmq::buffer(ready.SerializeAsString()));
  }

  using Message = std::pair<proto::RequestType, std::string>;  // [type][body]

  // The next message (nullopt after the receive timeout).
  std::optional<Message> TryReceive() {
    zmq::message_t type, body;
    if (!input.recv(type) || !type.more() || !input.recv(body)) return std::nullopt;
    proto::RequestType t = proto::RequestType::kWakeup;
    EXPECT_TRUE(proto::ParseRequestType(type.data(), type.size(), &t).ok());
    return Message{t, body.to_string()};
  }

  // The next message, which must come within the receive timeout.
  Message Receive() {
    std::optional<Message> m = TryReceive();
    EXPECT_TRUE(m.has_value()) << "rank " << rank << " received nothing";
    return m ? *m : Message{proto::RequestType::kWakeup, ""};
  }

  // The next ADD, skipping other messages (nullopt after the receive timeout).
  std::optional<proto::EngineCoreRequest> NextAdd() {
    while (auto m = TryReceive()) {
      if (m->first != proto::RequestType::kAdd) continue;
      proto::EngineCoreRequest r;
      EXPECT_TRUE(proto::Decode(m->second, &r).ok());
      return r;
    }
    return std::nullopt;
  }

  // Ids of the ADDs that arrive until one receive timeout passes without one.
  std::vector<std::string> Adds() {
    std::vector<std::string> ids;
    while (auto r = NextAdd()) ids.push_back(r->request_id);
    return ids;
  }

  void Send(const proto::EngineCoreOutputs& outs) { output.send(zmq::buffer(proto::Encode(outs))); }

  uint32_t rank;
  zmq::socket_t input;
  zmq::socket_t output;
};

}  // namespace llmserve::frontend
