#include "engine_core/structured_output/grammar.h"

#include <climits>
#include <functional>
#include <sstream>
#include <unordered_map>

#include "engine_core/structured_output/grammar_lower.h"

namespace llmserve::engine_core::structured_output {
namespace {

void CollectRefs(const Expr& e, std::vector<int32_t>* out) {
  if (e.kind == ExprKind::kRef) out->push_back(e.rule);
  for (const Expr& item : e.items) CollectRefs(item, out);
}

// Expands rule bodies: references to inlinable rules are replaced by their
// (expanded) bodies; the others stay references.
class Inliner {
 public:
  Inliner(const std::vector<std::optional<Expr>>& bodies, const std::vector<bool>& shared,
          int64_t max_inline)
      : bodies_(bodies), shared_(shared), max_inline_(max_inline), recursive_(bodies.size(), false),
        memo_(bodies.size()) {
    FindRecursive();
  }

  // The expanded body of `rule`.
  const Expr& Expanded(int32_t rule) {
    if (!memo_[rule]) {
      Expr e = *bodies_[rule];
      Substitute(&e);
      memo_[rule] = std::move(e);
    }
    return *memo_[rule];
  }

  // Whether references to `rule` are replaced by its body.
  bool Inlinable(int32_t rule) {
    if (recursive_[rule] || bodies_[rule]->kind == ExprKind::kCounted) return false;
    const Expr& e = Expanded(rule);
    if (shared_[rule]) {
      std::vector<int32_t> refs;
      CollectRefs(e, &refs);
      if (refs.empty()) return false;
    }
    return ExprSize(e) <= max_inline_;
  }

 private:
  void Substitute(Expr* e) {
    if (e->kind == ExprKind::kRef && Inlinable(e->rule)) {
      *e = Expanded(e->rule);
      return;
    }
    for (Expr& item : e->items) Substitute(&item);
  }

  void FindRecursive() {
    size_t n = bodies_.size();
    std::vector<std::vector<int32_t>> refs(n);
    for (size_t r = 0; r < n; ++r)
      if (bodies_[r]) CollectRefs(*bodies_[r], &refs[r]);
    for (size_t r = 0; r < n; ++r) {
      std::vector<bool> seen(n, false);
      std::vector<int32_t> stack(refs[r].begin(), refs[r].end());
      while (!stack.empty() && !recursive_[r]) {
        int32_t x = stack.back();
        stack.pop_back();
        if (x == static_cast<int32_t>(r)) recursive_[r] = true;
        if (seen[x]) continue;
        seen[x] = true;
        stack.insert(stack.end(), refs[x].begin(), refs[x].end());
      }
    }
  }

  const std::vector<std::optional<Expr>>& bodies_;
  const std::vector<bool>& shared_;
  int64_t max_inline_;
  std::vector<bool> recursive_;
  std::vector<std::optional<Expr>> memo_;
};

void Renumber(Expr* e, const std::vector<int32_t>& ids) {
  if (e->kind == ExprKind::kRef) e->rule = ids[e->rule];
  for (Expr& item : e->items) Renumber(&item, ids);
}

}  // namespace

int32_t GrammarBuilder::AddRule(std::string name) {
  names_.push_back(std::move(name));
  bodies_.emplace_back();
  shared_.push_back(false);
  return static_cast<int32_t>(names_.size() - 1);
}

void GrammarBuilder::Define(int32_t rule, Expr body) { bodies_.at(rule) = std::move(body); }

void GrammarBuilder::DefineCounted(int32_t rule, Expr item, int32_t min, int32_t max, Expr tail) {
  bodies_.at(rule) = CountedExpr(std::move(item), min, max < 0 ? INT32_MAX : max, std::move(tail));
  shared_.at(rule) = true;
}

std::optional<int32_t> GrammarBuilder::Find(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int32_t>(i);
  return std::nullopt;
}

StatusOr<std::shared_ptr<const Grammar>> GrammarBuilder::Build(int32_t root,
                                                               const BuildOptions& options) const {
  // Every rule reachable from the root must be defined.
  std::vector<bool> reach(bodies_.size(), false);
  std::vector<int32_t> stack{root};
  reach[root] = true;
  while (!stack.empty()) {
    int32_t r = stack.back();
    stack.pop_back();
    if (!bodies_[r]) return Status::InvalidArgument("rule '" + names_[r] + "' is not defined");
    std::vector<int32_t> refs;
    CollectRefs(*bodies_[r], &refs);
    for (int32_t x : refs)
      if (!reach[x]) reach[x] = true, stack.push_back(x);
  }
  Inliner inliner(bodies_, shared_, options.max_inline_size);
  // Keep the root and every rule still referenced after inlining.
  std::vector<int32_t> ids(bodies_.size(), -1), kept{root};
  ids[root] = 0;
  for (size_t k = 0; k < kept.size(); ++k) {
    std::vector<int32_t> refs;
    CollectRefs(inliner.Expanded(kept[k]), &refs);
    for (int32_t x : refs) {
      if (ids[x] < 0) {
        ids[x] = static_cast<int32_t>(kept.size());
        kept.push_back(x);
      }
    }
  }
  std::vector<Expr> bodies;
  std::vector<std::string> names;
  for (int32_t r : kept) {
    bodies.push_back(inliner.Expanded(r));
    Renumber(&bodies.back(), ids);
    names.push_back(names_[r]);
  }
  auto g = std::make_shared<Grammar>();
  g->root_ = 0;
  LLMSERVE_RETURN_IF_ERROR(GrammarLowering::Lower(bodies, names, options.max_nodes, g.get()));
  LLMSERVE_RETURN_IF_ERROR(GrammarLowering::PruneAndCheck(g.get()));
  return std::shared_ptr<const Grammar>(std::move(g));
}

std::string Grammar::LeafShape(int32_t rule) const {
  std::string out;
  std::vector<int32_t> order{rules_[rule].start};
  std::unordered_map<int32_t, int32_t> id{{rules_[rule].start, 0}};
  for (size_t k = 0; k < order.size(); ++k) {
    const Node& n = nodes_[order[k]];
    out += n.accepting ? 'A' : 'N';
    for (const ByteEdge& b : n.bytes) {
      auto [it, fresh] = id.emplace(b.target, static_cast<int32_t>(order.size()));
      if (fresh) order.push_back(b.target);
      out.append(reinterpret_cast<const char*>(b.set.w), sizeof(b.set.w));
      out.append(reinterpret_cast<const char*>(&it->second), sizeof(int32_t));
      out += static_cast<char>('0' + static_cast<int>(b.op));
    }
    out += ';';
  }
  return out;
}

std::string Grammar::ToString() const {
  std::ostringstream os;
  for (size_t r = 0; r < rules_.size(); ++r) {
    os << "rule " << r << " " << rules_[r].name << " start=" << rules_[r].start;
    if (rules_[r].counted()) os << " count=" << rules_[r].count_min << ".." << rules_[r].count_max;
    os << "\n";
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    os << "  n" << i << " r" << n.rule << (n.accepting ? " accept" : "");
    for (const ByteEdge& b : n.bytes) {
      os << " [";
      for (int c = 0; c < 256; ++c)
        if (b.set.Has(static_cast<uint8_t>(c))) {
          int e = c;
          while (e + 1 < 256 && b.set.Has(static_cast<uint8_t>(e + 1))) ++e;
          os << c;
          if (e > c) os << "-" << e;
          os << ",";
          c = e;
        }
      os << "]" << (b.op == CountOp::kStart ? "+" : b.op == CountOp::kExit ? "!" : "") << "->n" << b.target;
    }
    for (const CallEdge& c : n.calls) os << " call r" << c.rule << "->n" << c.ret;
    os << "\n";
  }
  return os.str();
}

}  // namespace llmserve::engine_core::structured_output
