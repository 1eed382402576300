#include "engine_core/suffix_proposer.h"

#include <algorithm>

namespace llmserve::engine_core {

SuffixProposer::SuffixProposer(const SuffixDecodingConfig& config)
    : config_(config), global_(std::make_unique<SuffixTree>(config.max_tree_depth)) {}

void SuffixProposer::Propose(const std::string& id, std::span<const int32_t> tokens, int32_t num_prompt_tokens,
                             int32_t max_drafts, std::vector<int32_t>* drafts) {
  drafts->clear();
  auto [it, is_new] = active_.try_emplace(id);
  Active& a = it->second;
  if (is_new) {
    a.seq = next_seq_++;
    own_.emplace(a.seq, std::make_unique<SuffixTree>(config_.max_tree_depth));
  }
  SuffixTree& own = *own_.at(a.seq);
  for (size_t i = a.num_indexed; i < tokens.size(); ++i) {
    own.Append(a.seq, tokens[i]);
    const bool output = i >= static_cast<size_t>(num_prompt_tokens);
    if (config_.max_cached_requests > 0 && output) global_->Append(a.seq, tokens[i]);
  }
  a.num_indexed = tokens.size();
  if (max_drafts <= 0 || tokens.empty()) return;
  const size_t depth = static_cast<size_t>(config_.max_tree_depth);
  const std::span<const int32_t> context = tokens.last(std::min(tokens.size(), depth));
  double score = 0.0;
  Search(own, context, max_drafts, drafts, &score);
  if (config_.max_cached_requests > 0) Search(*global_, context, max_drafts, drafts, &score);
}

void SuffixProposer::Search(const SuffixTree& tree, std::span<const int32_t> context, int32_t max_drafts,
                            std::vector<int32_t>* best, double* best_score) {
  // Longer matches are tried while they occur (a suffix that does not occur
  // has no longer one that does); each gives one candidate.
  for (size_t len = 1; len <= context.size(); ++len) {
    const SuffixTree::Node* node = tree.Find(context.last(len));
    if (node == nullptr) break;
    const int32_t room = tree.max_depth() - static_cast<int32_t>(len);
    const auto by_factor = static_cast<int32_t>(config_.max_spec_factor * static_cast<double>(len) + 1e-6);
    const int32_t limit = std::min({max_drafts, room, by_factor});
    std::vector<int32_t>& draft = scratch_;
    draft.clear();
    double prob = 1.0, score = 0.0;
    while (static_cast<int32_t>(draft.size()) < limit && !node->children.empty()) {
      // The most frequent continuation; ties go to the smaller token id so
      // that the choice does not depend on the hash map's order.
      const SuffixTree::Node* next = nullptr;
      int32_t token = 0;
      for (const auto& [t, child] : node->children) {
        if (next == nullptr || child->count > next->count || (child->count == next->count && t < token)) {
          next = child.get();
          token = t;
        }
      }
      prob *= static_cast<double>(next->count) / static_cast<double>(node->count);
      if (prob < config_.min_token_prob) break;
      draft.push_back(token);
      score += prob;
      node = next;
    }
    if (score > *best_score) {
      *best_score = score;
      best->assign(draft.begin(), draft.end());
    }
  }
}

void SuffixProposer::Finish(const std::string& id) {
  auto it = active_.find(id);
  if (it == active_.end()) return;
  const int64_t seq = it->second.seq;
  own_.erase(seq);
  active_.erase(it);
  if (config_.max_cached_requests <= 0) return;
  cached_order_.push_back(seq);
  while (cached_order_.size() > static_cast<size_t>(config_.max_cached_requests)) {
    global_->Remove(cached_order_.front());
    cached_order_.pop_front();
  }
}

}  // namespace llmserve::engine_core
