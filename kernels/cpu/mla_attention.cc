#include "kernels/cpu/mla_attention.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/float16.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/mla_row_ops.h"

namespace llmserve::kernels::cpu {

namespace {

// Heads per work item: their scores share each cached row while it is in L1.
constexpr size_t kHeadsPerItem = 8;
// Accumulator lanes of the portable dot product (fixed, so the sum order never changes).
constexpr size_t kLanes = 16;

float Dot(const float* a, const float* b, size_t n) {
  float lanes[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  for (size_t l = 0; i < n; ++i, ++l) lanes[l] += a[i] * b[i];
  float sum = 0;
  for (size_t l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

void Axpy(float p, const float* x, float* y, size_t n) {
  for (size_t d = 0; d < n; ++d) y[d] += p * x[d];
}

void WidenBf16(const uint16_t* src, float* dst, size_t n) {
  for (size_t d = 0; d < n; ++d) dst[d] = base::Bf16ToFloat(src[d]);
}

constexpr internal::MlaRowOps kPortable = {Dot, Axpy, WidenBf16};

// Row `position` of a request's cache, as floats (widened into `scratch` when bf16).
const float* CachedRow(const void* cache, const int32_t* block_table, size_t position, const MlaAttentionShape& s,
                       const internal::MlaRowOps& ops, float* scratch) {
  const size_t block = static_cast<size_t>(block_table[position / s.block_size]);
  const size_t index = block * s.block_size + position % s.block_size;
  if (s.kv_dtype == KvDType::kF32) return static_cast<const float*>(cache) + index * s.latent_dim;
  ops.widen_bf16(static_cast<const uint16_t*>(cache) + index * s.latent_dim, scratch, s.latent_dim);
  return scratch;
}

// `nh` heads of one query token (q: their queries, latent_dim apart) over
// the first `context` cached positions; out: their outputs, value_dim apart.
void AttendHeads(const float* q, size_t nh, const void* cache, const int32_t* block_table, size_t context,
                 const MlaAttentionShape& s, const internal::MlaRowOps& ops, float* out) {
  thread_local std::vector<float> scores, row, sums;
  scores.resize(nh * context);
  row.resize(s.latent_dim);
  sums.resize(nh);
  for (size_t j = 0; j < context; ++j) {
    const float* r = CachedRow(cache, block_table, j, s, ops, row.data());
    for (size_t g = 0; g < nh; ++g) {
      scores[g * context + j] = s.scale * ops.dot(q + g * s.latent_dim, r, s.latent_dim);
    }
  }
  for (size_t g = 0; g < nh; ++g) {
    float* sc = &scores[g * context];
    const float max = *std::max_element(sc, sc + context);
    float sum = 0;
    for (size_t j = 0; j < context; ++j) {
      sc[j] = std::exp(sc[j] - max);
      sum += sc[j];
    }
    sums[g] = sum;
    std::fill_n(out + g * s.value_dim, s.value_dim, 0.f);
  }
  for (size_t j = 0; j < context; ++j) {
    const float* r = CachedRow(cache, block_table, j, s, ops, row.data());
    for (size_t g = 0; g < nh; ++g) ops.axpy(scores[g * context + j], r, out + g * s.value_dim, s.value_dim);
  }
  for (size_t g = 0; g < nh; ++g) {
    float* o = out + g * s.value_dim;
    for (size_t d = 0; d < s.value_dim; ++d) o[d] /= sums[g];
  }
}

}  // namespace

void WriteMlaCacheToken(const float* row, int64_t slot, const MlaAttentionShape& s, void* cache) {
  if (slot < 0) return;
  const size_t index = static_cast<size_t>(slot);
  if (s.kv_dtype == KvDType::kF32) {
    std::copy_n(row, s.latent_dim, static_cast<float*>(cache) + index * s.latent_dim);
    return;
  }
  CHECK(s.kv_dtype == KvDType::kBF16) << "MLA caches are fp32 or bf16";
  uint16_t* dst = static_cast<uint16_t*>(cache) + index * s.latent_dim;
  for (size_t d = 0; d < s.latent_dim; ++d) dst[d] = base::FloatToBf16(row[d]);
}


void MlaAttention(const float* q, size_t q_stride, const PagedAttentionBatch& b, const MlaAttentionShape& s,
                  const void* cache, float* out, size_t out_stride, ThreadPool& pool) {
  CHECK(s.kv_dtype == KvDType::kF32 || s.kv_dtype == KvDType::kBF16) << "MLA caches are fp32 or bf16";
  CHECK_LE(s.value_dim, s.latent_dim);
  const size_t groups = (s.num_heads + kHeadsPerItem - 1) / kHeadsPerItem;
  const internal::MlaRowOps& ops = ActiveIsa() >= Isa::kAvx512 ? internal::MlaRowOpsAvx512() : kPortable;
  pool.ParallelFor(b.tokens * groups, 1, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      const size_t t = i / groups, h0 = (i % groups) * kHeadsPerItem;
      const size_t nh = std::min(kHeadsPerItem, s.num_heads - h0);
      const int32_t* table = b.block_tables + static_cast<size_t>(b.token_request[t]) * b.block_table_stride;
      const size_t context = static_cast<size_t>(b.positions[t]) + 1;
      AttendHeads(q + t * q_stride + h0 * s.latent_dim, nh, cache, table, context, s, ops,
                  out + t * out_stride + h0 * s.value_dim);
    }
  });
}

}  // namespace llmserve::kernels::cpu
