#pragma once
// The suffix decoding proposer (vLLM's method "suffix", after Arctic
// Inference): drafts continue the end of a request's tokens the way the same
// context continued before, in the request itself (its prompt and output so
// far) or in the outputs of recent requests. Two suffix trees hold them (one
// per running request, one over the last max_cached_requests outputs). For
// each length L of the request's last tokens that occurs in a tree, the
// draft follows the most frequent child from that node while the product of
// child / parent counts stays >= min_token_prob, for at most
// max_spec_factor * L tokens; the draft whose probabilities sum highest wins.

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine_core/suffix_tree.h"

namespace llmserve::engine_core {

// vLLM's suffix_decoding_* keys (and defaults).
struct SuffixDecodingConfig {
  int32_t max_tree_depth = 24;         // longest context + draft a tree holds
  int32_t max_cached_requests = 10000;  // outputs kept for other requests (0: own tokens only)
  double max_spec_factor = 1.0;        // drafts per matched context token at most
  double min_token_prob = 0.1;         // a draft token's estimated probability at least
};

class SuffixProposer {
 public:
  explicit SuffixProposer(const SuffixDecodingConfig& config);
  SuffixProposer(const SuffixProposer&) = delete;
  SuffixProposer& operator=(const SuffixProposer&) = delete;

  // Brings request `id`'s index up to `tokens` (its prompt + output; the
  // first `num_prompt_tokens` are the prompt, the rest output), then writes
  // at most `max_drafts` drafts to `*drafts` (empty when nothing matches).
  void Propose(const std::string& id, std::span<const int32_t> tokens, int32_t num_prompt_tokens,
               int32_t max_drafts, std::vector<int32_t>* drafts);
  // Request `id` finished: its own index goes; its output stays among the
  // cached ones (the oldest leaves beyond max_cached_requests).
  void Finish(const std::string& id);

  size_t num_active() const { return active_.size(); }
  size_t num_cached() const { return cached_order_.size(); }

 private:
  struct Active {
    int64_t seq = 0;           // its sequence in both trees
    size_t num_indexed = 0;    // tokens added to its own tree
  };
  // The best draft from `tree` for the end of `context` (replaces *best when better).
  void Search(const SuffixTree& tree, std::span<const int32_t> context, int32_t max_drafts,
              std::vector<int32_t>* best, double* best_score);

  SuffixDecodingConfig config_;
  std::unique_ptr<SuffixTree> global_;  // outputs of active and recent requests
  std::unordered_map<std::string, Active> active_;
  std::unordered_map<int64_t, std::unique_ptr<SuffixTree>> own_;  // by sequence: prompt + output
  std::deque<int64_t> cached_order_;  // finished requests' sequences in global_, oldest first
  int64_t next_seq_ = 0;
  std::vector<int32_t> scratch_;  // Search's candidate, kept for its capacity
};

}  // namespace llmserve::engine_core
