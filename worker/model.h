#pragma once
// A decoder-only transformer (Llama / Mistral / Qwen2 / Qwen3 family, the
// Qwen3-MoE / Mixtral mixtures of experts, DeepSeek V2 / V3 with multi-head
// latent attention) on CPU:
// the forward pass over one flattened batch on a paged KV cache.
//
// Numerics: activations fp32; matmuls through LinearWeight at the loaded
// MatmulPrecision; every non-matmul kernel reduces each row in a fixed order.
// Hence a request's logits are bitwise the same whatever else is in the
// batch, however its prompt was chunked, and whether its prefix came from the
// cache (given a deterministic Communicator for tp_size > 1).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/thread_pool.h"
#include "base/status_or.h"
#include "common/ipc/communicator.h"
#include "worker/forward_batch.h"
#include "worker/kv_cache.h"
#include "worker/lora_adapter.h"
#include "worker/lora_batch.h"
#include "worker/model_config.h"
#include "worker/model_loader.h"
#include "worker/model_weights.h"
#include "worker/moe_layer.h"

namespace llmserve::worker {

class KvLayerHooks;

class Model {
 public:
  // Loads DIR for options.tp_rank of options.tp_size. `comm` (not owned, may
  // be null for tp_size 1) must outlive the model; `pool` likewise.
  static StatusOr<std::unique_ptr<Model>> Load(const std::string& dir, const LoadOptions& options,
                                               common::ipc::Communicator* comm, kernels::cpu::ThreadPool* pool);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Runs the batch: writes every token's K/V into `cache`, and fills
  // logits [batch.logits_indices.size() × vocab_size] (full vocabulary).
  Status Forward(const ForwardBatch& batch, KvCache& cache, std::vector<float>* logits);
  // Runs the batch as Forward does, but fills `hidden` with the final-normed
  // hidden states of the batch.logits_indices rows [rows × hidden_size]
  // instead of logits (the pooling runner's input).
  Status ForwardHidden(const ForwardBatch& batch, KvCache& cache, std::vector<float>* hidden);

  // A KV connector's per-layer calls in Forward (null: none); `hooks` outlives their use.
  void set_kv_layer_hooks(KvLayerHooks* hooks) { kv_hooks_ = hooks; }

  // Reads the PEFT adapter in `dir` as `name` (LoadLoraAdapter's checks)
  // and returns its slot, which ForwardBatch::request_lora names. A name
  // already held is an error.
  StatusOr<int32_t> LoadLoraAdapter(const std::string& name, const std::string& dir, const LoraLimits& limits);
  // The slot of adapter `name`, or -1 when none is held under that name.
  int32_t LoraSlot(const std::string& name) const;
  // Frees adapter `name`'s slot (NotFound when not held). Batches must no
  // longer name it.
  Status RemoveLoraAdapter(const std::string& name);

  const ModelConfig& config() const { return config_; }
  const ShardDims& shard() const { return shard_; }
  const ModelWeights& weights() const { return weights_; }
  // The cache shape this shard needs for `num_blocks` blocks of `block_size`.
  KvCacheShape CacheShape(size_t num_blocks, size_t block_size,
                          kernels::cpu::KvDType dtype = kernels::cpu::KvDType::kF32) const;
  // Peak bytes of activation buffers used by any Forward so far.
  size_t peak_activation_bytes() const { return peak_activation_bytes_; }

 private:
  Model() = default;
  // Forward up to the final norm: final_ holds the logits_indices rows, normed.
  Status ForwardToFinalNorm(const ForwardBatch& batch, KvCache& cache);
  // One layer up to the o projection (in proj_). With `sampled_only`, the
  // rows past the K/V cache write are those of batch.logits_indices, in
  // that order (rows 0..n-1 of attn_ and proj_).
  void Layer(size_t index, const ForwardBatch& batch, KvCache& cache, bool sampled_only);
  Status ReduceAndAdd(std::vector<float>& partial, const std::vector<float>& bias, size_t tokens);
  // y = w · RMSNorm(hidden_; norm). Where w takes bf16 tiles, the norm writes
  // them itself (RmsNormTiled) instead of fp32 rows that Apply converts.
  // With `f32_rows` the fp32 normed rows are left in normed_ in either case
  // (the LoRA updates read them).
  void NormThenApply(const std::vector<float>& norm, const kernels::cpu::LinearWeight& w, size_t tokens, float* y,
                     bool f32_rows = false);
  // Checks batch.request_lora and groups the token rows by adapter.
  Status PrepareLora(const ForwardBatch& batch);
  bool lora_active() const { return !token_loras_.empty(); }
  // The attention rows of a layer: all of the batch's tokens, or with
  // `sampled_only` its sampled rows (their positions and requests gathered
  // into sampled_positions_ / sampled_requests_; the caller moves their
  // queries to the front).
  kernels::cpu::PagedAttentionBatch AttentionBatch(const ForwardBatch& batch, bool sampled_only);
  // Layer for DeepSeek's multi-head latent attention (model_mla.cc), the
  // same contract as Layer.
  void MlaLayer(size_t index, const ForwardBatch& batch, KvCache& cache, bool sampled_only);
  // Sizes MlaLayer's scratch for `tokens` rows; returns its bytes.
  size_t ReserveMla(size_t tokens);
  // proj_ = layer w's MLP (dense, or mixture of experts) of RMSNorm(hidden_) for `tokens` rows.
  void Mlp(const LayerWeights& w, size_t tokens);
  void Reserve(size_t tokens, size_t num_logits);
  // out[i] = row ids[i] of a GGUF embedding table, dequantized (n rows).
  void EmbedGgufRows(const common::gguf::GgufTensorInfo& table, const int32_t* ids, size_t n, float* out);

  ModelConfig config_;
  ShardDims shard_;
  ModelWeights weights_;
  kernels::cpu::RopeFrequencies rope_;
  std::unique_ptr<common::ipc::Communicator> own_comm_;
  common::ipc::Communicator* comm_ = nullptr;
  kernels::cpu::ThreadPool* pool_ = nullptr;

  // Activations, reused across calls.
  std::vector<float> hidden_, normed_, qkv_, attn_, proj_, gate_up_, act_, final_, local_logits_, gathered_;
  // bf16 tiles of the normed hidden rows and of the MLP activation, where
  // the matmuls take them (normed_ and act_ stay empty then).
  std::vector<uint16_t, kernels::cpu::AlignedAllocator<uint16_t>> norm_tiles_, act_tiles_;
  std::vector<int32_t> token_request_;
  std::vector<int32_t> sampled_positions_, sampled_requests_;  // the sampled rows' (sampled_only)
  kernels::cpu::RopeTable rope_table_;
  MoeLayer moe_;  // the MoE layers' scratch
  // MlaLayer's scratch: q_a rows normed; q per head (nope, rope); queries
  // absorbed into latent space; the attention's latent outputs; one head's
  // rows in and out of its W_UK / W_UV.
  std::vector<float> mla_qa_, mla_q_, mla_latent_q_, mla_latent_out_, mla_head_in_, mla_head_out_;
  // LoRA adapters by slot, their names, and this batch's rows grouped by
  // adapter: all tokens', the sampled rows' (past the last layer's K/V
  // write), and whichever of the two the current rows are.
  LoraSlots loras_;
  std::map<std::string, int32_t> lora_slot_by_name_;
  std::vector<int32_t> token_lora_slot_, sampled_lora_slot_;
  LoraBatch token_loras_, sampled_loras_;
  const LoraBatch* row_loras_ = &token_loras_;
  size_t layer_ = 0;  // the layer Layer and Mlp are running
  KvLayerHooks* kv_hooks_ = nullptr;
  size_t peak_activation_bytes_ = 0;
};

}  // namespace llmserve::worker
