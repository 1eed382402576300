#include "frontend/http/request_id.h"

#include <cstdint>
#include <random>

namespace llmserve::frontend::http {

std::string RandomHexId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  uint64_t a = rng(), b = rng();
  for (int i = 0; i < 16; ++i) {
    id[i] = kHex[(a >> (4 * i)) & 0xF];
    id[16 + i] = kHex[(b >> (4 * i)) & 0xF];
  }
  return id;
}

std::string ResponseRequestId(const HttpRequest& request) {
  const std::string* given = request.header("x-request-id");
  return given != nullptr && !given->empty() ? *given : RandomHexId();
}

}  // namespace llmserve::frontend::http
