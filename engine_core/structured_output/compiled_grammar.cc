#include "engine_core/structured_output/compiled_grammar.h"

#include <string>
#include <unordered_map>

namespace llmserve::engine_core::structured_output {
namespace {

// The node's rule, end flag and edges: two nodes with equal signatures lead
// to the same frames after any byte, so they have the same position mask
// (the ends of a string's character alternatives are such copies).
std::string NodeSignature(const Grammar& g, int32_t id) {
  const Node& n = g.nodes()[id];
  std::string sig(reinterpret_cast<const char*>(&n.rule), sizeof(n.rule));
  sig += n.accepting ? 'A' : 'N';
  for (const ByteEdge& b : n.bytes) {
    sig.append(reinterpret_cast<const char*>(b.set.w), sizeof(b.set.w));
    sig.append(reinterpret_cast<const char*>(&b.target), sizeof(b.target));
    sig += static_cast<char>(b.op);
  }
  sig += '|';
  for (const CallEdge& c : n.calls) {
    sig.append(reinterpret_cast<const char*>(&c.rule), sizeof(c.rule));
    sig.append(reinterpret_cast<const char*>(&c.ret), sizeof(c.ret));
  }
  return sig;
}

}  // namespace

std::shared_ptr<const CompiledGrammar> CompiledGrammar::Compile(std::shared_ptr<const Grammar> grammar,
                                                                std::shared_ptr<const Vocabulary> vocab) {
  auto c = std::make_shared<CompiledGrammar>();
  const Grammar& g = *grammar;
  c->masks_.resize(g.nodes().size());
  // Canonical index of each node of a leaf rule, for the cache key.
  std::unordered_map<int32_t, int64_t> shapes;
  for (size_t r = 0; r < g.rules().size(); ++r) {
    if (g.rules()[r].leaf) shapes[static_cast<int32_t>(r)] = vocab->ShapeId(g.LeafShape(static_cast<int32_t>(r)));
  }
  std::vector<int32_t> canon(g.nodes().size(), -1);
  for (auto& [r, shape] : shapes) {
    std::vector<int32_t> order{g.rules()[r].start};
    canon[order[0]] = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      for (const ByteEdge& b : g.nodes()[order[k]].bytes) {
        if (canon[b.target] < 0) {
          canon[b.target] = static_cast<int32_t>(order.size());
          order.push_back(b.target);
        }
      }
    }
  }
  LocalDfa dfa(g);
  std::unordered_map<std::string, std::shared_ptr<const PositionMask>> by_signature;
  auto compute = [&](int32_t node) {
    auto [it, fresh] = by_signature.try_emplace(NodeSignature(g, node));
    if (fresh) it->second = ComputePositionMask(dfa, node, *vocab);
    return it->second;
  };
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.bytes.empty()) continue;
    auto shape = shapes.find(n.rule);
    if (shape == shapes.end() || canon[i] < 0) {
      c->masks_[i] = compute(static_cast<int32_t>(i));
      continue;
    }
    std::string key = std::to_string(shape->second) + "#" + std::to_string(canon[i]);
    auto m = vocab->CachedMask(key);
    if (!m) {
      m = compute(static_cast<int32_t>(i));
      vocab->CacheMask(key, m);
    }
    c->masks_[i] = std::move(m);
  }
  c->grammar_ = std::move(grammar);
  c->vocab_ = std::move(vocab);
  return c;
}

}  // namespace llmserve::engine_core::structured_output
