#include "deploy/kv_events_config.h"

#include <gtest/gtest.h>

namespace llmserve::deploy {
namespace kv_events_config_test {

TEST(KVEventsConfig, EmptyIsOffWithVllmDefaults) {
  proto::KVEventsConfig c;
  ASSERT_TRUE(ParseKVEventsConfig("", &c).ok());
  EXPECT_FALSE(c.enable_kv_cache_events());
  EXPECT_EQ(c.publisher(), "null");
  EXPECT_EQ(c.endpoint(), "tcp://*:5557");
  EXPECT_EQ(c.replay_endpoint(), "");
  EXPECT_EQ(c.buffer_steps(), 10000u);
  EXPECT_EQ(c.hwm(), 100000u);
  EXPECT_EQ(c.max_queue_size(), 100000u);
  EXPECT_EQ(c.topic(), "");
}

TEST(KVEventsConfig, ReadsEveryKey) {
  proto::KVEventsConfig c;
  ASSERT_TRUE(ParseKVEventsConfig(R"({"enable_kv_cache_events": true, "publisher": "zmq",
      "endpoint": "tcp://10.0.0.1:6000", "replay_endpoint": "tcp://*:6001", "buffer_steps": 5,
      "hwm": 7, "max_queue_size": 9, "topic": "kv"})", &c)
                  .ok());
  EXPECT_TRUE(c.enable_kv_cache_events());
  EXPECT_EQ(c.publisher(), "zmq");
  EXPECT_EQ(c.endpoint(), "tcp://10.0.0.1:6000");
  EXPECT_EQ(c.replay_endpoint(), "tcp://*:6001");
  EXPECT_EQ(c.buffer_steps(), 5u);
  EXPECT_EQ(c.hwm(), 7u);
  EXPECT_EQ(c.max_queue_size(), 9u);
  EXPECT_EQ(c.topic(), "kv");
}

TEST(KVEventsConfig, PublisherDefaultsToZmqWhenEnabledAndNullTurnsItOff) {
  proto::KVEventsConfig c;
  ASSERT_TRUE(ParseKVEventsConfig(R"({"enable_kv_cache_events": true})", &c).ok());
  EXPECT_EQ(c.publisher(), "zmq");
  ASSERT_TRUE(ParseKVEventsConfig(R"({"enable_kv_cache_events": true, "publisher": null})", &c).ok());
  EXPECT_EQ(c.publisher(), "null");
  ASSERT_TRUE(ParseKVEventsConfig(R"({"enable_kv_cache_events": true, "publisher": "null", "replay_endpoint": null})", &c).ok());
  EXPECT_EQ(c.publisher(), "null");
}

TEST(KVEventsConfig, ErrorsNameTheKey) {
  proto::KVEventsConfig c;
  const std::pair<const char*, const char*> cases[] = {
      {R"({"enable_kv_cache_events": true, "endpont": "tcp://*:1"})", "endpont"},
      {R"({"enable_kv_cache_events": "yes"})", "enable_kv_cache_events"},
      {R"({"publisher": "kafka"})", "publisher"},
      {R"({"publisher": 3})", "publisher"},
      {R"({"endpoint": null})", "endpoint"},
      {R"({"buffer_steps": -1})", "buffer_steps"},
      {R"({"hwm": 1.5})", "hwm"},
      {R"({"max_queue_size": 0})", "max_queue_size"},
      {R"({"topic": ["a"]})", "topic"},
      {R"({"enable_kv_cache_events": true, "endpoint": ""})", "endpoint"},
      {R"([1])", "JSON object"},
      {R"({not json)", "JSON object"},
  };
  for (const auto& [json, key] : cases) {
    Status s = ParseKVEventsConfig(json, &c);
    ASSERT_FALSE(s.ok()) << json;
    EXPECT_NE(s.message().find(key), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("--kv-events-config"), std::string::npos) << s.message();
  }
}

}  // namespace kv_events_config_test
}  // namespace llmserve::deploy
