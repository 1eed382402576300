// libFuzzer target over config.json parsing (worker/model_config.h): the
// input is the file's text. Asserts for an accepted config: heads split into
// KV groups, an even positive head_dim, experts per token within the
// experts, DeepSeek's latent dimensions positive; every layer answers
// IsMoeLayer; the model shards for tensor parallelism (1 and 2 ranks, with
// and without expert parallelism) or says why not; and routing one row of
// logits under the config's rule picks k distinct experts with finite
// weights (the checks the parser makes are the ones routing relies on).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/fuzz_require.h"
#include "worker/model_config.h"
#include "worker/model_loader.h"
#include "worker/moe_routing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace llmserve::worker;
  using llmserve::testing::FuzzRequire;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseModelConfig(text, "config.json");
  if (!parsed.ok()) {
    FuzzRequire(!parsed.status().message().empty(), "an error without a message");
    return 0;
  }
  const ModelConfig& c = *parsed;
  FuzzRequire(c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads == 0, "heads do not split into KV groups");
  FuzzRequire(c.head_dim > 0 && c.head_dim % 2 == 0, "head_dim not even and positive");
  if (c.has_mla()) {
    FuzzRequire(c.mla.qk_nope_head_dim > 0 && c.mla.v_head_dim > 0 && c.mla.qk_rope_head_dim == c.head_dim,
                "MLA dimensions");
  }
  const size_t layers = std::min<size_t>(c.num_layers, 4096);
  for (size_t l = 0; l < layers; ++l) (void)c.IsMoeLayer(l);
  for (size_t tp : {1, 2}) {
    for (bool ep : {false, true}) {
      auto dims = ComputeShardDims(c, 0, tp, ep, ExpertPlacement::kRoundRobin);
      FuzzRequire(dims.ok() || !dims.status().message().empty(), "a shard error without a message");
    }
  }
  if (!c.has_moe() || c.moe.num_experts > 4096) return 0;
  const MoeConfig& m = c.moe;
  FuzzRequire(m.num_experts_per_tok >= 1 && m.num_experts_per_tok <= m.num_experts, "k outside [1, experts]");
  std::vector<float> logits(m.num_experts), bias(m.num_experts);
  for (size_t e = 0; e < m.num_experts; ++e) {
    logits[e] = static_cast<float>((e * 7919) % 13) * 0.25f - 1.5f;
    bias[e] = static_cast<float>((e * 104729) % 5) * 0.01f;
  }
  std::vector<int32_t> experts(m.num_experts_per_tok);
  std::vector<float> weights(m.num_experts_per_tok);
  RouteTokens(logits.data(), 1, RoutingRuleOf(m, m.correction_bias ? bias.data() : nullptr), experts.data(),
              weights.data());
  const std::set<int32_t> distinct(experts.begin(), experts.end());
  FuzzRequire(distinct.size() == experts.size(), "an expert chosen twice");
  for (size_t j = 0; j < experts.size(); ++j) {
    FuzzRequire(experts[j] >= 0 && static_cast<size_t>(experts[j]) < m.num_experts, "an expert out of range");
    FuzzRequire(std::isfinite(weights[j]), "a weight not finite");
  }
  return 0;
}
