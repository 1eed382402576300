#include "engine_core/structured_output/grammar_lower.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <string>

namespace llmserve::engine_core::structured_output {
namespace {

// A Thompson automaton with epsilon edges, for one rule.
struct TState {
  std::vector<ByteEdge> bytes;
  std::vector<CallEdge> calls;
  std::vector<int32_t> eps;
};

class Thompson {
 public:
  explicit Thompson(int64_t max_states) : max_states_(max_states) {}

  int32_t New() {
    states_.emplace_back();
    return static_cast<int32_t>(states_.size() - 1);
  }
  bool overflow() const { return static_cast<int64_t>(states_.size()) > max_states_; }
  // An error in the shape of a counted body (CountedExpr's requirements).
  const std::string& error() const { return error_; }
  std::vector<TState>& states() { return states_; }

  // Emits `e` starting at state `in`; returns its end state.
  int32_t Emit(const Expr& e, int32_t in) {
    if (overflow()) return in;
    switch (e.kind) {
      case ExprKind::kEmpty:
        return in;
      case ExprKind::kBytes: {
        int32_t s = New();
        states_[in].bytes.push_back({e.bytes, s});
        return s;
      }
      case ExprKind::kSeq:
        for (const Expr& item : e.items) in = Emit(item, in);
        return in;
      case ExprKind::kAlt: {
        int32_t out = New();
        for (const Expr& item : e.items) {
          int32_t s = New();
          states_[in].eps.push_back(s);
          int32_t o = Emit(item, s);
          states_[o].eps.push_back(out);
        }
        return out;
      }
      case ExprKind::kRef: {
        int32_t s = New();
        states_[in].calls.push_back({e.rule, s});
        return s;
      }
      case ExprKind::kRepeat:
        return EmitRepeat(e, in);
      case ExprKind::kCounted:
        error_ = "a counted repetition is only allowed as the whole body of a rule";
        return in;
    }
    return in;
  }

  // Emits a rule body that is a CountedExpr: a loop head, the item looping
  // back to it and the tail after it. The item's first byte edges start a
  // copy (CountOp::kStart), the tail's first byte edges leave (kExit).
  int32_t EmitCounted(const Expr& e, int32_t in) {
    int32_t head = New();
    states_[in].eps.push_back(head);
    int32_t item = New();
    states_[head].eps.push_back(item);
    int32_t item_end = Emit(e.items[0], item);
    states_[item_end].eps.push_back(head);
    int32_t tail = New();
    states_[head].eps.push_back(tail);
    int32_t end = Emit(e.items[1], tail);
    if (!MarkFirstEdges(item, item_end, CountOp::kStart) || !MarkFirstEdges(tail, end, CountOp::kExit)) {
      error_ = "a counted repetition's item and tail must not match the empty string";
    }
    return end;
  }

 private:
  int32_t EmitRepeat(const Expr& e, int32_t in) {
    const Expr& item = e.items[0];
    for (int32_t i = 0; i < e.min && !overflow(); ++i) {
      int32_t s = New();
      states_[in].eps.push_back(s);
      in = Emit(item, s);
    }
    if (e.max < 0) {
      int32_t loop = New();
      states_[in].eps.push_back(loop);
      int32_t s = New();
      states_[loop].eps.push_back(s);
      int32_t o = Emit(item, s);
      states_[o].eps.push_back(loop);
      return loop;
    }
    int32_t out = New();
    for (int32_t i = e.min; i < e.max && !overflow(); ++i) {
      states_[in].eps.push_back(out);
      int32_t s = New();
      states_[in].eps.push_back(s);
      in = Emit(item, s);
    }
    states_[in].eps.push_back(out);
    return out;
  }

  // Sets `op` on the byte edges reachable from `from` by epsilon edges;
  // false when `end` is reachable so (the part matches the empty string).
  bool MarkFirstEdges(int32_t from, int32_t end, CountOp op) {
    std::vector<bool> seen(states_.size(), false);
    std::vector<int32_t> stack{from};
    seen[from] = true;
    while (!stack.empty()) {
      int32_t s = stack.back();
      stack.pop_back();
      if (s == end) return false;
      for (ByteEdge& b : states_[s].bytes) b.op = op;
      for (int32_t t : states_[s].eps)
        if (!seen[t]) seen[t] = true, stack.push_back(t);
    }
    return true;
  }

  int64_t max_states_;
  std::vector<TState> states_;
  std::string error_;
};

// Adds the epsilon-free form of one Thompson automaton to g; returns the
// start node id.
int32_t RemoveEpsilons(std::vector<TState>& ts, int32_t start, int32_t final_state, int32_t rule,
                       std::vector<Node>* nodes) {
  std::vector<int32_t> id(ts.size(), -1);
  std::vector<int32_t> order;
  const size_t base = nodes->size();
  auto visit = [&](int32_t s) {
    if (id[s] < 0) {
      id[s] = static_cast<int32_t>(base + order.size());
      order.push_back(s);
    }
    return id[s];
  };
  visit(start);
  std::vector<int32_t> mark(ts.size(), -1), stack;
  for (size_t k = 0; k < order.size(); ++k) {
    int32_t origin = order[k];
    Node node;
    node.rule = rule;
    stack.assign(1, origin);
    mark[origin] = static_cast<int32_t>(k);
    while (!stack.empty()) {
      int32_t s = stack.back();
      stack.pop_back();
      if (s == final_state) node.accepting = true;
      for (const ByteEdge& b : ts[s].bytes) {
        int32_t t = visit(b.target);
        auto it = std::find_if(node.bytes.begin(), node.bytes.end(),
                               [&](const ByteEdge& x) { return x.target == t && x.op == b.op; });
        if (it == node.bytes.end()) node.bytes.push_back({b.set, t, b.op});
        else it->set |= b.set;
      }
      for (const CallEdge& c : ts[s].calls) {
        CallEdge call{c.rule, visit(c.ret)};
        if (std::find_if(node.calls.begin(), node.calls.end(), [&](const CallEdge& x) {
              return x.rule == call.rule && x.ret == call.ret;
            }) == node.calls.end()) {
          node.calls.push_back(call);
        }
      }
      for (int32_t t : ts[s].eps) {
        if (mark[t] != static_cast<int32_t>(k)) {
          mark[t] = static_cast<int32_t>(k);
          stack.push_back(t);
        }
      }
    }
    nodes->push_back(std::move(node));
  }
  return id[start];
}

// Marks rules that derive at least one string.
std::vector<bool> ProductiveRules(const Grammar& g, const std::vector<Node>& nodes,
                                  const std::vector<Rule>& rules) {
  std::vector<bool> productive(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules.size(); ++r) {
      if (productive[r]) continue;
      std::vector<int32_t> stack{rules[r].start};
      std::vector<bool> seen(nodes.size(), false);
      seen[rules[r].start] = true;
      while (!stack.empty() && !productive[r]) {
        const Node& n = nodes[stack.back()];
        stack.pop_back();
        if (n.accepting) productive[r] = true;
        auto go = [&](int32_t t) {
          if (!seen[t]) seen[t] = true, stack.push_back(t);
        };
        for (const ByteEdge& b : n.bytes) go(b.target);
        for (const CallEdge& c : n.calls)
          if (productive[c.rule]) go(c.ret);
      }
      changed |= productive[r];
    }
  }
  (void)g;
  return productive;
}

}  // namespace

Status GrammarLowering::Lower(const std::vector<Expr>& bodies, const std::vector<std::string>& names,
                              int64_t max_nodes, Grammar* g) {
  g->rules_.resize(bodies.size());
  for (size_t r = 0; r < bodies.size(); ++r) {
    Thompson t(max_nodes);
    int32_t start = t.New();
    const bool counted = bodies[r].kind == ExprKind::kCounted;
    int32_t end = counted ? t.EmitCounted(bodies[r], start) : t.Emit(bodies[r], start);
    if (!t.error().empty()) return Status::InvalidArgument(t.error() + " (rule '" + names[r] + "')");
    if (counted) {
      g->rules_[r].count_min = bodies[r].min;
      g->rules_[r].count_max = bodies[r].max < 0 ? INT32_MAX : bodies[r].max;
    }
    if (t.overflow() || static_cast<int64_t>(g->nodes_.size()) > max_nodes) {
      return Status::InvalidArgument("grammar too large: more than " + std::to_string(max_nodes) +
                                     " automaton states (rule '" + names[r] + "')");
    }
    g->rules_[r].name = names[r];
    g->rules_[r].start = RemoveEpsilons(t.states(), start, end, static_cast<int32_t>(r), &g->nodes_);
  }
  return Status::Ok();
}

Status GrammarLowering::PruneAndCheck(Grammar* g) {
  std::vector<Node>& nodes = g->nodes_;
  std::vector<Rule>& rules = g->rules_;
  std::vector<bool> productive = ProductiveRules(*g, nodes, rules);
  if (!productive[g->root_]) return Status::InvalidArgument("the grammar accepts no string");
  for (Node& n : nodes) {
    std::erase_if(n.calls, [&](const CallEdge& c) { return !productive[c.rule]; });
  }
  // Useful nodes: those from which the end of their rule is reachable.
  std::vector<bool> useful(nodes.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (useful[i]) continue;
      const Node& n = nodes[i];
      bool u = n.accepting;
      for (const ByteEdge& b : n.bytes) u = u || useful[b.target];
      for (const CallEdge& c : n.calls) u = u || useful[c.ret];
      if (u) useful[i] = changed = true;
    }
  }
  for (Node& n : nodes) {
    std::erase_if(n.bytes, [&](const ByteEdge& b) { return !useful[b.target] || b.set.Empty(); });
    std::erase_if(n.calls, [&](const CallEdge& c) { return !useful[c.ret]; });
  }
  for (Rule& r : rules) r.leaf = true;
  for (const Node& n : nodes)
    if (!n.calls.empty()) rules[n.rule].leaf = false;
  // Nullable rules, then left recursion: a rule reaching itself by calls
  // that consume nothing before them.
  std::vector<bool> nullable(rules.size(), false);
  auto left_calls = [&](size_t r, std::vector<int32_t>* callees) {
    std::vector<int32_t> stack{rules[r].start};
    std::vector<bool> seen(nodes.size(), false);
    bool can_end = false;
    while (!stack.empty()) {
      const Node& n = nodes[stack.back()];
      stack.pop_back();
      can_end |= n.accepting;
      for (const CallEdge& c : n.calls) {
        if (callees) callees->push_back(c.rule);
        if (nullable[c.rule] && !seen[c.ret]) seen[c.ret] = true, stack.push_back(c.ret);
      }
    }
    return can_end;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules.size(); ++r)
      if (!nullable[r] && left_calls(r, nullptr)) nullable[r] = changed = true;
  }
  std::vector<std::vector<int32_t>> edges(rules.size());
  for (size_t r = 0; r < rules.size(); ++r) left_calls(r, &edges[r]);
  std::vector<int> color(rules.size(), 0);
  std::string cycle;
  std::function<bool(int32_t)> dfs = [&](int32_t r) {
    color[r] = 1;
    for (int32_t c : edges[r]) {
      if (color[c] == 1 || (color[c] == 0 && dfs(c))) {
        if (cycle.empty()) cycle = rules[c].name;
        return true;
      }
    }
    color[r] = 2;
    return false;
  };
  for (size_t r = 0; r < rules.size(); ++r) {
    if (color[r] == 0 && dfs(static_cast<int32_t>(r))) {
      return Status::InvalidArgument("left recursion through rule '" + cycle + "' is not supported");
    }
  }
  return Status::Ok();
}

}  // namespace llmserve::engine_core::structured_output
