#include "engine_core/structured_output/compiled_grammar.h"

#include <unordered_map>

namespace llmserve::engine_core::structured_output {

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
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.bytes.empty()) continue;
    auto shape = shapes.find(n.rule);
    if (shape == shapes.end() || canon[i] < 0) {
      c->masks_[i] = ComputePositionMask(dfa, static_cast<int32_t>(i), *vocab);
      continue;
    }
    std::string key = std::to_string(shape->second) + "#" + std::to_string(canon[i]);
    auto m = vocab->CachedMask(key);
    if (!m) {
      m = ComputePositionMask(dfa, static_cast<int32_t>(i), *vocab);
      vocab->CacheMask(key, m);
    }
    c->masks_[i] = std::move(m);
  }
  c->grammar_ = std::move(grammar);
  c->vocab_ = std::move(vocab);
  return c;
}

}  // namespace llmserve::engine_core::structured_output
