// K-quant weights kept packed (gemm_q4k.h for Q5_K, gemm_q6k.h for Q6_K, and
// LinearWeight::PackKQuants stacking parts of different formats): the exact
// Q6_K block formula, scalar and AVX2 kernels equal bit for bit with rows
// independent of the batch, closeness to the product of the weights as
// common/gguf dequantizes them, and stacked parts equal to each part alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/float16.h"
#include "common/gguf/dequantize.h"
#include "kernels/cpu/gemm_q4k.h"
#include "kernels/cpu/linear.h"
#include "tests/kernels/cpu_path.h"
#include "tests/kernels/kquant_test_util.h"

namespace llmserve::kernels::cpu::kquant_test {
namespace {

using kquant_test_util::Quantize;
using kquant_test_util::QuantizedRow;
using kquant_test_util::RandomActivations;

using common::gguf::GgmlType;

struct FormatCase {
  KQuantType type;
  GgmlType ggml;
  size_t block_bytes;
  const char* name;
};
const FormatCase kQ4K{KQuantType::kQ4_K, GgmlType::kQ4_K, 144, "Q4_K"};
const FormatCase kQ5K{KQuantType::kQ5_K, GgmlType::kQ5_K, 176, "Q5_K"};
const FormatCase kQ6K{KQuantType::kQ6_K, GgmlType::kQ6_K, 210, "Q6_K"};

// Blocks of random bytes (every pattern is a valid set of quants and
// scales) with small random f16 scales where the format keeps them: d and
// dmin first for Q4_K / Q5_K, d last for Q6_K.
std::vector<uint8_t> RandomBlocks(const FormatCase& f, size_t rows, size_t stride, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.0005f, 0.002f);
  std::vector<uint8_t> out(rows * stride / 256 * f.block_bytes);
  for (size_t b = 0; b < out.size() / f.block_bytes; ++b) {
    uint8_t* block = out.data() + b * f.block_bytes;
    for (size_t i = 0; i < f.block_bytes; ++i) block[i] = static_cast<uint8_t>(byte(rng));
    if (f.type == KQuantType::kQ6_K) {
      base::StoreU16(block + 208, base::FloatToHalf(scale(rng)));
    } else {
      base::StoreU16(block, base::FloatToHalf(scale(rng)));
      base::StoreU16(block + 2, base::FloatToHalf(scale(rng)));
    }
  }
  return out;
}

LinearWeight PackWith(Isa isa, const std::vector<KQuantRows>& parts, size_t cols) {
  SetMaxIsa(isa);
  LinearWeight w = LinearWeight::PackKQuants(parts, cols);
  SetMaxIsa(Isa::kAmx);
  return w;
}

// Quant c (0..63) of a Q6_K block, from the format's description.
int Q6Quant(const uint8_t* block, size_t c) {
  const uint8_t* ql = block + 64 * (c / 128);
  const uint8_t* qh = block + 128 + 32 * (c / 128);
  const size_t t = c % 128 / 32, l = c % 32;
  const int low = t < 2 ? ql[l + 32 * (t % 2)] & 0xf : ql[l + 32 * (t % 2)] >> 4;
  return low | (((qh[l] >> (2 * t)) & 3) << 4);
}

TEST(GemmKQuant, Q6ScalarKernelIsTheBlockFormula) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kScalar);
  std::mt19937 rng(3);
  const size_t rows = 13, cols = 512, stride = 768, m = 3;
  const auto blocks = RandomBlocks(kQ6K, rows, stride, rng);
  const auto x = RandomActivations(m * cols, rng);
  ThreadPool pool(1);
  std::vector<float> y(m * rows);
  PackWith(Isa::kScalar, {{KQuantType::kQ6_K, blocks.data(), rows, stride}}, cols).Apply(x.data(), m, y.data(), pool);
  for (size_t i = 0; i < m; ++i) {
    const QuantizedRow xr = Quantize(x.data() + i * cols, cols);
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t b = 0; b < cols / 256; ++b) {
        const uint8_t* block = blocks.data() + (r * stride / 256 + b) * kQ6K.block_bytes;
        int64_t isum = 0;
        for (size_t c = 0; c < 256; ++c) {
          const int scale = static_cast<int8_t>(block[192 + c / 16]);
          isum += int64_t{scale} * (Q6Quant(block, c) - 32) * xr.q[b * 256 + c];
        }
        acc = std::fma(static_cast<float>(isum), base::HalfToFloat(base::LoadU16(block + 208)) * xr.d[b], acc);
      }
      EXPECT_EQ(y[i * rows + r], acc) << "row " << i << " output " << r;
    }
  }
}

// The `isa` kernel against the scalar one for m = 1..17, on one and two
// threads, and each row alone against the batch.
void ExpectEqualsScalar(Isa isa, const FormatCase& f, size_t rows, size_t cols, size_t stride, std::mt19937& rng) {
  SCOPED_TRACE(std::string(f.name) + " rows " + std::to_string(rows) + " cols " + std::to_string(cols));
  const auto blocks = RandomBlocks(f, rows, stride, rng);
  const std::vector<KQuantRows> parts{{f.type, blocks.data(), rows, stride}};
  const LinearWeight scalar_w = PackWith(Isa::kScalar, parts, cols);
  const LinearWeight fast_w = PackWith(isa, parts, cols);
  ASSERT_EQ(fast_w.isa(), isa);
  ASSERT_TRUE(fast_w.is_k_quant());
  ThreadPool one(1), two(2);
  const auto x = RandomActivations(17 * cols, rng);
  std::vector<float> alone(17 * rows);
  for (size_t i = 0; i < 17; ++i) fast_w.Apply(x.data() + i * cols, 1, alone.data() + i * rows, one);
  for (size_t m = 1; m <= 17; ++m) {
    std::vector<float> scalar(m * rows), fast(m * rows);
    scalar_w.Apply(x.data(), m, scalar.data(), one);
    fast_w.Apply(x.data(), m, fast.data(), two);
    EXPECT_EQ(std::memcmp(scalar.data(), fast.data(), scalar.size() * 4), 0) << "m " << m;
    EXPECT_EQ(std::memcmp(alone.data(), fast.data(), fast.size() * 4), 0) << "m " << m << ": batch changed a row";
  }
}

void ExpectEqualsScalarOnShapes(Isa isa) {
  std::mt19937 rng(5);
  for (const FormatCase* f : {&kQ4K, &kQ5K, &kQ6K}) {
    ExpectEqualsScalar(isa, *f, 1, 256, 256, rng);
    ExpectEqualsScalar(isa, *f, 8, 256, 512, rng);
    ExpectEqualsScalar(isa, *f, 13, 768, 768, rng);   // a group tail of 5
    ExpectEqualsScalar(isa, *f, 77, 512, 1024, rng);  // a group tail over many groups
  }
}

TEST(GemmKQuant, Avx2EqualsScalarAndRowsDoNotDependOnTheBatch) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx2);
  ExpectEqualsScalarOnShapes(Isa::kAvx2);
}

// The AVX-512 kernels need VNNI (vpdpwssd) besides AVX-512 BW.
TEST(GemmKQuant, Avx512EqualsScalarAndRowsDoNotDependOnTheBatch) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512);
  if (!GetCpuFeatures().avx512_vnni) GTEST_SKIP() << "AVX-512 VNNI: not on this CPU";
  ExpectEqualsScalarOnShapes(Isa::kAvx512);
}

// Against the double product of the weights as common/gguf dequantizes them
// (an implementation of the published formats checked against numpy) and the
// dequantized activations: only the kernels' float steps differ.
TEST(GemmKQuant, IsTheDequantizedProductUpToFloatRounding) {
  std::mt19937 rng(9);
  const size_t rows = 40, cols = 1024, stride = 1280, m = 4;
  ThreadPool pool(2);
  for (const FormatCase* f : {&kQ4K, &kQ5K, &kQ6K}) {
    SCOPED_TRACE(f->name);
    const auto blocks = RandomBlocks(*f, rows, stride, rng);
    const auto x = RandomActivations(m * cols, rng);
    std::vector<float> y(m * rows);
    LinearWeight::PackKQuants({{f->type, blocks.data(), rows, stride}}, cols).Apply(x.data(), m, y.data(), pool);
    std::vector<float> w(cols);
    for (size_t r = 0; r < rows; ++r) {
      const uint8_t* row = blocks.data() + r * stride / 256 * f->block_bytes;
      ASSERT_TRUE(common::gguf::DequantizeRow(f->ggml, row, cols, w.data()).ok());
      for (size_t i = 0; i < m; ++i) {
        const QuantizedRow xr = Quantize(x.data() + i * cols, cols);
        double exact = 0, magnitude = 0;
        for (size_t c = 0; c < cols; ++c) {
          const double term = static_cast<double>(w[c]) * xr.d[c / 256] * xr.q[c];
          exact += term;
          magnitude += std::fabs(term);
        }
        // The dequantizer rounds d·sc (and dmin·m) products once per weight;
        // the kernel rounds per block: a few ulps of the magnitude.
        EXPECT_NEAR(y[i * rows + r], exact, 64 * std::ldexp(magnitude, -24)) << "row " << i << " output " << r;
      }
    }
  }
}

// Q4_K, Q6_K and Q5_K parts stacked (as q, k and v of a Q4_K_M file) give,
// bit for bit, each part's weight alone, on every kernel this CPU runs.
TEST(GemmKQuant, StackedPartsEqualEachPartAlone) {
  std::mt19937 rng(11);
  const size_t cols = 512, m = 3;
  const auto a = RandomBlocks(kQ4K, 16, cols, rng), b = RandomBlocks(kQ6K, 8, cols, rng);
  const auto c = RandomBlocks(kQ5K, 5, cols, rng);
  const std::vector<KQuantRows> parts{{KQuantType::kQ4_K, a.data(), 16, cols},
                                      {KQuantType::kQ6_K, b.data(), 8, cols},
                                      {KQuantType::kQ5_K, c.data(), 5, cols}};
  const auto x = RandomActivations(m * cols, rng);
  ThreadPool pool(2);
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!test_paths::EnterCpuPath(isa)) continue;
    std::vector<float> stacked(m * 29);
    PackWith(isa, parts, cols).Apply(x.data(), m, stacked.data(), pool);
    size_t first = 0;
    for (const KQuantRows& part : parts) {
      std::vector<float> alone(m * part.rows);
      PackWith(isa, {part}, cols).Apply(x.data(), m, alone.data(), pool);
      for (size_t i = 0; i < m; ++i) {
        EXPECT_EQ(std::memcmp(alone.data() + i * part.rows, stacked.data() + i * 29 + first, part.rows * 4), 0)
            << IsaName(isa) << " part at row " << first << ", activation row " << i;
      }
      first += part.rows;
    }
  }
}

}  // namespace
}  // namespace llmserve::kernels::cpu::kquant_test
