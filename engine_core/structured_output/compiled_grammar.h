#pragma once
// CompiledGrammar: a Grammar bound to a Vocabulary with the precomputed mask
// of every position (every node with byte edges). Immutable and shared by
// all matchers of requests that use the same grammar (its UncertainCache is
// the one part that fills as they run).

#include <memory>
#include <vector>

#include "base/status_or.h"
#include "engine_core/structured_output/grammar.h"
#include "engine_core/structured_output/position_mask.h"
#include "engine_core/structured_output/uncertain_cache.h"
#include "engine_core/structured_output/vocabulary.h"

namespace llmserve::engine_core::structured_output {

class CompiledGrammar {
 public:
  // Precomputes the position masks (leaf-rule positions through the
  // vocabulary's cache).
  static std::shared_ptr<const CompiledGrammar> Compile(std::shared_ptr<const Grammar> grammar,
                                                        std::shared_ptr<const Vocabulary> vocab);
  // The grammar.
  const Grammar& grammar() const { return *grammar_; }
  // The vocabulary.
  const Vocabulary& vocab() const { return *vocab_; }
  // The mask of position `node` (null for nodes without byte edges).
  const PositionMask* mask(int32_t node) const { return masks_[node].get(); }
  // Uncertain tokens already checked against whole stacks, shared by matchers.
  UncertainCache& uncertain_cache() const { return *uncertain_cache_; }

 private:
  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const Vocabulary> vocab_;
  std::vector<std::shared_ptr<const PositionMask>> masks_;
  std::unique_ptr<UncertainCache> uncertain_cache_ = std::make_unique<UncertainCache>();
};

}  // namespace llmserve::engine_core::structured_output
