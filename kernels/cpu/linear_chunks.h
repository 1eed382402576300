#pragma once
// What linear.cc and linear_kquant.cc share: how LinearWeight::Apply shares a
// matmul out among the pool's threads (chunk boundaries depend only on the
// weight's shape, never on m or on the thread count), and the level of the
// integer kernels.
#include <algorithm>
#include <cstddef>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu::linear_internal {

// Panels per work chunk: about 256 KiB of weights (a multiple of `multiple`
// panels, the kernels' widest block), so a chunk is worth a hand-off and a
// layer still splits into many chunks that the threads share out at run time.
// Depends only on the weight shape, never on m.
inline size_t ChunkPanels(size_t panel_bytes, size_t multiple) {
  constexpr size_t kChunkBytes = 256 << 10;
  const size_t panels = panel_bytes == 0 ? multiple : kChunkBytes / panel_bytes / multiple * multiple;
  return std::max(panels, multiple);
}

// quantize_row(i) for the m activation rows of `cols`, on the pool when
// there are enough of them to pay for it.
template <typename F>
void QuantizeRows(size_t m, size_t cols, ThreadPool& pool, F quantize_row) {
  auto rows = [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) quantize_row(i);
  };
  if (m * cols >= (size_t{1} << 16)) pool.ParallelFor(m, 8, rows);
  else rows(0, m, 0);
}

// gemm(begin, end) over the groups of kGroupRows outputs of a quantized
// weight, chunked on the pool by the bytes a group reads.
template <size_t kGroupRows, typename F>
void ForGroups(size_t out_rows, size_t group_bytes, ThreadPool& pool, F gemm) {
  const size_t groups = (out_rows + kGroupRows - 1) / kGroupRows;
  pool.ParallelForChunks(groups, ChunkPanels(group_bytes, 2),
                         [&](size_t begin, size_t end, size_t) { gemm(begin, end); });
}

// The Q8_0 and K-quant kernels' level: kAvx512 stands for their VNNI kernels,
// which AVX-512 CPUs without VNNI (Skylake-X) cannot run.
inline Isa IntegerKernelIsa() {
  if (ActiveIsa() >= Isa::kAvx512 && GetCpuFeatures().avx512_vnni) return Isa::kAvx512;
  return ActiveIsa() >= Isa::kAvx2 ? Isa::kAvx2 : Isa::kScalar;
}

}  // namespace llmserve::kernels::cpu::linear_internal
