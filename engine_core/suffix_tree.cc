#include "engine_core/suffix_tree.h"

#include <algorithm>

namespace llmserve::engine_core {

void SuffixTree::Append(int64_t seq, int32_t token) {
  Sequence& s = sequences_[seq];
  s.tokens.push_back(token);
  // Every open substring grows by `token`; the longest would pass max_depth
  // and closes. The new one-token substring starts at the root.
  if (static_cast<int32_t>(s.open.size()) == max_depth_) s.open.pop_back();
  s.open.insert(s.open.begin(), &root_);
  for (Node*& n : s.open) {
    std::unique_ptr<Node>& child = n->children[token];
    if (child == nullptr) child = std::make_unique<Node>();
    ++child->count;
    n = child.get();
  }
}

void SuffixTree::Remove(int64_t seq) {
  auto it = sequences_.find(seq);
  if (it == sequences_.end()) return;
  const std::vector<int32_t>& t = it->second.tokens;
  // Each start position added one occurrence to every node on its path (up
  // to max_depth tokens, cut at the sequence's end): take them back, freeing
  // a node once nothing passes through it.
  for (size_t start = 0; start < t.size(); ++start) {
    const size_t end = std::min(t.size(), start + static_cast<size_t>(max_depth_));
    Node* n = &root_;
    for (size_t i = start; i < end; ++i) {
      auto c = n->children.find(t[i]);
      if (c == n->children.end()) break;  // cannot happen: the path was added
      Node* child = c->second.get();
      if (--child->count == 0) {
        n->children.erase(c);  // everything below had this occurrence only
        break;
      }
      n = child;
    }
  }
  sequences_.erase(it);
}

std::span<const int32_t> SuffixTree::tokens(int64_t seq) const {
  auto it = sequences_.find(seq);
  if (it == sequences_.end()) return {};
  return it->second.tokens;
}

const SuffixTree::Node* SuffixTree::Find(std::span<const int32_t> path) const {
  const Node* n = &root_;
  for (int32_t t : path) {
    auto c = n->children.find(t);
    if (c == n->children.end()) return nullptr;
    n = c->second.get();
  }
  return n;
}

}  // namespace llmserve::engine_core
