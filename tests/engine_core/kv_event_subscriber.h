#pragma once
// A KV-event subscriber for tests, written against the wire protocol only
// (raw ZeroMQ frames, not the publisher's code): a SUB socket for the stream
// and, for replay, a DEALER that frames its request as a REQ socket would
// ["", start seq]. A REQ socket itself takes one reply per request, while the
// replay ROUTER streams one message per batch and then an end marker.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <zmq.hpp>

namespace llmserve::engine_core::kv_events_testing {

// One received message: its sequence number and payload.
struct SeqPayload {
  int64_t seq = 0;
  std::string payload;
};

class KVEventSubscriber {
 public:
  KVEventSubscriber(const std::string& pub_endpoint, const std::string& replay_endpoint, const std::string& topic)
      : sub_(context_, zmq::socket_type::sub), replay_(context_, zmq::socket_type::dealer), topic_(topic) {
    sub_.set(zmq::sockopt::linger, 0);
    replay_.set(zmq::sockopt::linger, 0);
    replay_.set(zmq::sockopt::rcvtimeo, 10000);  // a silent replay socket fails the test, not hangs it
    sub_.set(zmq::sockopt::subscribe, topic);
    sub_.connect(pub_endpoint);
    if (!replay_endpoint.empty()) replay_.connect(replay_endpoint);
  }

  // The next streamed message, or nullopt after `timeout` without one.
  std::optional<SeqPayload> Receive(std::chrono::milliseconds timeout) {
    zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) <= 0) return std::nullopt;
    std::vector<zmq::message_t> frames = RecvAll(sub_);
    if (frames.size() != 3 || frames[0].to_string() != topic_ || frames[1].size() != 8) {
      ++malformed;
      return std::nullopt;
    }
    return SeqPayload{SeqOf(frames[1]), frames[2].to_string()};
  }

  // Every buffered batch from `start` on, as the replay socket returns them
  // (it answers until its -1 end marker).
  std::vector<SeqPayload> Replay(int64_t start) {
    std::string request(8, '\0');
    for (int i = 7; i >= 0; --i, start >>= 8) request[static_cast<size_t>(i)] = static_cast<char>(start & 0xff);
    replay_.send(zmq::const_buffer(nullptr, 0), zmq::send_flags::sndmore);
    replay_.send(zmq::buffer(request));
    std::vector<SeqPayload> out;
    while (true) {
      // Each reply is ["", seq, payload]; the last has seq -1 and an empty payload.
      std::vector<zmq::message_t> frames = RecvAll(replay_);
      if (frames.size() != 3 || frames[0].size() != 0 || frames[1].size() != 8) {
        ++malformed;
        return out;
      }
      const int64_t seq = SeqOf(frames[1]);
      if (seq == -1) return out;
      out.push_back(SeqPayload{seq, frames[2].to_string()});
    }
  }

  int malformed = 0;  // messages that did not have the expected frames

 private:
  static int64_t SeqOf(const zmq::message_t& m) {
    uint64_t v = 0;
    const auto* p = static_cast<const unsigned char*>(m.data());
    for (size_t i = 0; i < 8; ++i) v = (v << 8) | p[i];
    return static_cast<int64_t>(v);
  }
  static std::vector<zmq::message_t> RecvAll(zmq::socket_t& s) {
    std::vector<zmq::message_t> frames;
    do {
      zmq::message_t m;
      (void)s.recv(m);
      frames.push_back(std::move(m));
    } while (frames.back().more());
    return frames;
  }

  zmq::context_t context_{1};
  zmq::socket_t sub_;
  zmq::socket_t replay_;
  std::string topic_;
};

}  // namespace llmserve::engine_core::kv_events_testing
