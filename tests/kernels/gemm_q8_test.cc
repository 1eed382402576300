// Q8_0 weights kept quantized (gemm_q8.h): the activation quantization,
// the exact per-block formula, agreement of the scalar, AVX2 and VNNI
// kernels bit for bit, batch and thread invariance, and closeness to the f32
// product of the dequantized weights.
#include "kernels/cpu/gemm_q8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/float16.h"
#include "kernels/cpu/linear.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

// GGUF Q8_0 blocks for rows × stride weights (random quants; -128, which
// llama.cpp's quantizer never writes, only with `min_quant`).
std::vector<uint8_t> RandomQ8Blocks(size_t rows, size_t stride, std::mt19937& rng, bool min_quant = true) {
  std::uniform_int_distribution<int> quant(min_quant ? -128 : -127, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  std::vector<uint8_t> out(rows * stride / q8::kBlock * q8::kBlockBytes);
  for (size_t b = 0; b < out.size() / q8::kBlockBytes; ++b) {
    uint8_t* block = out.data() + b * q8::kBlockBytes;
    base::StoreU16(block, base::FloatToHalf(scale(rng)));
    for (size_t i = 0; i < q8::kBlock; ++i) block[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(quant(rng)));
  }
  return out;
}

// Weight (r, c) of those blocks, dequantized.
float DequantizedQ8(const std::vector<uint8_t>& blocks, size_t stride, size_t r, size_t c) {
  const uint8_t* block = blocks.data() + (r * stride + c) / q8::kBlock * q8::kBlockBytes;
  return base::HalfToFloat(base::LoadU16(block)) * static_cast<int8_t>(block[2 + c % q8::kBlock]);
}

std::vector<float> RandomQ8Activations(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

LinearWeight PackQ8With(Isa isa, const std::vector<uint8_t>& blocks, size_t rows, size_t cols, size_t stride) {
  SetMaxIsa(isa);
  LinearWeight w = LinearWeight::PackQ8_0(blocks.data(), rows, cols, stride);
  SetMaxIsa(Isa::kAmx);
  return w;
}

TEST(GemmQ8, QuantizesActivationsAsLlamaCppDoes) {
  std::vector<float> x(64, 0.f);
  x[0] = 127.f;  // block 0: scale 1
  x[1] = 2.5f;   // ties round away from zero
  x[2] = -2.5f;
  x[3] = 0.4f;
  // block 1 stays zero: scale 0, quants 0
  std::vector<int8_t> q(64);
  std::vector<float> d(2);
  q8::QuantizeRow(x.data(), 64, q.data(), d.data());
  EXPECT_EQ(d[0], 1.f);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 3);
  EXPECT_EQ(q[2], -3);
  EXPECT_EQ(q[3], 0);
  EXPECT_EQ(d[1], 0.f);
  for (size_t i = 32; i < 64; ++i) EXPECT_EQ(q[i], 0);
  // The scale is the f16 llama.cpp stores: 1/127 is not a half.
  std::fill(x.begin(), x.end(), 0.f);
  x[0] = 1.f;
  q8::QuantizeRow(x.data(), 32, q.data(), d.data());
  EXPECT_EQ(d[0], base::HalfToFloat(base::FloatToHalf(1.f / 127.f)));
  EXPECT_NE(d[0], 1.f / 127.f);
}

// Each output is fma(Σ qx·qw, dw × dx, acc) over blocks in order: the scalar
// kernel equals that formula written out here, bit for bit.
TEST(GemmQ8, ScalarKernelIsTheBlockFormula) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kScalar);
  std::mt19937 rng(3);
  const size_t rows = 13, cols = 96, stride = 160, m = 3;
  const auto blocks = RandomQ8Blocks(rows, stride, rng);
  const auto x = RandomQ8Activations(m * cols, rng);
  ThreadPool pool(1);
  std::vector<float> y(m * rows);
  PackQ8With(Isa::kScalar, blocks, rows, cols, stride).Apply(x.data(), m, y.data(), pool);
  std::vector<int8_t> q(cols);
  std::vector<float> d(cols / 32);
  for (size_t i = 0; i < m; ++i) {
    q8::QuantizeRow(x.data() + i * cols, cols, q.data(), d.data());
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t b = 0; b < cols / 32; ++b) {
        const uint8_t* block = blocks.data() + (r * stride / 32 + b) * q8::kBlockBytes;
        int32_t sum = 0;
        for (size_t c = 0; c < 32; ++c) sum += static_cast<int8_t>(block[2 + c]) * q[b * 32 + c];
        acc = std::fma(static_cast<float>(sum), base::HalfToFloat(base::LoadU16(block)) * d[b], acc);
      }
      EXPECT_EQ(y[i * rows + r], acc) << "row " << i << " output " << r;
    }
  }
}

// The kernel of level `isa` (kAvx2, or kAvx512: the VNNI kernel) against the
// scalar one, and each row alone against the batch.
void ExpectKernelEqualsScalarRowByRow(Isa isa, bool min_quant, std::mt19937& rng) {
  SCOPED_TRACE(min_quant ? "with -128 quants" : "quants within ±127");
  const size_t rows = 77, cols = 256, stride = 256, m = 15;  // VNNI: 8 + 4 + 3 × 1 rows
  const auto blocks = RandomQ8Blocks(rows, stride, rng, min_quant);
  const auto x = RandomQ8Activations(m * cols, rng);
  ThreadPool one(1), two(2);
  std::vector<float> scalar(m * rows), fast(m * rows);
  PackQ8With(Isa::kScalar, blocks, rows, cols, stride).Apply(x.data(), m, scalar.data(), one);
  const LinearWeight w = PackQ8With(isa, blocks, rows, cols, stride);
  EXPECT_EQ(w.isa(), isa);
  w.Apply(x.data(), m, fast.data(), two);
  EXPECT_EQ(std::memcmp(scalar.data(), fast.data(), scalar.size() * 4), 0);
  for (size_t i = 0; i < m; ++i) {
    std::vector<float> alone(rows);
    w.Apply(x.data() + i * cols, 1, alone.data(), one);
    EXPECT_EQ(std::memcmp(alone.data(), fast.data() + i * rows, rows * 4), 0) << "row " << i;
  }
}

TEST(GemmQ8, Avx2EqualsScalarAndRowsDoNotDependOnTheBatch) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx2);
  std::mt19937 rng(5);
  ExpectKernelEqualsScalarRowByRow(Isa::kAvx2, false, rng);  // the one-sign path
  ExpectKernelEqualsScalarRowByRow(Isa::kAvx2, true, rng);   // the path exact for -128
}

// vpdpbusd is AVX-512 VNNI, which not every AVX-512 CPU has (Skylake-X).
TEST(GemmQ8, VnniEqualsScalarAndRowsDoNotDependOnTheBatch) {
  if (!GetCpuFeatures().avx512_vnni) GTEST_SKIP() << "AVX-512 VNNI: not on this CPU";
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512);
  std::mt19937 rng(6);
  ExpectKernelEqualsScalarRowByRow(Isa::kAvx512, false, rng);
  ExpectKernelEqualsScalarRowByRow(Isa::kAvx512, true, rng);
}

// Against the f32 product of the dequantized weights: the only difference is
// the activations' rounding to int8: half a step (dx / 2) each, plus up to
// 127 × the f16 rounding of dx (2^-11 dx), so below 0.57 dx.
TEST(GemmQ8, IsCloseToTheDequantizedProduct) {
  std::mt19937 rng(9);
  const size_t rows = 40, cols = 512, stride = 576, m = 4;
  const auto blocks = RandomQ8Blocks(rows, stride, rng);
  const auto x = RandomQ8Activations(m * cols, rng);
  ThreadPool pool(2);
  std::vector<float> y(m * rows);
  LinearWeight::PackQ8_0(blocks.data(), rows, cols, stride).Apply(x.data(), m, y.data(), pool);
  for (size_t i = 0; i < m; ++i) {
    for (size_t r = 0; r < rows; ++r) {
      double exact = 0, bound = 0;
      for (size_t c = 0; c < cols; ++c) {
        const double w = DequantizedQ8(blocks, stride, r, c);
        exact += w * x[i * cols + c];
        double amax = 0;
        for (size_t k = c / 32 * 32; k < c / 32 * 32 + 32; ++k) amax = std::max(amax, std::fabs(double(x[i * cols + k])));
        bound += std::fabs(w) * (amax / 127 * 0.57 + std::fabs(x[i * cols + c]) * 1e-5);
      }
      EXPECT_NEAR(y[i * rows + r], exact, bound + 1e-6) << "row " << i << " output " << r;
    }
  }
}

// Int8 weights with one f32 scale per row and block (per-channel int8, or
// 4-bit groups widened) take the same kernels, the scales unrounded. Scalar
// and AVX2 give the block formula bit for bit, -128 quants included.
TEST(GemmQ8, Int8WeightsWithBlockScalesAreTheBlockFormula) {
  std::mt19937 rng(11);
  const size_t rows = 21, cols = 128, stride = 160, m = 5;
  std::uniform_int_distribution<int> quant(-128, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  std::vector<int8_t> q(rows * stride);
  for (int8_t& v : q) v = static_cast<int8_t>(quant(rng));
  std::vector<float> scales(rows * cols / 32);
  for (float& v : scales) v = scale(rng);
  const auto x = RandomQ8Activations(m * cols, rng);
  std::vector<float> want(m * rows);
  std::vector<int8_t> xq(cols);
  std::vector<float> xd(cols / 32);
  for (size_t i = 0; i < m; ++i) {
    q8::QuantizeRow(x.data() + i * cols, cols, xq.data(), xd.data());
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t b = 0; b < cols / 32; ++b) {
        int32_t sum = 0;
        for (size_t c = 0; c < 32; ++c) sum += q[r * stride + b * 32 + c] * xq[b * 32 + c];
        acc = std::fma(static_cast<float>(sum), scales[r * cols / 32 + b] * xd[b], acc);
      }
      want[i * rows + r] = acc;
    }
  }
  ThreadPool pool(2);
  for (Isa isa : {Isa::kScalar, Isa::kAvx2}) {
    if (!test_paths::EnterCpuPath(isa)) continue;
    SetMaxIsa(isa);
    const LinearWeight w = LinearWeight::PackInt8(q.data(), scales.data(), rows, cols, stride);
    SetMaxIsa(Isa::kAmx);
    EXPECT_TRUE(w.is_q8_0());
    std::vector<float> y(m * rows);
    w.Apply(x.data(), m, y.data(), pool);
    EXPECT_EQ(std::memcmp(y.data(), want.data(), y.size() * 4), 0) << IsaName(isa);
  }
}

}  // namespace
}  // namespace llmserve::kernels::cpu
