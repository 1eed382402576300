#include "deploy/bench/datasets.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace llmserve::deploy::bench {

using common::tokenizer::Tokenizer;

std::vector<int32_t> AllowedTokenIds(const Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (!tokenizer.IsSpecial(id) && tokenizer.IdToToken(id).has_value()) ids.push_back(id);
  }
  return ids;
}

std::pair<std::string, int64_t> PromptOfLength(const Tokenizer& tokenizer, std::vector<int32_t> ids,
                                               int64_t target_len, const std::vector<int32_t>& allowed,
                                               std::mt19937_64* rng) {
  std::string prompt;
  const size_t target = static_cast<size_t>(std::max<int64_t>(target_len, 0));
  for (int round = 0;; ++round) {
    prompt = tokenizer.Decode(ids, /*skip_special_tokens=*/false);
    ids = tokenizer.Encode(prompt, /*add_special_tokens=*/false);
    if (round >= 10 || ids.size() == target) break;
    if (ids.size() > target) {
      ids.resize(target);
    } else {
      std::uniform_int_distribution<size_t> pick(0, allowed.size() - 1);
      while (ids.size() < target) ids.push_back(allowed[pick(*rng)]);
    }
  }
  return {prompt, static_cast<int64_t>(ids.size())};
}

namespace {

int64_t NumSpecialTokensAdded(const Tokenizer& tokenizer) {
  return static_cast<int64_t>(tokenizer.Encode("", /*add_special_tokens=*/true).size());
}

Status CheckVocabulary(const std::vector<int32_t>& allowed) {
  if (allowed.empty()) return Status::InvalidArgument("the tokenizer has no non-special tokens to sample");
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<SampleRequest>> SampleRandom(const Tokenizer& tokenizer, size_t num_requests,
                                                  const RandomDatasetOptions& options, uint64_t seed) {
  if (!(options.range_ratio >= 0 && options.range_ratio < 1)) {
    return Status::InvalidArgument("--random-range-ratio must be in [0, 1)");
  }
  if (options.output_len < 0 || options.prefix_len < 0) {
    return Status::InvalidArgument("--random-output-len and --random-prefix-len must be non-negative");
  }
  const int64_t real_input_len = std::max<int64_t>(0, options.input_len - NumSpecialTokensAdded(tokenizer));
  const auto input_low = static_cast<int64_t>(std::floor(real_input_len * (1 - options.range_ratio)));
  const auto input_high = static_cast<int64_t>(std::ceil(real_input_len * (1 + options.range_ratio)));
  const auto output_low =
      std::max<int64_t>(1, static_cast<int64_t>(std::floor(options.output_len * (1 - options.range_ratio))));
  const auto output_high =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(options.output_len * (1 + options.range_ratio))));
  if (options.prefix_len + input_low < 1) {
    return Status::InvalidArgument("--random-input-len is too small: a prompt could have no tokens");
  }
  const std::vector<int32_t> allowed = AllowedTokenIds(tokenizer);
  LLMSERVE_RETURN_IF_ERROR(CheckVocabulary(allowed));

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> in_len(input_low, input_high), out_len(output_low, output_high);
  std::uniform_int_distribution<size_t> pick(0, allowed.size() - 1);
  std::vector<int32_t> prefix;
  for (int64_t i = 0; i < options.prefix_len; ++i) prefix.push_back(allowed[pick(rng)]);

  std::vector<SampleRequest> out;
  out.reserve(num_requests);
  for (size_t i = 0; i < num_requests; ++i) {
    const int64_t input_len = in_len(rng);
    const int64_t output_len = out_len(rng);
    const size_t offset = pick(rng);
    std::vector<int32_t> ids = prefix;
    for (int64_t k = 0; k < input_len; ++k) {
      ids.push_back(allowed[(offset + i + static_cast<size_t>(k)) % allowed.size()]);
    }
    auto [prompt, len] = PromptOfLength(tokenizer, std::move(ids), options.prefix_len + input_len, allowed, &rng);
    out.push_back({std::move(prompt), len, output_len});
  }
  return out;
}

StatusOr<std::vector<SampleRequest>> SamplePrefixRepetition(const Tokenizer& tokenizer, size_t num_requests,
                                                            const PrefixRepetitionOptions& options,
                                                            uint64_t seed) {
  if (options.num_prefixes < 1) return Status::InvalidArgument("--prefix-repetition-num-prefixes must be >= 1");
  if (options.prefix_len < 0 || options.suffix_len < 0 || options.output_len < 1) {
    return Status::InvalidArgument("--prefix-repetition lengths must be non-negative (output >= 1)");
  }
  const size_t per_prefix = num_requests / static_cast<size_t>(options.num_prefixes);
  if (per_prefix == 0) {
    return Status::InvalidArgument("--num-prompts (" + std::to_string(num_requests) +
                                   ") must be at least --prefix-repetition-num-prefixes (" +
                                   std::to_string(options.num_prefixes) + ")");
  }
  const std::vector<int32_t> allowed = AllowedTokenIds(tokenizer);
  LLMSERVE_RETURN_IF_ERROR(CheckVocabulary(allowed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, allowed.size() - 1);
  auto exact_tokens = [&](int64_t len) {
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < len; ++i) ids.push_back(allowed[pick(rng)]);
    auto [text, n] = PromptOfLength(tokenizer, std::move(ids), len, allowed, &rng);
    (void)n;
    return tokenizer.Encode(text, /*add_special_tokens=*/false);
  };
  std::vector<SampleRequest> out;
  for (int64_t p = 0; p < options.num_prefixes; ++p) {
    const std::vector<int32_t> prefix = exact_tokens(options.prefix_len);
    for (size_t s = 0; s < per_prefix; ++s) {
      std::vector<int32_t> ids = prefix;
      const std::vector<int32_t> suffix = exact_tokens(options.suffix_len);
      ids.insert(ids.end(), suffix.begin(), suffix.end());
      std::string prompt = tokenizer.Decode(ids, /*skip_special_tokens=*/false);
      const auto len = static_cast<int64_t>(tokenizer.Encode(prompt, false).size());
      out.push_back({std::move(prompt), len, options.output_len});
    }
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

StatusOr<std::vector<SampleRequest>> SampleShareGpt(const Tokenizer& tokenizer, const std::string& path,
                                                    size_t num_requests, std::optional<int64_t> output_len,
                                                    uint64_t seed) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("--dataset-path: cannot open '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  const nlohmann::json data = nlohmann::json::parse(buf.str(), nullptr, /*allow_exceptions=*/false);
  if (!data.is_array()) return Status::InvalidArgument("'" + path + "' is not a ShareGPT JSON array");
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& entry : data) {
    if (!entry.is_object() || !entry.contains("conversations")) continue;
    const auto& turns = entry["conversations"];
    if (!turns.is_array() || turns.size() < 2) continue;
    if (!turns[0].is_object() || !turns[1].is_object()) continue;
    const auto p = turns[0].find("value");
    const auto c = turns[1].find("value");
    if (p == turns[0].end() || c == turns[1].end() || !p->is_string() || !c->is_string()) continue;
    pairs.emplace_back(p->get<std::string>(), c->get<std::string>());
  }
  std::mt19937_64 rng(seed);
  std::shuffle(pairs.begin(), pairs.end(), rng);
  std::vector<SampleRequest> out;
  for (const auto& [prompt, completion] : pairs) {
    if (out.size() >= num_requests) break;
    const auto prompt_len = static_cast<int64_t>(tokenizer.Encode(prompt, true).size());
    const int64_t out_len =
        output_len ? *output_len : static_cast<int64_t>(tokenizer.Encode(completion, true).size());
    const bool too_short = prompt_len < 4 || (!output_len && out_len < 4);
    if (too_short || prompt_len > 1024 || prompt_len + out_len > 2048) continue;
    out.push_back({prompt, prompt_len, out_len});
  }
  if (out.empty()) {
    return Status::InvalidArgument("'" + path + "' has no usable conversations (two turns, 4..1024 prompt tokens)");
  }
  const size_t have = out.size();
  std::uniform_int_distribution<size_t> pick(0, have - 1);
  while (out.size() < num_requests) out.push_back(out[pick(rng)]);
  return out;
}

}  // namespace llmserve::deploy::bench
