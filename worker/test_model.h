#pragma once
// Generates complete Hugging Face model directories with seeded random
// weights and the real Qwen3 tokenizer: the fixtures of the worker's tests,
// `llmserve make-model`, and the demo model `llmserve serve` runs when no
// model is given.
//
// Weights: each tensor's values depend only on (seed, tensor name): matrices
// and biases ~ N(0, std²); norm weights = 1 + N(0, norm_jitter²).

#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::worker {

struct TestModelSpec {
  // qwen3 | llama | mistral | qwen2 | qwen3_moe | mixtral | deepseek_v2 | deepseek_v3
  std::string arch = "qwen3";
  size_t hidden_size = 64;
  size_t num_layers = 2;
  size_t num_heads = 4;
  size_t num_kv_heads = 2;
  size_t head_dim = 16;
  size_t intermediate_size = 128;   // mixtral: each expert's width
  // Mixture of experts (qwen3_moe, mixtral; ignored otherwise).
  size_t num_experts = 8;
  size_t num_experts_per_tok = 2;
  size_t moe_intermediate_size = 32;  // qwen3_moe's expert width
  bool norm_topk_prob = true;         // qwen3_moe (mixtral always renormalises)
  size_t decoder_sparse_step = 1;     // qwen3_moe
  std::vector<size_t> mlp_only_layers;  // qwen3_moe: dense layers
  // DeepSeek (deepseek_v2, deepseek_v3): multi-head latent attention and its
  // experts (num_experts routed, moe_intermediate_size wide; V2 chooses by
  // softmax, grouped by max when n_group > 1; V3 by sigmoid with a random
  // e_score_correction_bias, grouped by the top-2 sum).
  size_t q_lora_rank = 32;            // 0: q_proj straight from the hidden state
  size_t kv_lora_rank = 32;
  size_t qk_nope_head_dim = 16;
  size_t qk_rope_head_dim = 8;
  size_t v_head_dim = 16;
  size_t n_shared_experts = 1;
  size_t first_k_dense_replace = 1;
  size_t n_group = 4, topk_group = 2;
  double routed_scaling_factor = 1.0;
  size_t vocab_size = 151936;       // the Qwen3 tokenizer needs ≥ 151669
  size_t max_position_embeddings = 40960;
  double rope_theta = 1000000.0;
  std::string rope_scaling_json;    // config.json rope_scaling object, or empty for none
  size_t sliding_window = 0;        // mistral only; 0 writes null
  bool tie_word_embeddings = true;
  uint64_t seed = 0;
  double std = 0.02;                // weight standard deviation
  double norm_jitter = 0.0;         // norm weights 1 + N(0, jitter²)
  std::string dtype = "bf16";       // bf16 | f16 | f32
  size_t num_shards = 1;            // > 1 writes an index and shards
  // Not 0: each layer gets the fp8 KV cache scales self_attn.k_scale (this)
  // and self_attn.v_scale (twice this), f32 scalars.
  float kv_cache_scale = 0.f;
  std::string tokenizer_dir;        // holds tokenizer.json; empty: FindDemoTokenizerDir()
};

// The spec of a named preset for `arch`: "tiny" (hidden 64, 2 layers, 4
// heads, 2 KV heads, head_dim 16, intermediate 128, real vocab; MoE arches: 8
// experts, top 2, qwen3_moe experts 32 wide), "qwen3-0.6b" (hidden 1024, 28
// layers, 16 heads, 8 KV heads, head_dim 128, intermediate 3072, vocab
// 151936, tied), "qwen3-8b" (hidden 4096, 36 layers, 32 heads, 8 KV heads,
// head_dim 128, intermediate 12288, vocab 151936, untied) or, for qwen3_moe only, "qwen3-30b-a3b" (hidden 2048, 48
// layers, 32 heads, 4 KV heads, head_dim 128, 128 experts of width 768, top
// 8, vocab 151936, untied: about 1.2 GB of bf16 experts per layer, so take
// a slice of layers for benchmarks) or, for deepseek_v3 only, "deepseek-v3"
// (DeepSeek-V3's shapes: hidden 7168, 61 layers, 128 heads, q LoRA 1536, KV
// latent 512, rotary 64, 256 experts of width 2048, top 8 in 4 of 8 groups,
// one shared expert, 3 dense layers; the Qwen3 vocabulary).
StatusOr<TestModelSpec> TestModelPreset(const std::string& preset, const std::string& arch);

// The directory of the demo tokenizer (assets/demo-tokenizer: Qwen3's
// tokenizer.json and tokenizer_config.json): $LLMSERVE_TOKENIZER_DIR, else
// share/llmserve/demo-tokenizer in the first directory above the running
// executable that has it (<prefix>/share beside <prefix>/bin when installed,
// build/share in the build tree).
StatusOr<std::string> FindDemoTokenizerDir();

// Writes config.json, generation_config.json, the safetensors (unless
// !with_weights: a model for --load-format dummy) and the tokenizer files
// into `out_dir` (created if needed).
Status WriteTestModel(const TestModelSpec& spec, const std::string& out_dir, bool with_weights = true);

}  // namespace llmserve::worker
