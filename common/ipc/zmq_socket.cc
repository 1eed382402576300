#include "common/ipc/zmq_socket.h"

#include "common/ipc/curve_auth.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>

namespace llmserve::common::ipc {

namespace {

constexpr std::string_view kTimeoutPrefix = "timed out: ";

Status FromZmq(const zmq::error_t& e, std::string_view what) {
  return Status::Unavailable(std::string(what) + ": " + e.what());
}

bool IsIpv6TcpEndpoint(const std::string& endpoint) {
  return endpoint.rfind("tcp://[", 0) == 0;
}

}  // namespace

StatusOr<zmq::socket_t> MakeSocket(zmq::context_t& context, zmq::socket_type type,
                                   const std::string& endpoint, SocketMode mode,
                                   const SocketOptions& options) {
  const char* verb = mode == SocketMode::kBind ? "bind" : "connect";
  try {
    zmq::socket_t socket(context, type);
    socket.set(zmq::sockopt::linger, options.linger_ms);
    socket.set(zmq::sockopt::sndhwm, options.send_hwm.value_or(0));
    socket.set(zmq::sockopt::rcvhwm, options.recv_hwm.value_or(0));
    if (!options.identity.empty()) socket.set(zmq::sockopt::routing_id, options.identity);
    if (options.conflate) socket.set(zmq::sockopt::conflate, 1);
    if (options.xpub_verbose) socket.set(zmq::sockopt::xpub_verbose, 1);
    if (IsIpv6TcpEndpoint(endpoint)) socket.set(zmq::sockopt::ipv6, 1);
    if (type == zmq::socket_type::sub) {
      if (options.subscriptions.empty()) {
        socket.set(zmq::sockopt::subscribe, "");
      } else {
        for (const std::string& prefix : options.subscriptions) {
          socket.set(zmq::sockopt::subscribe, prefix);
        }
      }
    }
    if (options.curve != nullptr && endpoint.rfind("tcp://", 0) == 0) {
      Status curve = mode == SocketMode::kBind ? ApplyCurveServer(socket, *options.curve)
                                               : ApplyCurveClient(socket, *options.curve);
      if (!curve.ok()) return curve;
    }
    if (mode == SocketMode::kBind) {
      socket.bind(endpoint);
    } else {
      socket.connect(endpoint);
    }
    return socket;
  } catch (const zmq::error_t& e) {
    return FromZmq(e, std::string("cannot ") + verb + " to " + endpoint);
  }
}

StatusOr<std::string> LastEndpoint(zmq::socket_t& socket) {
  try {
    return socket.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return FromZmq(e, "ZMQ_LAST_ENDPOINT");
  }
}

StatusOr<std::string> BindToFreePort(zmq::socket_t& socket, const std::string& host) {
  const std::string endpoint = TcpEndpoint(host, 0);
  try {
    if (IsIpv6TcpEndpoint(endpoint)) socket.set(zmq::sockopt::ipv6, 1);
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return FromZmq(e, "cannot bind to " + endpoint);
  }
  return LastEndpoint(socket);
}

std::string RuntimeDir() {
  for (const char* name : {"LLMSERVE_RUNTIME_DIR", "XDG_RUNTIME_DIR"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') return value;
  }
  return "/tmp";
}

StatusOr<std::string> MakeIpcEndpoint(std::string_view tag, const std::string& dir) {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^
                                          static_cast<uint64_t>(::getpid()));
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(rng()));
  std::string path = (dir.empty() ? RuntimeDir() : dir) + "/llmserve-" + std::string(tag) +
                     "-" + std::to_string(::getpid()) + "-" + suffix;
  constexpr size_t kSunPathMax = 107;  // sizeof(sockaddr_un::sun_path) - 1
  if (path.size() > kSunPathMax) {
    return Status::InvalidArgument("ipc path too long for a Unix socket (" +
                                   std::to_string(path.size()) + " > 107 bytes): " + path);
  }
  return "ipc://" + path;
}

void RemoveIpcFile(const std::string& endpoint) {
  constexpr std::string_view kIpc = "ipc://";
  if (endpoint.rfind(kIpc, 0) != 0 || endpoint.size() <= kIpc.size() ||
      endpoint[kIpc.size()] == '@') {
    return;  // not ipc, or Linux abstract namespace (no file)
  }
  ::unlink(endpoint.c_str() + kIpc.size());
}

std::string TcpEndpoint(const std::string& host, int port) {
  const std::string port_text = port == 0 ? "*" : std::to_string(port);
  const bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return "tcp://" + (v6 ? "[" + host + "]" : host) + ":" + port_text;
}

Status SendMultipart(zmq::socket_t& socket, std::span<const zmq::const_buffer> frames,
                     bool dont_wait) {
  if (frames.empty()) return Status::InvalidArgument("SendMultipart: no frames");
  try {
    for (size_t i = 0; i < frames.size(); ++i) {
      zmq::send_flags flags = i + 1 < frames.size() ? zmq::send_flags::sndmore
                                                     : zmq::send_flags::none;
      if (dont_wait) flags = flags | zmq::send_flags::dontwait;
      if (!socket.send(frames[i], flags).has_value()) {
        // Only the first frame can hit a full queue; later ones are atomic.
        return Status::ResourceExhausted("zmq send queue full");
      }
    }
  } catch (const zmq::error_t& e) {
    return FromZmq(e, "zmq send");
  }
  return Status::Ok();
}

Status SendBytes(zmq::socket_t& socket, std::string_view bytes, bool dont_wait) {
  const zmq::const_buffer frame(bytes.data(), bytes.size());
  return SendMultipart(socket, std::span<const zmq::const_buffer>(&frame, 1), dont_wait);
}

StatusOr<std::vector<zmq::message_t>> RecvMultipart(
    zmq::socket_t& socket, std::optional<std::chrono::milliseconds> timeout) {
  try {
    if (timeout.has_value()) {
      zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, *timeout) == 0) return TimeoutError("zmq receive");
    }
    std::vector<zmq::message_t> frames;
    do {
      zmq::message_t frame;
      if (!socket.recv(frame, zmq::recv_flags::none).has_value()) {
        return Status::Unavailable("zmq receive interrupted");
      }
      frames.push_back(std::move(frame));
    } while (frames.back().more());
    return frames;
  } catch (const zmq::error_t& e) {
    return FromZmq(e, "zmq receive");
  }
}

Status TimeoutError(std::string_view what) {
  return Status::Unavailable(std::string(kTimeoutPrefix) + std::string(what));
}

bool IsTimeout(const Status& status) {
  return status.code() == StatusCode::kUnavailable &&
         status.message().rfind(kTimeoutPrefix, 0) == 0;
}

size_t Poller::AddSocket(zmq::socket_t& socket) {
  items_.push_back(zmq::pollitem_t{socket.handle(), 0, ZMQ_POLLIN, 0});
  return items_.size() - 1;
}

size_t Poller::AddFd(int fd) {
  items_.push_back(zmq::pollitem_t{nullptr, fd, ZMQ_POLLIN, 0});
  return items_.size() - 1;
}

StatusOr<int> Poller::Wait(std::optional<std::chrono::milliseconds> timeout) {
  for (zmq::pollitem_t& item : items_) item.revents = 0;
  try {
    return zmq::poll(items_.data(), items_.size(),
                     timeout.value_or(std::chrono::milliseconds(-1)));
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return 0;
    return FromZmq(e, "zmq poll");
  }
}

bool Poller::Readable(size_t index) const {
  return index < items_.size() && (items_[index].revents & ZMQ_POLLIN) != 0;
}

}  // namespace llmserve::common::ipc
