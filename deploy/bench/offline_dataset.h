#pragma once
// The prompts of `llmserve bench throughput`, chosen as `vllm bench
// throughput` chooses them:
//
//  random     (no --dataset-path) --num-prompts prompts of random token ids
//             (below 10000 and the vocabulary size), input length uniform in [floor(L(1-r)), ceil(L(1+r))]
//             after --prefix-len random tokens shared by all, output length
//             likewise (L = --input-len / --output-len, r = --random-range-ratio).
//  ShareGPT   a JSON array of {"conversations": [{"value": prompt},
//             {"value": reference answer}, ...]}: shuffled by the seed; the
//             prompt's token count, and the answer's unless --output-len is
//             set, give the lengths; pairs with fewer than 4 tokens, a prompt
//             over 1024 tokens, more than 2048 in all, or more than
//             max_model_len are skipped.
//  JSON lines one object per line: {"prompt": text} or {"prompt_token_ids":
//             [...]}, with "output_len" (or "max_tokens") unless --output-len
//             is set; a line may also be a ShareGPT conversation object.
//             Used in file order; one too long for max_model_len is an error.
//
// When a file has fewer usable prompts than --num-prompts, prompts are
// repeated (drawn at random with the seed), as vLLM oversamples.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "deploy/bench/offline_batch.h"
#include "base/status_or.h"

namespace llmserve::deploy {

struct OfflineDatasetOptions {
  std::string path;                   // "" = random prompts
  std::string model_dir;              // its tokenizer encodes text prompts
  int64_t num_prompts = 1000;         // prompts to return
  std::optional<int64_t> input_len;   // random prompts: required
  std::optional<int64_t> output_len;  // overrides the dataset's lengths; random default 128
  double range_ratio = 0;             // random only, in [0, 1)
  int64_t prefix_len = 0;             // random only: shared leading tokens
  uint64_t seed = 0;                  // shuffling, sampling and random tokens
  int64_t max_model_len = 0;          // prompt + output bound (0 = none)
  int64_t vocab_size = 10000;         // random token ids stay below this (and 10000)
};

// `n` random token ids in [0, min(10000, vocab_size)), as vLLM's dummy prompts.
std::vector<int32_t> RandomTokenIds(std::mt19937_64& rng, int64_t n, int64_t vocab_size);

// The prompts, each with its output length as max_tokens.
StatusOr<std::vector<OfflineRequest>> LoadOfflineDataset(const OfflineDatasetOptions& options);

}  // namespace llmserve::deploy
