#include "worker/prompt_logprobs.h"

#include <algorithm>

#include "worker/sampler.h"

namespace llmserve::worker {

size_t PromptLogprobRows(size_t num_prompt, size_t start, size_t n) {
  if (start + 1 >= num_prompt) return 0;
  return std::min(n, num_prompt - 1 - start);
}

PromptLogprobsCollector::PromptLogprobsCollector(int32_t top_k, size_t num_prompt) : top_k_(top_k) {
  const size_t rows = num_prompt > 0 ? num_prompt - 1 : 0;
  rows_.token_ids.resize(rows);
  rows_.logprobs.resize(rows);
  rows_.sampled_token_ranks.resize(rows, 0);
}

void PromptLogprobsCollector::Fill(const float* logits, size_t vocab, size_t first_row,
                                   std::span<const int32_t> targets, kernels::cpu::ThreadPool& pool) {
  // The same raw log-softmax, rank and top-k as the sampled tokens' logprobs.
  SamplingParams params;
  params.logprobs = top_k_;
  const size_t count = std::min(targets.size(), rows_.token_ids.size() - std::min(first_row, rows_.token_ids.size()));
  pool.ParallelFor(count, 1, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) FillRow(logits + i * vocab, vocab, params, first_row + i, targets[i]);
  });
}

void PromptLogprobsCollector::FillRow(const float* logits, size_t vocab, const SamplingParams& params, size_t index,
                                      int32_t target) {
  SamplerRow row;
  row.params = &params;
  row.logits = logits;
  SampledToken s;
  s.token = target;
  Sampler::FillLogprobs(row, vocab, target, &s);
  std::vector<int32_t>& ids = rows_.token_ids[index];
  std::vector<float>& values = rows_.logprobs[index];
  ids.assign(1, s.token);
  values.assign(1, s.logprob);
  for (const auto& [t, v] : s.top) {
    ids.push_back(t);
    values.push_back(v);
  }
  rows_.sampled_token_ranks[index] = s.rank;
}

}  // namespace llmserve::worker
