#include "frontend/serving/response_routes.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "frontend/openai/responses.h"

namespace llmserve::frontend::serving {

namespace {

constexpr const char* kInvalidRequestType = "invalid_request_error";

// The query's `stream` parameter read as FastAPI reads a bool (true, 1, yes, on).
bool StreamRequested(std::string_view query) {
  while (!query.empty()) {
    const size_t end = std::min(query.find('&'), query.size());
    std::string_view pair = query.substr(0, end);
    query.remove_prefix(std::min(end + 1, query.size()));
    if (pair.substr(0, 7) != "stream=") continue;
    std::string value(pair.substr(7));
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
    return value == "true" || value == "1" || value == "yes" || value == "on";
  }
  return false;
}

void RespondError(http::ResponseWriter& w, const openai::ApiError& e) { w.Respond(openai::ErrorResponse(e)); }

// GET /v1/responses/{response_id}. With ?stream=true vLLM replays the events of
// a background response; there are none here, so that is vLLM's error for an
// id without events.
void HandleRetrieve(const ResponseStore& store, const http::HttpRequest& req, http::ResponseWriter& w) {
  const std::string id = req.path_param("response_id");
  std::optional<nlohmann::json> response = store.GetResponse(id);
  if (!response) return RespondError(w, ResponseNotFound(id));
  if (StreamRequested(req.query))
    return RespondError(w, openai::BadRequest("Unknown response_id: " + id, "response_id"));
  w.Respond(http::HttpResponse::Make(200, "application/json", openai::Dump(*response)));
}

// POST /v1/responses/{response_id}/cancel: only a queued or in-progress
// (background) response can be cancelled; every stored one here has finished.
void HandleCancel(const ResponseStore& store, const http::HttpRequest& req, http::ResponseWriter& w) {
  const std::string id = req.path_param("response_id");
  if (!store.GetResponse(id)) return RespondError(w, ResponseNotFound(id));
  RespondError(w, openai::ApiError{400, "Cannot cancel a synchronous response.", kInvalidRequestType, "response_id"});
}

}  // namespace

openai::ApiError ResponseNotFound(const std::string& response_id) {
  return openai::ApiError{404, "Response with id '" + response_id + "' not found.", kInvalidRequestType, "response_id"};
}

void RegisterStoredResponseRoutes(const ResponseStore* store, http::Router* router) {
  router->Add("GET", "/v1/responses/{response_id}",
              [store](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleRetrieve(*store, r, *w); });
  router->Add("POST", "/v1/responses/{response_id}/cancel",
              [store](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleCancel(*store, r, *w); });
}

}  // namespace llmserve::frontend::serving
