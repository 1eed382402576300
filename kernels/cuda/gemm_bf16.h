#pragma once
// Dense matmuls of the CUDA forward pass: bf16 activations times bf16
// weights, fp32 accumulation, fp32 output, through cuBLASLt (up to
// kGemvMaxRows rows: gemv_bf16.h). With `accumulate` the product is added to
// the output (a residual add fused into the matmul).

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>

#include "base/status_or.h"

namespace llmserve::kernels::cuda {

class Bf16Gemm {
 public:
  // Creates the cuBLASLt handle and a workspace of `workspace_bytes`.
  static StatusOr<std::unique_ptr<Bf16Gemm>> Create(size_t workspace_bytes = size_t{32} << 20);
  ~Bf16Gemm();
  Bf16Gemm(const Bf16Gemm&) = delete;
  Bf16Gemm& operator=(const Bf16Gemm&) = delete;

  // y[rows × n] (= or +=) x[rows × k] · w[n × k]ᵀ, all row-major device
  // memory. The algorithm for each (rows, n, k) is chosen once and kept.
  Status Run(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
             cudaStream_t stream);

  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  struct Plan;
  Bf16Gemm() = default;
  StatusOr<const Plan*> PlanFor(size_t rows, size_t n, size_t k);

  void* handle_ = nullptr;  // cublasLtHandle_t
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<std::tuple<size_t, size_t, size_t>, std::unique_ptr<Plan>> plans_;
};

}  // namespace llmserve::kernels::cuda
