#include "common/ipc/curve_auth.h"

#include <glog/logging.h>
#include <zmq.h>

#include <cstring>
#include <vector>

namespace llmserve::common::ipc {

namespace {

constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";
constexpr auto kStopPollInterval = std::chrono::milliseconds(100);

std::string Z85ToBinary(const std::string& z85) {
  std::string binary(32, '\0');
  zmq_z85_decode(reinterpret_cast<uint8_t*>(binary.data()), z85.c_str());
  return binary;
}

std::string HandshakeFailureReason(uint16_t event, uint32_t value) {
  switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return "client refused by the authenticator (status " + std::to_string(value) + ")";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) return "peer does not hold the cluster key";
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) return "peer does not use CURVE (no cluster key)";
      return "protocol error " + std::to_string(value);
    default:
      return "handshake failed (" + std::string(std::strerror(static_cast<int>(value))) +
             "); a peer without the cluster key?";
  }
}

}  // namespace

Status ApplyCurveServer(zmq::socket_t& socket, const CurveKeyPair& cluster_key) {
  try {
    socket.set(zmq::sockopt::curve_server, 1);
    socket.set(zmq::sockopt::curve_secretkey, cluster_key.secret_key);
    socket.set(zmq::sockopt::zap_domain, "llmserve");
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("cannot enable CURVE on a server socket: ") + e.what());
  }
  return Status::Ok();
}

Status ApplyCurveClient(zmq::socket_t& socket, const CurveKeyPair& cluster_key) {
  try {
    socket.set(zmq::sockopt::curve_serverkey, cluster_key.public_key);
    socket.set(zmq::sockopt::curve_publickey, cluster_key.public_key);
    socket.set(zmq::sockopt::curve_secretkey, cluster_key.secret_key);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("cannot enable CURVE on a client socket: ") + e.what());
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<ZapAuthenticator>> ZapAuthenticator::Start(zmq::context_t& context,
                                                                     const CurveKeyPair& cluster_key) {
  try {
    zmq::socket_t socket(context, zmq::socket_type::rep);
    socket.set(zmq::sockopt::linger, 0);
    socket.bind(kZapEndpoint);
    return std::unique_ptr<ZapAuthenticator>(
        new ZapAuthenticator(std::move(socket), Z85ToBinary(cluster_key.public_key)));
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("cannot start the ZAP authenticator: ") + e.what());
  }
}

ZapAuthenticator::ZapAuthenticator(zmq::socket_t socket, std::string allowed_key)
    : socket_(std::move(socket)), allowed_key_(std::move(allowed_key)) {
  thread_ = std::thread([this] { Run(); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_ = true;
  thread_.join();
}

// ZAP 1.0 (RFC 27): request = version, request id, domain, address, routing
// id, mechanism, credentials...; reply = version, request id, status code,
// status text, user id, metadata.
void ZapAuthenticator::Run() {
  std::vector<zmq::message_t> frames;
  while (!stop_) {
    zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
    try {
      if (zmq::poll(&item, 1, kStopPollInterval) == 0) continue;
      frames.clear();
      do {
        frames.emplace_back();
        if (!socket_.recv(frames.back())) break;
      } while (frames.back().more());
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      LOG(ERROR) << "ZAP authenticator: " << e.what();
      continue;
    }
    // A malformed request is refused too: REP owes every request a reply.
    const auto frame = [&](size_t i) { return i < frames.size() ? frames[i].to_string() : std::string(); };
    const std::string address = frame(3);
    const std::string mechanism = frame(5);
    const bool allowed = mechanism == "CURVE" && frame(6) == allowed_key_;
    if (!allowed) {
      ++refused_;
      LOG(WARNING) << "refused a " << mechanism << " connection from " << address
                   << ": its key is not this deployment's cluster key";
    }
    const std::string status = allowed ? "200" : "400";
    const std::string text = allowed ? "OK" : "unknown key";
    const std::string parts[] = {"1.0", frame(1), status, text, "", ""};
    try {
      for (size_t i = 0; i < std::size(parts); ++i) {
        socket_.send(zmq::buffer(parts[i]), i + 1 < std::size(parts) ? zmq::send_flags::sndmore
                                                                      : zmq::send_flags::none);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      LOG(ERROR) << "ZAP authenticator reply: " << e.what();
    }
  }
}

StatusOr<std::unique_ptr<HandshakeFailureLog>> HandshakeFailureLog::Start(zmq::context_t& context,
                                                                          zmq::socket_t& socket,
                                                                          std::string name) {
  static std::atomic<int> counter{0};
  const std::string endpoint = "inproc://llmserve-handshake-monitor-" + std::to_string(counter++);
  constexpr int kEvents = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                          ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
  if (zmq_socket_monitor(static_cast<void*>(socket), endpoint.c_str(), kEvents) != 0) {
    return Status::Unavailable(std::string("cannot monitor ") + name + ": " + zmq_strerror(zmq_errno()));
  }
  try {
    zmq::socket_t monitor(context, zmq::socket_type::pair);
    monitor.set(zmq::sockopt::linger, 0);
    monitor.connect(endpoint);
    return std::unique_ptr<HandshakeFailureLog>(new HandshakeFailureLog(socket, std::move(monitor), std::move(name)));
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("cannot monitor ") + name + ": " + e.what());
  }
}

HandshakeFailureLog::HandshakeFailureLog(zmq::socket_t& watched, zmq::socket_t monitor, std::string name)
    : watched_(&watched), monitor_(std::move(monitor)), name_(std::move(name)) {
  thread_ = std::thread([this] { Run(); });
}

HandshakeFailureLog::~HandshakeFailureLog() {
  stop_ = true;
  thread_.join();
  zmq_socket_monitor(static_cast<void*>(*watched_), nullptr, 0);
}

// Each monitor event is two frames: 6 bytes (uint16 event, uint32 value) and
// the endpoint.
void HandshakeFailureLog::Run() {
  while (!stop_) {
    zmq::pollitem_t item{static_cast<void*>(monitor_), 0, ZMQ_POLLIN, 0};
    zmq::message_t header;
    zmq::message_t endpoint;
    try {
      if (zmq::poll(&item, 1, kStopPollInterval) == 0) continue;
      if (!monitor_.recv(header) || !header.more() || !monitor_.recv(endpoint)) continue;
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      continue;
    }
    if (header.size() < 6) continue;
    uint16_t event = 0;
    uint32_t value = 0;
    std::memcpy(&event, header.data(), sizeof(event));
    std::memcpy(&value, static_cast<const char*>(header.data()) + 2, sizeof(value));
    ++failures_;
    LOG(WARNING) << "refused a connection on " << name_ << " (" << endpoint.to_string()
                 << "): " << HandshakeFailureReason(event, value);
  }
}

}  // namespace llmserve::common::ipc
