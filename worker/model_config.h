#pragma once
// The parts of a Hugging Face config.json / generation_config.json the
// worker needs, validated.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/rope.h"
#include "base/status_or.h"
#include "worker/quantization_config.h"

namespace llmserve::worker {

// Decoder-only architectures the worker runs.
enum class Architecture { kLlama, kMistral, kQwen2, kQwen3, kQwen3Moe, kMixtral, kDeepseekV2, kDeepseekV3 };

// Hugging Face class name of an architecture, e.g. "Qwen3ForCausalLM".
const char* ArchitectureName(Architecture arch);

// How a router's logits become each token's experts and weights.
enum class MoeScoring { kSoftmax, kSigmoid };
// DeepSeek's grouped top-k: the experts fall into n_group equal groups, each
// scored by its best expert (kMax, V2's group_limited_greedy) or its best two
// summed (kTopTwoSum, V3's noaux_tc); only the topk_group best groups' experts
// may be chosen.
enum class MoeGroupScore { kNone, kMax, kTopTwoSum };

// The mixture-of-experts MLP of Qwen3-MoE, Mixtral and DeepSeek: each token's
// router logits pick its top num_experts_per_tok experts, whose SwiGLU MLPs
// run and are summed with the routing weights (plus DeepSeek's shared experts).
struct MoeConfig {
  size_t num_experts = 0;            // 0: every layer is dense
  size_t num_experts_per_tok = 0;    // k of the top-k
  size_t intermediate_size = 0;      // each expert's MLP width
  bool norm_topk_prob = false;       // rescale the k weights to sum to 1 (Mixtral always)
  size_t decoder_sparse_step = 1;    // Qwen3-MoE: layers l with (l + 1) % step == 0 are MoE ...
  std::vector<size_t> mlp_only_layers;  // ... unless listed here (dense, intermediate_size wide)
  // DeepSeek: layers l >= first_k_dense_replace with l % moe_layer_freq == 0 are MoE.
  size_t first_k_dense_replace = 0;
  size_t moe_layer_freq = 1;
  MoeScoring scoring = MoeScoring::kSoftmax;
  MoeGroupScore group_score = MoeGroupScore::kNone;
  size_t n_group = 1, topk_group = 1;
  bool correction_bias = false;       // V3: gate.e_score_correction_bias steers the choice, not the weights
  double routed_scaling_factor = 1.0;  // multiplies the chosen weights (after any renormalisation)
  size_t shared_intermediate_size = 0;  // n_shared_experts × moe_intermediate_size; 0: none
};

// DeepSeek's multi-head latent attention: K and V of every head come from a
// per-token latent of kv_lora_rank values (plus one shared rotary key of
// qk_rope_head_dim), which is all the KV cache holds.
// The widest rotary part of an MLA head (MlaLayer reorders it on the stack).
inline constexpr size_t kMaxMlaRopeDim = 512;

struct MlaConfig {
  size_t q_lora_rank = 0;        // 0: q_proj straight from the hidden state
  size_t kv_lora_rank = 0;       // 0: not MLA
  size_t qk_nope_head_dim = 0;
  size_t qk_rope_head_dim = 0;
  size_t v_head_dim = 0;
  bool rope_interleave = true;   // rotary pairs are adjacent dims (DeepSeek's checkpoints)
  size_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  // Values per token in the KV cache: the latent, then the rotary key.
  size_t latent_dim() const { return kv_lora_rank + qk_rope_head_dim; }
};

struct ModelConfig {
  Architecture architecture = Architecture::kLlama;
  size_t hidden_size = 0;
  size_t num_layers = 0;
  size_t num_heads = 0;
  size_t num_kv_heads = 0;
  size_t head_dim = 0;             // hidden/heads unless config.json says otherwise; MLA: qk_rope_head_dim
  size_t intermediate_size = 0;
  size_t vocab_size = 0;
  size_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  kernels::cpu::RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;           // Qwen2 always; Llama/Mistral with attention_bias
  bool o_bias = false;             // Llama/Mistral with attention_bias
  bool qk_norm = false;            // Qwen3: per-head RMSNorm on q and k
  size_t sliding_window = 0;       // Mistral (0 = none)
  std::string torch_dtype;         // as written in config.json ("gguf" for a GGUF file)
  Quantization quantization = Quantization::kNone;  // config.json's quantization_config (kGguf: a GGUF)
  Int4Layout int4;                                  // kGptq: how the 4-bit quants are grouped
  Fp8Layout fp8;                                    // kFp8: how the FP8 weights are scaled
  MoeConfig moe;
  MlaConfig mla;

  // Whether layer `layer`'s MLP is a mixture of experts (else the dense MLP).
  bool IsMoeLayer(size_t layer) const;
  bool has_moe() const { return moe.num_experts > 0; }
  bool has_mla() const { return mla.kv_lora_rank > 0; }
};

// Sampling defaults and stop tokens from generation_config.json.
struct GenerationConfig {
  std::vector<int32_t> eos_token_ids;
  int32_t bos_token_id = -1;
  double temperature = 1.0;
  double top_p = 1.0;
  int32_t top_k = 0;
  bool do_sample = false;
};

// Parses config.json text; errors name `source` (the file).
StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text, const std::string& source);
// Reads DIR/config.json, or a GGUF model (common/gguf/model_path.h).
StatusOr<ModelConfig> LoadModelConfig(const std::string& dir);
// Reads DIR/generation_config.json; a missing file gives the defaults (with
// eos from config.json when present).
StatusOr<GenerationConfig> LoadGenerationConfig(const std::string& dir);

}  // namespace llmserve::worker
