#pragma once
// Benchmark prompts, sampled as vLLM's `bench serve` datasets do:
//
//  random             per request an input length drawn uniformly from
//                     [floor(L*(1-r)), ceil(L*(1+r))] (L = --random-input-len
//                     minus the special tokens the tokenizer adds, r =
//                     --random-range-ratio) and likewise an output length;
//                     the prompt is a run of consecutive non-special token ids
//                     from a random offset, after an optional shared random
//                     prefix, decoded to text and re-encoded until the text
//                     encodes to exactly the wanted number of tokens.
//  prefix-repetition  N random prefixes of P tokens, each followed by
//                     num_prompts / N random suffixes of S tokens (shuffled),
//                     for measuring prefix caching.
//  sharegpt           the first two turns of each conversation in a ShareGPT
//                     JSON file (prompt, reference completion whose token count
//                     is the output length unless overridden), shuffled;
//                     pairs too short (< 4 tokens) or too long (prompt > 1024,
//                     prompt + output > 2048) are skipped; repeats entries when
//                     the file has fewer than asked for.
// Everything is reproducible from the seed.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "base/status_or.h"

namespace llmserve::deploy::bench {

// One prompt to send.
struct SampleRequest {
  std::string prompt;               // text sent as the completion prompt / user message
  int64_t prompt_len = 0;           // its token count (without special tokens the server may add)
  int64_t expected_output_len = 0;  // max_tokens to ask for
};

// --random-* flags.
struct RandomDatasetOptions {
  int64_t input_len = 1024;  // mean prompt tokens (including special tokens the tokenizer adds)
  int64_t output_len = 128;  // mean output tokens
  double range_ratio = 0;    // in [0, 1): lengths vary by +-ratio
  int64_t prefix_len = 0;    // random tokens shared by every prompt, before the varying part
};

// --prefix-repetition-* flags.
struct PrefixRepetitionOptions {
  int64_t prefix_len = 256;   // tokens in each shared prefix
  int64_t suffix_len = 256;   // tokens in each per-request suffix
  int64_t num_prefixes = 10;  // distinct prefixes
  int64_t output_len = 128;   // output tokens per request
};

// Decodes `ids` to text and re-encodes it, truncating or extending with random
// non-special ids, at most 10 rounds, so that the returned text encodes
// (without special tokens) to `target_len` tokens whenever the tokenizer
// allows. Returns the text and its token count.
std::pair<std::string, int64_t> PromptOfLength(const common::tokenizer::Tokenizer& tokenizer,
                                               std::vector<int32_t> ids, int64_t target_len,
                                               const std::vector<int32_t>& allowed, std::mt19937_64* rng);

// Non-special token ids of the tokenizer's vocabulary, ascending.
std::vector<int32_t> AllowedTokenIds(const common::tokenizer::Tokenizer& tokenizer);

StatusOr<std::vector<SampleRequest>> SampleRandom(const common::tokenizer::Tokenizer& tokenizer,
                                                  size_t num_requests, const RandomDatasetOptions& options,
                                                  uint64_t seed);

StatusOr<std::vector<SampleRequest>> SamplePrefixRepetition(const common::tokenizer::Tokenizer& tokenizer,
                                                            size_t num_requests,
                                                            const PrefixRepetitionOptions& options,
                                                            uint64_t seed);

// `output_len` overrides the reference completions' lengths when set.
StatusOr<std::vector<SampleRequest>> SampleShareGpt(const common::tokenizer::Tokenizer& tokenizer,
                                                    const std::string& path, size_t num_requests,
                                                    std::optional<int64_t> output_len, uint64_t seed);

}  // namespace llmserve::deploy::bench
