// The info routes and the OpenAI error format over a real server: /health,
// /version, /v1/models, the API key on /v1, and the HTTP layer's own errors
// (404, 405, 413) as OpenAI error JSON.
#include <gtest/gtest.h>

#include <atomic>

#include <nlohmann/json.hpp>

#include "frontend/http/http_server.h"
#include "frontend/openai/info_routes.h"
#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;
using testing::ClientResponse;
using testing::TestClient;

struct Fixture {
  std::atomic<bool> healthy{false};
  std::unique_ptr<http::HttpServer> server;

  explicit Fixture(std::string api_key = "") {
    InfoRoutesConfig config;
    config.served_model_names = {"tiny"};
    config.model_root = "/models/tiny";
    config.max_model_len = [] { return 256; };
    config.version = "0.1.0";
    config.api_key = std::move(api_key);
    config.created = 1700000000;
    config.healthy = [this] { return healthy.load(); };
    http::Router router;
    RegisterInfoRoutes(config, &router);
    http::HttpServerConfig server_config;
    server_config.max_request_body_bytes = 64;
    auto started = http::HttpServer::Start(server_config, std::move(router));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();
  }

  ClientResponse Get(const std::string& target, const std::string& headers = "") {
    TestClient client;
    EXPECT_TRUE(client.Connect(server->port()));
    EXPECT_TRUE(client.SendRequest("GET", target, "", headers));
    return client.ReadResponse();
  }
};

TEST(OpenAiRoutes, HealthFollowsTheEngines) {
  Fixture f;
  ClientResponse r = f.Get("/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(f.Get("/ping").status, 503);
  f.healthy = true;
  r = f.Get("/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(f.Get("/ping").status, 200);
}

TEST(OpenAiRoutes, VersionAndModels) {
  Fixture f;
  ClientResponse r = f.Get("/version");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"version": "0.1.0"})"));
  r = f.Get("/v1/models");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"object": "list", "data": [{"id": "tiny", "object": "model",
      "created": 1700000000, "owned_by": "llmserve", "root": "/models/tiny", "parent": null, "max_model_len": 256}]})"));
}

TEST(OpenAiRoutes, ApiKeyGuardsOnlyV1) {
  Fixture f("sekrit");
  ClientResponse r = f.Get("/v1/models");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], 401);
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "AuthenticationError");
  EXPECT_EQ(f.Get("/v1/models", "Authorization: Bearer nope\r\n").status, 401);
  EXPECT_EQ(f.Get("/v1/models", "Authorization: Bearer sekrit\r\n").status, 200);
  EXPECT_EQ(f.Get("/version").status, 200);  // not under /v1
}

TEST(OpenAiRoutes, HttpErrorsAreOpenAiJson) {
  Fixture f;
  ClientResponse r = f.Get("/v1/nothing");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"error": {"message": "Not Found", "type": "NotFoundError", "param": null, "code": 404}})"));
  TestClient client;
  ASSERT_TRUE(client.Connect(f.server->port()));
  ASSERT_TRUE(client.SendRequest("POST", "/version", "{}"));
  r = client.ReadResponse();
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "MethodNotAllowedError");
  ASSERT_TRUE(client.SendRequest("POST", "/v1/completions", std::string(100, ' ')));
  r = client.ReadResponse();
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"error": {"message": "Request body too large: the limit is 64 bytes",
      "type": "RequestTooLargeError", "param": null, "code": 413}})"));
}

}  // namespace
}  // namespace llmserve::frontend::openai
