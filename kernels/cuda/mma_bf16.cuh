#pragma once
// Thin wrappers over the sm_80+ warp-level tensor-core instructions the
// attention kernels use: the m16n8k16 bf16 matrix product with fp32
// accumulators, ldmatrix, and asynchronous 16-byte copies into shared memory.
//
// Fragment layouts of m16n8k16 (lane = 4 g + t):
//   A (16 × 16, row-major), 4 registers of two bf16: rows g / g + 8, columns
//     2t, 2t + 1 (registers 0, 1) and 2t + 8, 2t + 9 (registers 2, 3);
//   B (16 × 8, k × n), 2 registers: k = 2t, 2t + 1 (and + 8) of column g;
//   C (16 × 8 fp32), 4 floats: row g columns 2t, 2t + 1, then row g + 8.
// The lower half of a register holds the element of the lower index.

#include <cuda_bf16.h>

#include <cstdint>

namespace llmserve::kernels::cuda {

// c += a · b.
__device__ __forceinline__ void MmaBf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats as one register of two bf16 (lo in the lower half).
__device__ __forceinline__ uint32_t PackBf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8 × 8 bf16 matrices, transposed: lane 8j + r gives the address of row
// r of matrix j; register j receives matrix j's elements (2t, g), (2t + 1, g).
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SharedAddress(row)));
}

// Copies 16 bytes to shared memory without blocking the thread; with
// `fill_zero` it writes zeros and reads nothing.
__device__ __forceinline__ void CopyAsync16(void* dst, const void* src, bool fill_zero) {
  const int src_bytes = fill_zero ? 0 : 16;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(dst)), "l"(src),
               "r"(src_bytes));
}

__device__ __forceinline__ void CopyAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void CopyAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace llmserve::kernels::cuda
