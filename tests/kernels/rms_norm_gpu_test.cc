// Compares the CUDA RMSNorm with the CPU reference on random inputs.
// Skips with "no CUDA device" where none is visible (CI, CPU machines).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/rms_norm_reference.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/rms_norm.h"

namespace llmserve::kernels::cuda {
namespace {

TEST(RmsNormGpu, MatchesCpuReference) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  for (size_t dim : {64, 1000, 4096}) {
    const size_t rows = 7;
    std::mt19937 rng(static_cast<unsigned>(dim));
    std::normal_distribution<float> dist(0.f, 1.f);
    std::vector<float> x(rows * dim), w(dim), expected(rows * dim), got(rows * dim, NAN);
    for (auto& v : x) v = dist(rng);
    for (auto& v : w) v = dist(rng);
    cpu::RmsNormReference(x.data(), w.data(), expected.data(), rows, dim, 1e-6f);
    float *dx, *dw, *dout;
    ASSERT_EQ(cudaMalloc(&dx, x.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dw, w.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dout, got.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMemset(dout, 0xff, got.size() * 4), cudaSuccess);  // poison: NaN
    ASSERT_EQ(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(RmsNorm(dx, dw, dout, rows, dim, 1e-6f, nullptr).ok());
    ASSERT_EQ(cudaMemcpy(got.data(), dout, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], expected[i], 1e-4f * (1.f + std::fabs(expected[i]))) << "dim " << dim << " i " << i;
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dout);
  }
}

}  // namespace
}  // namespace llmserve::kernels::cuda
