// Megatron-style sharding: two ranks (threads here, with an in-process
// communicator) together produce the logits of the unsharded model.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <thread>

#include "tests/worker/worker_test_util.h"
#include "worker/quantized_export.h"
#include "worker/test_lora_adapter.h"

namespace llmserve::worker {
namespace {

// Ranks of one process exchanging through shared buffers; sums in rank order.
class InProcessGroup {
 public:
  explicit InProcessGroup(size_t size) : size_(size), slots_(size), barrier_(static_cast<std::ptrdiff_t>(size)) {}

  class Member final : public common::ipc::Communicator {
   public:
    Member(InProcessGroup* g, size_t rank) : g_(g), rank_(rank) {}
    int rank() const override { return static_cast<int>(rank_); }
    int world_size() const override { return static_cast<int>(g_->size_); }
    Status Barrier() override {
      g_->barrier_.arrive_and_wait();
      return Status::Ok();
    }
    Status AllReduceSum(float* data, size_t n) override {
      g_->slots_[rank_].assign(data, data + n);
      g_->barrier_.arrive_and_wait();
      for (size_t i = 0; i < n; ++i) {
        float s = 0;
        for (size_t r = 0; r < g_->size_; ++r) s += g_->slots_[r][i];
        data[i] = s;
      }
      g_->barrier_.arrive_and_wait();
      return Status::Ok();
    }
    Status AllGather(const float* in, size_t n, float* out) override {
      g_->slots_[rank_].assign(in, in + n);
      g_->barrier_.arrive_and_wait();
      for (size_t r = 0; r < g_->size_; ++r) std::copy_n(g_->slots_[r].data(), n, out + r * n);
      g_->barrier_.arrive_and_wait();
      return Status::Ok();
    }

   private:
    InProcessGroup* g_;
    size_t rank_;
  };

 private:
  size_t size_;
  std::vector<std::vector<float>> slots_;
  std::barrier<> barrier_;
};

// Two ranks of `spec` give the one-rank logits (within 1e-5); with `lora`,
// each also runs a LoRA adapter on all seven projections.
// With `expert_parallel`, the ranks hold whole experts (placed by `placement`).
void CheckTwoRanksMatchOneRank(const TestModelSpec& spec, bool lora = false, const std::string& quantization = "",
                               kernels::cpu::MatmulPrecision precision = kernels::cpu::MatmulPrecision::kF32,
                               size_t fp8_block = 0, bool expert_parallel = false,
                               ExpertPlacement placement = ExpertPlacement::kLinear) {
  testing::ScratchDir dir;
  if (fp8_block != 0) {  // the model as an FP8 checkpoint with blocks of fp8_block
    ASSERT_TRUE(WriteTestModel(spec, dir / "float").ok());
    ASSERT_TRUE(ExportFp8(dir / "float", fp8_block, dir / "m").ok());
  } else {
    ASSERT_TRUE(WriteTestModel(spec, dir / "m").ok());
  }
  if (lora) {
    ASSERT_TRUE(WriteTestLoraAdapter(TestLoraSpec(), dir / "m", dir / "ad").ok());
  }
  auto load_adapter = [&](Model& m) {
    if (!lora) return -1;
    auto slot = m.LoadLoraAdapter("ad", dir / "ad", LoraLimits());
    EXPECT_TRUE(slot.ok()) << slot.status().ToString();
    return slot.ok() ? *slot : -1;
  };
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};

  kernels::cpu::ThreadPool pool(1);
  LoadOptions o;
  o.show_progress = false;
  o.quantization = quantization;
  o.precision = precision;
  auto full = Model::Load(dir / "m", o, nullptr, &pool);
  ASSERT_TRUE(full.ok());
  KvCache cache((*full)->CacheShape(4, 4));
  const int32_t full_slot = load_adapter(**full);
  const auto want = testing::RunPrompt(**full, cache, tokens, {7, 1}, testing::Blocks(0, 3), full_slot);
  if (lora) {  // the adapter acts, so the comparison below could fail
    const auto base = testing::RunPrompt(**full, cache, tokens, {7, 1}, testing::Blocks(0, 3));
    EXPECT_GT(testing::MaxRelativeError(base, want), 1e-2);
  }

  InProcessGroup group(2);
  std::vector<std::vector<float>> got(2);
  std::vector<std::thread> ranks;
  for (size_t r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      InProcessGroup::Member comm(&group, r);
      kernels::cpu::ThreadPool p(1);
      LoadOptions lo = o;
      lo.tp_rank = r;
      lo.tp_size = 2;
      lo.expert_parallel = expert_parallel;
      lo.expert_placement = placement;
      auto m = Model::Load(dir / "m", lo, &comm, &p);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      EXPECT_EQ((*m)->shard().num_heads, 2u);
      if (expert_parallel) {  // whole experts, about half of them
        const auto& local = (*m)->shard().local_experts;
        const auto held = static_cast<size_t>(std::count(local.begin(), local.end(), true));
        EXPECT_EQ(held, (spec.num_experts + 1 - r) / 2);
        EXPECT_EQ((*m)->shard().moe_intermediate_size, spec.moe_intermediate_size);
      }
      KvCache c((*m)->CacheShape(4, 4));
      const int32_t slot = load_adapter(**m);
      got[r] = testing::RunPrompt(**m, c, tokens, {7, 1}, testing::Blocks(0, 3), slot);
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_TRUE(got[0] == got[1]);
  EXPECT_LE(testing::MaxRelativeError(got[0], want), 1e-5);
}

TEST(TensorParallel, TwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("qwen2", 31);  // qkv bias is sharded too
  spec.vocab_size = 509;                      // uneven vocab split
  spec.tie_word_embeddings = false;
  CheckTwoRanksMatchOneRank(spec);
}

// A LoRA adapter's B rows split with the column-parallel projections, its A
// columns with the row-parallel ones (their updates join the all-reduce).
TEST(TensorParallel, LoraTwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("qwen3", 33);
  CheckTwoRanksMatchOneRank(spec, /*lora=*/true);
}

// Each expert's intermediate dimension is split like the dense MLP's; the
// router is replicated.
TEST(TensorParallel, MoeTwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("qwen3_moe", 32);
  spec.num_layers = 3;
  spec.mlp_only_layers = {0};
  CheckTwoRanksMatchOneRank(spec);
}

// DeepSeek's heads (q_b_proj / kv_b_proj rows, o_proj columns) and its
// experts' widths, the shared expert's included, split across the ranks;
// the latent, its norm and the router are replicated.
TEST(TensorParallel, DeepseekTwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("deepseek_v3", 35);
  spec.num_layers = 3;
  spec.n_shared_experts = 2;
  spec.routed_scaling_factor = 2.5;
  CheckTwoRanksMatchOneRank(spec);
  spec.arch = "deepseek_v2";
  spec.q_lora_rank = 0;
  CheckTwoRanksMatchOneRank(spec);
}

// --enable-expert-parallel: each rank holds half the experts, whole (5 of 9
// and 4 of 9 when linear), and adds the chosen ones it holds; the shared
// expert stays split.
TEST(TensorParallel, ExpertParallelTwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("qwen3_moe", 36);
  spec.num_layers = 3;
  spec.num_experts = 9;
  spec.num_experts_per_tok = 3;
  spec.mlp_only_layers = {0};
  const auto f32 = kernels::cpu::MatmulPrecision::kF32;
  CheckTwoRanksMatchOneRank(spec, false, "", f32, 0, /*expert_parallel=*/true, ExpertPlacement::kLinear);
  CheckTwoRanksMatchOneRank(spec, false, "", f32, 0, /*expert_parallel=*/true, ExpertPlacement::kRoundRobin);
  auto deepseek = testing::TinySpec("deepseek_v3", 37);
  deepseek.num_layers = 3;
  deepseek.n_shared_experts = 2;
  CheckTwoRanksMatchOneRank(deepseek, false, "", f32, 0, /*expert_parallel=*/true, ExpertPlacement::kRoundRobin);
}

TEST(TensorParallel, ExpertPlacementMatchesVllm) {
  auto owners = [](size_t experts, size_t size, ExpertPlacement p) {
    std::vector<size_t> owner(experts, size);
    for (size_t r = 0; r < size; ++r) {
      const auto local = LocalExperts(experts, r, size, p);
      for (size_t e = 0; e < experts; ++e) {
        if (local[e]) {
          EXPECT_EQ(owner[e], size) << "expert " << e << " on two ranks";
          owner[e] = r;
        }
      }
    }
    return owner;
  };
  EXPECT_EQ(owners(10, 4, ExpertPlacement::kLinear), (std::vector<size_t>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(owners(10, 4, ExpertPlacement::kRoundRobin), (std::vector<size_t>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1}));
  EXPECT_TRUE(ParseExpertPlacement("round_robin").ok());
  EXPECT_FALSE(ParseExpertPlacement("random").ok());
}

// --quantization int8: a row's scale comes from the whole checkpoint row, so
// the shards of a row-parallel weight (o_proj, down_proj) quantize as the
// unsharded weight does; in the reference mode and on the int8 kernels.
TEST(TensorParallel, Int8TwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("qwen3", 33);
  CheckTwoRanksMatchOneRank(spec, /*lora=*/false, "int8");
  CheckTwoRanksMatchOneRank(spec, /*lora=*/false, "int8", kernels::cpu::MatmulPrecision::kBF16);
}

// FP8 weights are scaled whole, then sharded: a block of 32 that a shard
// boundary cuts through scales both halves alike.
TEST(TensorParallel, Fp8TwoRanksMatchOneRank) {
  auto spec = testing::TinySpec("qwen3", 34);
  CheckTwoRanksMatchOneRank(spec, /*lora=*/false, "", kernels::cpu::MatmulPrecision::kF32, /*fp8_block=*/48);
}

}  // namespace
}  // namespace llmserve::worker
