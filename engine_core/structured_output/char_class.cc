#include "engine_core/structured_output/char_class.h"

#include <algorithm>

namespace llmserve::engine_core::structured_output {
namespace {

constexpr uint32_t kMaxCp = 0x10FFFF;

int Utf8Len(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

void Encode(uint32_t cp, uint8_t* out) {
  int n = Utf8Len(cp);
  if (n == 1) {
    out[0] = static_cast<uint8_t>(cp);
    return;
  }
  static constexpr uint8_t kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (int i = n - 1; i > 0; --i) {
    out[i] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    cp >>= 6;
  }
  out[0] = static_cast<uint8_t>(kLead[n] | cp);
}

// Appends byte-range sequences for [lo, hi] (same UTF-8 length, no surrogates).
void Split(uint32_t lo, uint32_t hi, std::vector<Expr>* out) {
  int n = Utf8Len(lo);
  if (n != Utf8Len(hi)) {
    uint32_t cut = n == 1 ? 0x7F : n == 2 ? 0x7FF : 0xFFFF;
    Split(lo, cut, out);
    Split(cut + 1, hi, out);
    return;
  }
  for (int i = 1; i < n; ++i) {
    uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        Split(lo, lo | m, out);
        Split((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        Split(lo, (hi & ~m) - 1, out);
        Split(hi & ~m, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  Encode(lo, a);
  Encode(hi, b);
  std::vector<Expr> seq;
  for (int i = 0; i < n; ++i) seq.push_back(BytesExpr(ByteSet::Range(a[i], b[i])));
  out->push_back(SeqExpr(std::move(seq)));
}

}  // namespace

void CharClass::Normalize() const {
  if (normalized_) return;
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (auto r : ranges_) {
    if (r.first > r.second) continue;
    if (!out.empty() && r.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  ranges_ = std::move(out);
  normalized_ = true;
}

const std::vector<std::pair<uint32_t, uint32_t>>& CharClass::ranges() const {
  Normalize();
  return ranges_;
}

CharClass CharClass::Negated() const {
  CharClass out;
  uint32_t next = 0;
  for (auto r : ranges()) {
    if (r.first > next) out.Add(next, r.first - 1);
    next = r.second + 1;
  }
  if (next <= kMaxCp) out.Add(next, kMaxCp);
  return out;
}

Expr CharClass::ToExpr() const {
  std::vector<Expr> alts;
  for (auto r : ranges()) {
    uint32_t lo = r.first, hi = std::min(r.second, kMaxCp);
    // Surrogates are not scalar values and have no UTF-8 form.
    if (lo <= 0xDFFF && hi >= 0xD800) {
      if (lo < 0xD800) Split(lo, 0xD7FF, &alts);
      if (hi > 0xDFFF) Split(0xE000, hi, &alts);
    } else if (lo <= hi) {
      Split(lo, hi, &alts);
    }
  }
  // Merge the single-byte alternatives into one byte set.
  ByteSet ascii;
  std::vector<Expr> rest;
  for (Expr& e : alts) {
    if (e.kind == ExprKind::kBytes) ascii |= e.bytes;
    else rest.push_back(std::move(e));
  }
  if (!ascii.Empty()) rest.insert(rest.begin(), BytesExpr(ascii));
  return AltExpr(std::move(rest));
}

CharClass CharClass::Digit() {
  CharClass c;
  c.Add('0', '9');
  return c;
}

CharClass CharClass::Word() {
  CharClass c;
  c.Add('0', '9');
  c.Add('A', 'Z');
  c.Add('a', 'z');
  c.Add('_', '_');
  return c;
}

CharClass CharClass::Space() {
  CharClass c;
  for (uint32_t cp : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0xA0u, 0x1680u, 0x2028u, 0x2029u, 0x202Fu,
                      0x205Fu, 0x3000u, 0xFEFFu})
    c.Add(cp, cp);
  c.Add(0x2000, 0x200A);
  return c;
}

CharClass CharClass::Any() {
  CharClass c;
  c.Add(0, kMaxCp);
  return c;
}

}  // namespace llmserve::engine_core::structured_output
