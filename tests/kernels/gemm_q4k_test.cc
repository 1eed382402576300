// Q4_K weights kept 4-bit (gemm_q4k.h): the Q8_K activation quantization,
// the exact per-block formula, and closeness to a double product of the
// dequantized weights and activations (the fast kernels against the scalar
// one, with Q5_K and Q6_K: gemm_kquant_test.cc).
#include "kernels/cpu/gemm_q4k.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/float16.h"
#include "kernels/cpu/linear.h"
#include "tests/kernels/cpu_path.h"
#include "tests/kernels/kquant_test_util.h"

namespace llmserve::kernels::cpu::q4k_test {
namespace {

using kquant_test_util::Quantize;
using kquant_test_util::QuantizedRow;
using kquant_test_util::RandomActivations;

// GGUF Q4_K blocks for rows × stride weights: random f16 d and dmin, random
// 12 scale bytes (every byte pattern is a valid set of 6-bit scales and
// mins) and random nibbles.
std::vector<uint8_t> RandomQ4KBlocks(size_t rows, size_t stride, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.0005f, 0.002f);
  std::vector<uint8_t> out(rows * stride / q4k::kBlock * q4k::kBlockBytes);
  for (size_t b = 0; b < out.size() / q4k::kBlockBytes; ++b) {
    uint8_t* block = out.data() + b * q4k::kBlockBytes;
    base::StoreU16(block, base::FloatToHalf(scale(rng)));
    base::StoreU16(block + 2, base::FloatToHalf(scale(rng)));
    for (size_t i = 4; i < q4k::kBlockBytes; ++i) block[i] = static_cast<uint8_t>(byte(rng));
  }
  return out;
}

// The 6-bit scale and min of sub-block s, as ggml's get_scale_min_k4.
void TestScaleMin(const uint8_t* q, size_t s, int* scale, int* min) {
  if (s < 4) {
    *scale = q[s] & 63;
    *min = q[s + 4] & 63;
  } else {
    *scale = (q[s + 4] & 0xf) | ((q[s - 4] >> 6) << 4);
    *min = (q[s + 4] >> 4) | ((q[s] >> 6) << 4);
  }
}

const uint8_t* BlockOf(const std::vector<uint8_t>& blocks, size_t stride, size_t r, size_t b) {
  return blocks.data() + (r * stride / q4k::kBlock + b) * q4k::kBlockBytes;
}

// Quant c (0..255) of a block.
int Nibble(const uint8_t* block, size_t c) {
  const uint8_t byte = block[16 + c / 64 * 32 + c % 32];
  return c % 64 < 32 ? byte & 0xf : byte >> 4;
}

LinearWeight PackQ4KWith(Isa isa, const std::vector<uint8_t>& blocks, size_t rows, size_t cols, size_t stride) {
  SetMaxIsa(isa);
  LinearWeight w = LinearWeight::PackQ4_K(blocks.data(), rows, cols, stride);
  SetMaxIsa(Isa::kAmx);
  return w;
}

TEST(GemmQ4K, QuantizesActivationsAsLlamaCppQ8KDoes) {
  std::vector<float> x(512, 0.f);
  x[0] = -127.f;  // the first largest |x|, negative: iscale = 1
  x[1] = 2.5f;    // ties round to even
  x[2] = 3.5f;
  x[3] = -2.5f;
  x[20] = 127.f;  // as large, but not first
  // block 1 stays zero: scale 0, quants and sums 0
  QuantizedRow row = Quantize(x.data(), 512);
  EXPECT_EQ(row.d[0], 1.f);
  EXPECT_EQ(row.q[0], -127);
  EXPECT_EQ(row.q[1], 2);
  EXPECT_EQ(row.q[2], 4);
  EXPECT_EQ(row.q[3], -2);
  EXPECT_EQ(row.q[20], 127);
  EXPECT_EQ(row.sums[0], -127 + 2 + 4 - 2);
  EXPECT_EQ(row.sums[1], 127);
  EXPECT_EQ(row.d[1], 0.f);
  for (size_t i = 256; i < 512; ++i) ASSERT_EQ(row.q[i], 0);
  for (size_t t = 16; t < 32; ++t) EXPECT_EQ(row.sums[t], 0);
  // A positive maximum gives a negative scale, kept as f32.
  std::fill(x.begin(), x.end(), 0.f);
  x[5] = 1.f;
  x[6] = -0.5f;
  row = Quantize(x.data(), 256);
  EXPECT_EQ(row.q[5], -127);
  EXPECT_EQ(row.q[6], 64);  // 63.5 rounds to even
  EXPECT_EQ(row.d[0], 1.f / (-127.f / 1.f));
}

// The AVX2 quantizer gives the scalar one's bits: random rows, ties, a zero
// block, equal magnitudes of both signs (the first wins).
TEST(GemmQ4K, Avx2QuantizerIsTheScalarOne) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx2);
  std::mt19937 rng(21);
  auto x = RandomActivations(1024, rng);
  for (size_t i = 0; i < 40; ++i) x[i] = static_cast<float>(i) * 0.5f - 10.f;  // halves: ties after scaling
  std::fill(x.begin() + 256, x.begin() + 512, 0.f);
  x[600] = 3.f;
  x[601] = -3.f;
  QuantizedRow a = Quantize(x.data(), 1024), b = a;
  q4k::QuantizeRowAvx2(x.data(), 1024, b.q.data(), b.d.data(), b.sums.data());
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(std::memcmp(a.d.data(), b.d.data(), a.d.size() * sizeof(float)), 0);
  EXPECT_EQ(a.sums, b.sums);
}

// isum and msum of output row r against one quantized activation block b.
void BlockSums(const uint8_t* block, const QuantizedRow& x, size_t b, int64_t* isum, int64_t* msum) {
  *isum = *msum = 0;
  for (size_t s = 0; s < 8; ++s) {
    int scale, min;
    TestScaleMin(block + 4, s, &scale, &min);
    int64_t dot = 0;
    for (size_t c = 32 * s; c < 32 * s + 32; ++c) dot += Nibble(block, c) * x.q[b * 256 + c];
    *isum += scale * dot;
    *msum += min * (x.sums[b * 16 + 2 * s] + x.sums[b * 16 + 2 * s + 1]);
  }
}

// The scalar kernel equals the header's formula written out here from the
// file's blocks, bit for bit.
TEST(GemmQ4K, ScalarKernelIsTheBlockFormula) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kScalar);
  std::mt19937 rng(3);
  const size_t rows = 13, cols = 512, stride = 768, m = 3;
  const auto blocks = RandomQ4KBlocks(rows, stride, rng);
  const auto x = RandomActivations(m * cols, rng);
  ThreadPool pool(1);
  std::vector<float> y(m * rows);
  PackQ4KWith(Isa::kScalar, blocks, rows, cols, stride).Apply(x.data(), m, y.data(), pool);
  for (size_t i = 0; i < m; ++i) {
    const QuantizedRow xr = Quantize(x.data() + i * cols, cols);
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t b = 0; b < cols / 256; ++b) {
        const uint8_t* block = BlockOf(blocks, stride, r, b);
        int64_t isum, msum;
        BlockSums(block, xr, b, &isum, &msum);
        const float d = base::HalfToFloat(base::LoadU16(block)), dmin = base::HalfToFloat(base::LoadU16(block + 2));
        acc = std::fma(static_cast<float>(isum), d * xr.d[b], acc);
        acc = std::fma(-static_cast<float>(msum), dmin * xr.d[b], acc);
      }
      EXPECT_EQ(y[i * rows + r], acc) << "row " << i << " output " << r;
    }
  }
}

// Against the double product of the dequantized weights and the dequantized
// activations: only the float steps differ (float(isum), the two scale
// products and two fmas per block), each within 2^-24 relative of a term.
TEST(GemmQ4K, IsTheDequantizedProductUpToFloatRounding) {
  std::mt19937 rng(9);
  const size_t rows = 40, cols = 1024, stride = 1280, m = 4;
  const auto blocks = RandomQ4KBlocks(rows, stride, rng);
  const auto x = RandomActivations(m * cols, rng);
  ThreadPool pool(2);
  std::vector<float> y(m * rows);
  LinearWeight::PackQ4_K(blocks.data(), rows, cols, stride).Apply(x.data(), m, y.data(), pool);
  for (size_t i = 0; i < m; ++i) {
    const QuantizedRow xr = Quantize(x.data() + i * cols, cols);
    for (size_t r = 0; r < rows; ++r) {
      double exact = 0, magnitude = 0;
      for (size_t b = 0; b < cols / 256; ++b) {
        const uint8_t* block = BlockOf(blocks, stride, r, b);
        const double d = base::HalfToFloat(base::LoadU16(block)), dmin = base::HalfToFloat(base::LoadU16(block + 2));
        for (size_t c = 0; c < 256; ++c) {
          int scale, min;
          TestScaleMin(block + 4, c / 32, &scale, &min);
          const double w = d * scale * Nibble(block, c) - dmin * min;
          const double a = static_cast<double>(xr.d[b]) * xr.q[b * 256 + c];
          exact += w * a;
        }
        int64_t isum, msum;
        BlockSums(block, xr, b, &isum, &msum);
        magnitude += std::fabs(d * xr.d[b] * isum) + std::fabs(dmin * xr.d[b] * msum);
      }
      const double bound = (2.0 * cols / 256 + 4) * std::ldexp(magnitude, -24);
      EXPECT_NEAR(y[i * rows + r], exact, bound) << "row " << i << " output " << r;
    }
  }
}

}  // namespace
}  // namespace llmserve::kernels::cpu::q4k_test
