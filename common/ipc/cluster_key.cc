#include "common/ipc/cluster_key.h"

#include <optional>

namespace llmserve::common::ipc {

namespace {

std::optional<CurveKeyPair>& InstalledKey() {
  static std::optional<CurveKeyPair> key;
  return key;
}

bool IsTcp(const std::string& endpoint) { return endpoint.rfind("tcp://", 0) == 0; }

}  // namespace

Status InstallClusterKey(const std::string& dir) {
  if (dir.empty()) {
    InstalledKey().reset();
    return Status::Ok();
  }
  auto key = ReadClusterKey(dir);
  if (!key.ok()) return key.status().WithContext("--cluster-key-dir");
  InstalledKey() = *key;
  return Status::Ok();
}

const CurveKeyPair* ClusterKey() { return InstalledKey() ? &*InstalledKey() : nullptr; }

Status SecureTcpSocket(zmq::socket_t& socket, const std::string& endpoint, SocketMode mode) {
  const CurveKeyPair* key = ClusterKey();
  if (key == nullptr || !IsTcp(endpoint)) return Status::Ok();
  return mode == SocketMode::kBind ? ApplyCurveServer(socket, *key) : ApplyCurveClient(socket, *key);
}

StatusOr<std::unique_ptr<ZapAuthenticator>> StartClusterAuthenticator(zmq::context_t& context) {
  if (ClusterKey() == nullptr) return std::unique_ptr<ZapAuthenticator>();
  return ZapAuthenticator::Start(context, *ClusterKey());
}

StatusOr<std::unique_ptr<ZapAuthenticator>> SecureProcess(const std::string& dir, zmq::context_t& context) {
  LLMSERVE_RETURN_IF_ERROR(InstallClusterKey(dir));
  return StartClusterAuthenticator(context);
}

StatusOr<std::unique_ptr<HandshakeFailureLog>> WatchRefusedPeers(zmq::context_t& context, zmq::socket_t& socket,
                                                                 const std::string& endpoint, std::string name) {
  if (ClusterKey() == nullptr || !IsTcp(endpoint)) return std::unique_ptr<HandshakeFailureLog>();
  return HandshakeFailureLog::Start(context, socket, std::move(name));
}

}  // namespace llmserve::common::ipc
