// Randomized add / step / abort sequences under a KV cache small enough that
// preemption, chunking and prefix sharing happen constantly. Invariants are
// checked after every operation; after draining, every block is free with a
// zero reference count and every request is accounted for.

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine_core/scheduler.h"
#include "tests/engine_core/scheduler_test_util.h"

namespace llmserve::engine_core {
namespace {

struct PropertyParams {
  SchedulingPolicy policy;
  bool caching;
  HashAlgo algo;
  uint32_t seed;
};

class SchedulerPropertyTest : public ::testing::TestWithParam<PropertyParams> {};

constexpr int32_t kPropertyBlockSize = 4;
constexpr int32_t kNumBlocks = 14;  // 13 usable: one 48-token request needs 12
constexpr int32_t kEos = 3;

class Harness {
 public:
  explicit Harness(const PropertyParams& p) : rng_(p.seed) {
    SchedulerConfig c;
    c.max_num_batched_tokens = 24;
    c.max_num_seqs = 6;
    c.max_model_len = 48;
    c.policy = p.policy;
    c.long_prefill_token_threshold = p.seed % 2 == 0 ? 0 : 8;
    KVCacheConfig kc;
    kc.num_blocks = kNumBlocks;
    kc.block_size = kPropertyBlockSize;
    kc.max_model_len = c.max_model_len;
    kc.enable_prefix_caching = p.caching;
    kc.hash_algo = p.algo;
    auto s = Scheduler::Create(c, kc);
    EXPECT_TRUE(s.ok());
    s_ = std::move(s).value();
    for (int i = 0; i < 3; ++i) {
      std::vector<int32_t> prefix(static_cast<size_t>(Uniform(4, 16)));
      for (int32_t& t : prefix) t = Uniform(100, 200);
      prefixes_.push_back(prefix);
    }
  }

  int32_t Uniform(int32_t lo, int32_t hi) {  // inclusive
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng_);
  }

  void Add() {
    proto::EngineCoreRequest r;
    r.request_id = "q";
    r.request_id += std::to_string(next_id_++);
    if (Uniform(0, 2) > 0) r.prompt_token_ids = prefixes_[static_cast<size_t>(Uniform(0, 2))];
    const int32_t tail = Uniform(1, 40 - static_cast<int32_t>(r.prompt_token_ids.size()));
    for (int32_t i = 0; i < tail; ++i) r.prompt_token_ids.push_back(Uniform(0, 300));
    r.sampling_params.max_tokens = Uniform(1, 20);
    r.sampling_params.min_tokens = Uniform(0, 2) == 0 ? 1 : 0;
    r.sampling_params.ignore_eos = Uniform(0, 4) == 0;
    r.sampling_params.stop_token_ids = {5};
    r.sampling_params.all_stop_token_ids = {kEos, 5};
    r.priority = Uniform(0, 3);
    r.arrival_time = static_cast<double>(next_id_);
    r.client_index = Uniform(0, 1);
    if (Uniform(0, 3) == 0) r.cache_salt = "salt";
    const std::string id = r.request_id;
    const Status st = s_->AddRequest(std::move(r));
    ASSERT_TRUE(st.ok()) << st.ToString();
    live_.insert(id);
    all_.push_back(id);
  }

  void Abort() {
    if (all_.empty()) return;
    std::vector<std::string> ids = {all_[static_cast<size_t>(Uniform(0, static_cast<int32_t>(all_.size()) - 1))]};
    if (Uniform(0, 3) == 0) ids.push_back("never-added");
    s_->FinishRequests(ids, RequestStatus::kFinishedAborted);
    if (live_.erase(ids[0]) > 0) aborted_.insert(ids[0]);
  }

  void StepOnce(bool allow_mid_step_abort) {
    const proto::SchedulerOutput& so = s_->Schedule();
    int32_t sum = 0;
    for (const auto& [id, n] : so.num_scheduled_tokens) {
      ASSERT_GT(n, 0);
      ASSERT_TRUE(live_.count(id)) << id;
      sum += n;
    }
    ASSERT_EQ(sum, so.total_num_scheduled_tokens);
    ASSERT_LE(sum, s_->config().max_num_batched_tokens);
    ASSERT_LE(static_cast<int32_t>(so.num_scheduled_tokens.size()), s_->config().max_num_seqs);
    max_total_ = std::max(max_total_, sum);
    preempted_ += static_cast<int64_t>(so.preempted_req_ids.size());

    proto::ModelRunnerOutput mro =
        testing::ReplyFor(*s_, so, [this](const Request&) { return Uniform(0, 12); });
    if (allow_mid_step_abort && !so.num_scheduled_tokens.empty() && Uniform(0, 9) == 0) {
      Abort();  // lands between schedule and update
    }
    for (const ClientOutputs& c : s_->UpdateFromOutput(so, mro)) {
      for (const proto::EngineCoreOutput& o : c.outputs.outputs) {
        ASSERT_TRUE(live_.count(o.request_id)) << "output for a dead request " << o.request_id;
        ASSERT_FALSE(o.new_token_ids.empty());
        if (o.finish_reason) {
          live_.erase(o.request_id);
          finished_.insert(o.request_id);
        }
      }
    }
    CheckInvariants();
  }

  void CheckInvariants() {
    ASSERT_EQ(s_->num_running() + s_->num_waiting(), static_cast<int32_t>(live_.size()));
    std::vector<int32_t> holders(kNumBlocks, 0);
    for (const std::string& id : live_) {
      const Request* r = s_->FindRequest(id);
      ASSERT_NE(r, nullptr) << id;
      ASSERT_FALSE(r->is_finished());
      ASSERT_GE(static_cast<int64_t>(r->block_ids.size()) * kPropertyBlockSize, r->num_computed_tokens);
      ASSERT_LT(r->num_tokens(), s_->config().max_model_len + 1);
      std::set<int32_t> distinct(r->block_ids.begin(), r->block_ids.end());
      ASSERT_EQ(distinct.size(), r->block_ids.size()) << "a request holds a block twice";
      for (int32_t b : r->block_ids) ++holders[b];
    }
    const BlockPool& pool = s_->kv_cache_manager().pool();
    int32_t free = 0;
    for (int32_t b = 1; b < kNumBlocks; ++b) {
      ASSERT_EQ(pool.block(b).ref_cnt, holders[b]) << "block " << b;
      free += holders[b] == 0;
    }
    ASSERT_EQ(pool.num_free_blocks(), free);
  }

  void Drain() {
    for (int i = 0; i < 5000 && s_->HasRequests(); ++i) StepOnce(false);
    ASSERT_FALSE(s_->HasRequests());
  }

  std::mt19937 rng_;
  std::unique_ptr<Scheduler> s_;
  std::vector<std::vector<int32_t>> prefixes_;
  std::set<std::string> live_, finished_, aborted_;
  std::vector<std::string> all_;
  int next_id_ = 0;
  int32_t max_total_ = 0;
  int64_t preempted_ = 0;
};

TEST_P(SchedulerPropertyTest, RandomOperationsKeepInvariantsAndDrainClean) {
  Harness h(GetParam());
  for (int op = 0; op < 10000; ++op) {
    const int32_t dice = h.Uniform(0, 99);
    if (dice < 35) {
      if (h.s_->num_waiting() < 20) h.Add();
    } else if (dice < 92) {
      h.StepOnce(true);
    } else {
      h.Abort();
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  h.Drain();
  if (::testing::Test::HasFatalFailure()) return;

  // Nothing lost: every request either finished with an output or was aborted.
  EXPECT_EQ(h.finished_.size() + h.aborted_.size(), h.all_.size());
  for (const std::string& id : h.all_) {
    EXPECT_TRUE(h.finished_.count(id) + h.aborted_.count(id) == 1) << id;
  }
  const BlockPool& pool = h.s_->kv_cache_manager().pool();
  EXPECT_EQ(pool.num_free_blocks(), pool.num_usable_blocks());
  for (int32_t b = 1; b < kNumBlocks; ++b) EXPECT_EQ(pool.block(b).ref_cnt, 0) << b;
  EXPECT_DOUBLE_EQ(h.s_->kv_cache_manager().usage(), 0.0);
  EXPECT_TRUE(h.s_->ResetPrefixCache());
  // The run did exercise what it is meant to.
  EXPECT_GT(h.preempted_, 0);
  EXPECT_EQ(h.max_total_, 24);
  EXPECT_GT(h.finished_.size(), 100u);
  if (GetParam().caching) {
    EXPECT_GT(h.s_->kv_cache_manager().prefix_cache_stats().hits, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, SchedulerPropertyTest,
    ::testing::Values(PropertyParams{SchedulingPolicy::kFcfs, true, HashAlgo::kSha256, 1},
                      PropertyParams{SchedulingPolicy::kFcfs, true, HashAlgo::kXxHash, 2},
                      PropertyParams{SchedulingPolicy::kFcfs, false, HashAlgo::kSha256, 3},
                      PropertyParams{SchedulingPolicy::kPriority, true, HashAlgo::kSha256, 4},
                      PropertyParams{SchedulingPolicy::kPriority, true, HashAlgo::kXxHash, 5},
                      PropertyParams{SchedulingPolicy::kPriority, false, HashAlgo::kSha256, 6}));

}  // namespace
}  // namespace llmserve::engine_core
