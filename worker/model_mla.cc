// DeepSeek's multi-head latent attention (MLA), in the absorbed form for
// every token (prefill and decode alike):
//   first matmul  → q_a (normed, then q_b) or q; the latent c and rotary key k_pe
//   cache row     = [RMSNorm(c), RoPE(k_pe)]      (latent_dim values a token)
//   per head h    q_latent = W_UK_h · q_nope_h, query = [q_latent, RoPE(q_pe_h)]
//   attention     over the cache rows (mla_attention.h) → the latent output o_h
//   per head h    v_h = W_UV_h · o_h, then o_proj over all heads.
// This equals the naive form (k_h = W_UK_hᵀ c, v_h = W_UV_h c per position)
// up to rounding: q_nope·(W_UK_hᵀ c) = (W_UK_h q_nope)·c.
#include <glog/logging.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/mla_attention.h"
#include "kernels/cpu/rms_norm.h"
#include "worker/batch_rows.h"
#include "worker/model.h"

namespace llmserve::worker {

namespace cpu = kernels::cpu;

namespace {

// DeepSeek's softmax scale: 1/sqrt(qk_head_dim), times yarn's
// mscale(factor, mscale_all_dim)² when the rotary embedding is scaled.
float MlaSoftmaxScale(const ModelConfig& c) {
  double scale = 1.0 / std::sqrt(static_cast<double>(c.mla.qk_head_dim()));
  const auto& rs = c.rope_scaling;
  if (rs.type != cpu::RopeScaling::Type::kNone && rs.mscale_all_dim != 0 && rs.factor > 1) {
    const double mscale = 0.1 * rs.mscale_all_dim * std::log(rs.factor) + 1.0;
    scale *= mscale * mscale;
  }
  return static_cast<float>(scale);
}

// Reorders x[0..n) from interleaved pairs (x0, x1), (x2, x3), ... to
// (x0, x2, ..., x1, x3, ...): rotating adjacent pairs (DeepSeek's rotary
// layout) is then the rotate-half rotation ApplyRopeToken does. q and k are
// reordered alike, so their dot products do not change.
void Deinterleave(float* x, size_t n) {
  float tmp[kMaxMlaRopeDim];
  for (size_t i = 0; i < n / 2; ++i) {
    tmp[i] = x[2 * i];
    tmp[n / 2 + i] = x[2 * i + 1];
  }
  std::copy_n(tmp, n, x);
}

}  // namespace

size_t Model::ReserveMla(size_t t) {
  const MlaConfig& a = config_.mla;
  const size_t nh = shard_.num_heads;
  mla_qa_.resize(t * a.q_lora_rank);
  mla_q_.resize(t * nh * a.qk_head_dim());
  mla_latent_q_.resize(t * nh * a.latent_dim());
  mla_latent_out_.resize(t * nh * a.kv_lora_rank);
  mla_head_in_.resize(t * std::max(a.qk_nope_head_dim, a.kv_lora_rank));
  mla_head_out_.resize(t * std::max(a.kv_lora_rank, a.v_head_dim));
  size_t bytes = 0;
  for (const auto* v : {&mla_qa_, &mla_q_, &mla_latent_q_, &mla_latent_out_, &mla_head_in_, &mla_head_out_}) {
    bytes += v->capacity() * sizeof(float);
  }
  return bytes;
}

void Model::MlaLayer(size_t index, const ForwardBatch& b, KvCache& cache, bool sampled_only) {
  const LayerWeights& w = weights_.layers[index];
  const MlaConfig& a = config_.mla;
  const size_t t = b.num_tokens(), nh = shard_.num_heads;
  const size_t qk = a.qk_head_dim(), nope = a.qk_nope_head_dim, rope = a.qk_rope_head_dim;
  const size_t latent = a.latent_dim(), rank = a.kv_lora_rank, vd = a.v_head_dim;
  const size_t first = w.qkv.rows(), q_rows = first - latent, q_stride = nh * qk;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  CHECK_LE(rope, kMaxMlaRopeDim);  // ParseModelConfig refuses wider

  layer_ = index;
  NormThenApply(w.input_norm, w.qkv, t, qkv_.data());
  if (a.q_lora_rank > 0) {
    cpu::RmsNorm(qkv_.data(), first, w.mla.q_a_norm.data(), mla_qa_.data(), a.q_lora_rank, t, a.q_lora_rank, eps,
                 *pool_);
    w.mla.q_b.Apply(mla_qa_.data(), t, mla_q_.data(), *pool_);
  } else {
    for (size_t i = 0; i < t; ++i) std::copy_n(&qkv_[i * first], q_stride, &mla_q_[i * q_stride]);
  }
  cpu::MlaAttentionShape shape;
  shape.kv_dtype = cache.shape().dtype;
  shape.num_heads = nh;
  shape.latent_dim = latent;
  shape.value_dim = rank;
  shape.block_size = cache.shape().block_size;
  shape.scale = MlaSoftmaxScale(config_);
  // Token by token: the latent normed, the rotary parts rotated, the row cached.
  pool_->ParallelFor(t, 4, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      float* kv = &qkv_[i * first + q_rows];
      float* q = &mla_q_[i * q_stride];
      cpu::RmsNormRows(kv, rank, w.mla.kv_a_norm.data(), kv, rank, 1, rank, eps);
      if (a.rope_interleave) {
        Deinterleave(kv + rank, rope);
        for (size_t h = 0; h < nh; ++h) Deinterleave(q + h * qk + nope, rope);
      }
      cpu::ApplyRopeToken(kv + rank, 1, rope, rope_table_, i);
      cpu::ApplyRopeToken(q + nope, nh, qk, rope_table_, i);
      cpu::WriteMlaCacheToken(kv, b.slot_mapping[i], shape, cache.keys(index));
    }
  });
  const cpu::PagedAttentionBatch ab = AttentionBatch(b, sampled_only);
  if (sampled_only) MoveRowsToFront(mla_q_.data(), q_stride, q_stride, b.logits_indices);
  const size_t n = ab.tokens;
  // Each head's query into latent space (W_UK), beside its rotated rotary part.
  for (size_t h = 0; h < nh; ++h) {
    for (size_t i = 0; i < n; ++i) std::copy_n(&mla_q_[i * q_stride + h * qk], nope, &mla_head_in_[i * nope]);
    w.mla.uk[h].Apply(mla_head_in_.data(), n, mla_head_out_.data(), *pool_);
    for (size_t i = 0; i < n; ++i) {
      float* query = &mla_latent_q_[(i * nh + h) * latent];
      std::copy_n(&mla_head_out_[i * rank], rank, query);
      std::copy_n(&mla_q_[i * q_stride + h * qk + nope], rope, query + rank);
    }
  }
  cpu::MlaAttention(mla_latent_q_.data(), nh * latent, ab, shape, cache.keys(index), mla_latent_out_.data(),
                    nh * rank, *pool_);
  // Each head's latent output into its value space (W_UV), then o_proj.
  for (size_t h = 0; h < nh; ++h) {
    for (size_t i = 0; i < n; ++i) {
      std::copy_n(&mla_latent_out_[(i * nh + h) * rank], rank, &mla_head_in_[i * rank]);
    }
    w.mla.uv[h].Apply(mla_head_in_.data(), n, mla_head_out_.data(), *pool_);
    for (size_t i = 0; i < n; ++i) std::copy_n(&mla_head_out_[i * vd], vd, &attn_[i * nh * vd + h * vd]);
  }
  w.o.Apply(attn_.data(), n, proj_.data(), *pool_);
}

}  // namespace llmserve::worker
