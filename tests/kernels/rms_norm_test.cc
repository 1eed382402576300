#include "kernels/cpu/rms_norm.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/rms_norm_reference.h"
#include "tests/kernels/cpu_path.h"

namespace llmserve::kernels::cpu {
namespace {

TEST(RmsNorm, MatchesReferenceAndIsRowInvariant) {
  const size_t rows = 37, dim = 100;
  std::mt19937 rng(3);
  std::normal_distribution<float> d;
  std::vector<float> x(rows * dim), w(dim), ref(rows * dim), out(rows * dim), one(dim);
  for (auto& v : x) v = d(rng);
  for (auto& v : w) v = 1 + 0.1f * d(rng);
  ThreadPool pool(2);
  RmsNorm(x.data(), dim, w.data(), out.data(), dim, rows, dim, 1e-6f, pool);
  RmsNormReference(x.data(), w.data(), ref.data(), rows, dim, 1e-6f);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-5f * (1 + std::abs(ref[i])));
  RmsNorm(x.data() + 11 * dim, dim, w.data(), one.data(), dim, 1, dim, 1e-6f, pool);
  for (size_t i = 0; i < dim; ++i) EXPECT_EQ(one[i], out[11 * dim + i]);
}

// The AVX-512 path keeps the scalar path's lane order: both give the same bits.
TEST(RmsNorm, Avx512AndScalarPathsAgreeBitwise) {
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512);
  LLMSERVE_REQUIRE_CPU_PATH(Isa::kScalar);
  const size_t rows = 5, dim = 1027;
  std::mt19937 rng(4);
  std::normal_distribution<float> d;
  std::vector<float> x(rows * dim), w(dim), vec(rows * dim), scalar(rows * dim);
  for (auto& v : x) v = d(rng);
  for (auto& v : w) v = 1 + 0.1f * d(rng);
  RmsNormRows(x.data(), dim, w.data(), vec.data(), dim, rows, dim, 1e-6f);
  SetMaxIsa(Isa::kAvx2);
  RmsNormRows(x.data(), dim, w.data(), scalar.data(), dim, rows, dim, 1e-6f);
  SetMaxIsa(Isa::kAmx);
  EXPECT_EQ(vec, scalar);
}

}  // namespace
}  // namespace llmserve::kernels::cpu
