#pragma once
// AVX512-BF16 GEMM (MatmulPrecision::kBF16 on CPUs with vdpbf16ps but no AMX,
// such as AMD Zen 4): the same packed weights and tiled activations as the
// AMX kernel (gemm_amx.h), multiplied with vdpbf16ps instead of tiles.
//
// The AMX weight layout is what vdpbf16ps wants as well: row q of weight
// tile kb is one zmm holding the k pair (32kb + 2q, 32kb + 2q + 1) of 16
// output features. The pair of activations it multiplies is one 32-bit word
// of the tiled A, broadcast to every lane.
//
// Determinism: each output element is one fp32 lane, zeroed, then updated by
// one vdpbf16ps per k pair in k order, whatever the row and panel blocking,
// m or thread. So row i of y depends only on row i of x. (The results are
// not bitwise those of the AMX kernel, which rounds its sums differently.)

#include <cstddef>
#include <cstdint>

namespace llmserve::kernels::cpu::dpbf16 {

// How a decode batch of 12-24 rows walks K (the bits are the same either way):
// each row block over the whole K, or every row block over one L1-sized slice
// of K in turn while the next slice streams in (gemm_dpbf16.cc, SlicedGemm).
enum class DecodeLoop { kWholeK, kKSliced };

// The faster DecodeLoop on this CPU: kKSliced where an L1 data cache of at
// least 48 KiB marks a core that runs vdpbf16ps at full 512-bit width (AMD
// Zen 5), kWholeK elsewhere (Zen 4 splits each vdpbf16ps in two halves; there
// a batch-16 step's matmuls are compute-bound and the slicing does not pay).
DecodeLoop PreferredDecodeLoop();

// y[i][16p + j] for i < m and panels p in [panel_begin, panel_end), given the
// tiled activations a (amx::ConvertRows) and packed weights w (amx::Pack)
// with n outputs and kpad = amx::PaddedK(in_features). Requires
// Isa::kAvx512Bf16 or better.
void Gemm(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
          size_t ldy, size_t panel_begin, size_t panel_end, DecodeLoop decode_loop = PreferredDecodeLoop());

// Scalar model of Gemm's arithmetic (vdpbf16ps as the Intel SDM describes
// it: the odd product added first, then the even one, each add rounded to
// nearest even, denormals flushed). Tests compare Gemm against it.
void GemmReference(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
                   size_t ldy);

// Floating-point operations one Dpbf16PeakLoop iteration performs.
inline constexpr double kDpbf16PeakFlopsPerIteration = 24.0 * 16 * 2 * 2;

// vdpbf16ps on registers only (24 independent accumulators), `iterations`
// times: the compute ceiling one core reaches with this instruction. Returns
// a value derived from the accumulators so the loop is not optimised away.
float Dpbf16PeakLoop(size_t iterations);

}  // namespace llmserve::kernels::cpu::dpbf16
