#include "frontend/http/cors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace llmserve::frontend::http {

namespace {

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

bool AllOrigins(const CorsPolicy& p) { return Contains(p.allowed_origins, "*"); }

bool OriginAllowed(const CorsPolicy& p, const std::string& origin) {
  return AllOrigins(p) || Contains(p.allowed_origins, origin);
}

// The methods a preflight may ask for.
std::vector<std::string> Methods(const CorsPolicy& p) {
  if (Contains(p.allowed_methods, "*")) return {"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"};
  return p.allowed_methods;
}

// Allowed request headers, lower-cased, with the CORS-safelisted ones.
std::set<std::string> HeaderSet(const CorsPolicy& p) {
  std::set<std::string> out = {"accept", "accept-language", "content-language", "content-type"};
  for (const std::string& h : p.allowed_headers) out.insert(Lower(h));
  return out;
}

// Allow-Origin (and Vary) for an allowed `origin`.
void AddAllowOrigin(const CorsPolicy& p, const std::string& origin, Headers* headers) {
  if (AllOrigins(p) && !p.allow_credentials) {
    headers->emplace_back("Access-Control-Allow-Origin", "*");
  } else {
    headers->emplace_back("Access-Control-Allow-Origin", origin);
    headers->emplace_back("Vary", "Origin");
  }
  if (p.allow_credentials) headers->emplace_back("Access-Control-Allow-Credentials", "true");
}

}  // namespace

std::optional<HttpResponse> CorsPreflight(const CorsPolicy& policy, const HttpRequest& request) {
  const std::string* origin = request.header("origin");
  const std::string* method = request.header("access-control-request-method");
  if (request.method != "OPTIONS" || origin == nullptr || method == nullptr) return std::nullopt;
  HttpResponse response = HttpResponse::Make(200, "text/plain; charset=utf-8", "OK");
  std::vector<std::string> failures;
  if (OriginAllowed(policy, *origin)) AddAllowOrigin(policy, *origin, &response.headers);
  else failures.push_back("origin");
  const std::vector<std::string> methods = Methods(policy);
  if (!Contains(methods, *method)) failures.push_back("method");
  response.headers.emplace_back("Access-Control-Allow-Methods", Join(methods));
  response.headers.emplace_back("Access-Control-Max-Age", "600");
  const std::string* asked = request.header("access-control-request-headers");
  if (Contains(policy.allowed_headers, "*")) {
    if (asked != nullptr && !asked->empty()) response.headers.emplace_back("Access-Control-Allow-Headers", *asked);
  } else {
    const std::set<std::string> allowed = HeaderSet(policy);
    response.headers.emplace_back("Access-Control-Allow-Headers",
                                  Join(std::vector<std::string>(allowed.begin(), allowed.end())));
    std::string list = asked ? *asked + "," : "";
    for (size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1) {
      const std::string header = Lower(Trim(list.substr(at, comma - at)));
      if (!header.empty() && !allowed.count(header)) {
        failures.push_back("headers");
        break;
      }
    }
  }
  if (!failures.empty()) {
    response.status = 400;
    response.body = "Disallowed CORS " + Join(failures);
  }
  return response;
}

Headers CorsResponseHeaders(const CorsPolicy& policy, const HttpRequest& request) {
  Headers headers;
  const std::string* origin = request.header("origin");
  if (origin != nullptr && OriginAllowed(policy, *origin)) AddAllowOrigin(policy, *origin, &headers);
  return headers;
}

StatusOr<std::vector<std::string>> ParseCorsList(const std::string& flag, const std::string& json_text) {
  const auto value = nlohmann::json::parse(json_text, nullptr, false);
  const bool strings = value.is_array() && std::all_of(value.begin(), value.end(),
                                                       [](const nlohmann::json& v) { return v.is_string(); });
  if (!strings) {
    return Status::InvalidArgument(flag + " must be a JSON list of strings such as '[\"*\"]', got '" + json_text +
                                   "'");
  }
  return value.get<std::vector<std::string>>();
}

}  // namespace llmserve::frontend::http
