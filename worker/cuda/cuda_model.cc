#include "worker/cuda/cuda_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/transformer_ops.h"

namespace llmserve::worker::cuda {

namespace kc = kernels::cuda;

StatusOr<std::unique_ptr<CudaModel>> CudaModel::Create(const ModelConfig& config, CudaWeights weights,
                                                       size_t block_size) {
  if (block_size == 0) return Status::InvalidArgument("block_size must be positive");
  if (config.head_dim > kc::kMaxAttentionHeadDim || config.head_dim % 2 != 0)
    return Status::Unimplemented("the CUDA backend takes even head_dim up to " +
                                 std::to_string(kc::kMaxAttentionHeadDim) + ", the model has " +
                                 std::to_string(config.head_dim));
  std::unique_ptr<CudaModel> m(new CudaModel());
  m->config_ = config;
  m->weights_ = std::move(weights);
  m->block_size_ = block_size;
  int device = 0, sms = 0;
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  m->num_sms_ = static_cast<size_t>(sms);
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&m->stream_, cudaStreamNonBlocking));
  LLMSERVE_ASSIGN_OR_RETURN(m->gemm_, kc::Bf16Gemm::Create());
  // cos/sin of every position the model takes, computed once as the CPU path does.
  const auto freqs = kernels::cpu::ComputeRopeFrequencies(config.head_dim, config.rope_theta, config.rope_scaling);
  const size_t max_pos = std::max<size_t>(config.max_position_embeddings, 1);
  std::vector<int32_t> positions(max_pos);
  for (size_t i = 0; i < max_pos; ++i) positions[i] = static_cast<int32_t>(i);
  kernels::cpu::RopeTable table;
  kernels::cpu::BuildRopeTable(freqs, positions.data(), max_pos, &table);
  LLMSERVE_RETURN_IF_ERROR(m->rope_cos_.Resize(table.cos.size()));
  LLMSERVE_RETURN_IF_ERROR(m->rope_cos_.Upload(table.cos.data(), table.cos.size()));
  LLMSERVE_RETURN_IF_ERROR(m->rope_sin_.Resize(table.sin.size()));
  LLMSERVE_RETURN_IF_ERROR(m->rope_sin_.Upload(table.sin.data(), table.sin.size()));
  return m;
}

CudaModel::~CudaModel() {
  if (stream_) cudaStreamSynchronize(stream_);
  if (staging_) cudaFreeHost(staging_);
  if (stream_) cudaStreamDestroy(stream_);
}

size_t CudaModel::kv_bytes_per_block() const {
  return 2 * config_.num_layers * block_size_ * config_.num_kv_heads * config_.head_dim * sizeof(Bf16);
}

Status CudaModel::AllocateKvCache(size_t num_blocks) {
  FreeKvCache();
  const size_t per_layer = num_blocks * block_size_ * config_.num_kv_heads * config_.head_dim;
  k_cache_.resize(config_.num_layers);
  v_cache_.resize(config_.num_layers);
  for (size_t l = 0; l < config_.num_layers; ++l) {
    for (auto* pool : {&k_cache_[l], &v_cache_[l]}) {
      Status s = pool->Resize(per_layer);
      if (s.ok()) s = pool->Zero();
      if (!s.ok()) {
        FreeKvCache();
        return s;
      }
    }
  }
  num_blocks_ = num_blocks;
  // The zeroing ran on the legacy stream, which stream_ does not wait for.
  return kc::CudaStatus(cudaDeviceSynchronize(), "KV cache zeroing");
}

void CudaModel::FreeKvCache() {
  k_cache_.clear();
  v_cache_.clear();
  num_blocks_ = 0;
}

size_t CudaModel::activation_bytes() const {
  return hidden_.bytes() + qkv_.bytes() + gate_up_.bytes() + logits_.bytes() + attention_scratch_.bytes() +
         normed_.bytes() + attn_.bytes() + act_.bytes() + batch_meta_.bytes() + gemm_->workspace_bytes();
}

Status CudaModel::Reserve(size_t t, size_t logit_rows, size_t attention_scratch) {
  const size_t h = config_.hidden_size, hd = config_.head_dim;
  const size_t q = config_.num_heads * hd, qkv = (config_.num_heads + 2 * config_.num_kv_heads) * hd;
  const size_t ff = config_.intermediate_size;
  LLMSERVE_RETURN_IF_ERROR(hidden_.Reserve(t * h));
  LLMSERVE_RETURN_IF_ERROR(normed_.Reserve(std::max(t, logit_rows) * h));
  LLMSERVE_RETURN_IF_ERROR(qkv_.Reserve(t * qkv));
  LLMSERVE_RETURN_IF_ERROR(attn_.Reserve(t * q));
  LLMSERVE_RETURN_IF_ERROR(gate_up_.Reserve(t * 2 * ff));
  LLMSERVE_RETURN_IF_ERROR(act_.Reserve(t * ff));
  LLMSERVE_RETURN_IF_ERROR(logits_.Reserve(logit_rows * config_.vocab_size));
  return attention_scratch_.Reserve(attention_scratch);
}

Status CudaModel::UploadBatch(const ForwardBatch& b) {
  // Layout (int32 units): slot_mapping as int64 first (8-byte aligned), then
  // token ids, positions, token → request, block tables, logits indices.
  const size_t t = b.num_tokens();
  const size_t ints = 2 * t + 3 * t + b.block_tables.size() + b.logits_indices.size();
  if (ints > staging_ints_) {
    if (staging_) cudaFreeHost(staging_);
    staging_ = nullptr;
    staging_ints_ = std::max(ints, 2 * staging_ints_);
    LLMSERVE_CUDA_RETURN_IF_ERROR(cudaMallocHost(reinterpret_cast<void**>(&staging_), staging_ints_ * sizeof(int32_t)));
    LLMSERVE_RETURN_IF_ERROR(batch_meta_.Resize(staging_ints_));
  }
  int32_t* p = staging_;
  std::memcpy(p, b.slot_mapping.data(), t * sizeof(int64_t));
  p += 2 * t;
  p = std::copy(b.token_ids.begin(), b.token_ids.end(), p);
  p = std::copy(b.positions.begin(), b.positions.end(), p);
  for (size_t r = 0; r < b.num_requests(); ++r) p = std::fill_n(p, b.query_start[r + 1] - b.query_start[r], static_cast<int32_t>(r));
  p = std::copy(b.block_tables.begin(), b.block_tables.end(), p);
  p = std::copy(b.logits_indices.begin(), b.logits_indices.end(), p);
  const int32_t* d = batch_meta_.data();
  slot_mapping_ = reinterpret_cast<const int64_t*>(d);
  token_ids_ = d + 2 * t;
  positions_ = token_ids_ + t;
  token_request_ = positions_ + t;
  block_tables_ = token_request_ + t;
  logits_indices_ = block_tables_ + b.block_tables.size();
  return kc::CudaStatus(cudaMemcpyAsync(batch_meta_.data(), staging_, ints * sizeof(int32_t), cudaMemcpyHostToDevice,
                                        stream_),
                        "batch upload");
}

Status CudaModel::Layer(size_t index, const ForwardBatch& b, size_t splits) {
  const CudaLayerWeights& w = weights_.layers[index];
  const size_t t = b.num_tokens(), h = config_.hidden_size, hd = config_.head_dim;
  const size_t nh = config_.num_heads, nkv = config_.num_kv_heads, ff = config_.intermediate_size;
  const size_t qkv_n = (nh + 2 * nkv) * hd;
  const float eps = static_cast<float>(config_.rms_norm_eps);

  LLMSERVE_RETURN_IF_ERROR(kc::RmsNormToBf16(hidden_.data(), nullptr, w.input_norm.data(), normed_.data(), t, h, eps, stream_));
  LLMSERVE_RETURN_IF_ERROR(gemm_->Run(normed_.data(), w.qkv.data(), qkv_.data(), t, qkv_n, h, false, stream_));
  kc::QkvStepArgs q;
  q.qkv = qkv_.data();
  q.tokens = t;
  q.num_heads = nh;
  q.num_kv_heads = nkv;
  q.head_dim = hd;
  q.bias = w.qkv_bias.empty() ? nullptr : w.qkv_bias.data();
  q.q_norm = w.q_norm.empty() ? nullptr : w.q_norm.data();
  q.k_norm = w.k_norm.empty() ? nullptr : w.k_norm.data();
  q.eps = eps;
  q.rope_cos = rope_cos_.data();
  q.rope_sin = rope_sin_.data();
  q.positions = positions_;
  q.slot_mapping = slot_mapping_;
  q.k_cache = k_cache_[index].data();
  q.v_cache = v_cache_[index].data();
  q.block_size = block_size_;
  LLMSERVE_RETURN_IF_ERROR(kc::QkvStep(q, stream_));

  kc::PagedAttentionArgs a;
  a.q = qkv_.data();
  a.q_stride = qkv_n;
  a.k_cache = k_cache_[index].data();
  a.v_cache = v_cache_[index].data();
  a.positions = positions_;
  a.token_request = token_request_;
  a.block_tables = block_tables_;
  a.block_table_stride = b.block_table_stride;
  a.tokens = t;
  a.num_heads = nh;
  a.num_kv_heads = nkv;
  a.head_dim = hd;
  a.block_size = block_size_;
  a.sliding_window = config_.sliding_window;
  a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  a.out = attn_.data();
  a.out_stride = nh * hd;
  a.num_splits = splits;
  a.scratch = attention_scratch_.data();
  LLMSERVE_RETURN_IF_ERROR(kc::PagedAttention(a, stream_));
  // hidden += attn · oᵀ (+ o bias), then the MLP likewise.
  LLMSERVE_RETURN_IF_ERROR(gemm_->Run(attn_.data(), w.o.data(), hidden_.data(), t, h, nh * hd, true, stream_));
  if (!w.o_bias.empty()) LLMSERVE_RETURN_IF_ERROR(kc::AddBias(hidden_.data(), w.o_bias.data(), t, h, stream_));
  LLMSERVE_RETURN_IF_ERROR(
      kc::RmsNormToBf16(hidden_.data(), nullptr, w.post_attention_norm.data(), normed_.data(), t, h, eps, stream_));
  LLMSERVE_RETURN_IF_ERROR(gemm_->Run(normed_.data(), w.gate_up.data(), gate_up_.data(), t, 2 * ff, h, false, stream_));
  LLMSERVE_RETURN_IF_ERROR(kc::SiluMulToBf16(gate_up_.data(), t, ff, act_.data(), stream_));
  return gemm_->Run(act_.data(), w.down.data(), hidden_.data(), t, h, ff, true, stream_);
}

Status CudaModel::Forward(const ForwardBatch& b, std::vector<float>* logits) {
  if (k_cache_.empty()) return Status::Unavailable("the GPU KV cache is not allocated");
  LLMSERVE_RETURN_IF_ERROR(b.Validate(config_.vocab_size, num_blocks_, block_size_));
  const size_t t = b.num_tokens(), nl = b.logits_indices.size(), h = config_.hidden_size;
  logits->clear();
  if (t == 0) return Status::Ok();
  int32_t max_pos = 0;
  for (int32_t p : b.positions) max_pos = std::max(max_pos, p);
  if (static_cast<size_t>(max_pos) >= config_.max_position_embeddings)
    return Status::InvalidArgument("position " + std::to_string(max_pos) + " is past the model's " +
                                   std::to_string(config_.max_position_embeddings) + " positions");
  const size_t splits = kc::ChooseAttentionSplits(t, config_.num_heads, static_cast<size_t>(max_pos) + 1, num_sms_);
  LLMSERVE_RETURN_IF_ERROR(
      Reserve(t, nl, kc::PagedAttentionScratchFloats(t, config_.num_heads, config_.head_dim, splits)));
  LLMSERVE_RETURN_IF_ERROR(UploadBatch(b));
  LLMSERVE_RETURN_IF_ERROR(kc::EmbeddingToF32(weights_.embedding.data(), token_ids_, t, h, hidden_.data(), stream_));
  for (size_t l = 0; l < config_.num_layers; ++l) LLMSERVE_RETURN_IF_ERROR(Layer(l, b, splits));
  // Final norm and lm_head on the sampled rows only.
  LLMSERVE_RETURN_IF_ERROR(kc::RmsNormToBf16(hidden_.data(), logits_indices_, weights_.final_norm.data(), normed_.data(),
                                             nl, h, static_cast<float>(config_.rms_norm_eps), stream_));
  LLMSERVE_RETURN_IF_ERROR(
      gemm_->Run(normed_.data(), weights_.lm_head_data(), logits_.data(), nl, config_.vocab_size, h, false, stream_));
  logits->resize(nl * config_.vocab_size);
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(logits->data(), logits_.data(), logits->size() * sizeof(float),
                                                cudaMemcpyDeviceToHost, stream_));
  return kc::CudaStatus(cudaStreamSynchronize(stream_), "forward pass");
}

}  // namespace llmserve::worker::cuda
