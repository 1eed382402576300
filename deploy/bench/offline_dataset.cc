#include "deploy/bench/offline_dataset.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "common/tokenizer/tokenizer.h"

namespace llmserve::deploy {

namespace {

// vLLM's limits for ShareGPT pairs.
constexpr int64_t kMinLen = 4;
constexpr int64_t kMaxPromptLen = 1024;
constexpr int64_t kMaxTotalLen = 2048;

StatusOr<std::vector<OfflineRequest>> SampleRandom(const OfflineDatasetOptions& o, std::mt19937_64& rng) {
  if (!o.input_len) return Status::InvalidArgument("--input-len is required without --dataset-path (random prompts)");
  const int64_t in = *o.input_len, out = o.output_len.value_or(128);
  if (o.range_ratio < 0 || o.range_ratio >= 1) return Status::InvalidArgument("--random-range-ratio must be in [0, 1)");
  auto range = [&](int64_t len) {
    return std::uniform_int_distribution<int64_t>(static_cast<int64_t>(std::floor(len * (1 - o.range_ratio))),
                                                  static_cast<int64_t>(std::ceil(len * (1 + o.range_ratio))));
  };
  auto in_dist = range(in), out_dist = range(out);
  const std::vector<int32_t> prefix = RandomTokenIds(rng, o.prefix_len, o.vocab_size);
  std::vector<OfflineRequest> requests(static_cast<size_t>(o.num_prompts));
  for (auto& r : requests) {
    r.prompt_token_ids = prefix;
    const auto rest = RandomTokenIds(rng, std::max<int64_t>(in_dist(rng), prefix.empty() ? 1 : 0), o.vocab_size);
    r.prompt_token_ids.insert(r.prompt_token_ids.end(), rest.begin(), rest.end());
    r.max_tokens = static_cast<int32_t>(std::max<int64_t>(out_dist(rng), 1));
    if (o.max_model_len && static_cast<int64_t>(r.prompt_token_ids.size()) + r.max_tokens > o.max_model_len)
      return Status::InvalidArgument("--prefix-len + --input-len + --output-len exceed max_model_len " +
                                     std::to_string(o.max_model_len));
  }
  return requests;
}

// Loads the tokenizer on first use.
class LazyTokenizer {
 public:
  explicit LazyTokenizer(std::string dir) : dir_(std::move(dir)) {}
  StatusOr<std::vector<int32_t>> Encode(const std::string& text) {
    if (!tokenizer_) {
      auto t = common::tokenizer::Tokenizer::FromDirectory(dir_);
      if (!t.ok()) return t.status().WithContext("loading the tokenizer for text prompts");
      tokenizer_ = std::move(t).value();
    }
    return tokenizer_->Encode(text, true);
  }

 private:
  std::string dir_;
  std::unique_ptr<common::tokenizer::Tokenizer> tokenizer_;
};

// One dataset entry: a ShareGPT conversation or a JSON-lines prompt record.
struct Entry {
  nlohmann::json json;
  std::string where;  // "FILE:LINE" or "FILE[INDEX]"
};

// `*array` tells whether the file was one JSON array (ShareGPT) rather than lines.
StatusOr<std::vector<Entry>> ReadEntries(const std::string& path, bool* array) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read --dataset-path '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::vector<Entry> entries;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return Status::InvalidArgument("--dataset-path '" + path + "' is empty");
  *array = text[first] == '[';
  if (*array) {
    auto json = nlohmann::json::parse(text, nullptr, false);
    if (!json.is_array()) return Status::InvalidArgument(path + ": not a valid JSON array");
    for (size_t i = 0; i < json.size(); ++i)
      entries.push_back({std::move(json[i]), path + "[" + std::to_string(i) + "]"});
    return entries;
  }
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto json = nlohmann::json::parse(line, nullptr, false);
    const std::string where = path + ":" + std::to_string(number);
    if (!json.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
    entries.push_back({std::move(json), where});
  }
  return entries;
}

// A ShareGPT pair: false (and no error) when it is unusable and skipped.
StatusOr<bool> FromConversation(const Entry& e, const OfflineDatasetOptions& o, LazyTokenizer& tok, OfflineRequest* out) {
  const auto& conv = e.json.at("conversations");
  if (!conv.is_array() || conv.size() < 2) return false;
  for (int i = 0; i < 2; ++i)
    if (!conv[i].is_object() || !conv[i].contains("value") || !conv[i]["value"].is_string())
      return Status::InvalidArgument(e.where + ": conversations[" + std::to_string(i) + "] needs a string \"value\"");
  LLMSERVE_ASSIGN_OR_RETURN(out->prompt_token_ids, tok.Encode(conv[0]["value"].get<std::string>()));
  int64_t output_len = 0;
  if (o.output_len) {
    output_len = *o.output_len;
  } else {
    LLMSERVE_ASSIGN_OR_RETURN(auto completion, tok.Encode(conv[1]["value"].get<std::string>()));
    output_len = static_cast<int64_t>(completion.size());
  }
  const auto prompt_len = static_cast<int64_t>(out->prompt_token_ids.size());
  if (prompt_len < kMinLen || (!o.output_len && output_len < kMinLen) || prompt_len > kMaxPromptLen ||
      prompt_len + output_len > kMaxTotalLen || (o.max_model_len && prompt_len + output_len > o.max_model_len))
    return false;
  out->max_tokens = static_cast<int32_t>(output_len);
  return true;
}

Status FromRecord(const Entry& e, const OfflineDatasetOptions& o, LazyTokenizer& tok, OfflineRequest* out) {
  try {
    if (e.json.contains("prompt_token_ids")) {
      out->prompt_token_ids = e.json.at("prompt_token_ids").get<std::vector<int32_t>>();
    } else if (e.json.contains("prompt")) {
      LLMSERVE_ASSIGN_OR_RETURN(out->prompt_token_ids, tok.Encode(e.json.at("prompt").get<std::string>()));
    } else {
      return Status::InvalidArgument(e.where + ": needs \"prompt\", \"prompt_token_ids\" or \"conversations\"");
    }
    std::optional<int64_t> len = o.output_len;
    if (!len && e.json.contains("output_len")) len = e.json.at("output_len").get<int64_t>();
    if (!len && e.json.contains("max_tokens")) len = e.json.at("max_tokens").get<int64_t>();
    if (!len) return Status::InvalidArgument(e.where + ": no \"output_len\" (or \"max_tokens\"); give one or --output-len");
    if (*len < 1) return Status::InvalidArgument(e.where + ": the output length must be at least 1");
    out->max_tokens = static_cast<int32_t>(*len);
  } catch (const nlohmann::json::exception& ex) {
    return Status::InvalidArgument(e.where + ": " + ex.what());
  }
  if (out->prompt_token_ids.empty()) return Status::InvalidArgument(e.where + ": the prompt is empty");
  const auto total = static_cast<int64_t>(out->prompt_token_ids.size()) + out->max_tokens;
  if (o.max_model_len && total > o.max_model_len)
    return Status::InvalidArgument(e.where + ": prompt + output (" + std::to_string(total) +
                                   " tokens) exceed max_model_len " + std::to_string(o.max_model_len));
  return Status::Ok();
}

}  // namespace

std::vector<int32_t> RandomTokenIds(std::mt19937_64& rng, int64_t n, int64_t vocab_size) {
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(std::clamp<int64_t>(vocab_size, 1, 10000) - 1));
  std::vector<int32_t> ids(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (auto& t : ids) t = token(rng);
  return ids;
}

StatusOr<std::vector<OfflineRequest>> LoadOfflineDataset(const OfflineDatasetOptions& o) {
  if (o.num_prompts < 1) return Status::InvalidArgument("--num-prompts must be at least 1");
  if (o.output_len && *o.output_len < 1) return Status::InvalidArgument("--output-len must be at least 1");
  if (o.input_len && *o.input_len < 1) return Status::InvalidArgument("--input-len must be at least 1");
  if (o.prefix_len < 0) return Status::InvalidArgument("--prefix-len must not be negative");
  std::mt19937_64 rng(o.seed);
  if (o.path.empty()) return SampleRandom(o, rng);

  bool sharegpt_array = false;
  LLMSERVE_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadEntries(o.path, &sharegpt_array));
  if (sharegpt_array) std::shuffle(entries.begin(), entries.end(), rng);
  LazyTokenizer tok(o.model_dir);
  std::vector<OfflineRequest> requests;
  size_t skipped = 0;
  for (const Entry& e : entries) {
    if (static_cast<int64_t>(requests.size()) == o.num_prompts) break;
    OfflineRequest r;
    if (!e.json.is_object()) return Status::InvalidArgument(e.where + ": not a JSON object");
    if (e.json.contains("conversations")) {
      LLMSERVE_ASSIGN_OR_RETURN(bool usable, FromConversation(e, o, tok, &r));
      if (!usable) {
        ++skipped;
        continue;
      }
    } else {
      LLMSERVE_RETURN_IF_ERROR(FromRecord(e, o, tok, &r));
    }
    requests.push_back(std::move(r));
  }
  if (skipped) LOG(INFO) << o.path << ": skipped " << skipped << " conversations (too short or too long)";
  if (requests.empty()) return Status::InvalidArgument("--dataset-path '" + o.path + "' has no usable prompts");
  if (static_cast<int64_t>(requests.size()) < o.num_prompts) {
    LOG(WARNING) << o.path << " has " << requests.size() << " usable prompts; repeating some to reach --num-prompts "
                 << o.num_prompts;
    std::uniform_int_distribution<size_t> pick(0, requests.size() - 1);
    const size_t have = requests.size();
    while (static_cast<int64_t>(requests.size()) < o.num_prompts) {
      OfflineRequest copy = requests[pick(rng) % have];
      requests.push_back(std::move(copy));
    }
  }
  return requests;
}

}  // namespace llmserve::deploy
