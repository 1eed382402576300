#pragma once
// PositionMask: the tokens a grammar position accepts whatever lies below it
// on the stack, computed once per position (adaptive token masks, as
// xgrammar publishes the idea; this is our own construction).
//
// A position is a node at the top of a stack. Walking the vocabulary trie
// with a stack whose bottom frame is that node and whose context is unknown
// sorts every token into one of three classes:
//   accepted   - some path consumes all of its bytes without leaving the
//                rule of the position (nor any rule it calls): accepted in
//                every context;
//   uncertain  - the rule of the position ends after `offset` bytes with
//                bytes left over: acceptance depends on the frames below,
//                checked at mask time from that offset;
//   rejected   - everything else.
// Positions of leaf rules (rules that call no rule) depend only on the shape
// of the rule, so their masks are cached per vocabulary across grammars.

#include <cstdint>
#include <memory>
#include <vector>

#include "engine_core/structured_output/grammar.h"
#include "engine_core/structured_output/vocabulary.h"

namespace llmserve::engine_core::structured_output {

struct PositionMask {
  struct Uncertain {
    int32_t token;
    int32_t offset;  // bytes consumed inside the rule before it ended
    int32_t lcp;     // common prefix of this remainder with the previous one
  };
  std::vector<uint32_t> accepted_bits;  // dense form (mask_words words), or empty
  std::vector<int32_t> accepted_ids;    // sparse form when accepted_bits is empty
  std::vector<Uncertain> uncertain;     // sorted by remainder bytes

  // ORs the accepted tokens into `mask`.
  void OrInto(uint32_t* mask) const;
};

// Computes the mask of `node` (a node with byte edges) over `vocab`.
std::shared_ptr<const PositionMask> ComputePositionMask(const Grammar& g, int32_t node,
                                                        const Vocabulary& vocab);

}  // namespace llmserve::engine_core::structured_output
