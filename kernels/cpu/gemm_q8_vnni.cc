// AVX-512 VNNI kernel for Q8_0 weights (gemm_q8.h), on ymm registers.
//
// vpdpbusd multiplies unsigned by signed bytes, so the activations enter as
// x + 128 (x ^ 0x80, read unsigned) and each block's sum is corrected by
// 128 × Σ w, itself one vpdpbusd of 0x80 bytes against the weights. The
// integer sums stay exact, so the results equal the scalar and AVX2 kernels'
// bit for bit, -128 weights included.
//
// Weights are interleaved at pack time (InterleaveForVnni): within a group's
// block, 32-byte chunk t holds bytes 4t..4t+3 of its 8 rows, so one vpdpbusd
// of chunk t with x's bytes 4t..4t+3 broadcast adds 4 products to each row's
// lane: no horizontal sums. Up to 8 activation rows share each weight load.
//
// Only reached after run-time dispatch; every function here carries the
// target attribute.
#include <cstring>
#include <vector>

#include "kernels/cpu/avx512_vnni_target.h"
#include "kernels/cpu/gemm_q8.h"
#include "kernels/cpu/group_rows_avx2.h"


namespace llmserve::kernels::cpu::q8 {
namespace {

static_assert(kGroupRows == 8 && kBlock == 32, "a group's block is 8 chunks of 8 rows × 4 bytes");

constexpr size_t kMaxRows = 8;  // activation rows sharing a weight load

// y rows [i0, i0 + R) of group g. `xu`: the activations as x + 128.
template <size_t R>
LLMSERVE_AVX512_VNNI void VnniRows(const Problem& p, size_t g, size_t i0, const uint8_t* wq, const float* wd,
                            const uint8_t* xu) {
  const size_t blocks = p.k / kBlock;
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* w = wq + b * kGroupRows * kBlock;
    __m256i offset = _mm256_setzero_si256(), sums[R];
    for (size_t r = 0; r < R; ++r) sums[r] = _mm256_setzero_si256();
    for (size_t t = 0; t < kBlock / 4; ++t) {
      const __m256i chunk = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + t * 32));
      offset = _mm256_dpbusd_epi32(offset, bias, chunk);
      for (size_t r = 0; r < R; ++r)
        sums[r] = _mm256_dpbusd_epi32(sums[r], Broadcast4(xu + (i0 + r) * p.k + b * kBlock + 4 * t), chunk);
    }
    const __m256 wscale = _mm256_load_ps(wd + b * kGroupRows);
    for (size_t r = 0; r < R; ++r) {
      const __m256 s = _mm256_cvtepi32_ps(_mm256_sub_epi32(sums[r], offset));
      const __m256 scale = _mm256_mul_ps(wscale, _mm256_set1_ps(p.xd[(i0 + r) * blocks + b]));
      acc[r] = _mm256_fmadd_ps(s, scale, acc[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) StoreGroupLanes(p.y + (i0 + r) * p.ldy + g * kGroupRows, p.n - g * kGroupRows, acc[r]);
}

// x ^ 0x80 for every activation byte: x + 128, read unsigned.
LLMSERVE_AVX512_VNNI void Bias(const int8_t* x, size_t n, uint8_t* out) {
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_xor_si256(v, bias));
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(x[i]) ^ 0x80;
}

}  // namespace

void InterleaveForVnni(uint8_t* packed, size_t rows, size_t cols) {
  const size_t chunks = (rows + kGroupRows - 1) / kGroupRows * (cols / kBlock);
  uint8_t tmp[kGroupRows * kBlock];
  for (size_t c = 0; c < chunks; ++c) {
    uint8_t* block = packed + c * sizeof(tmp);
    std::memcpy(tmp, block, sizeof(tmp));
    for (size_t j = 0; j < kGroupRows; ++j)
      for (size_t t = 0; t < kBlock / 4; ++t) std::memcpy(block + t * 32 + j * 4, tmp + j * kBlock + 4 * t, 4);
  }
}

LLMSERVE_AVX512_VNNI void GemmVnni(const Problem& p, size_t group_begin, size_t group_end) {
  const size_t blocks = p.k / kBlock;
  const size_t groups = (p.n + kGroupRows - 1) / kGroupRows;
  const auto* scales = reinterpret_cast<const float*>(p.w + groups * blocks * kGroupRows * kBlock);
  thread_local std::vector<uint8_t> xu;
  if (xu.size() < p.m * p.k) xu.resize(p.m * p.k);
  Bias(p.xq, p.m * p.k, xu.data());
  for (size_t g = group_begin; g < group_end; ++g) {
    const uint8_t* wq = p.w + g * blocks * kGroupRows * kBlock;
    const float* wd = scales + g * blocks * kGroupRows;
    size_t i = 0;
    for (; i + kMaxRows <= p.m; i += kMaxRows) VnniRows<kMaxRows>(p, g, i, wq, wd, xu.data());
    for (; i + kMaxRows / 2 <= p.m; i += kMaxRows / 2) VnniRows<kMaxRows / 2>(p, g, i, wq, wd, xu.data());
    for (; i < p.m; ++i) VnniRows<1>(p, g, i, wq, wd, xu.data());
  }
}

}  // namespace llmserve::kernels::cpu::q8
