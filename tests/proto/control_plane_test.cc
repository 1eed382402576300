// The protobuf control-plane messages round-trip and carry what the handshake,
// coordinator and admin paths need.
#include <gtest/gtest.h>

#include "proto/admin.pb.h"
#include "proto/coordinator.pb.h"
#include "proto/engine_config.pb.h"
#include "proto/handshake.pb.h"

namespace llmserve::proto {
namespace {

template <typename M>
M RoundTrip(const M& m) {
  M back;
  EXPECT_TRUE(back.ParseFromString(m.SerializeAsString()));
  EXPECT_EQ(back.SerializeAsString(), m.SerializeAsString());
  return back;
}

TEST(ControlPlane, HandshakeReplyCarriesAddressesAndConfig) {
  HandshakeMessage msg;
  auto* reply = msg.mutable_reply();
  reply->mutable_addresses()->add_inputs("tcp://10.0.0.1:5000");
  reply->mutable_addresses()->add_inputs("tcp://10.0.0.1:5001");
  reply->mutable_addresses()->add_outputs("tcp://10.0.0.1:6000");
  reply->mutable_addresses()->set_coordinator_input("tcp://10.0.0.1:7000");
  auto* config = reply->mutable_config();
  config->mutable_model()->set_model_dir("/models/qwen3");
  config->mutable_parallel()->set_data_parallel_size(4);
  config->mutable_parallel()->set_data_parallel_rank(2);
  config->mutable_cache()->set_block_size(16);
  config->mutable_scheduler()->set_policy(SchedulerConfig::PRIORITY);
  HandshakeMessage back = RoundTrip(msg);
  ASSERT_TRUE(back.has_reply());
  EXPECT_EQ(back.reply().addresses().inputs_size(), 2);
  EXPECT_EQ(back.reply().addresses().inputs(1), "tcp://10.0.0.1:5001");
  EXPECT_EQ(back.reply().config().parallel().data_parallel_rank(), 2u);
  EXPECT_EQ(back.reply().config().scheduler().policy(), SchedulerConfig::PRIORITY);
}

TEST(ControlPlane, HelloReadyAndReadyResponse) {
  HandshakeMessage hello;
  hello.mutable_hello()->set_data_parallel_rank(3);
  hello.mutable_hello()->set_headless(true);
  EXPECT_TRUE(RoundTrip(hello).hello().headless());
  ReadyResponse ready;
  ready.set_max_model_len(40960);
  ready.set_num_kv_blocks(123456789012ull);
  ready.mutable_cache()->set_block_size(32);  // what the engine runs with, for cache_config_info
  EXPECT_EQ(RoundTrip(ready).num_kv_blocks(), 123456789012ull);
  EXPECT_EQ(RoundTrip(ready).cache().block_size(), 32u);
  HandshakeMessage r;
  r.mutable_ready()->set_config_hash(0xdeadbeefcafeull);
  EXPECT_EQ(RoundTrip(r).ready().config_hash(), 0xdeadbeefcafeull);
}

TEST(ControlPlane, LoadSnapshotAndScale) {
  LoadSnapshot snap;
  for (uint32_t rank = 0; rank < 4; ++rank) {
    auto* e = snap.add_engines();
    e->set_data_parallel_rank(rank);
    e->set_num_waiting_tokens(1000 * rank);
    e->set_kv_cache_usage(0.1 * rank);
    e->set_alive(rank != 2);
  }
  snap.set_sequence(99);
  LoadSnapshot back = RoundTrip(snap);
  ASSERT_EQ(back.engines_size(), 4);
  EXPECT_EQ(back.engines(3).num_waiting_tokens(), 3000u);
  EXPECT_FALSE(back.engines(2).alive());
  ScaleRequest scale;
  scale.set_new_data_parallel_size(4);
  scale.set_drain_timeout_s(120);
  EXPECT_EQ(RoundTrip(scale).new_data_parallel_size(), 4u);
}

}  // namespace
}  // namespace llmserve::proto
