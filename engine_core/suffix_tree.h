#pragma once
// SuffixTree: every substring of at most `max_depth` tokens of a set of token
// sequences, as a trie whose nodes count their occurrences (suffix
// decoding's index, after Arctic Inference's SuffixDecodingCache). Sequences
// grow one token at a time (each token adds the up to max_depth substrings
// that end at it, O(max_depth) steps) and can be removed whole. A node's
// count is the number of places its path occurs, so child / parent counts
// estimate how often a context continues with the child's token.
//
// Not thread-safe; the scheduler owns it.

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace llmserve::engine_core {

class SuffixTree {
 public:
  struct Node {
    int64_t count = 0;  // occurrences of the path from the root to here
    std::unordered_map<int32_t, std::unique_ptr<Node>> children;
  };

  explicit SuffixTree(int32_t max_depth) : max_depth_(max_depth) {}
  SuffixTree(const SuffixTree&) = delete;
  SuffixTree& operator=(const SuffixTree&) = delete;

  int32_t max_depth() const { return max_depth_; }
  // The root (its count is unused).
  const Node& root() const { return root_; }

  // Appends `token` to sequence `seq` (created on first use).
  void Append(int64_t seq, int32_t token);
  // Forgets sequence `seq`: its occurrences leave every count, and nodes no
  // sequence holds any more are freed. Unknown ids are ignored.
  void Remove(int64_t seq);
  // The tokens held for `seq` (empty when unknown).
  std::span<const int32_t> tokens(int64_t seq) const;
  // The node whose path is `path`, or null when it does not occur.
  const Node* Find(std::span<const int32_t> path) const;
  size_t num_sequences() const { return sequences_.size(); }

 private:
  struct Sequence {
    std::vector<int32_t> tokens;
    // Nodes of the substrings ending at the last token, by length 1..max_depth
    // (shorter first); they gain a child on the next Append.
    std::vector<Node*> open;
  };

  int32_t max_depth_;
  Node root_;
  std::unordered_map<int64_t, Sequence> sequences_;
};

}  // namespace llmserve::engine_core
