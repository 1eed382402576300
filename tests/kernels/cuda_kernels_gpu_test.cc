// The CUDA forward pass's kernels against plain host loops on random inputs:
// the bf16 matmul (with and without the fused accumulate), paged attention
// (grouped-query, sliding window, split-K), the q/k/v step and the decode
// GEMVs with the RMSNorm (and SiLU-and-mul) fused in.
// Skips with "no CUDA device" where none is visible (CI, CPU machines).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/gemm_bf16.h"
#include "kernels/cuda/gemv_bf16.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/prefill_attention.h"
#include "kernels/cuda/transformer_ops.h"

namespace llmserve::kernels::cuda {
namespace {

float RoundBf16(float v) { return cpu::Bf16ToF32(cpu::F32ToBf16(v)); }

std::vector<float> Random(size_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

template <typename T>
DeviceArray<T> ToDevice(const std::vector<T>& host) {
  DeviceArray<T> d;
  EXPECT_TRUE(d.Resize(host.size()).ok());
  EXPECT_TRUE(d.Upload(host.data(), host.size()).ok());
  return d;
}

DeviceArray<Bf16> ToDeviceBf16(const std::vector<float>& host) {
  std::vector<Bf16> b(host.size());
  for (size_t i = 0; i < host.size(); ++i) b[i] = __float2bfloat16(host[i]);
  return ToDevice(b);
}

template <typename T>
std::vector<T> ToHost(const DeviceArray<T>& d) {
  std::vector<T> h(d.size());
  EXPECT_EQ(cudaMemcpy(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

TEST(CudaKernels, Bf16GemmMatchesHostProduct) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  auto gemm = Bf16Gemm::Create();
  ASSERT_TRUE(gemm.ok()) << gemm.status().ToString();
  // Rows 1-4 take a GEMV kernel (k a multiple of 8): with the rows in shared
  // memory up to 96 KiB of them, else read from global memory (4 × 14336,
  // 5003 columns: several per warp). The rest take cuBLASLt.
  for (auto [rows, n, k] : {std::tuple<size_t, size_t, size_t>{1, 96, 64},
                            {2, 1000, 4104},
                            {3, 33, 24},
                            {4, 300, 1032},
                            {1, 5003, 14336},
                            {4, 37, 14336},
                            {7, 200, 136},
                            {64, 512, 256}}) {
    auto x = Random(rows * k, 1), w = Random(n * k, 2), y0 = Random(rows * n, 3);
    for (auto* v : {&x, &w})
      for (auto& e : *v) e = RoundBf16(e);
    auto dx = ToDeviceBf16(x), dw = ToDeviceBf16(w);
    for (bool accumulate : {false, true}) {
      auto dy = ToDevice(y0);
      ASSERT_TRUE((*gemm)->Run(dx.data(), dw.data(), dy.data(), rows, n, k, accumulate, nullptr).ok());
      const auto y = ToHost(dy);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < n; ++c) {
          double want = accumulate ? y0[r * n + c] : 0.0;
          for (size_t i = 0; i < k; ++i) want += static_cast<double>(x[r * k + i]) * w[c * k + i];
          ASSERT_NEAR(y[r * n + c], want, 1e-3 * (1 + std::fabs(want)))
              << rows << "x" << n << "x" << k << " at " << r << "," << c;
        }
      }
    }
  }
}

// Host reference of one query's attention over its cached keys.
std::vector<float> AttendHost(const std::vector<float>& q, const std::vector<float>& kc, const std::vector<float>& vc,
                              const std::vector<int32_t>& table, size_t pos, size_t g, size_t nkv, size_t hd, size_t bs,
                              size_t window, float scale) {
  const size_t first = window > 0 && pos + 1 > window ? pos + 1 - window : 0;
  std::vector<double> s;
  for (size_t j = first; j <= pos; ++j) {
    const size_t base = ((table[j / bs] * nkv + g) * bs + j % bs) * hd;
    double dot = 0;
    for (size_t d = 0; d < hd; ++d) dot += static_cast<double>(q[d]) * kc[base + d];
    s.push_back(dot * scale);
  }
  double m = -INFINITY, sum = 0;
  for (double v : s) m = std::max(m, v);
  for (double& v : s) sum += (v = std::exp(v - m));
  std::vector<float> out(hd, 0.f);
  for (size_t j = first; j <= pos; ++j) {
    const size_t base = ((table[j / bs] * nkv + g) * bs + j % bs) * hd;
    for (size_t d = 0; d < hd; ++d) out[d] += static_cast<float>(s[j - first] / sum) * vc[base + d];
  }
  return out;
}

// Two requests: a prefill chunk of `chunk` tokens at positions 20.. and a
// decode at 600. Chunks of kPrefillMinTokens or more take the tiled kernel
// (where it takes head_dim), the decode the per-token one.
void CheckAttention(size_t hd, size_t nh, size_t nkv, size_t window, size_t splits, size_t chunk = 5) {
  const size_t bs = 16, num_blocks = 64, stride = 40;
  std::vector<int32_t> positions, token_request;
  for (size_t i = 0; i < chunk; ++i) {
    positions.push_back(static_cast<int32_t>(20 + i));
    token_request.push_back(0);
  }
  positions.push_back(600);
  token_request.push_back(1);
  std::vector<int32_t> tables(2 * stride);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>((i * 37 + 5) % num_blocks);
  const size_t t = positions.size(), cache_n = num_blocks * nkv * bs * hd;
  auto kc = Random(cache_n, 11), vc = Random(cache_n, 12), q = Random(t * nh * hd, 13);
  for (auto* v : {&kc, &vc})
    for (auto& e : *v) e = RoundBf16(e);
  auto dk = ToDeviceBf16(kc), dv = ToDeviceBf16(vc);
  auto dq = ToDevice(q);
  auto dpos = ToDevice(positions), dreq = ToDevice(token_request), dtab = ToDevice(tables);
  DeviceArray<Bf16> dout;
  ASSERT_TRUE(dout.Resize(t * nh * hd).ok());
  DeviceArray<float> scratch;
  ASSERT_TRUE(scratch.Resize(std::max<size_t>(1, PagedAttentionScratchFloats(t, nh, hd, splits))).ok());
  PagedAttentionArgs a;
  a.q = dq.data();
  a.q_stride = nh * hd;
  a.k_cache = dk.data();
  a.v_cache = dv.data();
  a.positions = dpos.data();
  a.token_request = dreq.data();
  a.block_tables = dtab.data();
  a.block_table_stride = stride;
  a.tokens = t;
  a.num_heads = nh;
  a.num_kv_heads = nkv;
  a.head_dim = hd;
  a.block_size = bs;
  a.sliding_window = window;
  a.scale = 1.f / std::sqrt(static_cast<float>(hd));
  a.out = dout.data();
  a.out_stride = nh * hd;
  a.num_splits = splits;
  a.scratch = scratch.data();
  std::vector<int32_t> tiles, others;
  if (PrefillAttentionSupports(hd))
    PlanPrefillTiles({0, static_cast<int32_t>(chunk), static_cast<int32_t>(chunk + 1)}, &tiles, &others);
  EXPECT_EQ(tiles.empty(), chunk < kPrefillMinTokens || !PrefillAttentionSupports(hd));
  DeviceArray<int32_t> dtiles, dothers;
  if (!tiles.empty()) {
    dtiles = ToDevice(tiles);
    dothers = ToDevice(others);
    a.prefill_tiles = dtiles.data();
    a.num_prefill_tiles = tiles.size() / 3;
    a.token_list = dothers.data();
    a.token_list_size = others.size();
  }
  ASSERT_TRUE(PagedAttention(a, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = ToHost(dout);
  for (size_t i = 0; i < t; ++i) {
    for (size_t h = 0; h < nh; ++h) {
      std::vector<float> qi(q.begin() + (i * nh + h) * hd, q.begin() + (i * nh + h + 1) * hd);
      std::vector<int32_t> table(tables.begin() + token_request[i] * stride,
                                 tables.begin() + (token_request[i] + 1) * stride);
      const auto want = AttendHost(qi, kc, vc, table, positions[i], h / (nh / nkv), nkv, hd, bs, window, a.scale);
      for (size_t d = 0; d < hd; ++d) {
        ASSERT_NEAR(__bfloat162float(out[(i * nh + h) * hd + d]), want[d], 1e-2 * (1 + std::fabs(want[d])))
            << "hd " << hd << " splits " << splits << " window " << window << " chunk " << chunk << " token " << i
            << " head " << h << " dim " << d;
      }
    }
  }
}

TEST(CudaKernels, PagedAttentionMatchesHost) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  CheckAttention(128, 8, 2, 0, 1);
  CheckAttention(128, 8, 2, 0, 5);
  CheckAttention(64, 4, 4, 0, 3);
  CheckAttention(16, 4, 2, 0, 1);
  CheckAttention(256, 2, 1, 0, 2);
  CheckAttention(128, 4, 1, 7, 1);
  CheckAttention(128, 4, 1, 100, 4);
  // Tiled prefill: one partial tile, two tiles, a sliding window across tiles.
  CheckAttention(128, 8, 2, 0, 1, 9);
  CheckAttention(128, 8, 2, 0, 3, 100);
  CheckAttention(64, 4, 4, 0, 1, 130);
  CheckAttention(128, 4, 1, 37, 1, 100);
  CheckAttention(128, 8, 2, 0, 1, 300);  // five tiles, the last partial
  CheckAttention(64, 4, 2, 70, 1, 200);  // a window wider than a tile
  CheckAttention(32, 4, 2, 0, 1, 40);  // no tiled kernel for this head_dim
  CheckAttention(128, 6, 2, 0, 2);     // groups of 3: one block per q head
  CheckAttention(128, 8, 1, 0, 3);     // a group of 8
}

TEST(CudaKernels, PlanPrefillTilesSplitsLongRequests) {
  std::vector<int32_t> tiles, others;
  PlanPrefillTiles({0, 1, 131, 135}, &tiles, &others);
  EXPECT_EQ(tiles, (std::vector<int32_t>{1, 1, 64, 1, 65, 64, 1, 129, 2}));
  EXPECT_EQ(others, (std::vector<int32_t>{0, 131, 132, 133, 134}));
}

TEST(CudaKernels, AttentionBlocksShareKvHeads) {
  EXPECT_EQ(AttentionBlocksPerToken(32, 8), 8u);    // groups of 4 share a block
  EXPECT_EQ(AttentionBlocksPerToken(16, 16), 16u);  // no grouping
  EXPECT_EQ(AttentionBlocksPerToken(12, 4), 12u);   // groups of 3: one block per q head
}

TEST(CudaKernels, ChooseAttentionSplitsFillsSmallGrids) {
  EXPECT_EQ(ChooseAttentionSplits(256, 32, 4000, 132), 1u);  // a large batch fills the GPU
  EXPECT_EQ(ChooseAttentionSplits(1, 32, 100, 132), 1u);     // a short context needs no split
  EXPECT_EQ(ChooseAttentionSplits(1, 32, 1000, 132), 8u);    // one per 128 keys
  EXPECT_EQ(ChooseAttentionSplits(64, 8, 4000, 132), 3u);    // enough to reach 8 blocks per SM
  EXPECT_EQ(ChooseAttentionSplits(1, 8, 100000, 132), 16u);  // at most 16
}

TEST(CudaKernels, QkvStepMatchesHost) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const size_t t = 3, nh = 4, nkv = 2, hd = 64, half = hd / 2, heads = nh + 2 * nkv, bs = 8, max_pos = 50;
  auto qkv = Random(t * heads * hd, 21), bias = Random(heads * hd, 22, 0.1f), qn = Random(hd, 23), kn = Random(hd, 24);
  std::vector<float> cos(max_pos * half), sin(max_pos * half);
  for (size_t p = 0; p < max_pos; ++p) {
    for (size_t i = 0; i < half; ++i) {
      const double angle = p * std::pow(10000.0, -2.0 * i / hd);
      cos[p * half + i] = static_cast<float>(std::cos(angle));
      sin[p * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  const std::vector<int32_t> positions = {0, 17, 49};
  const std::vector<int64_t> slots = {3, -1, 21};
  auto dqkv = ToDevice(qkv), dbias = ToDevice(bias), dqn = ToDevice(qn), dkn = ToDevice(kn);
  auto dcos = ToDevice(cos), dsin = ToDevice(sin);
  auto dpos = ToDevice(positions);
  auto dslots = ToDevice(slots);
  DeviceArray<Bf16> kcache, vcache;
  ASSERT_TRUE(kcache.Resize(4 * nkv * bs * hd).ok() && kcache.Zero().ok());
  ASSERT_TRUE(vcache.Resize(4 * nkv * bs * hd).ok() && vcache.Zero().ok());
  QkvStepArgs a;
  a.qkv = dqkv.data();
  a.tokens = t;
  a.num_heads = nh;
  a.num_kv_heads = nkv;
  a.head_dim = hd;
  a.bias = dbias.data();
  a.q_norm = dqn.data();
  a.k_norm = dkn.data();
  a.rope_cos = dcos.data();
  a.rope_sin = dsin.data();
  a.positions = dpos.data();
  a.slot_mapping = dslots.data();
  a.k_cache = kcache.data();
  a.v_cache = vcache.data();
  a.block_size = bs;
  ASSERT_TRUE(QkvStep(a, nullptr).ok());
  const auto got = ToHost(dqkv);
  const auto kgot = ToHost(kcache), vgot = ToHost(vcache);
  for (size_t i = 0; i < t; ++i) {
    for (size_t h = 0; h < heads; ++h) {
      std::vector<float> v(hd);
      for (size_t d = 0; d < hd; ++d) v[d] = qkv[(i * heads + h) * hd + d] + bias[h * hd + d];
      if (h < nh + nkv) {
        double ss = 0;
        for (float x : v) ss += x * x;
        const float inv = 1.f / std::sqrt(static_cast<float>(ss / hd) + 1e-6f);
        for (size_t d = 0; d < hd; ++d) v[d] *= inv * (h < nh ? qn[d] : kn[d]);
        const float* c = &cos[positions[i] * half];
        const float* s = &sin[positions[i] * half];
        std::vector<float> r(v);
        for (size_t k = 0; k < half; ++k) {
          r[k] = v[k] * c[k] - v[k + half] * s[k];
          r[k + half] = v[k + half] * c[k] + v[k] * s[k];
        }
        v = r;
      }
      for (size_t d = 0; d < hd; ++d) {
        ASSERT_NEAR(got[(i * heads + h) * hd + d], v[d], 1e-4 * (1 + std::fabs(v[d])))
            << "token " << i << " head " << h;
        if (h >= nh && slots[i] >= 0) {
          const size_t g = h < nh + nkv ? h - nh : h - nh - nkv;
          const size_t at = ((slots[i] / bs * nkv + g) * bs + slots[i] % bs) * hd + d;
          const auto& cache = h < nh + nkv ? kgot : vgot;
          ASSERT_EQ(__bfloat162float(cache[at]), RoundBf16(v[d])) << "cache, token " << i << " head " << h;
        }
      }
    }
  }
}

TEST(CudaKernels, NormEmbeddingAndSiluMatchHost) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const size_t rows = 5, dim = 300, vocab = 11;
  auto table = Random(vocab * dim, 31);
  for (auto& e : table) e = RoundBf16(e);
  const std::vector<int32_t> ids = {3, 0, 10, 3, 7};
  auto dtable = ToDeviceBf16(table);
  auto dids = ToDevice(ids);
  DeviceArray<float> hidden;
  ASSERT_TRUE(hidden.Resize(rows * dim).ok());
  ASSERT_TRUE(EmbeddingToF32(dtable.data(), dids.data(), rows, dim, hidden.data(), nullptr).ok());
  const auto h = ToHost(hidden);
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < dim; ++i) ASSERT_EQ(h[r * dim + i], table[ids[r] * dim + i]);
  // RMSNorm of rows {4, 1} into bf16.
  auto w = Random(dim, 32);
  const std::vector<int32_t> pick = {4, 1};
  auto dw = ToDevice(w);
  auto dpick = ToDevice(pick);
  DeviceArray<Bf16> normed;
  ASSERT_TRUE(normed.Resize(2 * dim).ok());
  ASSERT_TRUE(RmsNormToBf16(hidden.data(), dpick.data(), dw.data(), normed.data(), 2, dim, 1e-6f, nullptr).ok());
  const auto n = ToHost(normed);
  for (size_t r = 0; r < 2; ++r) {
    double ss = 0;
    for (size_t i = 0; i < dim; ++i) ss += h[pick[r] * dim + i] * h[pick[r] * dim + i];
    const float inv = 1.f / std::sqrt(static_cast<float>(ss / dim) + 1e-6f);
    for (size_t i = 0; i < dim; ++i) {
      const float want = h[pick[r] * dim + i] * inv * w[i];
      ASSERT_NEAR(__bfloat162float(n[r * dim + i]), want, 1e-2 * (1 + std::fabs(want)));
    }
  }
  // SiLU and mul over [rows × 2·ff].
  const size_t ff = 150;
  auto gu = Random(rows * 2 * ff, 33);
  auto dgu = ToDevice(gu);
  DeviceArray<Bf16> act;
  ASSERT_TRUE(act.Resize(rows * ff).ok());
  ASSERT_TRUE(SiluMulToBf16(dgu.data(), rows, ff, act.data(), nullptr).ok());
  const auto a = ToHost(act);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < ff; ++i) {
      const float g = gu[r * 2 * ff + i], u = gu[r * 2 * ff + ff + i];
      const float want = g / (1.f + std::exp(-g)) * u;
      ASSERT_NEAR(__bfloat162float(a[r * ff + i]), want, 1e-2 * (1 + std::fabs(want)));
    }
  }
}

// Host RMSNorm of x[src] rounded to bf16, as RmsNormToBf16 computes it (the
// sum of squares in double: a bf16 element may round the other way).
std::vector<float> NormRowHost(const std::vector<float>& x, size_t src, const std::vector<float>& weight, float eps) {
  const size_t k = weight.size();
  double ss = 0;
  for (size_t i = 0; i < k; ++i) ss += static_cast<double>(x[src * k + i]) * x[src * k + i];
  const float inv = 1.f / std::sqrt(static_cast<float>(ss / k) + eps);
  std::vector<float> out(k);
  for (size_t i = 0; i < k; ++i) out[i] = RoundBf16(x[src * k + i] * inv * weight[i]);
  return out;
}

// a · w[row] in double, and the sum of the terms' magnitudes (for a bound).
std::pair<double, double> DotHost(const std::vector<float>& a, const std::vector<float>& w, size_t row) {
  const size_t k = a.size();
  double dot = 0, mag = 0;
  for (size_t i = 0; i < k; ++i) {
    const double term = static_cast<double>(a[i]) * w[row * k + i];
    dot += term;
    mag += std::fabs(term);
  }
  return {dot, mag};
}

uint16_t Bits(Bf16 v) {
  uint16_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// Every GEMV tuning the kernels take (gemv_bf16.h), the default first; each
// test below runs under all of them and restores the default.
std::vector<GemvTuning> AllGemvTunings() {
  std::vector<GemvTuning> all = {GemvTuning()};
  for (bool early : {false, true}) {
    for (int split : {1, 2, 4}) {
      GemvTuning t;
      t.early_weight_loads = early;
      t.warps_per_column = split;
      all.push_back(t);
    }
  }
  return all;
}

std::string Describe(const GemvTuning& t) {
  return std::string(t.early_weight_loads ? "early" : "no early") + " weight loads, " +
         std::to_string(t.warps_per_column) + " warps per column";
}

class GemvTuningScope {
 public:
  explicit GemvTuningScope(const GemvTuning& t) { EXPECT_TRUE(SetGemvTuning(t).ok()); }
  ~GemvTuningScope() { EXPECT_TRUE(SetGemvTuning(GemvTuning()).ok()); }
};

TEST(CudaKernels, GemvTuningRefusesOtherSplits) {
  GemvTuning t;
  t.warps_per_column = 8;
  EXPECT_FALSE(SetGemvTuning(t).ok());
  EXPECT_EQ(CurrentGemvTuning().warps_per_column, GemvTuning().warps_per_column);
}

// Gemv with rows too wide for shared memory (4 × 14336 bf16) reads them in
// place; each row's sums are bit for bit those of that row alone (in shared
// memory), and near the host's.
TEST(CudaKernels, GemvSumsRowsInPlaceAsInSharedMemory) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const size_t rows = 4, n = 301, k = 14336;
  ASSERT_FALSE(GemvRmsNormTakes(rows, k));
  auto x = Random(rows * k, 61), w = Random(n * k, 62);
  for (auto& e : x) e = RoundBf16(e);
  for (auto& e : w) e = RoundBf16(e);
  auto dx = ToDeviceBf16(x), dw = ToDeviceBf16(w);
  for (const GemvTuning& tuning : AllGemvTunings()) {
    SCOPED_TRACE(Describe(tuning));
    GemvTuningScope scope(tuning);
    DeviceArray<float> all;
    ASSERT_TRUE(all.Resize(rows * n).ok());
    ASSERT_TRUE(Gemv(dx.data(), dw.data(), all.data(), rows, n, k, false, nullptr).ok());
    const auto y = ToHost(all);
    for (size_t r = 0; r < rows; ++r) {
      DeviceArray<float> one;
      ASSERT_TRUE(one.Resize(n).ok());
      ASSERT_TRUE(Gemv(dx.data() + r * k, dw.data(), one.data(), 1, n, k, false, nullptr).ok());
      const auto y1 = ToHost(one);
      const std::vector<float> xr(x.begin() + r * k, x.begin() + (r + 1) * k);
      for (size_t c = 0; c < n; ++c) {
        ASSERT_EQ(y[r * n + c], y1[c]) << "row " << r << " column " << c;
        const auto [dot, mag] = DotHost(xr, w, c);
        ASSERT_NEAR(y1[c], dot, 1e-3 * (1 + mag)) << "row " << r << " column " << c;
      }
    }
  }
}

// GemvRmsNorm against host math (norm → bf16 → dot in double; bound 1e-3 of
// the terms' magnitudes) and, exactly, against RmsNormToBf16 then Gemv.
TEST(CudaKernels, GemvRmsNormMatchesHostAndUnfused) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  for (const GemvTuning& tuning : AllGemvTunings()) {
    SCOPED_TRACE(Describe(tuning));
    GemvTuningScope scope(tuning);
    const size_t src_rows = 6;
    const float eps = 1e-5f;
    const std::vector<int32_t> pick = {5, 0, 3, 3};
    auto dpick = ToDevice(pick);
    // n not a multiple of 8; n = 5003 gives each warp several columns.
    for (auto [n, k] : {std::pair<size_t, size_t>{37, 64}, {5003, 64}, {37, 4096}, {37, 14336}}) {
      auto x = Random(src_rows * k, 41, 3.f), nw = Random(k, 42), w = Random(n * k, 43);
      for (auto& e : w) e = RoundBf16(e);
      auto dx = ToDevice(x), dnw = ToDevice(nw);
      auto dw = ToDeviceBf16(w);
      for (size_t rows = 1; rows <= kGemvMaxRows; ++rows) {
        if (!GemvRmsNormTakes(rows, k)) {
          // Past the shared-memory limit (4 × 14336): refused; the model takes
          // RmsNormToBf16 and the matmul instead.
          EXPECT_GT(rows * k * sizeof(Bf16), kGemvRmsNormMaxSharedBytes);
          DeviceArray<float> dy;
          ASSERT_TRUE(dy.Resize(rows * n).ok());
          EXPECT_FALSE(
              GemvRmsNorm(dx.data(), nullptr, dnw.data(), eps, dw.data(), dy.data(), rows, n, k, false, nullptr).ok());
          continue;
        }
        for (bool indexed : {false, true}) {
          const int32_t* index = indexed ? dpick.data() : nullptr;
          DeviceArray<Bf16> normed;
          ASSERT_TRUE(normed.Resize(rows * k).ok());
          ASSERT_TRUE(RmsNormToBf16(dx.data(), index, dnw.data(), normed.data(), rows, k, eps, nullptr).ok());
          auto y0 = Random(rows * n, 44);
          for (bool accumulate : {false, true}) {
            auto fused = ToDevice(y0), unfused = ToDevice(y0);
            ASSERT_TRUE(
                GemvRmsNorm(dx.data(), index, dnw.data(), eps, dw.data(), fused.data(), rows, n, k, accumulate, nullptr)
                    .ok());
            ASSERT_TRUE(Gemv(normed.data(), dw.data(), unfused.data(), rows, n, k, accumulate, nullptr).ok());
            const auto y = ToHost(fused), y_unfused = ToHost(unfused);
            for (size_t r = 0; r < rows; ++r) {
              const auto xn = NormRowHost(x, indexed ? pick[r] : r, nw, eps);
              for (size_t c = 0; c < n; ++c) {
                const auto [dot, mag] = DotHost(xn, w, c);
                const double want = (accumulate ? y0[r * n + c] : 0.0) + dot;
                ASSERT_NEAR(y[r * n + c], want, 1e-3 * (1 + mag))
                    << rows << "x" << n << "x" << k << " at " << r << "," << c << " indexed " << indexed;
                ASSERT_EQ(y[r * n + c], y_unfused[r * n + c])
                    << "fused ≠ unfused, " << rows << "x" << n << "x" << k << " at " << r << "," << c;
              }
            }
          }
        }
      }
    }
  }
}

// GemvRmsNormSiluMul against host math (bound: the dots' 1e-3 of their terms'
// magnitudes carried through silu(g)·u, plus bf16 rounding) and, bit for
// bit, against RmsNormToBf16, Gemv and SiluMulToBf16.
TEST(CudaKernels, GemvRmsNormSiluMulMatchesHostAndUnfused) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  for (const GemvTuning& tuning : AllGemvTunings()) {
    SCOPED_TRACE(Describe(tuning));
    GemvTuningScope scope(tuning);
    const float eps = 1e-6f;
    for (auto [ff, k] : {std::pair<size_t, size_t>{37, 64}, {5003, 64}, {37, 4096}, {21, 14336}}) {
      const size_t rows_max = kGemvMaxRows;
      auto x = Random(rows_max * k, 51, 2.f), nw = Random(k, 52), w = Random(2 * ff * k, 53, 0.5f);
      for (auto& e : w) e = RoundBf16(e);
      auto dx = ToDevice(x), dnw = ToDevice(nw);
      auto dw = ToDeviceBf16(w);
      for (size_t rows = 1; rows <= rows_max; ++rows) {
        DeviceArray<Bf16> act, act_unfused, normed;
        ASSERT_TRUE(act.Resize(rows * ff).ok());
        if (!GemvRmsNormTakes(rows, k)) {
          EXPECT_FALSE(
              GemvRmsNormSiluMul(dx.data(), dnw.data(), eps, dw.data(), act.data(), rows, ff, k, nullptr).ok());
          continue;
        }
        ASSERT_TRUE(GemvRmsNormSiluMul(dx.data(), dnw.data(), eps, dw.data(), act.data(), rows, ff, k, nullptr).ok());
        DeviceArray<float> gate_up;
        ASSERT_TRUE(normed.Resize(rows * k).ok());
        ASSERT_TRUE(gate_up.Resize(rows * 2 * ff).ok());
        ASSERT_TRUE(act_unfused.Resize(rows * ff).ok());
        ASSERT_TRUE(RmsNormToBf16(dx.data(), nullptr, dnw.data(), normed.data(), rows, k, eps, nullptr).ok());
        ASSERT_TRUE(Gemv(normed.data(), dw.data(), gate_up.data(), rows, 2 * ff, k, false, nullptr).ok());
        ASSERT_TRUE(SiluMulToBf16(gate_up.data(), rows, ff, act_unfused.data(), nullptr).ok());
        const auto a = ToHost(act), a_unfused = ToHost(act_unfused);
        for (size_t r = 0; r < rows; ++r) {
          const auto xn = NormRowHost(x, r, nw, eps);
          for (size_t j = 0; j < ff; ++j) {
            const auto [g, g_mag] = DotHost(xn, w, j);
            const auto [u, u_mag] = DotHost(xn, w, ff + j);
            const double silu = g / (1 + std::exp(-g)), want = silu * u;
            const double bound = 1e-2 * std::fabs(want) + 1.1 * 1e-3 * (1 + g_mag) * std::fabs(u) +
                                 std::fabs(silu) * 1e-3 * (1 + u_mag) + 1e-6;
            ASSERT_NEAR(__bfloat162float(a[r * ff + j]), want, bound)
                << rows << "x" << ff << "x" << k << " at " << r << "," << j;
            ASSERT_EQ(Bits(a[r * ff + j]), Bits(a_unfused[r * ff + j]))
                << "fused ≠ unfused, " << rows << "x" << ff << "x" << k << " at " << r << "," << j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace llmserve::kernels::cuda
