// KV events end to end: an engine core running a tiny model with a small KV
// cache (so blocks are evicted) publishes on 127.0.0.1; a subscriber that only
// knows the wire protocol rebuilds the multiset of cached block hashes from
// the stream and checks it against the engine's own block pool after each
// phase. It drops one streamed batch on purpose and must recover it (and
// any a late subscription missed) by replay.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "engine_core/engine_core.h"
#include "engine_core/inproc_executor.h"
#include "engine_core/zmq_kv_event_publisher.h"
#include "tests/engine_core/kv_event_subscriber.h"
#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::engine_core {
namespace kv_events_engine_test {

using namespace std::chrono_literals;
using CachedHashes = std::map<uint64_t, int>;  // external hash -> cached blocks carrying it

constexpr int32_t kBlockSize = 4;
constexpr int32_t kNumBlocks = 24;  // 23 usable: a few requests fill it

// Counts the batches handed to the real publisher, so the test knows when
// the subscriber has seen everything.
class CountingPublisher final : public KVEventPublisher {
 public:
  CountingPublisher(std::unique_ptr<KVEventPublisher> inner, int64_t* count) : inner_(std::move(inner)), count_(count) {}
  void Publish(proto::KVEventBatch batch) override {
    ++*count_;
    inner_->Publish(std::move(batch));
  }

 private:
  std::unique_ptr<KVEventPublisher> inner_;
  int64_t* count_;
};

// The subscriber's side: applies batches strictly in sequence order.
struct Mirror {
  CachedHashes cached;
  int64_t next_seq = 0;
  int stored = 0, removed = 0, cleared = 0, replayed = 0;
  bool dropped_one = false;

  void Apply(const kv_events_testing::SeqPayload& m) {
    if (m.seq < next_seq) return;  // already applied (a replay overlapping the stream)
    ASSERT_EQ(m.seq, next_seq) << "a gap replay should have filled";
    auto batch = proto::DecodeKVEventBatch(m.payload);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_EQ(batch->data_parallel_rank, std::optional<int32_t>(0));
    for (const proto::KVCacheEvent& e : batch->events) {
      if (const auto* s = std::get_if<proto::BlockStored>(&e)) {
        ++stored;
        EXPECT_EQ(s->token_ids.size(), s->block_hashes.size() * kBlockSize);
        EXPECT_EQ(s->block_size, kBlockSize);
        if (s->parent_block_hash) {
          EXPECT_TRUE(cached.count(*s->parent_block_hash)) << "parent not cached";
        }
        for (uint64_t h : s->block_hashes) ++cached[h];
      } else if (const auto* r = std::get_if<proto::BlockRemoved>(&e)) {
        ++removed;
        for (uint64_t h : r->block_hashes) {
          auto it = cached.find(h);
          ASSERT_NE(it, cached.end()) << "removed a hash that was never stored";
          if (--it->second == 0) cached.erase(it);
        }
      } else {
        ++cleared;
        cached.clear();
      }
    }
    ++next_seq;
  }

  // Reads the stream until batch `count - 1` is applied, replaying gaps.
  void CatchUp(kv_events_testing::KVEventSubscriber& sub, int64_t count) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (next_seq < count && !::testing::Test::HasFatalFailure()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "stuck at seq " << next_seq << " of " << count;
      std::optional<kv_events_testing::SeqPayload> m = sub.Receive(100ms);
      if (m && !dropped_one && m->seq >= 1) {
        dropped_one = true;  // pretend the network lost it
        continue;
      }
      if (!m || m->seq > next_seq) {
        // A gap (or a quiet stream while batches are owed): ask for the rest.
        for (const kv_events_testing::SeqPayload& r : sub.Replay(next_seq)) {
          ++replayed;
          Apply(r);
        }
      }
      if (m) Apply(*m);
    }
  }
};

class KVEventsEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new worker::testing::ScratchDir();
    ASSERT_TRUE(worker::WriteTestModel(worker::testing::TinySpec("qwen3", 5), *dir_ / "m").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    worker::ModelRunnerConfig rc;
    rc.model_dir = *dir_ / "m";
    rc.block_size = kBlockSize;
    rc.num_threads = 1;
    rc.max_num_batched_tokens = 64;
    rc.max_num_seqs = 4;
    rc.process_seed = 1;
    rc.show_progress = false;
    auto runner = worker::ModelRunner::Create(rc);
    ASSERT_TRUE(runner.ok()) << runner.status().ToString();
    EngineCoreConfig ec;
    ec.scheduler.max_num_batched_tokens = 64;
    ec.scheduler.max_num_seqs = 4;
    ec.scheduler.max_model_len = 48;
    ec.kv.block_size = kBlockSize;
    ec.kv.num_blocks = kNumBlocks;
    ec.kv.enable_kv_cache_events = true;
    auto core = EngineCore::Create(ec, std::make_unique<InProcExecutor>(std::move(runner).value()));
    ASSERT_TRUE(core.ok()) << core.status().ToString();
    core_ = std::move(core).value();

    proto::KVEventsConfig kc;
    kc.set_enable_kv_cache_events(true);
    kc.set_publisher("zmq");
    kc.set_endpoint("tcp://127.0.0.1:*");
    kc.set_replay_endpoint("tcp://127.0.0.1:*");
    kc.set_buffer_steps(10000);
    kc.set_hwm(100000);
    kc.set_max_queue_size(1000);
    auto pub = ZmqKVEventPublisher::Start(kc, 0);
    ASSERT_TRUE(pub.ok()) << pub.status().ToString();
    sub_ = std::make_unique<kv_events_testing::KVEventSubscriber>((*pub)->endpoint(), (*pub)->replay_endpoint(), "");
    core_->SetKVEventPublisher(std::make_unique<CountingPublisher>(std::move(pub).value(), &published_));
  }

  // Runs requests (prompts sharing `prefix`) to completion.
  void Run(int32_t round, const std::vector<int32_t>& prefix, int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
      proto::EngineCoreRequest r;
      r.request_id = "r" + std::to_string(round) + "-" + std::to_string(i);
      r.prompt_token_ids = prefix;
      for (int32_t t = 0; t < 5 + 3 * i; ++t) r.prompt_token_ids.push_back(200 + 17 * round + 5 * i + t);
      r.sampling_params.temperature = 0.0;
      r.sampling_params.max_tokens = 6;
      ASSERT_TRUE(core_->AddRequest(std::move(r)).ok());
    }
    for (int step = 0; core_->HasRequests(); ++step) {
      ASSERT_LT(step, 500) << "requests stopped progressing";
      auto outs = core_->Step();
      ASSERT_TRUE(outs.ok()) << outs.status().ToString();
    }
  }

  // The engine's own view: its block pool's cached blocks, by external hash.
  CachedHashes EngineCached() const {
    const KVCacheManager& kv = core_->scheduler().kv_cache_manager();
    CachedHashes out;
    for (int32_t id = 1; id <= kv.pool().num_usable_blocks(); ++id) {
      const KVCacheBlock& b = kv.pool().block(id);
      if (b.has_hash) ++out[ExternalBlockHash(b.hash, kv.config().hash_algo)];
    }
    return out;
  }

  static worker::testing::ScratchDir* dir_;
  std::unique_ptr<EngineCore> core_;
  std::unique_ptr<kv_events_testing::KVEventSubscriber> sub_;
  int64_t published_ = 0;
};

worker::testing::ScratchDir* KVEventsEngineTest::dir_ = nullptr;

TEST_F(KVEventsEngineTest, SubscriberRebuildsTheCachedBlockHashes) {
  Mirror mirror;
  // Rounds with their own shared prefix: later rounds evict earlier ones' blocks.
  for (int32_t round = 0; round < 4; ++round) {
    std::vector<int32_t> prefix;
    for (int32_t t = 0; t < 8; ++t) prefix.push_back(10 + 30 * round + t);
    Run(round, prefix, 3);
    mirror.CatchUp(*sub_, published_);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(mirror.cached, EngineCached()) << "after round " << round;
  }
  EXPECT_GT(mirror.stored, 0);
  EXPECT_GT(mirror.removed, 0) << "the cache never evicted: make it smaller";
  EXPECT_TRUE(mirror.dropped_one);
  EXPECT_GT(mirror.replayed, 0) << "the dropped batch came back by replay";

  ASSERT_TRUE(core_->ResetPrefixCache());
  mirror.CatchUp(*sub_, published_);
  EXPECT_EQ(mirror.cleared, 1);
  EXPECT_TRUE(mirror.cached.empty());
  EXPECT_TRUE(EngineCached().empty());

  // A prefix from before the reset is computed and stored again.
  std::vector<int32_t> prefix;
  for (int32_t t = 0; t < 8; ++t) prefix.push_back(10 + t);
  Run(9, prefix, 2);
  mirror.CatchUp(*sub_, published_);
  EXPECT_FALSE(mirror.cached.empty());
  EXPECT_EQ(mirror.cached, EngineCached());
  EXPECT_EQ(sub_->malformed, 0);
}

}  // namespace kv_events_engine_test
}  // namespace llmserve::engine_core
