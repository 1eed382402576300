#pragma once
// The byte layouts of the quantized blocks llmserve reads and writes, after
// ggml's block structs (ggml-common.h). Every member is bytes, so a block may
// sit at any address; halves are little-endian, read with LoadU16. A block of
// QK values dequantizes as the comment on each says (q: the stored integer).

#include <cstdint>

namespace llmserve::common::gguf {

inline constexpr int kQK = 32;    // values per block of the legacy types
inline constexpr int kQK_K = 256;  // values per K-quant super-block

// y[j] = (q[j] - 8) · d; q[j] is the low nibble of qs[j] for j < 16, the
// high nibble of qs[j - 16] above.
struct BlockQ4_0 {
  uint8_t d[2];
  uint8_t qs[kQK / 2];
};
// y[j] = q[j] · d + m, nibbles as Q4_0.
struct BlockQ4_1 {
  uint8_t d[2];
  uint8_t m[2];
  uint8_t qs[kQK / 2];
};
// y[j] = (q[j] - 16) · d; q[j] = nibble as Q4_0 | bit j of qh (a
// little-endian uint32) as bit 4.
struct BlockQ5_0 {
  uint8_t d[2];
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// y[j] = q[j] · d + m, q[j] as Q5_0.
struct BlockQ5_1 {
  uint8_t d[2];
  uint8_t m[2];
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// y[j] = qs[j] · d, qs signed.
struct BlockQ8_0 {
  uint8_t d[2];
  int8_t qs[kQK];
};
// Eight sub-blocks of 32, each with a 6-bit scale s and min m packed in
// `scales`: y = (d·s)·q - (dmin·m). Sub-blocks 2i and 2i+1 take the low and
// high nibbles of qs[32i .. 32i+32).
struct BlockQ4_K {
  uint8_t d[2];
  uint8_t dmin[2];
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
// As Q4_K with a fifth bit per value: value j of sub-block k takes bit k of qh[j].
struct BlockQ5_K {
  uint8_t d[2];
  uint8_t dmin[2];
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
// Sixteen sub-blocks of 16 with signed 8-bit scales: y = (d·scale)·(q - 32),
// q 6 bits: 4 in ql, 2 in qh (layout in dequantize_k.cc).
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint8_t d[2];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);
static_assert(alignof(BlockQ4_K) == 1 && alignof(BlockQ6_K) == 1);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K / Q5_K block:
// sub-blocks 0-3 keep theirs in the low 6 bits of bytes j and j+4; 4-7 keep
// their low 4 bits in byte j+4's nibbles and their top 2 bits in the spare
// top bits of bytes j-4 (scale) and j (min).
inline void UnpackScaleMin(const uint8_t* scales, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = scales[j] & 63;
    *min = scales[j + 4] & 63;
  } else {
    *scale = (scales[j + 4] & 0xf) | ((scales[j - 4] >> 6) << 4);
    *min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

}  // namespace llmserve::common::gguf
