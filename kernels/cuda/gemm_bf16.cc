#include "kernels/cuda/gemm_bf16.h"

#include <cublasLt.h>

#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemv_bf16.h"

namespace llmserve::kernels::cuda {

namespace {

Status LtStatus(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Status::Internal(std::string(what) + ": cuBLASLt status " + std::to_string(static_cast<int>(s)));
}

#define LT_RETURN_IF_ERROR(call) LLMSERVE_RETURN_IF_ERROR(LtStatus((call), #call))

}  // namespace

// Row-major y[rows × n] = x[rows × k] · wᵀ is, column-major, the "TN" product
// yᵀ[n × rows] = op_T(w as k × n) · (x as k × rows).
struct Bf16Gemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t w = nullptr, x = nullptr, y = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (y) cublasLtMatrixLayoutDestroy(y);
    if (x) cublasLtMatrixLayoutDestroy(x);
    if (w) cublasLtMatrixLayoutDestroy(w);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

StatusOr<std::unique_ptr<Bf16Gemm>> Bf16Gemm::Create(size_t workspace_bytes) {
  std::unique_ptr<Bf16Gemm> g(new Bf16Gemm());
  cublasLtHandle_t handle = nullptr;
  LT_RETURN_IF_ERROR(cublasLtCreate(&handle));
  g->handle_ = handle;
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaMalloc(&g->workspace_, workspace_bytes));
  g->workspace_bytes_ = workspace_bytes;
  return g;
}

Bf16Gemm::~Bf16Gemm() {
  plans_.clear();
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

StatusOr<const Bf16Gemm::Plan*> Bf16Gemm::PlanFor(size_t rows, size_t n, size_t k) {
  const auto key = std::make_tuple(rows, n, k);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  auto plan = std::make_unique<Plan>();
  LT_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  LT_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  LT_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)));
  LT_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&plan->w, CUDA_R_16BF, k, n, static_cast<int64_t>(k)));
  LT_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&plan->x, CUDA_R_16BF, k, rows, static_cast<int64_t>(k)));
  LT_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&plan->y, CUDA_R_32F, n, rows, static_cast<int64_t>(n)));
  cublasLtMatmulPreference_t pref = nullptr;
  LT_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&pref));
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &workspace_bytes_, sizeof(workspace_bytes_));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), plan->desc, plan->w, plan->x, plan->y,
                                       plan->y, pref, 1, &result, &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  LT_RETURN_IF_ERROR(s);
  if (found == 0) {
    return Status::Internal("cuBLASLt has no bf16 algorithm for " + std::to_string(rows) + "×" + std::to_string(k) +
                            " · " + std::to_string(k) + "×" + std::to_string(n));
  }
  plan->algo = result.algo;
  const Plan* p = plan.get();
  plans_.emplace(key, std::move(plan));
  return p;
}

Status Bf16Gemm::Run(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k,
                     bool accumulate, cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  if (GemvTakes(rows, k)) return Gemv(x, w, y, rows, n, k, accumulate, stream);
  LLMSERVE_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(rows, n, k));
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  LT_RETURN_IF_ERROR(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), plan->desc, &alpha, w, plan->w, x, plan->x,
                                    &beta, y, plan->y, y, plan->y, &plan->algo, workspace_, workspace_bytes_, stream));
  return Status::Ok();
}

}  // namespace llmserve::kernels::cuda
