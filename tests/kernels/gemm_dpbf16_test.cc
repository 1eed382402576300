#include "kernels/cpu/gemm_dpbf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_amx.h"
#include "kernels/cpu/linear.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

using Bf16Buffer = std::vector<uint16_t, AlignedAllocator<uint16_t>>;

struct Operands {
  size_t m, n, k, kpad;
  Bf16Buffer a, w;
};

// Random bf16 operands in the tiled layouts (through the real packers).
// Activations span several binades so the sums round in many ways.
Operands MakeOperands(size_t m, size_t n, size_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::uniform_int_distribution<int> scale(-6, 6);
  Operands o{m, n, k, amx::PaddedK(k), {}, {}};
  std::vector<float> x(m * k), w(n * k);
  for (auto& v : x) v = std::ldexp(dist(rng), scale(rng));
  for (auto& v : w) v = dist(rng) * 0.05f;
  o.a.assign(amx::TiledABytes(m, o.kpad) / 2, 0);
  o.w.assign(amx::PackedBytes(n, k) / 2, 0);
  amx::ConvertRows(x.data(), k, k, 0, m, o.a.data(), o.kpad);
  amx::Pack(w.data(), WeightDType::kF32, n, k, k, o.w.data());
  return o;
}

// The kernel's arithmetic is one vdpbf16ps per k pair in k order for every
// element; the scalar model of that instruction must give the same bits, for
// every register-block shape (m 1..8 and remainders, panel groups of 1..8).
TEST(GemmDpbf16, MatchesScalarModelBitwise) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512Bf16);
  for (size_t m : {1, 2, 3, 4, 5, 7, 8, 9, 16, 21, 40}) {
    for (size_t n : {16, 37, 130}) {
      const size_t k = 96 + m % 3 * 17;  // 96, 113, 130: full and padded tiles
      const Operands o = MakeOperands(m, n, k, static_cast<uint32_t>(m * 1000 + n));
      const size_t panels = (n + 15) / 16;
      std::vector<float> y(m * n, -7.f), ref(m * n);
      dpbf16::Gemm(o.a.data(), m, o.kpad, o.w.data(), n, y.data(), n, 0, panels);
      dpbf16::GemmReference(o.a.data(), m, o.kpad, o.w.data(), n, ref.data(), n);
      for (size_t i = 0; i < m * n; ++i)
        ASSERT_EQ(y[i], ref[i]) << "m=" << m << " n=" << n << " element " << i;
    }
  }
}

// Decode batches of 12..24 rows, with either decode loop (whatever this CPU
// prefers): whole K per row block, or K in slices of 4 k tiles with the sums
// parked between slices. Both give the scalar model's bits, with a partial
// last slice (K = 300: 10 tiles) and many slices (K = 1024).
TEST(GemmDpbf16, DecodeLoopsMatchScalarModelBitwise) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512Bf16);
  for (const dpbf16::DecodeLoop loop : {dpbf16::DecodeLoop::kWholeK, dpbf16::DecodeLoop::kKSliced}) {
    for (size_t m : {12, 16, 21, 24}) {
      for (size_t k : {300, 1024}) {
        const size_t n = 100;
        const Operands o = MakeOperands(m, n, k, static_cast<uint32_t>(m * 7 + k));
        std::vector<float> y(m * n, -7.f), ref(m * n);
        dpbf16::Gemm(o.a.data(), m, o.kpad, o.w.data(), n, y.data(), n, 0, (n + 15) / 16, loop);
        dpbf16::GemmReference(o.a.data(), m, o.kpad, o.w.data(), n, ref.data(), n);
        for (size_t i = 0; i < m * n; ++i)
          ASSERT_EQ(y[i], ref[i]) << "sliced=" << (loop == dpbf16::DecodeLoop::kKSliced) << " m=" << m << " k=" << k
                                  << " element " << i;
      }
    }
  }
}

// A panel range computes exactly those columns and leaves the rest alone.
TEST(GemmDpbf16, PanelRangeWritesOnlyItsColumns) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512Bf16);
  const size_t m = 11, n = 100, k = 64;
  const Operands o = MakeOperands(m, n, k, 3);
  std::vector<float> y(m * n, -7.f), ref(m * n);
  dpbf16::Gemm(o.a.data(), m, o.kpad, o.w.data(), n, y.data(), n, 2, 5);  // columns 32..79
  dpbf16::GemmReference(o.a.data(), m, o.kpad, o.w.data(), n, ref.data(), n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t c = 0; c < n; ++c) {
      const bool inside = c >= 32 && c < 80;
      ASSERT_EQ(y[i * n + c], inside ? ref[i * n + c] : -7.f) << i << " " << c;
    }
  }
}

TEST(GemmDpbf16, PeakLoopComputes) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512Bf16);
  // 24 accumulators start at 0..23 and gain 1·1 + 1·1 per iteration in
  // each of 16 lanes.
  const float total = dpbf16::Dpbf16PeakLoop(10);
  EXPECT_EQ(total, 16.f * (276.f + 24.f * 20.f));
}

}  // namespace
}  // namespace llmserve::kernels::cpu
