#include "worker/model.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

#include "common/ipc/single_rank_communicator.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/rms_norm.h"
#include "worker/batch_rows.h"
#include "worker/kv_connector/kv_connector_worker.h"

namespace llmserve::worker {

namespace cpu = kernels::cpu;

StatusOr<std::unique_ptr<Model>> Model::Load(const std::string& dir, const LoadOptions& options,
                                             common::ipc::Communicator* comm, cpu::ThreadPool* pool) {
  CHECK(pool != nullptr);
  std::unique_ptr<Model> m(new Model());
  LLMSERVE_ASSIGN_OR_RETURN(m->config_, LoadModelConfig(dir));
  if (comm == nullptr) {
    if (options.tp_size != 1) return Status::InvalidArgument("tp_size > 1 needs a Communicator");
    m->own_comm_ = std::make_unique<common::ipc::SingleRankCommunicator>();
    comm = m->own_comm_.get();
  } else if (static_cast<size_t>(comm->world_size()) != options.tp_size ||
             static_cast<size_t>(comm->rank()) != options.tp_rank) {
    return Status::InvalidArgument("the Communicator's rank/size differ from tp_rank/tp_size");
  }
  auto shard = ComputeShardDims(m->config_, options.tp_rank, options.tp_size, options.expert_parallel,
                                options.expert_placement);
  LLMSERVE_ASSIGN_OR_RETURN(m->shard_, std::move(shard));
  if (!m->shard_.local_experts.empty()) {
    const auto& local = m->shard_.local_experts;
    LOG(INFO) << "expert parallelism: rank " << options.tp_rank << " of " << options.tp_size << " holds "
              << std::count(local.begin(), local.end(), true) << " of " << local.size() << " experts in each layer";
  }
  LLMSERVE_ASSIGN_OR_RETURN(m->weights_, LoadModelWeights(dir, m->config_, options));
  m->rope_ = cpu::ComputeRopeFrequencies(m->config_.head_dim, m->config_.rope_theta, m->config_.rope_scaling);
  m->comm_ = comm;
  m->pool_ = pool;
  return m;
}

KvCacheShape Model::CacheShape(size_t num_blocks, size_t block_size, kernels::cpu::KvDType dtype) const {
  KvCacheShape s;
  s.dtype = dtype;
  s.num_layers = config_.num_layers;
  s.num_blocks = num_blocks;
  s.block_size = block_size;
  s.num_kv_heads = shard_.num_kv_heads;
  s.head_dim = config_.head_dim;
  if (config_.has_mla()) {  // every rank holds the whole latent of each token
    s.latent = true;
    s.num_kv_heads = 1;
    s.head_dim = config_.mla.latent_dim();
  }
  return s;
}

void Model::Reserve(size_t t, size_t num_logits) {
  const size_t h = config_.hidden_size, hd = config_.head_dim;
  // The first matmul's rows (q, k and v; MLA: q_a or q, then kv_a).
  const size_t qkv = weights_.layers.empty() ? 0 : weights_.layers.front().qkv.rows();
  const size_t head_out = config_.has_mla() ? config_.mla.v_head_dim : hd;
  hidden_.resize(t * h);
  qkv_.resize(t * qkv);
  attn_.resize(t * shard_.num_heads * head_out);
  proj_.resize(t * h);
  // Every layer's weights were packed alike, so the first layer's say for
  // all (the first dense one's MLP; an expert's where every layer is MoE).
  const LayerWeights* dense = nullptr;
  for (const auto& l : weights_.layers) {
    if (l.moe.empty()) {
      dense = &l;
      break;
    }
  }
  const bool tiled = !weights_.layers.empty() &&
                     (dense != nullptr ? dense->down : weights_.layers.front().moe.first_held().down)
                         .TakesTiledInput();
  if (dense != nullptr) gate_up_.resize(t * 2 * shard_.intermediate_size);
  if (tiled) {
    norm_tiles_.resize(weights_.layers.front().qkv.TiledInputElements(t));
    act_tiles_.resize(dense != nullptr ? dense->down.TiledInputElements(t) : 0);
  } else if (dense != nullptr) {
    act_.resize(t * shard_.intermediate_size);
  }
  // The MoE layers take fp32 normed rows (the router's and the gathered experts' input).
  if (!tiled || config_.has_moe()) normed_.resize(t * h);
  final_.resize(num_logits * h);
  local_logits_.resize(shard_.tp_size > 1 ? num_logits * shard_.vocab_per_rank : 0);
  gathered_.resize(shard_.tp_size > 1 ? num_logits * shard_.vocab_per_rank * shard_.tp_size : 0);
  size_t bytes = 0;
  for (const auto* v : {&hidden_, &normed_, &qkv_, &attn_, &proj_, &gate_up_, &act_, &final_, &local_logits_,
                        &gathered_}) {
    bytes += v->capacity() * sizeof(float);
  }
  bytes += (norm_tiles_.capacity() + act_tiles_.capacity()) * sizeof(uint16_t);
  if (config_.has_moe()) {
    bytes += moe_.Reserve(config_.moe, h, shard_.moe_intermediate_size, shard_.shared_intermediate_size, t);
  }
  if (config_.has_mla()) bytes += ReserveMla(t);
  // Attention scratch: per thread, scores for a GQA group over the longest context.
  const size_t group = config_.num_heads / config_.num_kv_heads;
  bytes += pool_->size() * group * (config_.max_position_embeddings + hd) * sizeof(float);
  peak_activation_bytes_ = std::max(peak_activation_bytes_, bytes);
}

Status Model::ReduceAndAdd(std::vector<float>& partial, const std::vector<float>& bias, size_t t) {
  const size_t h = config_.hidden_size;
  if (shard_.tp_size > 1) LLMSERVE_RETURN_IF_ERROR(comm_->AllReduceSum(partial.data(), t * h));
  pool_->ParallelFor(t * h, 4096, [&](size_t begin, size_t end, size_t) {
    if (bias.empty()) {
      for (size_t i = begin; i < end; ++i) hidden_[i] += partial[i];
    } else {
      for (size_t i = begin; i < end; ++i) hidden_[i] += partial[i] + bias[i % h];
    }
  });
  return Status::Ok();
}

void Model::NormThenApply(const std::vector<float>& norm, const cpu::LinearWeight& w, size_t t, float* y,
                          bool f32_rows) {
  const size_t h = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  if (w.TakesTiledInput()) {
    cpu::RmsNormTiled(hidden_.data(), h, norm.data(), t, h, eps, norm_tiles_.data(), *pool_);
    w.ApplyTiled(norm_tiles_.data(), t, y, *pool_);
    if (f32_rows) {
      if (normed_.size() < t * h) normed_.resize(t * h);
      cpu::RmsNorm(hidden_.data(), h, norm.data(), normed_.data(), h, t, h, eps, *pool_);
    }
  } else {
    cpu::RmsNorm(hidden_.data(), h, norm.data(), normed_.data(), h, t, h, eps, *pool_);
    w.Apply(normed_.data(), t, y, *pool_);
  }
}

void Model::Mlp(const LayerWeights& w, size_t t) {
  if (!w.moe.empty()) {
    const size_t h = config_.hidden_size;
    cpu::RmsNorm(hidden_.data(), h, w.post_attention_norm.data(), normed_.data(), h, t, h,
                 static_cast<float>(config_.rms_norm_eps), *pool_);
    moe_.Forward(w.moe, config_.moe, normed_.data(), t, h, proj_.data(), *pool_);
    return;
  }
  const bool lora = lora_active();
  const size_t h = config_.hidden_size, ff = shard_.intermediate_size;
  NormThenApply(w.post_attention_norm, w.gate_up, t, gate_up_.data(), lora);
  if (lora) {
    row_loras_->Apply(loras_, layer_, LoraTarget::kGate, normed_.data(), h, gate_up_.data(), 2 * ff, *pool_);
    row_loras_->Apply(loras_, layer_, LoraTarget::kUp, normed_.data(), h, gate_up_.data() + ff, 2 * ff, *pool_);
  }
  if (w.down.TakesTiledInput()) {
    cpu::SiluMulTiled(gate_up_.data(), t, ff, act_tiles_.data(), *pool_);
    w.down.ApplyTiled(act_tiles_.data(), t, proj_.data(), *pool_);
    if (lora) {  // the down update reads fp32 activations
      if (act_.size() < t * ff) act_.resize(t * ff);
      cpu::SiluMul(gate_up_.data(), t, ff, act_.data(), *pool_);
    }
  } else {
    cpu::SiluMul(gate_up_.data(), t, ff, act_.data(), *pool_);
    w.down.Apply(act_.data(), t, proj_.data(), *pool_);
  }
  if (lora) row_loras_->Apply(loras_, layer_, LoraTarget::kDown, act_.data(), ff, proj_.data(), h, *pool_);
}

kernels::cpu::PagedAttentionBatch Model::AttentionBatch(const ForwardBatch& b, bool sampled_only) {
  cpu::PagedAttentionBatch ab;
  ab.tokens = b.num_tokens();
  ab.positions = b.positions.data();
  ab.token_request = token_request_.data();
  ab.block_tables = b.block_tables.data();
  ab.block_table_stride = b.block_table_stride;
  if (!sampled_only) return ab;
  const size_t n = b.logits_indices.size();
  sampled_positions_.resize(n);
  sampled_requests_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    sampled_positions_[i] = b.positions[b.logits_indices[i]];
    sampled_requests_[i] = token_request_[b.logits_indices[i]];
  }
  ab.tokens = n;
  ab.positions = sampled_positions_.data();
  ab.token_request = sampled_requests_.data();
  return ab;
}

void Model::Layer(size_t index, const ForwardBatch& b, KvCache& cache, bool sampled_only) {
  if (config_.has_mla()) {
    MlaLayer(index, b, cache, sampled_only);
    return;
  }
  const LayerWeights& w = weights_.layers[index];
  const size_t t = b.num_tokens(), hd = config_.head_dim;
  const size_t nh = shard_.num_heads, nkv = shard_.num_kv_heads;
  const size_t qkv_stride = (nh + 2 * nkv) * hd;
  const float eps = static_cast<float>(config_.rms_norm_eps);

  layer_ = index;
  row_loras_ = &token_loras_;
  const bool lora = lora_active();
  NormThenApply(w.input_norm, w.qkv, t, qkv_.data(), lora);
  if (lora) {  // before the bias, norms and rotary embedding, as a merged weight would be
    const size_t h = config_.hidden_size;
    token_loras_.Apply(loras_, index, LoraTarget::kQ, normed_.data(), h, qkv_.data(), qkv_stride, *pool_);
    token_loras_.Apply(loras_, index, LoraTarget::kK, normed_.data(), h, qkv_.data() + nh * hd, qkv_stride, *pool_);
    token_loras_.Apply(loras_, index, LoraTarget::kV, normed_.data(), h, qkv_.data() + (nh + nkv) * hd, qkv_stride,
                       *pool_);
  }
  float* q = qkv_.data();
  cpu::PagedAttentionShape shape;
  shape.num_q_heads = nh;
  shape.num_kv_heads = nkv;
  shape.head_dim = hd;
  shape.block_size = cache.shape().block_size;
  shape.kv_dtype = cache.shape().dtype;
  shape.k_scale = w.k_scale;
  shape.v_scale = w.v_scale;
  shape.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  shape.sliding_window = config_.sliding_window;
  shape.bf16_products = w.qkv.precision() == cpu::MatmulPrecision::kBF16;
  // Token by token while its q, k and v sit in L1: bias, q/k norm, rotary
  // embedding, then K and V into the cache.
  pool_->ParallelFor(t, 4, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      float* row = qkv_.data() + i * qkv_stride;
      if (!w.qkv_bias.empty()) {
        for (size_t j = 0; j < qkv_stride; ++j) row[j] += w.qkv_bias[j];
      }
      if (config_.qk_norm) {
        cpu::RmsNormRows(row, hd, w.q_norm.data(), row, hd, nh, hd, eps);
        cpu::RmsNormRows(row + nh * hd, hd, w.k_norm.data(), row + nh * hd, hd, nkv, hd, eps);
      }
      cpu::ApplyRopeToken(row, nh + nkv, hd, rope_table_, i);
      cpu::WriteKvCacheToken(row + nh * hd, row + (nh + nkv) * hd, b.slot_mapping[i], shape, cache.keys(index),
                             cache.values(index));
    }
  });
  const cpu::PagedAttentionBatch ab = AttentionBatch(b, sampled_only);
  if (sampled_only) {  // the sampled rows' queries, moved to the front
    const size_t n = ab.tokens;
    MoveRowsToFront(qkv_.data(), qkv_stride, nh * hd, b.logits_indices);
    if (lora) {
      sampled_lora_slot_.resize(n);
      for (size_t i = 0; i < n; ++i) sampled_lora_slot_[i] = token_lora_slot_[b.logits_indices[i]];
      sampled_loras_.Group(sampled_lora_slot_.data(), n);
      row_loras_ = &sampled_loras_;
    }
  }
  cpu::PagedAttention(q, qkv_stride, ab, shape, cache.keys(index), cache.values(index), attn_.data(), nh * hd,
                      *pool_);
  w.o.Apply(attn_.data(), ab.tokens, proj_.data(), *pool_);
  if (lora) {
    row_loras_->Apply(loras_, index, LoraTarget::kO, attn_.data(), nh * hd, proj_.data(), config_.hidden_size,
                      *pool_);
  }
}

StatusOr<int32_t> Model::LoadLoraAdapter(const std::string& name, const std::string& dir,
                                         const LoraLimits& limits) {
  if (lora_slot_by_name_.count(name) != 0) {
    return Status::InvalidArgument("a LoRA adapter named '" + name + "' is already loaded");
  }
  if (config_.has_mla()) {
    return Status::Unimplemented(std::string("LoRA adapters on ") + ArchitectureName(config_.architecture) +
                                 " (multi-head latent attention) are not supported");
  }
  LLMSERVE_ASSIGN_OR_RETURN(auto adapter, worker::LoadLoraAdapter(name, dir, config_, shard_, limits));
  int32_t slot = 0;
  while (static_cast<size_t>(slot) < loras_.size() && loras_[slot] != nullptr) ++slot;
  if (static_cast<size_t>(slot) == loras_.size()) loras_.emplace_back();
  loras_[slot] = std::move(adapter);
  lora_slot_by_name_[name] = slot;
  return slot;
}

int32_t Model::LoraSlot(const std::string& name) const {
  auto it = lora_slot_by_name_.find(name);
  return it == lora_slot_by_name_.end() ? -1 : it->second;
}

Status Model::RemoveLoraAdapter(const std::string& name) {
  auto it = lora_slot_by_name_.find(name);
  if (it == lora_slot_by_name_.end()) return Status::NotFound("no LoRA adapter named '" + name + "' is loaded");
  loras_[it->second] = nullptr;
  lora_slot_by_name_.erase(it);
  return Status::Ok();
}

Status Model::PrepareLora(const ForwardBatch& b) {
  token_loras_.Group(nullptr, 0);
  if (b.request_lora.empty()) return Status::Ok();
  for (int32_t slot : b.request_lora) {
    if (slot >= 0 && (static_cast<size_t>(slot) >= loras_.size() || loras_[slot] == nullptr)) {
      return Status::InvalidArgument("batch: no LoRA adapter in slot " + std::to_string(slot));
    }
  }
  token_lora_slot_.resize(b.num_tokens());
  for (size_t i = 0; i < token_lora_slot_.size(); ++i) token_lora_slot_[i] = b.request_lora[token_request_[i]];
  token_loras_.Group(token_lora_slot_.data(), token_lora_slot_.size());
  return Status::Ok();
}

void Model::EmbedGgufRows(const common::gguf::GgufTensorInfo& table, const int32_t* ids, size_t n, float* out) {
  const size_t h = config_.hidden_size;
  pool_->ParallelFor(n, 16, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      CHECK_GE(ids[i], 0);
      CHECK_LT(static_cast<size_t>(ids[i]), config_.vocab_size);
      // The load dequantized a row of this table, so the type is one we read.
      CHECK(common::gguf::DequantizeRows(table, static_cast<uint64_t>(ids[i]), 1, out + i * h).ok());
    }
  });
}

Status Model::Forward(const ForwardBatch& b, KvCache& cache, std::vector<float>* logits) {
  LLMSERVE_RETURN_IF_ERROR(ForwardToFinalNorm(b, cache));
  const size_t nl = b.logits_indices.size();
  const size_t local = shard_.vocab_end - shard_.vocab_begin, vpr = shard_.vocab_per_rank, vocab = config_.vocab_size;
  logits->resize(nl * vocab);
  if (shard_.tp_size == 1) {
    weights_.lm_head.Apply(final_.data(), nl, logits->data(), *pool_);
    return Status::Ok();
  }
  // Vocab-parallel: each rank computes its rows, padded to vpr, then all_gather.
  std::vector<float> mine(nl * local);
  weights_.lm_head.Apply(final_.data(), nl, mine.data(), *pool_);
  std::fill(local_logits_.begin(), local_logits_.end(), 0.f);
  for (size_t i = 0; i < nl; ++i) std::copy_n(&mine[i * local], local, &local_logits_[i * vpr]);
  LLMSERVE_RETURN_IF_ERROR(comm_->AllGather(local_logits_.data(), nl * vpr, gathered_.data()));
  for (size_t r = 0; r < shard_.tp_size; ++r) {
    const size_t begin = std::min(vocab, r * vpr), end = std::min(vocab, begin + vpr);
    for (size_t i = 0; i < nl; ++i) {
      std::copy_n(&gathered_[(r * nl + i) * vpr], end - begin, logits->data() + i * vocab + begin);
    }
  }
  return Status::Ok();
}

Status Model::ForwardHidden(const ForwardBatch& b, KvCache& cache, std::vector<float>* hidden) {
  LLMSERVE_RETURN_IF_ERROR(ForwardToFinalNorm(b, cache));
  const size_t n = b.logits_indices.size() * config_.hidden_size;
  hidden->assign(final_.begin(), final_.begin() + static_cast<std::ptrdiff_t>(n));
  return Status::Ok();
}

Status Model::ForwardToFinalNorm(const ForwardBatch& b, KvCache& cache) {
  const auto& cs = cache.shape();
  const KvCacheShape expected = CacheShape(cs.num_blocks, cs.block_size, cs.dtype);
  if (cs.num_layers != expected.num_layers || cs.num_kv_heads != expected.num_kv_heads ||
      cs.head_dim != expected.head_dim || cs.latent != expected.latent) {
    return Status::InvalidArgument("KV cache shape does not match the model");
  }
  if (config_.has_mla() && cs.dtype != cpu::KvDType::kF32 && cs.dtype != cpu::KvDType::kBF16) {
    return Status::Unimplemented(std::string(ArchitectureName(config_.architecture)) +
                                 ": an fp8 KV cache is not supported with multi-head latent attention yet "
                                 "(use --kv-cache-dtype auto or bfloat16)");
  }
  LLMSERVE_RETURN_IF_ERROR(b.Validate(config_.vocab_size, cs.num_blocks, cs.block_size));
  const size_t t = b.num_tokens(), h = config_.hidden_size, nl = b.logits_indices.size();
  const float eps = static_cast<float>(config_.rms_norm_eps);
  Reserve(t, nl);
  token_request_.resize(t);
  for (size_t r = 0; r < b.num_requests(); ++r) {
    for (int32_t i = b.query_start[r]; i < b.query_start[r + 1]; ++i) token_request_[i] = static_cast<int32_t>(r);
  }
  LLMSERVE_RETURN_IF_ERROR(PrepareLora(b));
  cpu::BuildRopeTable(rope_, b.positions.data(), t, &rope_table_);
  if (weights_.gguf_embedding != nullptr) {
    EmbedGgufRows(*weights_.gguf_embedding, b.token_ids.data(), t, hidden_.data());
  } else {
    cpu::EmbeddingLookup(weights_.embedding.data, weights_.embedding.dtype, config_.vocab_size, h,
                         b.token_ids.data(), t, hidden_.data(), *pool_);
  }
  static const std::vector<float> kNoBias;
  // Past the last layer's K/V cache write only the sampled rows feed
  // anything (a prefill chunk samples one row of many): the rest of that
  // layer runs on those rows alone. Every kernel computes a row the same
  // whatever the other rows, so their bits do not change.
  const bool last_sampled_only = nl < t && StrictlyIncreasing(b.logits_indices);
  size_t rows = t;
  for (size_t l = 0; l < config_.num_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];
    const bool sampled_only = last_sampled_only && l + 1 == config_.num_layers;
    if (kv_hooks_ != nullptr) kv_hooks_->WaitForLayerLoad(l);
    Layer(l, b, cache, sampled_only);  // writes the layer's K/V first
    if (kv_hooks_ != nullptr) kv_hooks_->SaveKvLayer(l, cache);
    if (sampled_only) {
      rows = nl;
      MoveRowsToFront(hidden_.data(), h, h, b.logits_indices);
    }
    LLMSERVE_RETURN_IF_ERROR(ReduceAndAdd(proj_, w.o_bias, rows));
    Mlp(w, rows);
    LLMSERVE_RETURN_IF_ERROR(ReduceAndAdd(proj_, kNoBias, rows));
  }
  // Final norm and lm_head only for the rows that are sampled (already rows
  // 0..nl-1 when the last layer ran on them alone).
  for (size_t i = 0; i < nl; ++i) {
    const size_t src = last_sampled_only ? i : static_cast<size_t>(b.logits_indices[i]);
    std::copy_n(hidden_.data() + src * h, h, final_.data() + i * h);
  }
  cpu::RmsNorm(final_.data(), h, weights_.final_norm.data(), final_.data(), h, nl, h, eps, *pool_);
  return Status::Ok();
}

}  // namespace llmserve::worker
