// The grouped LoRA update (kernels/cpu/lora.h): every path (scalar, AVX2,
// AVX-512) equals the one-row reference bit for bit over ranks and widths
// with tails, with fp32 or bf16 factors (bf16 giving the bits of the same
// values in fp32); a row's result does not depend on the other rows, their
// adapters or the thread count; and the reference is within fp32 rounding
// of the update computed in double.
#include "kernels/cpu/lora.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

struct Adapter {
  std::vector<float> a_t, b_t;
  std::vector<uint16_t> a_t16,
      b_t16;  // bf16 storage of the same values (bf16 adapters)
  LoraFactors f;
};

uint16_t Bf16Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// Random factors; a bf16 adapter's values are bf16-representable, kept in
// both forms, and `f` points at the bf16 ones.
Adapter RandomAdapter(size_t rank, size_t in, size_t out, float scale, std::mt19937& rng,
                      LoraDType dtype = LoraDType::kF32) {
  std::normal_distribution<float> d(0.f, 0.3f);
  Adapter a;
  a.a_t.resize(in * rank);
  a.b_t.resize(rank * out);
  for (auto* v : {&a.a_t, &a.b_t}) {
    for (float& e : *v) {
      e = d(rng);
      if (dtype == LoraDType::kBF16) {
        const uint32_t bits = static_cast<uint32_t>(Bf16Bits(e)) << 16;
        std::memcpy(&e, &bits, 4);
      }
    }
  }
  a.f = {a.a_t.data(), a.b_t.data(), rank, in, out, scale};
  if (dtype == LoraDType::kBF16) {
    for (float e : a.a_t) a.a_t16.push_back(Bf16Bits(e));
    for (float e : a.b_t) a.b_t16.push_back(Bf16Bits(e));
    a.f = {a.a_t16.data(), a.b_t16.data(), rank, in, out, scale, LoraDType::kBF16};
  }
  return a;
}

// The same adapter with its factors read as fp32.
Adapter AsF32(const Adapter& a) {
  Adapter c = a;
  c.f.a_t = c.a_t.data();
  c.f.b_t = c.b_t.data();
  c.f.dtype = LoraDType::kF32;
  return c;
}

std::vector<float> RandomRows(size_t rows, size_t width, std::mt19937& rng) {
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(rows * width);
  for (float& e : v) e = d(rng);
  return v;
}

// y (rows × y_stride, the projection at column `col`) after the grouped update.
std::vector<float> Grouped(const std::vector<Adapter>& adapters, const std::vector<std::vector<int32_t>>& rows,
                           const std::vector<float>& x, size_t x_stride, std::vector<float> y, size_t y_stride,
                           size_t col, ThreadPool& pool) {
  std::vector<LoraGroup> groups;
  for (size_t g = 0; g < adapters.size(); ++g) groups.push_back({adapters[g].f, rows[g].data(), rows[g].size()});
  LoraApplyGroups(groups.data(), groups.size(), x.data(), x_stride, y.data() + col, y_stride, pool);
  return y;
}

// The same rows through LoraShrinkExpandRow one at a time.
std::vector<float> RowByRow(const std::vector<Adapter>& adapters, const std::vector<std::vector<int32_t>>& rows,
                            const std::vector<float>& x, size_t x_stride, std::vector<float> y, size_t y_stride,
                            size_t col) {
  for (size_t g = 0; g < adapters.size(); ++g) {
    for (int32_t r : rows[g]) LoraShrinkExpandRow(adapters[g].f, &x[r * x_stride], &y[r * y_stride + col]);
  }
  return y;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class LoraPathTest : public ::testing::Test {
 protected:
  void TearDown() override { SetMaxIsa(Isa::kAmx); }
};

// Mixed groups (row blocks of 1-4 rows, rows interleaved across adapters,
// base rows between them) over ranks and widths that leave vector tails.
TEST_F(LoraPathTest, EveryPathEqualsTheRowReferenceBitwise) {
  bool ran = false;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!test_paths::EnterCpuPath(isa)) continue;
    ran = true;
    SetMaxIsa(isa);
    ThreadPool pool(2);
    for (size_t rank : {1, 8, 16, 20, 64, 72}) {
      for (auto [in, out] : {std::pair<size_t, size_t>{37, 70}, {64, 128}, {96, 33}}) {
        for (LoraDType dtype : {LoraDType::kF32, LoraDType::kBF16}) {
          std::mt19937 rng(static_cast<uint32_t>(rank * 1000 + in + out));
          std::vector<Adapter> adapters;
          for (int g = 0; g < 3; ++g) adapters.push_back(RandomAdapter(rank, in, out, 0.5f + g, rng, dtype));
          // 14 rows: adapter 0 on 7 (two blocks), 1 on 5, 2 on 1, one base row.
          const std::vector<std::vector<int32_t>> rows = {{0, 2, 3, 6, 8, 11, 13}, {1, 4, 7, 9, 12}, {5}};
          const size_t x_stride = in + 3, y_stride = out + 10, col = 4;
          const auto x = RandomRows(14, x_stride, rng);
          const auto y0 = RandomRows(14, y_stride, rng);
          const auto want = RowByRow(adapters, rows, x, x_stride, y0, y_stride, col);
          const auto got = Grouped(adapters, rows, x, x_stride, y0, y_stride, col, pool);
          const bool bf16 = dtype == LoraDType::kBF16;
          EXPECT_TRUE(SameBits(got, want))
              << IsaName(isa) << " rank " << rank << " in " << in << " out " << out << (bf16 ? " bf16" : " f32");
          EXPECT_FALSE(SameBits(got, y0)) << "the update changed nothing";
          // bf16 storage computes exactly what fp32 storage of the same values does.
          if (bf16) {
            std::vector<Adapter> f32;
            for (const Adapter& a : adapters) f32.push_back(AsF32(a));
            EXPECT_TRUE(SameBits(got, Grouped(f32, rows, x, x_stride, y0, y_stride, col, pool)))
                << IsaName(isa) << " rank " << rank << " in " << in << " out " << out;
          }
        }
      }
    }
  }
  if (!ran) GTEST_SKIP() << test_paths::CpuPathSkipReason(Isa::kScalar);
}

// A row's result is the same alone, in a full block of its adapter, or among
// other adapters' rows, on 1, 2 or 3 threads.
TEST_F(LoraPathTest, RowResultIsBatchAndThreadInvariant) {
  std::mt19937 rng(7);
  const size_t rank = 16, in = 128, out = 200;
  std::vector<Adapter> adapters;
  for (int g = 0; g < 4; ++g) adapters.push_back(RandomAdapter(rank, in, out, 2.f, rng));
  const auto x = RandomRows(16, in, rng);
  const auto y0 = RandomRows(16, out, rng);
  std::vector<int32_t> all(16);
  for (int32_t i = 0; i < 16; ++i) all[i] = i;
  bool ran = false;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!test_paths::EnterCpuPath(isa)) continue;
    ran = true;
    SetMaxIsa(isa);
    ThreadPool one(1);
    // Row 5 with adapter 1, alone.
    const auto alone = Grouped({adapters[1]}, {{5}}, x, in, y0, out, 0, one);
    for (size_t threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      // Row 5 in the middle of a block of adapter 1, the others on 0, 2, 3.
      const auto mixed =
          Grouped(adapters, {{0, 4, 8, 12}, {1, 3, 5, 9, 13}, {2, 6, 10, 14}, {7, 11, 15}}, x, in, y0, out, 0, pool);
      EXPECT_EQ(std::memcmp(&mixed[5 * out], &alone[5 * out], out * sizeof(float)), 0)
          << IsaName(isa) << ", " << threads << " threads";
      // All 16 rows on adapter 1.
      const auto full = Grouped({adapters[1]}, {all}, x, in, y0, out, 0, pool);
      EXPECT_EQ(std::memcmp(&full[5 * out], &alone[5 * out], out * sizeof(float)), 0)
          << IsaName(isa) << ", " << threads << " threads";
    }
  }
  if (!ran) GTEST_SKIP() << test_paths::CpuPathSkipReason(Isa::kScalar);
}

// The reference is the update itself: within fp32 rounding of it in double.
TEST_F(LoraPathTest, ReferenceIsCloseToDoublePrecision) {
  std::mt19937 rng(3);
  const size_t rank = 16, in = 300, out = 50;
  const Adapter a = RandomAdapter(rank, in, out, 0.75f, rng);
  const auto x = RandomRows(1, in, rng);
  std::vector<float> y(out, 0.5f);
  LoraShrinkExpandRow(a.f, x.data(), y.data());
  std::vector<double> t(rank, 0.0);
  for (size_t k = 0; k < in; ++k)
    for (size_t i = 0; i < rank; ++i) t[i] += static_cast<double>(a.a_t[k * rank + i]) * x[k];
  for (size_t j = 0; j < out; ++j) {
    double want = 0.5;
    for (size_t i = 0; i < rank; ++i) want += static_cast<double>(a.b_t[i * out + j]) * t[i] * 0.75;
    EXPECT_NEAR(y[j], want, 1e-4 * (1.0 + std::fabs(want))) << "column " << j;
  }
}

}  // namespace
}  // namespace llmserve::kernels::cpu
