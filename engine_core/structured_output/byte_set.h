#pragma once
// ByteSet: a set of byte values (256 bits), the label of every terminal edge
// in the grammar IR.

#include <cstdint>

namespace llmserve::engine_core::structured_output {

struct ByteSet {
  uint64_t w[4] = {0, 0, 0, 0};

  // The set {b}.
  static ByteSet Single(uint8_t b) {
    ByteSet s;
    s.Add(b);
    return s;
  }
  // The set [lo, hi] (empty when lo > hi).
  static ByteSet Range(unsigned lo, unsigned hi) {
    ByteSet s;
    for (unsigned b = lo; b <= hi && b < 256; ++b) s.Add(static_cast<uint8_t>(b));
    return s;
  }
  // Adds byte b.
  void Add(uint8_t b) { w[b >> 6] |= uint64_t{1} << (b & 63); }
  // True when b is in the set.
  bool Has(uint8_t b) const { return (w[b >> 6] >> (b & 63)) & 1; }
  // True when no byte is in the set.
  bool Empty() const { return (w[0] | w[1] | w[2] | w[3]) == 0; }
  // Adds every byte of `o`.
  ByteSet& operator|=(const ByteSet& o) {
    for (int i = 0; i < 4; ++i) w[i] |= o.w[i];
    return *this;
  }
  bool operator==(const ByteSet& o) const {
    return w[0] == o.w[0] && w[1] == o.w[1] && w[2] == o.w[2] && w[3] == o.w[3];
  }
};

}  // namespace llmserve::engine_core::structured_output
