#include "engine_core/structured_output/expr.h"
#include <algorithm>

namespace llmserve::engine_core::structured_output {

Expr SeqExpr(std::vector<Expr> items) {
  Expr e;
  e.kind = ExprKind::kSeq;
  for (Expr& item : items) {
    if (item.kind == ExprKind::kEmpty) continue;
    if (item.kind == ExprKind::kSeq) {
      for (Expr& sub : item.items) e.items.push_back(std::move(sub));
    } else {
      e.items.push_back(std::move(item));
    }
  }
  if (e.items.empty()) return EmptyExpr();
  if (e.items.size() == 1) return std::move(e.items[0]);
  return e;
}

Expr AltExpr(std::vector<Expr> items) {
  Expr e;
  e.kind = ExprKind::kAlt;
  for (Expr& item : items) {
    if (item.kind == ExprKind::kAlt) {
      for (Expr& sub : item.items) e.items.push_back(std::move(sub));
    } else {
      e.items.push_back(std::move(item));
    }
  }
  if (e.items.size() == 1) return std::move(e.items[0]);
  return e;
}

Expr LiteralExpr(std::string_view s) {
  std::vector<Expr> items;
  items.reserve(s.size());
  for (char c : s) items.push_back(BytesExpr(ByteSet::Single(static_cast<uint8_t>(c))));
  return SeqExpr(std::move(items));
}

Expr RepeatExpr(Expr item, int32_t min, int32_t max) {
  if (max == 0 || item.kind == ExprKind::kEmpty) return EmptyExpr();
  if (min == 1 && max == 1) return item;
  Expr e;
  e.kind = ExprKind::kRepeat;
  e.min = min;
  e.max = max;
  e.items.push_back(std::move(item));
  return e;
}

Expr CountedExpr(Expr item, int32_t min, int32_t max, Expr tail) {
  Expr e;
  e.kind = ExprKind::kCounted;
  e.min = min;
  e.max = max;
  e.items.push_back(std::move(item));
  e.items.push_back(std::move(tail));
  return e;
}

int64_t ExprSize(const Expr& e) {
  int64_t n = 1;
  for (const Expr& item : e.items) n += ExprSize(item);
  if (e.kind == ExprKind::kRepeat) {
    int64_t copies = e.max < 0 ? std::max<int64_t>(e.min, 1) : e.max;
    n += (copies - 1) * (n - 1);
  }
  return n;
}

}  // namespace llmserve::engine_core::structured_output
