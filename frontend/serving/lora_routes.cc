#include "frontend/serving/lora_routes.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "frontend/openai/request_body.h"

namespace llmserve::frontend::serving {

namespace {

// A string field of `body` ("" when absent or null); an error when it is another type.
openai::MaybeError StringField(const nlohmann::json& body, const char* name, std::string* out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return openai::BadRequest(std::string(name) + ": Input should be a valid string", name);
  *out = it->get<std::string>();
  return std::nullopt;
}

void RespondWithAnswer(http::ResponseWriter& w, const RuntimeLoras::Answer& answer) {
  if (answer.error) return w.Respond(openai::ErrorResponse(*answer.error));
  w.Respond(http::HttpResponse::Make(200, "", answer.text));  // vLLM's plain Response: no content type
}

void HandleLoad(RuntimeLoras* loras, const http::HttpRequest& req, std::shared_ptr<http::ResponseWriter> w) {
  nlohmann::json body;
  std::string name, path;
  if (auto e = openai::ParseJsonObject(req.body, &body)) return w->Respond(openai::ErrorResponse(*e));
  if (auto e = StringField(body, "lora_name", &name)) return w->Respond(openai::ErrorResponse(*e));
  if (auto e = StringField(body, "lora_path", &path)) return w->Respond(openai::ErrorResponse(*e));
  loras->Post([loras, name, path, w] { RespondWithAnswer(*w, loras->Load(name, path)); });
}

void HandleUnload(RuntimeLoras* loras, const http::HttpRequest& req, std::shared_ptr<http::ResponseWriter> w) {
  nlohmann::json body;
  std::string name;
  if (auto e = openai::ParseJsonObject(req.body, &body)) return w->Respond(openai::ErrorResponse(*e));
  if (auto e = StringField(body, "lora_name", &name)) return w->Respond(openai::ErrorResponse(*e));
  if (auto it = body.find("lora_int_id"); it != body.end() && !it->is_null() && !it->is_number_integer())
    return w->Respond(
        openai::ErrorResponse(openai::BadRequest("lora_int_id: Input should be a valid integer", "lora_int_id")));
  loras->Post([loras, name, w] { RespondWithAnswer(*w, loras->Unload(name)); });
}

}  // namespace

bool RuntimeLoraUpdatingAllowed() {
  const char* v = std::getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING");
  if (v == nullptr) return false;
  std::string s(v);
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && space(s.back())) s.pop_back();
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), space));
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "1" || s == "true";
}

void RegisterLoraRoutes(RuntimeLoras* loras, http::Router* router) {
  router->Add("POST", "/v1/load_lora_adapter", [loras](http::HttpRequest req, std::shared_ptr<http::ResponseWriter> w) {
    HandleLoad(loras, req, std::move(w));
  });
  router->Add("POST", "/v1/unload_lora_adapter",
              [loras](http::HttpRequest req, std::shared_ptr<http::ResponseWriter> w) {
                HandleUnload(loras, req, std::move(w));
              });
}

}  // namespace llmserve::frontend::serving
