#include "engine_core/kv_event_endpoint.h"

#include <charconv>

namespace llmserve::engine_core {

bool KVEventEndpointBinds(const std::string& endpoint) {
  return endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
         endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://");
}

StatusOr<std::string> KVEventEndpointForRank(const std::string& endpoint, int32_t rank) {
  if (endpoint.empty() || rank == 0) return endpoint;
  if (endpoint.find("inproc") != std::string::npos) return endpoint + "_dp" + std::to_string(rank);
  if (endpoint.find("tcp") == std::string::npos)
    return Status::InvalidArgument("KV events endpoint '" + endpoint +
                                   "' must be tcp:// or inproc:// with data parallelism");
  const size_t colon = endpoint.rfind(':');
  const std::string port_text = endpoint.substr(colon + 1);
  if (port_text == "*") return endpoint;
  int port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port + rank > 65535)
    return Status::InvalidArgument("KV events endpoint '" + endpoint + "' has no port to offset by DP rank " +
                                   std::to_string(rank));
  return endpoint.substr(0, colon + 1) + std::to_string(port + rank);
}

}  // namespace llmserve::engine_core
