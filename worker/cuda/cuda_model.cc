#include "worker/cuda/cuda_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemv_bf16.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/prefill_attention.h"
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
  DropGraphs();
  if (staging_) cudaFreeHost(staging_);
  if (host_logits_) cudaFreeHost(host_logits_);
  if (host_sampled_) cudaFreeHost(host_sampled_);
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
  // A buffer that grows moves: graphs captured with its old address go.
  auto grow = [this](auto& array, size_t n) {
    if (n > array.size()) DropGraphs();
    return array.Reserve(n);
  };
  LLMSERVE_RETURN_IF_ERROR(grow(hidden_, t * h));
  LLMSERVE_RETURN_IF_ERROR(grow(normed_, std::max(t, logit_rows) * h));
  LLMSERVE_RETURN_IF_ERROR(grow(qkv_, t * qkv));
  LLMSERVE_RETURN_IF_ERROR(grow(attn_, t * q));
  LLMSERVE_RETURN_IF_ERROR(grow(gate_up_, t * 2 * ff));
  LLMSERVE_RETURN_IF_ERROR(grow(act_, t * ff));
  LLMSERVE_RETURN_IF_ERROR(grow(logits_, logit_rows * config_.vocab_size));
  return grow(attention_scratch_, attention_scratch);
}

Status CudaModel::UploadBatch(const ForwardBatch& b, const std::vector<kc::SamplingRow>& sample_rows) {
  // Requests with enough tokens take the tiled prefill attention; with none,
  // there is no token list (and a decode step's layout depends on its size
  // alone, as its CUDA graph needs).
  tiles_scratch_.clear();
  others_scratch_.clear();
  if (kc::PrefillAttentionSupports(config_.head_dim))
    kc::PlanPrefillTiles(b.query_start, &tiles_scratch_, &others_scratch_);
  if (tiles_scratch_.empty()) others_scratch_.clear();
  // Layout (int32 units): slot_mapping as int64 first (8-byte aligned), then
  // token ids, positions, token → request, block tables, logits indices,
  // prefill tiles, the per-token kernel's tokens, the rows to sample.
  static_assert(sizeof(kc::SamplingRow) % sizeof(int32_t) == 0);
  const size_t t = b.num_tokens(), row_ints = sizeof(kc::SamplingRow) / sizeof(int32_t);
  const size_t ints = 2 * t + 3 * t + b.block_tables.size() + b.logits_indices.size() + tiles_scratch_.size() +
                      others_scratch_.size() + sample_rows.size() * row_ints;
  if (ints > staging_ints_) {
    DropGraphs();
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
  for (size_t r = 0; r < b.num_requests(); ++r)
    p = std::fill_n(p, b.query_start[r + 1] - b.query_start[r], static_cast<int32_t>(r));
  p = std::copy(b.block_tables.begin(), b.block_tables.end(), p);
  p = std::copy(b.logits_indices.begin(), b.logits_indices.end(), p);
  p = std::copy(tiles_scratch_.begin(), tiles_scratch_.end(), p);
  p = std::copy(others_scratch_.begin(), others_scratch_.end(), p);
  if (!sample_rows.empty()) std::memcpy(p, sample_rows.data(), sample_rows.size() * sizeof(kc::SamplingRow));
  const int32_t* d = batch_meta_.data();
  slot_mapping_ = reinterpret_cast<const int64_t*>(d);
  token_ids_ = d + 2 * t;
  positions_ = token_ids_ + t;
  token_request_ = positions_ + t;
  block_tables_ = token_request_ + t;
  logits_indices_ = block_tables_ + b.block_tables.size();
  prefill_tiles_ = logits_indices_ + b.logits_indices.size();
  num_prefill_tiles_ = tiles_scratch_.size() / 3;
  token_list_ = tiles_scratch_.empty() ? nullptr : prefill_tiles_ + tiles_scratch_.size();
  token_list_size_ = others_scratch_.size();
  sample_rows_ =
      reinterpret_cast<const kc::SamplingRow*>(prefill_tiles_ + tiles_scratch_.size() + others_scratch_.size());
  return kc::CudaStatus(
      cudaMemcpyAsync(batch_meta_.data(), staging_, ints * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
      "batch upload");
}

Status CudaModel::Layer(size_t index, const ForwardBatch& b, size_t splits) {
  const CudaLayerWeights& w = weights_.layers[index];
  const size_t t = b.num_tokens(), h = config_.hidden_size, hd = config_.head_dim;
  const size_t nh = config_.num_heads, nkv = config_.num_kv_heads, ff = config_.intermediate_size;
  const size_t qkv_n = (nh + 2 * nkv) * hd;
  const float eps = static_cast<float>(config_.rms_norm_eps);

  LLMSERVE_RETURN_IF_ERROR(NormMatmul(nullptr, w.input_norm.data(), w.qkv.data(), qkv_.data(), t, qkv_n));
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
  a.prefill_tiles = num_prefill_tiles_ > 0 ? prefill_tiles_ : nullptr;
  a.num_prefill_tiles = num_prefill_tiles_;
  a.token_list = token_list_;
  a.token_list_size = token_list_size_;
  LLMSERVE_RETURN_IF_ERROR(kc::PagedAttention(a, stream_));
  // hidden += attn · oᵀ (+ o bias), then the MLP likewise.
  LLMSERVE_RETURN_IF_ERROR(
      ProjectIntoResidual(attn_.data(), w.o.data(), w.o_bias.empty() ? nullptr : w.o_bias.data(), t, nh * hd));
  if (fused_decode_ && kc::GemvRmsNormTakes(t, h)) {
    // Decode: norm, gate/up and SiLU-and-mul in one kernel.
    LLMSERVE_RETURN_IF_ERROR(kc::GemvRmsNormSiluMul(hidden_.data(), w.post_attention_norm.data(), eps,
                                                    w.gate_up.data(), act_.data(), t, ff, h, stream_));
  } else {
    LLMSERVE_RETURN_IF_ERROR(NormMatmul(nullptr, w.post_attention_norm.data(), w.gate_up.data(), gate_up_.data(), t,
                                        2 * ff));
    LLMSERVE_RETURN_IF_ERROR(kc::SiluMulToBf16(gate_up_.data(), t, ff, act_.data(), stream_));
  }
  return ProjectIntoResidual(act_.data(), w.down.data(), nullptr, t, ff);
}

Status CudaModel::ProjectIntoResidual(const Bf16* x, const Bf16* w, const float* bias, size_t rows, size_t k) {
  const size_t h = config_.hidden_size;
  const bool adds_residual = comm_ == nullptr || comm_->rank() == 0;
  LLMSERVE_RETURN_IF_ERROR(gemm_->Run(x, w, hidden_.data(), rows, h, k, adds_residual, stream_));
  if (bias && adds_residual) LLMSERVE_RETURN_IF_ERROR(kc::AddBias(hidden_.data(), bias, rows, h, stream_));
  return comm_ ? comm_->AllReduceSum(hidden_.data(), rows * h, stream_) : Status::Ok();
}

Status CudaModel::NormMatmul(const int32_t* row_index, const float* norm, const Bf16* w, float* out, size_t rows,
                             size_t n) {
  const size_t h = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  if (fused_decode_ && kc::GemvRmsNormTakes(rows, h))
    return kc::GemvRmsNorm(hidden_.data(), row_index, norm, eps, w, out, rows, n, h, false, stream_);
  LLMSERVE_RETURN_IF_ERROR(kc::RmsNormToBf16(hidden_.data(), row_index, norm, normed_.data(), rows, h, eps, stream_));
  return gemm_->Run(normed_.data(), w, out, rows, n, h, false, stream_);
}

Status CudaModel::Enqueue(const ForwardBatch& b, size_t splits) {
  const size_t t = b.num_tokens(), nl = b.logits_indices.size(), h = config_.hidden_size;
  LLMSERVE_RETURN_IF_ERROR(kc::EmbeddingToF32(weights_.embedding.data(), token_ids_, t, h, hidden_.data(), stream_));
  for (size_t l = 0; l < config_.num_layers; ++l) LLMSERVE_RETURN_IF_ERROR(Layer(l, b, splits));
  // Final norm and lm_head on the sampled rows only.
  return NormMatmul(logits_indices_, weights_.final_norm.data(), weights_.lm_head_data(), logits_.data(), nl,
                    config_.vocab_size);
}

void CudaModel::SetCudaGraphSizes(std::vector<size_t> sizes) {
  DropGraphs();
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (!sizes.empty() && sizes.front() == 0) sizes.erase(sizes.begin());
  graph_sizes_ = std::move(sizes);
}

void CudaModel::DropGraphs() {
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
  graphs_.clear();
}

bool CudaModel::PadForGraph(const ForwardBatch& b, ForwardBatch* padded) const {
  const size_t n = b.num_requests();
  if (graph_sizes_.empty() || n == 0 || n > graph_sizes_.back() || b.num_tokens() != n ||
      b.logits_indices.size() != n) {
    return false;
  }
  for (size_t r = 0; r < n; ++r) {
    if (b.query_start[r] != static_cast<int32_t>(r) || b.logits_indices[r] != static_cast<int32_t>(r)) return false;
  }
  const size_t size = *std::lower_bound(graph_sizes_.begin(), graph_sizes_.end(), n);
  size_t width = 16;
  while (width < b.block_table_stride) width *= 2;
  // Padding requests decode token 0 at position 0 over block 0 and write no K/V.
  padded->token_ids = b.token_ids;
  padded->token_ids.resize(size, 0);
  padded->positions = b.positions;
  padded->positions.resize(size, 0);
  padded->slot_mapping = b.slot_mapping;
  padded->slot_mapping.resize(size, -1);
  padded->context_lens = b.context_lens;
  padded->context_lens.resize(size, 1);
  padded->query_start.resize(size + 1);
  padded->logits_indices.resize(size);
  for (size_t r = 0; r <= size; ++r) padded->query_start[r] = static_cast<int32_t>(r);
  for (size_t r = 0; r < size; ++r) padded->logits_indices[r] = static_cast<int32_t>(r);
  padded->block_table_stride = width;
  padded->block_tables.assign(size * width, 0);
  for (size_t r = 0; r < n; ++r) {
    std::copy_n(b.block_tables.begin() + static_cast<std::ptrdiff_t>(r * b.block_table_stride), b.block_table_stride,
                padded->block_tables.begin() + static_cast<std::ptrdiff_t>(r * width));
  }
  return true;
}

Status CudaModel::ReplayGraph(const ForwardBatch& padded, const std::vector<kc::SamplingRow>& sample_rows) {
  const size_t size = padded.num_requests();
  // Splits fixed per graph for the longest context its table width holds:
  // each split's share of keys is computed in the kernel from the token's
  // real context.
  const size_t splits =
      kc::ChooseAttentionSplits(size, kc::AttentionBlocksPerToken(config_.num_heads, config_.num_kv_heads),
                                padded.block_table_stride * block_size_, num_sms_);
  LLMSERVE_RETURN_IF_ERROR(
      Reserve(size, size, kc::PagedAttentionScratchFloats(size, config_.num_heads, config_.head_dim, splits)));
  LLMSERVE_RETURN_IF_ERROR(UploadBatch(padded, sample_rows));
  const auto key = std::make_pair(size, padded.block_table_stride);
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    // One eager pass first: it picks the matmul algorithms outside the capture.
    LLMSERVE_RETURN_IF_ERROR(Enqueue(padded, splits));
    LLMSERVE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
    LLMSERVE_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    const Status captured = Enqueue(padded, splits);
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    if (!captured.ok() || ended != cudaSuccess) {
      if (graph) cudaGraphDestroy(graph);
      cudaGetLastError();
      return captured.ok() ? kc::CudaStatus(ended, "CUDA graph capture") : captured;
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    LLMSERVE_RETURN_IF_ERROR(kc::CudaStatus(instantiated, "cudaGraphInstantiate"));
    it = graphs_.emplace(key, exec).first;
  }
  return kc::CudaStatus(cudaGraphLaunch(it->second, stream_), "cudaGraphLaunch");
}

StatusOr<ForwardOutput> CudaModel::Forward(const ForwardBatch& b, const std::vector<DeviceSampling>& sampling) {
  if (k_cache_.empty()) return Status::Unavailable("the GPU KV cache is not allocated");
  LLMSERVE_RETURN_IF_ERROR(b.Validate(config_.vocab_size, num_blocks_, block_size_));
  const size_t t = b.num_tokens(), nl = b.logits_indices.size(), vocab = config_.vocab_size;
  if (!sampling.empty() && sampling.size() != nl)
    return Status::InvalidArgument("device sampling: " + std::to_string(sampling.size()) + " rows for " +
                                   std::to_string(nl) + " logits rows");
  std::vector<kc::SamplingRow> sample_rows;
  for (size_t i = 0; i < sampling.size(); ++i) {
    const DeviceSampling& d = sampling[i];
    if (d.on_device) {
      sample_rows.push_back(
          {static_cast<int32_t>(i), d.temperature, d.top_k, d.top_p, d.min_p, static_cast<float>(d.uniform)});
    }
  }
  LLMSERVE_RETURN_IF_ERROR(ReserveHost(nl * vocab, 2 * sample_rows.size()));
  ForwardOutput out;
  out.logits = host_logits_;
  if (t == 0) return out;
  int32_t max_pos = 0;
  for (int32_t p : b.positions) max_pos = std::max(max_pos, p);
  if (static_cast<size_t>(max_pos) >= config_.max_position_embeddings)
    return Status::InvalidArgument("position " + std::to_string(max_pos) + " is past the model's " +
                                   std::to_string(config_.max_position_embeddings) + " positions");
  ForwardBatch padded;
  if (PadForGraph(b, &padded)) {
    LLMSERVE_RETURN_IF_ERROR(ReplayGraph(padded, sample_rows));
  } else {
    const size_t splits =
        kc::ChooseAttentionSplits(t, kc::AttentionBlocksPerToken(config_.num_heads, config_.num_kv_heads),
                                  static_cast<size_t>(max_pos) + 1, num_sms_);
    LLMSERVE_RETURN_IF_ERROR(
        Reserve(t, nl, kc::PagedAttentionScratchFloats(t, config_.num_heads, config_.head_dim, splits)));
    LLMSERVE_RETURN_IF_ERROR(UploadBatch(b, sample_rows));
    LLMSERVE_RETURN_IF_ERROR(Enqueue(b, splits));
  }
  const size_t ns = sample_rows.size();
  if (ns > 0) {
    LLMSERVE_RETURN_IF_ERROR(sampled_.Reserve(2 * ns));
    LLMSERVE_RETURN_IF_ERROR(
        kc::SampleRows(logits_.data(), vocab, sample_rows_, ns, sampled_.data(), sampled_.data() + ns, stream_));
    LLMSERVE_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(host_sampled_, sampled_.data(), 2 * ns * sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
  }
  // The other rows' logits, back to back (rows of the batch come first;
  // padding rows follow and are never copied).
  size_t copied = 0;
  for (size_t i = 0, k = 0; i < nl;) {
    if (k < ns && static_cast<size_t>(sample_rows[k].logits_row) == i) {
      ++k;
      ++i;
      continue;
    }
    size_t run = 1;
    while (i + run < nl && !(k < ns && static_cast<size_t>(sample_rows[k].logits_row) == i + run)) ++run;
    LLMSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_logits_ + copied * vocab, logits_.data() + i * vocab,
                                                  run * vocab * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    copied += run;
    i += run;
  }
  LLMSERVE_RETURN_IF_ERROR(kc::CudaStatus(cudaStreamSynchronize(stream_), "forward pass"));
  if (ns > 0) {
    out.sampled.assign(nl, -1);
    for (size_t k = 0; k < ns; ++k) {
      out.sampled[static_cast<size_t>(sample_rows[k].logits_row)] = host_sampled_[k];
      out.device_nans += host_sampled_[ns + k];
    }
  }
  return out;
}

StatusOr<const float*> CudaModel::Forward(const ForwardBatch& b) {
  LLMSERVE_ASSIGN_OR_RETURN(ForwardOutput out, Forward(b, std::vector<DeviceSampling>{}));
  return out.logits;
}

Status CudaModel::ReserveHost(size_t logit_floats, size_t sampled_ints) {
  if (logit_floats > host_logits_floats_) {
    if (host_logits_) cudaFreeHost(host_logits_);
    host_logits_ = nullptr;
    host_logits_floats_ = 0;
    LLMSERVE_CUDA_RETURN_IF_ERROR(
        cudaMallocHost(reinterpret_cast<void**>(&host_logits_), logit_floats * sizeof(float)));
    host_logits_floats_ = logit_floats;
  }
  if (sampled_ints > host_sampled_ints_) {
    if (host_sampled_) cudaFreeHost(host_sampled_);
    host_sampled_ = nullptr;
    host_sampled_ints_ = 0;
    LLMSERVE_CUDA_RETURN_IF_ERROR(
        cudaMallocHost(reinterpret_cast<void**>(&host_sampled_), sampled_ints * sizeof(int32_t)));
    host_sampled_ints_ = sampled_ints;
  }
  return Status::Ok();
}

Status CudaModel::Forward(const ForwardBatch& b, std::vector<float>* logits) {
  LLMSERVE_ASSIGN_OR_RETURN(const float* data, Forward(b));
  logits->assign(data, data + b.logits_indices.size() * config_.vocab_size);
  return Status::Ok();
}

}  // namespace llmserve::worker::cuda
