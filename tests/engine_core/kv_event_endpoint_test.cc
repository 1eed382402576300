#include "engine_core/kv_event_endpoint.h"

#include <gtest/gtest.h>

namespace llmserve::engine_core {
namespace kv_event_endpoint_test {

TEST(KVEventEndpoint, BindsWildcardsIpcAndInprocElseConnects) {
  EXPECT_TRUE(KVEventEndpointBinds("tcp://*:5557"));
  EXPECT_TRUE(KVEventEndpointBinds("tcp://[::]:5557"));
  EXPECT_TRUE(KVEventEndpointBinds("ipc:///tmp/kv"));
  EXPECT_TRUE(KVEventEndpointBinds("inproc://kv"));
  EXPECT_FALSE(KVEventEndpointBinds("tcp://127.0.0.1:5557"));
  EXPECT_FALSE(KVEventEndpointBinds("tcp://router.example:5557"));
}

TEST(KVEventEndpoint, DpRankOffsetsTheTcpPortOrSuffixesInproc) {
  EXPECT_EQ(*KVEventEndpointForRank("tcp://*:5557", 0), "tcp://*:5557");
  EXPECT_EQ(*KVEventEndpointForRank("tcp://*:5557", 3), "tcp://*:5560");
  EXPECT_EQ(*KVEventEndpointForRank("tcp://[::1]:5557", 1), "tcp://[::1]:5558");
  EXPECT_EQ(*KVEventEndpointForRank("tcp://127.0.0.1:*", 2), "tcp://127.0.0.1:*");
  EXPECT_EQ(*KVEventEndpointForRank("inproc://kv", 2), "inproc://kv_dp2");
  EXPECT_EQ(*KVEventEndpointForRank("", 2), "");
  EXPECT_FALSE(KVEventEndpointForRank("ipc:///tmp/kv", 1).ok());
  EXPECT_FALSE(KVEventEndpointForRank("tcp://*:65535", 1).ok());
  EXPECT_FALSE(KVEventEndpointForRank("tcp://host", 1).ok());
}

}  // namespace kv_event_endpoint_test
}  // namespace llmserve::engine_core
