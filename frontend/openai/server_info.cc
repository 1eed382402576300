#include "frontend/openai/server_info.h"

#include "frontend/http/request_id.h"

#include <random>

namespace llmserve::frontend::openai {
namespace {

// Compares without an early exit, so timing does not reveal a matching prefix.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

http::Filter ApiKeyFilter(std::string api_key) {
  return [api_key = std::move(api_key)](const http::HttpRequest& request) -> std::optional<http::HttpResponse> {
    if (api_key.empty()) return std::nullopt;
    const std::string* auth = request.header("authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (auth && auth->size() > kBearer.size() && auth->compare(0, kBearer.size(), kBearer) == 0 &&
        ConstantTimeEquals(std::string_view(*auth).substr(kBearer.size()), api_key)) {
      return std::nullopt;
    }
    http::HttpResponse response = ErrorResponse(MakeError(
        401, "Unauthorized: send the server's API key as 'Authorization: Bearer <key>'."));
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return response;
  };
}

MaybeError CheckModel(const std::optional<std::string>& model, const std::vector<std::string>& served_names) {
  if (!model) return std::nullopt;
  for (const auto& name : served_names) {
    if (name == *model) return std::nullopt;
  }
  return ModelNotFound(*model);
}

std::string ResolveRequestId(const http::HttpRequest& request, const std::optional<std::string>& body_id,
                             std::string_view prefix) {
  std::string id(prefix);
  if (const std::string* header = request.header("x-request-id"); header && !header->empty()) {
    id += *header;
  } else if (body_id && !body_id->empty()) {
    id += *body_id;
  } else {
    id += http::RandomHexId();
  }
  return id;
}

nlohmann::json ModelList(const std::vector<std::string>& served_names, const std::string& root,
                         int32_t max_model_len, int64_t created) {
  nlohmann::json data = nlohmann::json::array();
  for (const auto& name : served_names) {
    data.push_back({{"id", name},
                    {"object", "model"},
                    {"created", created},
                    {"owned_by", "llmserve"},
                    {"root", root},
                    {"parent", nullptr},
                    {"max_model_len", max_model_len}});
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

nlohmann::json VersionBody(const std::string& version) { return {{"version", version}}; }

}  // namespace llmserve::frontend::openai
