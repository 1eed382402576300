#pragma once
// LinearWeight: the weight of one linear layer and the matmul that applies it.
//
// Contract every implementation keeps (tests pin it):
//  * y = x · Wᵀ with W stored as Hugging Face does, [out_features × in_features].
//  * Row i of y depends only on row i of x: bitwise the same whatever m is and
//    whatever the other rows hold (batch and chunking invariance). Reductions
//    over in_features run in a fixed order.
//  * bf16/f16 weights stay 16-bit in memory; activations are fp32 at the API.
//
// Kernels (chosen at Pack time from ActiveIsa(), see cpu_features.h):
//  * kF32: the "P16" fp32-FMA kernels (gemm_p16.h): every output element is
//    fma-accumulated over k in index order, so scalar, AVX2 and AVX-512 give
//    bitwise the same y.
//  * kBF16 with AMX: tdpbf16ps tiles for every m, 1 included (gemm_amx.h);
//    activations are rounded to bf16 once per Apply into contiguous A tiles.
//    With AVX512-BF16 but no AMX (e.g. AMD Zen 4): vdpbf16ps over the same
//    packed weights and tiled A (gemm_dpbf16.h). Without either: activations
//    and weights rounded to bf16, then the P16 kernels (bitwise the same on
//    scalar, AVX2, AVX-512). The three families do not give equal bits.
//  * f32/f16 weights under kBF16 are rounded to bf16 when packed.
//  * Q8_0 weights (PackQ8_0) stay int8: activations are quantized per row
//    to int8 and the products are integer (gemm_q8.h); scalar and AVX2 give
//    bitwise the same y. The precision does not apply to them.
//  * K-quant weights (PackKQuants: Q4_K, Q5_K, Q6_K, rows of different types
//    stacked) stay 4-, 5- and 6-bit the same way: activations are quantized
//    per row and block of 256 as llama.cpp's Q8_K (gemm_q4k.h, gemm_q6k.h).
// Threads: Apply cuts the output features into chunks of ~256 KiB of weights
// (boundaries depend on the weight shape only) that the pool's threads claim
// at run time; a reduction is never split, so results do not depend on the
// thread count or on which thread ran a chunk. Packed data is 64-byte aligned.
// Apply keeps per-calling-thread scratch for the converted activations.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// Storage type of weights as read from safetensors. kI8 holds int8 quants
// and kI32 packed 4-bit ones (GPTQ), which mean something only with their
// scales: they reach a matmul through PackInt8, never through Pack.
// kF8E4M3: FP8 checkpoints' weights, which take their block scales first
// (worker/fp8_weights.h); LinearWeight::Pack refuses them and the integers.
enum class WeightDType { kF32, kBF16, kF16, kI8, kI32, kF8E4M3 };

// GGUF K-quant formats a weight can stay in (gemm_q4k.h, gemm_q6k.h).
enum class KQuantType { kQ4_K, kQ5_K, kQ6_K };

// Rows of a weight given as GGUF blocks of `type`, `row_stride` weights
// apart (`blocks` points at the first block of the first row).
struct KQuantRows {
  KQuantType type;
  const void* blocks;
  size_t rows;
  size_t row_stride;
};

// Precision of the products inside the matmul.
//  kF32:  activations stay fp32; 16-bit weights are widened (matches an fp32
//         reference forward pass closely).
//  kBF16: activations are rounded to bf16 and multiplied with bf16 hardware
//         (AMX / AVX512-BF16) with fp32 accumulation; much faster prefill.
enum class MatmulPrecision { kF32, kBF16 };

class LinearWeight {
 public:
  LinearWeight() = default;

  // Copies a [rows × cols] block (row stride `row_stride` elements) of a
  // row-major weight into this layer's packed layout. Row/column blocks are how
  // tensor parallelism shards a weight.
  static LinearWeight Pack(const void* data, WeightDType dtype, size_t rows, size_t cols,
                           size_t row_stride, MatmulPrecision precision);

  // The same for a weight given as GGUF Q8_0 blocks (34 bytes per 32
  // weights), `row_stride` weights apart; cols and row_stride are multiples
  // of 32. It stays quantized (about 1.1 bytes per weight).
  static LinearWeight PackQ8_0(const void* blocks, size_t rows, size_t cols, size_t row_stride);
  // The same for GGUF K-quant rows, stacked in the order given (q, k and v
  // of a Q4_K_M file, where v may be Q6_K), each part kept in its own format:
  // 4.75, 5.75 or 6.75 bits per weight with the unpacked scales. cols and the
  // row strides are multiples of 256; every part but the last has a
  // multiple of 8 rows.
  static LinearWeight PackKQuants(const std::vector<KQuantRows>& parts, size_t cols);
  // PackKQuants of one part of Q4_K blocks (144 bytes per 256 weights).
  static LinearWeight PackQ4_K(const void* blocks, size_t rows, size_t cols, size_t row_stride);
  // The same for int8 weights with one f32 scale per row and block of 32
  // (w = block_scales[r × cols / 32 + c / 32] × q[r][c]: per-channel int8 has
  // one scale for all blocks of a row, 4-bit group quantization one per
  // group), `row_stride` elements apart; cols a multiple of 32. They take the
  // Q8_0 kernels.
  static LinearWeight PackInt8(const int8_t* q, const float* block_scales, size_t rows, size_t cols,
                               size_t row_stride);

  // For a PackInt8 weight whose columns were reordered (GPTQ act-order):
  // packed column c multiplies input column order[c] (a permutation of
  // cols()). Apply then gathers each activation row into that order before
  // quantizing it.
  void SetInputOrder(std::vector<uint32_t> order);

  // y[m × rows()] = x[m × cols()] · Wᵀ.
  void Apply(const float* x, size_t m, float* y, ThreadPool& pool) const;

  // Whether this weight multiplies bf16 activations in the tiled A layout of
  // gemm_amx.h (kBF16 on AMX or AVX512-BF16), so that a producer can write
  // them that way itself (SiluMulTiled) and call ApplyTiled.
  bool TakesTiledInput() const;
  // bf16 elements of the tiled activations for m rows.
  size_t TiledInputElements(size_t m) const;
  // y[m × rows()] = a · Wᵀ for activations already in that layout
  // (TiledInputElements(m)). Apply is ConvertRows
  // followed by this, so both give the same bits. Requires TakesTiledInput().
  void ApplyTiled(const uint16_t* a, size_t m, float* y, ThreadPool& pool) const;

  size_t rows() const { return rows_; }  // out_features
  size_t cols() const { return cols_; }  // in_features
  WeightDType dtype() const { return dtype_; }  // as given to Pack (kF32 for Q8_0 / K-quants)
  bool is_q8_0() const { return quant_ == Quant::kQ8_0; }  // PackQ8_0 or PackInt8
  bool is_k_quant() const { return quant_ == Quant::kKQuant; }  // PackKQuants or PackQ4_K
  // Kernel family this weight was packed for (fixed at Pack time).
  Isa isa() const { return isa_; }
  MatmulPrecision precision() const { return precision_; }
  // Bytes of weight data held (what a decode step reads).
  size_t bytes() const { return data_.size(); }

 private:
  size_t rows_ = 0;
  size_t cols_ = 0;
  WeightDType dtype_ = WeightDType::kF32;
  MatmulPrecision precision_ = MatmulPrecision::kF32;
  Isa isa_ = Isa::kScalar;
  WeightDType packed_dtype_ = WeightDType::kF32;  // element type inside data_
  // Quantized weights kept as such: data_ holds gemm_q8.h's layout, or the
  // K-quant segments' layouts one after the other.
  enum class Quant { kNone, kQ8_0, kKQuant };
  Quant quant_ = Quant::kNone;
  // Rows [first_row, first_row + rows) of a K-quant weight, packed at
  // data_ + offset (first_row a multiple of 8).
  struct KQuantSegment {
    KQuantType type;
    size_t first_row, rows, offset;
  };
  std::vector<KQuantSegment> segments_;
  std::vector<uint32_t> input_order_;  // SetInputOrder's, or empty
  bool q8_has_min_quant_ = false;  // Q8_0 with a -128 quant

  // A weight of `quant` with `packed_bytes` of (unfilled) packed data, on
  // the AVX2 kernels where the CPU has them.
  static LinearWeight Quantized(Quant quant, size_t rows, size_t cols, size_t packed_bytes);
  void ApplyQ8_0(const float* x, size_t m, float* y, ThreadPool& pool) const;
  void ApplyKQuant(const float* x, size_t m, float* y, ThreadPool& pool) const;
  std::vector<uint8_t, AlignedAllocator<uint8_t>> data_;  // packed (gemm_p16.h / gemm_amx.h)
};

// Scalar reference: y = x · Wᵀ for a row-major weight, fp32 math in index order.
void LinearReference(const float* x, size_t m, const void* w, WeightDType dtype, size_t rows,
                     size_t cols, float* y);

// bf16 / f16 bit patterns to fp32.
float Bf16ToF32(uint16_t bits);
float F16ToF32(uint16_t bits);
// Element `index` of a weight stored as `dtype` at `base`, as fp32.
float WeightToF32(const uint8_t* base, WeightDType dtype, size_t index);
// fp32 to bf16 bits, round to nearest even (NaN kept quiet). Inline: the
// per-element KV-cache writes call it.
inline uint16_t F32ToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace llmserve::kernels::cpu
