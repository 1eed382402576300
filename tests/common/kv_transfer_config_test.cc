#include "common/kv_transfer/kv_transfer_config.h"

#include <gtest/gtest.h>

#include <regex>

namespace llmserve::common {
namespace kv_transfer_config_test {

TEST(KVTransferConfig, EmptyMeansNoConnector) {
  for (const char* json : {"", "{}", R"({"kv_connector": null})"}) {
    auto c = ParseKVTransferConfig(json);
    ASSERT_TRUE(c.ok()) << json << ": " << c.status().message();
    EXPECT_FALSE(c->enabled()) << json;
  }
}

TEST(KVTransferConfig, ReadsVllmKeysAndDefaults) {
  auto c = ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": "kv_consumer",
      "kv_connector_extra_config": {"shared_storage_path": "/data/kv"}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->enabled());
  EXPECT_EQ(c->kv_connector, "SharedStorageConnector");
  EXPECT_EQ(c->kv_role, KVRole::kConsumer);
  EXPECT_TRUE(c->is_consumer());
  EXPECT_FALSE(c->is_producer());
  EXPECT_EQ(*c->ExtraString("shared_storage_path", "/tmp"), "/data/kv");
  EXPECT_EQ(*c->ExtraString("absent", "fallback"), "fallback");
  // vLLM's defaults for the keys not given; engine_id is a fresh uuid4.
  EXPECT_EQ(c->kv_buffer_size, 1e9);
  EXPECT_EQ(c->kv_parallel_size, 1);
  EXPECT_EQ(c->kv_ip, "127.0.0.1");
  EXPECT_EQ(c->kv_port, 14579);
  EXPECT_FALSE(c->kv_rank.has_value());
  EXPECT_EQ(c->kv_load_failure_policy, KVLoadFailurePolicy::kRecompute);
  const std::regex uuid4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  EXPECT_TRUE(std::regex_match(c->engine_id, uuid4)) << c->engine_id;
  EXPECT_NE(ParseKVTransferConfig(R"({"kv_connector": "ExampleConnector", "kv_role": "kv_both"})")->engine_id,
            c->engine_id);
}

TEST(KVTransferConfig, RolesAndEveryKey) {
  auto c = ParseKVTransferConfig(R"({"kv_connector": "ExampleConnector", "kv_role": "kv_producer",
      "engine_id": "prefill-0", "kv_buffer_device": "cpu", "kv_buffer_size": 2e9, "kv_rank": 1,
      "kv_parallel_size": 2, "kv_ip": "10.0.0.2", "kv_port": 20000, "kv_connector_module_path": null,
      "kv_load_failure_policy": "fail", "enable_permute_local_kv": false})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->kv_role, KVRole::kProducer);
  EXPECT_TRUE(c->is_producer());
  EXPECT_FALSE(c->is_consumer());
  EXPECT_EQ(c->engine_id, "prefill-0");
  EXPECT_EQ(c->kv_buffer_device, "cpu");
  EXPECT_EQ(c->kv_buffer_size, 2e9);
  EXPECT_EQ(c->kv_rank, 1);
  EXPECT_EQ(c->kv_parallel_size, 2);
  EXPECT_EQ(c->kv_ip, "10.0.0.2");
  EXPECT_EQ(c->kv_port, 20000);
  EXPECT_EQ(c->kv_load_failure_policy, KVLoadFailurePolicy::kFail);
  auto both = ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": "kv_both"})");
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->is_producer() && both->is_consumer());
}

TEST(KVTransferConfig, NormalizedJsonReadsBackTheSame) {
  auto c = ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": "kv_consumer",
      "kv_rank": 3, "kv_connector_extra_config": {"shared_storage_path": "/s", "n": [1, 2]}})");
  ASSERT_TRUE(c.ok());
  const std::string json = KVTransferConfigToJson(*c);
  auto again = ParseKVTransferConfig(json);
  ASSERT_TRUE(again.ok()) << json << ": " << again.status().message();
  EXPECT_EQ(again->engine_id, c->engine_id);  // every process of a deployment gets the same id
  EXPECT_EQ(again->kv_role, KVRole::kConsumer);
  EXPECT_EQ(again->kv_rank, 3);
  EXPECT_EQ(again->kv_connector_extra_config, c->kv_connector_extra_config);
  EXPECT_EQ(KVTransferConfigToJson(*again), json);
  EXPECT_FALSE(ParseKVTransferConfig(KVTransferConfigToJson(KVTransferConfig{}))->enabled());
}

TEST(KVTransferConfig, ErrorsSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"kv_connector": "SharedStorageConnector"})", "kv_role is required"},
      {R"({"kv_connector": "SharedStorageConnector", "kv_role": "producer"})", "kv_producer, kv_consumer or kv_both"},
      {R"({"kv_role": "both"})", "kv_role must be"},
      {R"({"kv_connector": "NoSuchConnector", "kv_role": "kv_both"})", "unknown kv_connector \"NoSuchConnector\""},
      {R"({"kv_connector": "NixlConnector", "kv_role": "kv_both"})", "\"NixlConnector\" is not implemented yet"},
      {R"({"kv_connector": "P2pNcclConnector", "kv_role": "kv_both"})", "not implemented yet"},
      {R"({"kv_connector": "SharedStorageConnector", "kv_role": "kv_both", "kv_rol": 1})", "unknown key \"kv_rol\""},
      {R"({"kv_connector": 3})", "kv_connector must be a string"},
      {R"({"kv_port": 70000})", "kv_port"},
      {R"({"kv_parallel_size": 0})", "kv_parallel_size"},
      {R"({"kv_buffer_size": -1})", "kv_buffer_size"},
      {R"({"kv_buffer_device": "tpu"})", "kv_buffer_device"},
      {R"({"kv_connector_extra_config": [1]})", "kv_connector_extra_config"},
      {R"({"kv_connector_module_path": "my.module"})", "kv_connector_module_path"},
      {R"({"kv_load_failure_policy": "retry"})", "kv_load_failure_policy"},
      {R"({"enable_permute_local_kv": true})", "enable_permute_local_kv"},
      {R"([1])", "JSON object"},
      {R"({not json)", "JSON object"},
  };
  for (const auto& [json, want] : cases) {
    auto c = ParseKVTransferConfig(json);
    ASSERT_FALSE(c.ok()) << json;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << json;
    EXPECT_NE(c.status().message().find(want), std::string::npos) << json << ": " << c.status().message();
    EXPECT_NE(c.status().message().find("--kv-transfer-config"), std::string::npos) << c.status().message();
  }
  auto c = ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": "kv_both",
      "kv_connector_extra_config": {"shared_storage_path": 5}})");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->ExtraString("shared_storage_path", "/tmp").ok());
}

}  // namespace kv_transfer_config_test
}  // namespace llmserve::common
