// CORS as Starlette's CORSMiddleware answers it (vLLM's --allowed-* flags):
// preflights, the headers of other responses, and the flags' JSON lists.
#include "frontend/http/cors.h"

#include <gtest/gtest.h>

#include <map>

namespace llmserve::frontend::http {
namespace {

HttpRequest Request(std::string method, Headers headers) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = r.target = "/v1/completions";
  r.headers = std::move(headers);
  return r;
}

std::map<std::string, std::string> AsMap(const Headers& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers) out[name] = value;
  return out;
}

TEST(Cors, DefaultPolicyAllowsAnyOriginWithAStar) {
  const CorsPolicy any;
  auto preflight = CorsPreflight(any, Request("OPTIONS", {{"Origin", "https://app.example"},
                                                          {"Access-Control-Request-Method", "POST"},
                                                          {"Access-Control-Request-Headers", "authorization, x-y"}}));
  ASSERT_TRUE(preflight.has_value());
  EXPECT_EQ(preflight->status, 200);
  EXPECT_EQ(preflight->body, "OK");
  auto h = AsMap(preflight->headers);
  EXPECT_EQ(h["Access-Control-Allow-Origin"], "*");
  EXPECT_EQ(h["Access-Control-Allow-Methods"], "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
  EXPECT_EQ(h["Access-Control-Allow-Headers"], "authorization, x-y");  // "*" echoes what was asked
  EXPECT_EQ(h["Access-Control-Max-Age"], "600");
  EXPECT_EQ(h.count("Vary"), 0u);
  EXPECT_EQ(AsMap(CorsResponseHeaders(any, Request("POST", {{"Origin", "https://app.example"}})))
                ["Access-Control-Allow-Origin"],
            "*");
}

TEST(Cors, RequestsWithoutAnOriginAreLeftAlone) {
  const CorsPolicy any;
  EXPECT_FALSE(CorsPreflight(any, Request("OPTIONS", {{"Access-Control-Request-Method", "POST"}})).has_value());
  EXPECT_FALSE(CorsPreflight(any, Request("OPTIONS", {{"Origin", "https://a"}})).has_value());  // not a preflight
  EXPECT_TRUE(CorsResponseHeaders(any, Request("POST", {})).empty());
}

TEST(Cors, ListedOriginsAreEchoedOthersRefused) {
  CorsPolicy p;
  p.allowed_origins = {"https://ok.example"};
  p.allowed_methods = {"POST"};
  p.allowed_headers = {"Authorization"};
  p.allow_credentials = true;
  auto ok = CorsPreflight(p, Request("OPTIONS", {{"Origin", "https://ok.example"},
                                                 {"Access-Control-Request-Method", "POST"},
                                                 {"Access-Control-Request-Headers", "Authorization, Content-Type"}}));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);
  auto h = AsMap(ok->headers);
  EXPECT_EQ(h["Access-Control-Allow-Origin"], "https://ok.example");
  EXPECT_EQ(h["Vary"], "Origin");
  EXPECT_EQ(h["Access-Control-Allow-Credentials"], "true");
  EXPECT_EQ(h["Access-Control-Allow-Methods"], "POST");
  EXPECT_EQ(h["Access-Control-Allow-Headers"], "accept, accept-language, authorization, content-language, content-type");

  auto bad = CorsPreflight(p, Request("OPTIONS", {{"Origin", "https://evil.example"},
                                                  {"Access-Control-Request-Method", "DELETE"},
                                                  {"Access-Control-Request-Headers", "x-other"}}));
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->body, "Disallowed CORS origin, method, headers");
  EXPECT_EQ(AsMap(bad->headers).count("Access-Control-Allow-Origin"), 0u);
  EXPECT_TRUE(CorsResponseHeaders(p, Request("POST", {{"Origin", "https://evil.example"}})).empty());
  EXPECT_EQ(AsMap(CorsResponseHeaders(p, Request("POST", {{"Origin", "https://ok.example"}})))["Vary"], "Origin");
}

TEST(Cors, FlagsAreJsonListsOfStrings) {
  auto list = ParseCorsList("--allowed-origins", R"(["https://a", "https://b"])");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<std::string>{"https://a", "https://b"}));
  for (const char* bad : {"*", "[1]", "{\"a\": 1}", "[\"a\""}) {
    auto parsed = ParseCorsList("--allowed-origins", bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("--allowed-origins must be a JSON list"), std::string::npos);
  }
}

}  // namespace
}  // namespace llmserve::frontend::http
