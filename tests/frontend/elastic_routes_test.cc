// POST /scale_elastic_ep and /is_scaling_elastic_ep over a real HTTP server:
// body validation, the admin key (403 without one configured, 401 when wrong),
// 409 while a scale runs, and the launcher's answer (given here by a callback
// that answers from another thread once the test lets it) mapped to the HTTP
// status.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <semaphore>
#include <thread>

#include <nlohmann/json.hpp>

#include "frontend/http/http_server.h"
#include "frontend/openai/elastic_routes.h"
#include "frontend/openai/info_routes.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;
using testing::ClientResponse;
using testing::TestClient;

TEST(ElasticRoutes, ParseScaleRequestChecksEveryField) {
  proto::ScaleRequest r;
  ASSERT_FALSE(ParseScaleRequest(R"({"new_data_parallel_size": 4})", &r));
  EXPECT_EQ(r.new_data_parallel_size(), 4u);
  EXPECT_EQ(r.drain_timeout_s(), 120u) << "vLLM's default drain timeout";
  ASSERT_FALSE(ParseScaleRequest(R"({"new_data_parallel_size": 1, "drain_timeout": 5})", &r));
  EXPECT_EQ(r.new_data_parallel_size(), 1u);
  EXPECT_EQ(r.drain_timeout_s(), 5u);
  const std::pair<const char*, const char*> bad[] = {
      {"{}", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": 0})", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": -2})", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": 2.0})", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": "2"})", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": 99999999999})", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": 18446744073709551615})", "new_data_parallel_size"},
      {R"({"new_data_parallel_size": 2, "drain_timeout": 0})", "drain_timeout"},
      {R"({"new_data_parallel_size": 2, "drain_timeout": null})", "drain_timeout"},
      {R"({"new_data_parallel_size": 2, "drain": 3})", "drain"},
  };
  for (const auto& [body, param] : bad) {
    MaybeError e = ParseScaleRequest(body, &r);
    ASSERT_TRUE(e) << body;
    EXPECT_EQ(e->status, 400) << body;
    EXPECT_EQ(e->param.value_or(""), param) << body << ": " << e->message;
  }
  EXPECT_TRUE(ParseScaleRequest("[1]", &r));
  EXPECT_TRUE(ParseScaleRequest("nope", &r));
}

struct Fixture {
  std::atomic<int> calls{0};
  std::atomic<bool> in_flight{false};
  uint32_t answer_status = 200;
  std::counting_semaphore<> answers{0};  // one Answer() lets one launcher call answer
  std::vector<std::thread> answerers;
  std::unique_ptr<http::HttpServer> server;

  explicit Fixture(std::string admin_key) {
    ElasticRoutesConfig config;
    config.admin_api_key = std::move(admin_key);
    config.scale = [this](const proto::ScaleRequest& request, std::function<void(const proto::ScaleResponse&)> done) {
      if (in_flight.exchange(true)) return false;
      ++calls;
      answerers.emplace_back([this, request, done] {
        answers.acquire();
        proto::ScaleResponse response;
        response.set_http_status(answer_status);
        response.set_ok(answer_status == 200);
        response.set_message("Scaled to " + std::to_string(request.new_data_parallel_size()) +
                             " data parallel engines");
        in_flight = false;
        done(response);
      });
      return true;
    };
    config.is_scaling = [this] { return in_flight.load(); };
    http::Router router;
    RegisterInfoRoutes(InfoRoutesConfig{}, &router);
    RegisterElasticRoutes(config, &router);
    auto started = http::HttpServer::Start(http::HttpServerConfig{}, std::move(router));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    server = std::move(started).value();
  }
  ~Fixture() {
    answers.release(static_cast<std::ptrdiff_t>(answerers.size()));  // a failed test left some waiting
    for (auto& t : answerers) t.join();
  }

  // Lets the next (or the waiting) launcher call answer.
  void Answer() { answers.release(); }

  ClientResponse Send(const std::string& method, const std::string& target, const std::string& body,
                      const std::string& headers = "") {
    TestClient client;
    EXPECT_TRUE(client.Connect(server->port()));
    EXPECT_TRUE(client.SendRequest(method, target, body, headers));
    return client.ReadResponse();
  }
  bool Scaling(const std::string& method = "GET") {
    ClientResponse r = Send(method, "/is_scaling_elastic_ep", "");
    EXPECT_EQ(r.status, 200);
    return json::parse(r.body).at("is_scaling_elastic_ep").get<bool>();
  }
};

constexpr char kKey[] = "Authorization: Bearer admin-key\r\n";

TEST(ElasticRoutes, AdminKeyGuardsScaling) {
  Fixture without("");
  ClientResponse r = without.Send("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 2})", kKey);
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "PermissionDeniedError");
  EXPECT_NE(json::parse(r.body)["error"]["message"].get<std::string>().find("--admin-api-key"), std::string::npos);

  Fixture with("admin-key");
  EXPECT_EQ(with.Send("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 2})").status, 401);
  EXPECT_EQ(with.Send("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 2})",
                      "Authorization: Bearer wrong\r\n").status, 401);
  r = with.Send("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 0})", kKey);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["param"], "new_data_parallel_size");
  EXPECT_EQ(with.calls, 0) << "refused requests never reach the launcher";
  EXPECT_EQ(without.calls, 0);
}

TEST(ElasticRoutes, ScaleAnswersWhenTheLauncherDoesAndRefusesASecondOne) {
  Fixture f("admin-key");
  EXPECT_FALSE(f.Scaling("POST"));
  TestClient first;
  ASSERT_TRUE(first.Connect(f.server->port()));
  ASSERT_TRUE(first.SendRequest("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 4})", kKey));
  ASSERT_TRUE(test_util::WaitUntil([&] { return f.in_flight.load(); }, std::chrono::milliseconds(5000)));
  EXPECT_TRUE(f.Scaling());
  ClientResponse second = f.Send("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 3})", kKey);
  EXPECT_EQ(second.status, 409);
  EXPECT_EQ(json::parse(second.body)["error"]["type"], "ConflictError");
  EXPECT_EQ(f.Send("GET", "/health", "").status, 200) << "other endpoints keep answering while scaling";
  EXPECT_TRUE(f.Scaling()) << "still scaling until the launcher answers";
  f.Answer();
  ClientResponse r = first.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body), json({{"message", "Scaled to 4 data parallel engines"}}));
  EXPECT_FALSE(f.Scaling());
  f.answer_status = 408;
  f.Answer();
  r = f.Send("POST", "/scale_elastic_ep", R"({"new_data_parallel_size": 2, "drain_timeout": 1})", kKey);
  EXPECT_EQ(r.status, 408);
  EXPECT_EQ(f.calls, 2);
}

}  // namespace
}  // namespace llmserve::frontend::openai
