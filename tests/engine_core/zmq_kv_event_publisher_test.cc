// The ZMQ publisher on loopback: frames [topic, 8-byte big-endian seq from 0,
// payload], the DP rank stamped on batches, and replay of a missed range
// (then the -1 end marker), bounded by buffer_steps.
#include "engine_core/zmq_kv_event_publisher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <variant>

#include "tests/engine_core/kv_event_subscriber.h"

namespace llmserve::engine_core {
namespace zmq_kv_event_publisher_test {

using namespace std::chrono_literals;

proto::KVEventsConfig Config(uint32_t buffer_steps) {
  proto::KVEventsConfig c;
  c.set_enable_kv_cache_events(true);
  c.set_publisher("zmq");
  c.set_endpoint("tcp://127.0.0.1:*");
  c.set_replay_endpoint("tcp://127.0.0.1:*");
  c.set_buffer_steps(buffer_steps);
  c.set_hwm(1000);
  c.set_max_queue_size(4);
  c.set_topic("kv@test");
  return c;
}

// A batch whose one BlockRemoved carries `id`, so batches can be told apart.
proto::KVEventBatch Batch(uint64_t id) { return proto::KVEventBatch{1.5, {proto::BlockRemoved{{id}}}, std::nullopt}; }

uint64_t IdOf(const std::string& payload) {
  auto b = proto::DecodeKVEventBatch(payload);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? std::get<proto::BlockRemoved>(b->events.at(0)).block_hashes.at(0) : ~uint64_t{0};
}

TEST(ZmqKVEventPublisher, StreamsSequencedBatchesAndReplaysAMissedRange) {
  auto pub = ZmqKVEventPublisher::Start(Config(/*buffer_steps=*/6), /*dp_rank=*/2);
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  kv_events_testing::KVEventSubscriber sub((*pub)->endpoint(), (*pub)->replay_endpoint(), "kv@test");

  // A SUB sees nothing until its subscription reaches the PUB: publish until
  // one arrives (the ones before are lost, as a late subscriber's are).
  std::optional<kv_events_testing::SeqPayload> first;
  uint64_t next_id = 0;
  for (int tries = 0; !first && tries < 200; ++tries) {
    (*pub)->Publish(Batch(next_id++));
    first = sub.Receive(50ms);
  }
  ASSERT_TRUE(first.has_value()) << "no batch reached the subscriber";
  EXPECT_EQ(IdOf(first->payload), static_cast<uint64_t>(first->seq)) << "seq counts batches from 0";
  auto batch = proto::DecodeKVEventBatch(first->payload);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->data_parallel_rank, std::optional<int32_t>(2));

  // The rest arrives in order with consecutive sequence numbers.
  for (int i = 0; i < 8; ++i) (*pub)->Publish(Batch(next_id++));
  int64_t expected = first->seq + 1;
  while (expected < static_cast<int64_t>(next_id)) {
    auto m = sub.Receive(5000ms);
    ASSERT_TRUE(m.has_value()) << "batch " << expected << " never arrived";
    EXPECT_EQ(m->seq, expected);
    EXPECT_EQ(IdOf(m->payload), static_cast<uint64_t>(m->seq));
    ++expected;
  }
  EXPECT_EQ(sub.malformed, 0);

  // Replay from a missed seq: every buffered batch from there, in order.
  const int64_t last = static_cast<int64_t>(next_id) - 1;
  auto replayed = sub.Replay(last - 2);
  ASSERT_EQ(replayed.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(replayed[i].seq, last - 2 + i);
    EXPECT_EQ(IdOf(replayed[i].payload), static_cast<uint64_t>(last - 2 + i));
  }
  // Only the last buffer_steps batches are kept.
  auto all = sub.Replay(0);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all.front().seq, last - 5);
  EXPECT_TRUE(sub.Replay(last + 1).empty()) << "nothing newer: just the end marker";
  EXPECT_EQ(sub.malformed, 0);
}

TEST(ZmqKVEventPublisher, WithoutReplayItStillStreamsAndStopsPromptly) {
  proto::KVEventsConfig c = Config(10);
  c.clear_replay_endpoint();
  auto pub = ZmqKVEventPublisher::Start(c, 0);
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ((*pub)->replay_endpoint(), "");
  kv_events_testing::KVEventSubscriber sub((*pub)->endpoint(), "", "kv@test");
  std::optional<kv_events_testing::SeqPayload> got;
  for (int tries = 0; !got && tries < 200; ++tries) {
    (*pub)->Publish(Batch(7));
    got = sub.Receive(50ms);
  }
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(IdOf(got->payload), 7u);
  // The stop marker wakes the thread: no waiting out its idle timeout.
  const auto start = std::chrono::steady_clock::now();
  pub->reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
}

TEST(ZmqKVEventPublisher, AnUnusableEndpointIsAnError) {
  proto::KVEventsConfig c = Config(10);
  c.set_endpoint("tcp://*:notaport");
  EXPECT_FALSE(ZmqKVEventPublisher::Start(c, 0).ok());
  c = Config(10);
  c.set_replay_endpoint("ipc:///tmp/kv-events-replay");
  EXPECT_FALSE(ZmqKVEventPublisher::Start(c, 1).ok()) << "ipc endpoints cannot be offset by DP rank";
}

}  // namespace zmq_kv_event_publisher_test
}  // namespace llmserve::engine_core
