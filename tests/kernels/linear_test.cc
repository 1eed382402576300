#include "kernels/cpu/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_amx.h"
#include "kernels/cpu/rms_norm.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

TEST(Linear, Bf16RoundTripAndReferenceValues) {
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.5f)), 1.5f);
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000), -2.0f);
  // W = [[1, 2], [3, 4], [5, 6]], x = [1, -1] -> y = [-1, -1, -1].
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::vector<float> x = {1, -1, 2, 0.5f};
  std::vector<float> y(6);
  LinearReference(x.data(), 2, w.data(), WeightDType::kF32, 3, 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{-1, -1, -1, 3, 8, 13}));
}

// A random weight stored as `dtype`, with its fp32 values.
struct Weight {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

Weight RandomWeight(WeightDType dtype, size_t rows, size_t cols, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 0.5f);
  Weight w;
  w.values.resize(rows * cols);
  w.bytes.resize(rows * cols * (dtype == WeightDType::kF32 ? 4 : 2));
  for (size_t i = 0; i < rows * cols; ++i) {
    float v = dist(rng);
    if (dtype == WeightDType::kF32) {
      std::memcpy(&w.bytes[i * 4], &v, 4);
    } else if (dtype == WeightDType::kBF16) {
      const uint16_t b = F32ToBf16(v);
      std::memcpy(&w.bytes[i * 2], &b, 2);
      v = Bf16ToF32(b);
    } else {
      // f16 via a value exactly representable in both: bf16-rounded, |v| < 8.
      const float r = Bf16ToF32(F32ToBf16(v));
      uint32_t u;
      std::memcpy(&u, &r, 4);
      const uint32_t sign = (u >> 16) & 0x8000;
      const int exp = int((u >> 23) & 0xff) - 127 + 15;
      uint16_t h = static_cast<uint16_t>(sign);
      if (exp > 0) h |= static_cast<uint16_t>((exp << 10) | ((u >> 13) & 0x3ff));
      std::memcpy(&w.bytes[i * 2], &h, 2);
      v = F16ToF32(h);
    }
    w.values[i] = v;
  }
  return w;
}

std::vector<float> RandomActivations(size_t count, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(count);
  for (auto& v : x) v = dist(rng);
  return x;
}

const char* DTypeName(WeightDType d) {
  return d == WeightDType::kF32 ? "f32" : d == WeightDType::kBF16 ? "bf16" : "f16";
}

// Packs `w` with the kernel family capped at `isa`.
LinearWeight PackWith(Isa isa, const Weight& w, WeightDType dtype, size_t rows, size_t cols,
                      MatmulPrecision precision) {
  SetMaxIsa(isa);
  LinearWeight lw = LinearWeight::Pack(w.bytes.data(), dtype, rows, cols, cols, precision);
  SetMaxIsa(Isa::kAmx);
  return lw;
}

struct Shape {
  size_t rows, cols;
};
// Includes non-multiples of 16 / 32 / 64 on both axes.
const Shape kShapes[] = {{1, 1}, {37, 70}, {16, 32}, {48, 96}, {130, 257}, {64, 1024}};

// Max |y - ref| must stay within tol × Σ_k |x_k w_k| (the error bound of an
// fp32 dot product), per element.
void ExpectClose(const std::vector<float>& y, const std::vector<float>& x,
                 const std::vector<float>& w, size_t m, size_t rows, size_t cols, double tol,
                 const std::string& what) {
  std::vector<float> ref(m * rows);
  LinearReference(x.data(), m, w.data(), WeightDType::kF32, rows, cols, ref.data());
  for (size_t i = 0; i < m; ++i) {
    for (size_t r = 0; r < rows; ++r) {
      double mag = 0;
      for (size_t c = 0; c < cols; ++c) mag += std::fabs(double(x[i * cols + c]) * w[r * cols + c]);
      ASSERT_LE(std::fabs(double(y[i * rows + r]) - ref[i * rows + r]), tol * mag + 1e-30)
          << what << " row " << i << " out " << r << " ref " << ref[i * rows + r];
    }
  }
}

// Row i of Apply(x, m) must be bitwise the same as Apply(row i alone) and as
// that row inside a different batch at a different position.
void ExpectBatchInvariant(const LinearWeight& lw, const std::vector<float>& x, size_t m,
                          const std::vector<float>& y, ThreadPool& pool, std::mt19937& rng,
                          const std::string& what) {
  const size_t rows = lw.rows(), cols = lw.cols();
  std::vector<float> one(rows);
  for (size_t i = 0; i < m; ++i) {
    lw.Apply(x.data() + i * cols, 1, one.data(), pool);
    ASSERT_EQ(std::memcmp(one.data(), y.data() + i * rows, rows * 4), 0) << what << " row " << i;
  }
  // Other batch: 19 random rows with the rows of x placed at rows 19 - m .. in reverse order.
  const size_t other_m = m + 19;
  std::vector<float> other = RandomActivations(other_m * cols, rng);
  for (size_t i = 0; i < m; ++i)
    std::memcpy(&other[(other_m - 1 - i) * cols], &x[i * cols], cols * 4);
  std::vector<float> other_y(other_m * rows);
  lw.Apply(other.data(), other_m, other_y.data(), pool);
  for (size_t i = 0; i < m; ++i)
    ASSERT_EQ(std::memcmp(&other_y[(other_m - 1 - i) * rows], &y[i * rows], rows * 4), 0)
        << what << " row " << i << " in another batch";
}

void CheckPath(Isa isa, MatmulPrecision precision) {
  LLMSERVE_REQUIRE_CPU_PATH(isa);
  std::mt19937 rng(7);
  ThreadPool pool(2);
  for (WeightDType dtype : {WeightDType::kBF16, WeightDType::kF16, WeightDType::kF32}) {
    for (const Shape& s : kShapes) {
      if (isa == Isa::kScalar && s.cols > 300) continue;  // keep the scalar path quick
      const Weight w = RandomWeight(dtype, s.rows, s.cols, rng);
      const LinearWeight lw = PackWith(isa, w, dtype, s.rows, s.cols, precision);
      ASSERT_EQ(lw.rows(), s.rows);
      ASSERT_EQ(lw.cols(), s.cols);
      const bool bf16_hardware = isa == Isa::kAmx || isa == Isa::kAvx512Bf16;
      const Isa expect = precision == MatmulPrecision::kF32 && bf16_hardware ? Isa::kAvx512 : isa;
      ASSERT_EQ(lw.isa(), expect);
      for (size_t m : {size_t{1}, size_t{3}, size_t{17}, size_t{33}, size_t{70}}) {
        const std::string what = std::string(IsaName(isa)) + " " + DTypeName(dtype) + " " +
                                 std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                                 " m=" + std::to_string(m);
        std::vector<float> x = RandomActivations(m * s.cols, rng);
        std::vector<float> y(m * s.rows, -1.f);
        lw.Apply(x.data(), m, y.data(), pool);
        if (precision == MatmulPrecision::kF32) {
          ExpectClose(y, x, w.values, m, s.rows, s.cols, 1e-5, what);
        } else {
          // Against the reference on bf16-rounded activations and weights.
          std::vector<float> xr(x.size()), wr(w.values.size());
          for (size_t i = 0; i < x.size(); ++i) xr[i] = Bf16ToF32(F32ToBf16(x[i]));
          for (size_t i = 0; i < wr.size(); ++i) wr[i] = Bf16ToF32(F32ToBf16(w.values[i]));
          ExpectClose(y, xr, wr, m, s.rows, s.cols, 1e-5, what);
        }
        ExpectBatchInvariant(lw, x, m, y, pool, rng, what);
      }
    }
  }
}

TEST(Linear, F32PrecisionScalar) { CheckPath(Isa::kScalar, MatmulPrecision::kF32); }
TEST(Linear, F32PrecisionAvx2) { CheckPath(Isa::kAvx2, MatmulPrecision::kF32); }
TEST(Linear, F32PrecisionAvx512) { CheckPath(Isa::kAvx512, MatmulPrecision::kF32); }
TEST(Linear, Bf16PrecisionScalar) { CheckPath(Isa::kScalar, MatmulPrecision::kBF16); }
TEST(Linear, Bf16PrecisionAvx2) { CheckPath(Isa::kAvx2, MatmulPrecision::kBF16); }
TEST(Linear, Bf16PrecisionAvx512) { CheckPath(Isa::kAvx512, MatmulPrecision::kBF16); }
TEST(Linear, Bf16PrecisionAvx512Bf16) { CheckPath(Isa::kAvx512Bf16, MatmulPrecision::kBF16); }
TEST(Linear, Bf16PrecisionAmx) { CheckPath(Isa::kAmx, MatmulPrecision::kBF16); }

// A large-m bf16 GEMM on `isa`: close to the reference on bf16-rounded
// activations, and every row bitwise the same row run alone.
void ExpectLargeMRowsMatchSingleRows(Isa isa, size_t rows, size_t cols, size_t m, uint32_t seed, const char* what) {
  std::mt19937 rng(seed);
  ThreadPool pool(2);
  const Weight w = RandomWeight(WeightDType::kBF16, rows, cols, rng);
  const LinearWeight lw = PackWith(isa, w, WeightDType::kBF16, rows, cols, MatmulPrecision::kBF16);
  ASSERT_EQ(lw.isa(), isa);
  std::vector<float> x = RandomActivations(m * cols, rng);
  std::vector<float> y(m * rows);
  lw.Apply(x.data(), m, y.data(), pool);
  std::vector<float> xr(x.size());
  for (size_t i = 0; i < x.size(); ++i) xr[i] = Bf16ToF32(F32ToBf16(x[i]));
  ExpectClose(y, xr, w.values, m, rows, cols, 1e-5, what);
  ExpectBatchInvariant(lw, x, m, y, pool, rng, what);
}

// The AMX large-m path: rows in chunks of 256 and K in blocks of 1024 with
// the accumulators parked in memory between blocks. Every row must equal the
// same row run alone (the m = 1 path, one pass over K) bit for bit.
TEST(Linear, AmxLargeMKBlockedMatchesSingleRows) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAmx);
  // 3 K blocks (last partial), 2 row chunks
  ExpectLargeMRowsMatchSingleRows(Isa::kAmx, 40, 2100, 300, 11, "amx large m");
}

// The vdpbf16ps path splits a large-m GEMM over few output panels into row
// chunks of 256 as well: every row must equal the same row run alone.
TEST(Linear, Dpbf16RowSplitMatchesSingleRows) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512Bf16);
  // 3 panels, row chunks of 256, 256, 88
  ExpectLargeMRowsMatchSingleRows(Isa::kAvx512Bf16, 40, 300, 600, 12, "dpbf16 row split");
}

// The fp32-FMA kernels compute each element as a sequential fma chain, so all
// instruction-set paths give the same bits (for both precisions).
TEST(Linear, FmaPathsAgreeBitwise) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kScalar);
  std::vector<Isa> paths;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (test_paths::EnterCpuPath(isa)) paths.push_back(isa);
  }
  if (paths.empty()) GTEST_SKIP() << test_paths::CpuPathSkipReason(Isa::kAvx2);
  std::mt19937 rng(11);
  ThreadPool pool(2);
  const size_t rows = 75, cols = 131, m = 9;
  for (MatmulPrecision precision : {MatmulPrecision::kF32, MatmulPrecision::kBF16}) {
    for (WeightDType dtype : {WeightDType::kBF16, WeightDType::kF16, WeightDType::kF32}) {
      const Weight w = RandomWeight(dtype, rows, cols, rng);
      const std::vector<float> x = RandomActivations(m * cols, rng);
      std::vector<float> base(m * rows);
      PackWith(Isa::kScalar, w, dtype, rows, cols, precision).Apply(x.data(), m, base.data(), pool);
      for (Isa isa : paths) {
        std::vector<float> y(m * rows);
        PackWith(isa, w, dtype, rows, cols, precision).Apply(x.data(), m, y.data(), pool);
        EXPECT_EQ(std::memcmp(y.data(), base.data(), y.size() * 4), 0)
            << IsaName(isa) << " " << DTypeName(dtype);
      }
    }
  }
}

// Results do not depend on the number of threads (splits are over outputs).
TEST(Linear, ThreadCountInvariant) {
  std::mt19937 rng(3);
  const size_t rows = 1000, cols = 320, m = 5;
  const Weight w = RandomWeight(WeightDType::kBF16, rows, cols, rng);
  const std::vector<float> x = RandomActivations(m * cols, rng);
  for (MatmulPrecision precision : {MatmulPrecision::kF32, MatmulPrecision::kBF16}) {
    const LinearWeight lw =
        LinearWeight::Pack(w.bytes.data(), WeightDType::kBF16, rows, cols, cols, precision);
    std::vector<float> base(m * rows);
    ThreadPool one(1);
    lw.Apply(x.data(), m, base.data(), one);
    for (size_t threads : {2, 3}) {
      ThreadPool pool(threads);
      std::vector<float> y(m * rows);
      lw.Apply(x.data(), m, y.data(), pool);
      EXPECT_EQ(std::memcmp(y.data(), base.data(), y.size() * 4), 0) << threads;
    }
  }
}

// A column block of a wider weight (tensor-parallel shard) via row_stride.
TEST(Linear, PacksColumnBlockWithRowStride) {
  std::mt19937 rng(5);
  const size_t rows = 40, full_cols = 100, col0 = 30, cols = 50, m = 4;
  const Weight w = RandomWeight(WeightDType::kBF16, rows, full_cols, rng);
  std::vector<float> block(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) block[r * cols + c] = w.values[r * full_cols + col0 + c];
  const std::vector<float> x = RandomActivations(m * cols, rng);
  ThreadPool pool(2);
  for (MatmulPrecision precision : {MatmulPrecision::kF32, MatmulPrecision::kBF16}) {
    const LinearWeight lw = LinearWeight::Pack(w.bytes.data() + col0 * 2, WeightDType::kBF16, rows,
                                               cols, full_cols, precision);
    EXPECT_GE(lw.bytes(), rows * cols * 2);
    std::vector<float> y(m * rows);
    lw.Apply(x.data(), m, y.data(), pool);
    std::vector<float> xr = x;
    if (precision == MatmulPrecision::kBF16)
      for (auto& v : xr) v = Bf16ToF32(F32ToBf16(v));
    ExpectClose(y, xr, block, m, rows, cols, 1e-5, "column block");
  }
}

// The AVX-512 AMX weight packer writes the same bytes as its scalar
// reference, for every source dtype, ragged row/column counts and a row stride.
TEST(Linear, AmxPackMatchesScalarReference) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512);  // amx::Pack is AVX-512 code
  std::mt19937 rng(9);
  for (const WeightDType dtype : {WeightDType::kBF16, WeightDType::kF16, WeightDType::kF32}) {
    for (const auto& [rows, cols] : std::vector<std::pair<size_t, size_t>>{{16, 32}, {37, 70}, {5, 1}, {48, 96}}) {
      const size_t stride = cols + 3;
      const Weight w = RandomWeight(dtype, rows, stride, rng);
      std::vector<uint16_t, AlignedAllocator<uint16_t>> fast(amx::PackedBytes(rows, cols) / 2, 0xabcd);
      std::vector<uint16_t, AlignedAllocator<uint16_t>> ref(fast.size(), 0x1234);
      amx::Pack(w.bytes.data(), dtype, rows, cols, stride, fast.data());
      amx::PackReference(w.bytes.data(), dtype, rows, cols, stride, ref.data());
      EXPECT_EQ(fast, ref) << "dtype " << static_cast<int>(dtype) << " rows " << rows << " cols " << cols;
    }
  }
}

TEST(Linear, EmptyShapes) {
  ThreadPool pool(2);
  std::vector<uint16_t> w(8, F32ToBf16(1.f));
  const LinearWeight lw =
      LinearWeight::Pack(w.data(), WeightDType::kBF16, 8, 1, 1, MatmulPrecision::kBF16);
  std::vector<float> y(8, 5.f);
  lw.Apply(nullptr, 0, y.data(), pool);  // m = 0 leaves y alone
  EXPECT_EQ(y[0], 5.f);
  const float x = 2.f;
  lw.Apply(&x, 1, y.data(), pool);
  for (float v : y) EXPECT_EQ(v, 2.f);
}

// A producer that writes the tiled bf16 activations itself (SiluMulTiled)
// must give exactly the bytes ConvertRows makes of SiluMul's fp32 output, pad
// included; and ApplyTiled on them the same y as Apply on the fp32 rows.
TEST(Linear, SiluMulTiledFeedsApplyTiledBitwise) {
  std::vector<Isa> paths;
  for (Isa isa : {Isa::kAvx512Bf16, Isa::kAmx}) {
    if (test_paths::EnterCpuPath(isa)) paths.push_back(isa);
  }
  if (paths.empty()) GTEST_SKIP() << test_paths::CpuPathSkipReason(Isa::kAvx512Bf16);
  for (const Isa isa : paths) {
    std::mt19937 rng(23);
    ThreadPool pool(2);
    for (const size_t ff : {size_t{40}, size_t{1000}, size_t{3072}}) {
      const size_t out = 48;
      const Weight w = RandomWeight(WeightDType::kBF16, out, ff, rng);
      const LinearWeight lw = PackWith(isa, w, WeightDType::kBF16, out, ff, MatmulPrecision::kBF16);
      ASSERT_TRUE(lw.TakesTiledInput());
      for (const size_t m : {size_t{1}, size_t{17}, size_t{40}}) {
        const std::string what = std::string(IsaName(isa)) + " ff=" + std::to_string(ff) + " m=" + std::to_string(m);
        std::vector<float> gate_up = RandomActivations(m * 2 * ff, rng);
        gate_up[3] = -100.f;  // exp overflow side of silu
        gate_up[5] = std::nanf("");
        std::vector<float> act(m * ff);
        SiluMul(gate_up.data(), m, ff, act.data(), pool);
        const size_t elems = lw.TiledInputElements(m);
        std::vector<uint16_t, AlignedAllocator<uint16_t>> want(elems, 0x7777), got(elems, 0x7777);
        amx::ConvertRows(act.data(), ff, ff, 0, m, want.data(), amx::PaddedK(ff));
        SiluMulTiled(gate_up.data(), m, ff, got.data(), pool);
        ASSERT_EQ(want, got) << what;
        std::vector<float> y(m * out), y_tiled(m * out, -1.f);
        lw.Apply(act.data(), m, y.data(), pool);
        lw.ApplyTiled(got.data(), m, y_tiled.data(), pool);
        ASSERT_EQ(std::memcmp(y.data(), y_tiled.data(), y.size() * 4), 0) << what;
      }
    }
  }
}

// The same for the RMSNorm that feeds qkv and gate_up.
TEST(Linear, RmsNormTiledMatchesConvertRowsOfRmsNorm) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512);
  std::mt19937 rng(29);
  ThreadPool pool(2);
  for (const size_t dim : {size_t{40}, size_t{1024}}) {
    for (const size_t m : {size_t{1}, size_t{17}, size_t{40}}) {
      std::vector<float> x = RandomActivations(m * (dim + 3), rng), weight = RandomActivations(dim, rng);
      std::vector<float> normed(m * dim);
      RmsNorm(x.data(), dim + 3, weight.data(), normed.data(), dim, m, dim, 1e-6f, pool);
      const size_t kpad = amx::PaddedK(dim), elems = amx::TiledABytes(m, kpad) / 2;
      std::vector<uint16_t, AlignedAllocator<uint16_t>> want(elems, 0x7777), got(elems, 0x7777);
      amx::ConvertRows(normed.data(), dim, dim, 0, m, want.data(), kpad);
      RmsNormTiled(x.data(), dim + 3, weight.data(), m, dim, 1e-6f, got.data(), pool);
      ASSERT_EQ(want, got) << "dim=" << dim << " m=" << m;
    }
  }
}

}  // namespace
}  // namespace llmserve::kernels::cpu
