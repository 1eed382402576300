#include "deploy/speculative_config.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status_or.h"

namespace llmserve::deploy {

namespace {

constexpr char kPrefix[] = "--speculative-config: ";
constexpr char kSupported[] = "llmserve implements methods \"ngram\" (keys num_speculative_tokens, "
                              "prompt_lookup_min, prompt_lookup_max, disable_by_batch_size) and \"suffix\" "
                              "(keys num_speculative_tokens, suffix_decoding_max_tree_depth, "
                              "suffix_decoding_max_cached_requests, suffix_decoding_max_spec_factor, "
                              "suffix_decoding_min_token_prob, disable_by_batch_size)";

// vLLM's method names that llmserve does not implement (yet).
constexpr std::string_view kOtherMethods[] = {
    "draft_model", "eagle", "eagle3", "mtp", "medusa", "mlp_speculator", "ngram_gpu",
    "custom_class", "extract_hidden_states", "dflash", "deepseek_mtp", "ernie_mtp", "qwen3_next_mtp",
    "mimo_mtp", "longcat_flash_mtp"};

Status Error(const std::string& message) { return Status::InvalidArgument(kPrefix + message); }

// A positive integer key, or nullopt when absent; an error for anything else.
Status PositiveInt(const nlohmann::json& j, const char* key, std::optional<uint32_t>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1024)
    return Error(std::string(key) + " must be an integer from 1 to 1024, got " + it->dump());
  *out = static_cast<uint32_t>(it->get<int64_t>());
  return Status::Ok();
}

// The method the config names (vLLM: an explicit method, else "ngram" when
// model is "ngram" or "[ngram]", else a draft model).
StatusOr<std::string> MethodOf(const nlohmann::json& j) {
  std::string method, model;
  if (auto it = j.find("method"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Error("method must be a string");
    method = it->get<std::string>();
  }
  if (auto it = j.find("model"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Error("model must be a string");
    model = it->get<std::string>();
  }
  const bool ngram_model = model == "ngram" || model == "[ngram]";
  if (method == "[ngram]" || (method.empty() && ngram_model)) method = "ngram";
  if (method.empty()) {
    if (model.empty()) return Error("method is required; " + std::string(kSupported));
    method = "draft_model";
  }
  if (method == "ngram") {
    if (!model.empty() && !ngram_model) return Error("model \"" + model + "\" does not go with method ngram");
    return method;
  }
  if (method == "suffix") {
    if (!model.empty()) return Error("model \"" + model + "\" does not go with method suffix");
    return method;
  }
  const bool known = std::find(std::begin(kOtherMethods), std::end(kOtherMethods), method) != std::end(kOtherMethods) ||
                     method.ends_with("_mtp");
  if (known) return Error("method \"" + method + "\" is not supported yet; " + kSupported);
  return Error("unknown method \"" + method + "\"; " + kSupported);
}

// A number key within [lo, hi], or `fallback` when absent.
Status NumberIn(const nlohmann::json& j, const char* key, double lo, double hi, double fallback, double* out) {
  *out = fallback;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number() || !(it->get<double>() >= lo && it->get<double>() <= hi)) {
    char range[64];
    std::snprintf(range, sizeof(range), " must be a number from %g to %g, got ", lo, hi);
    return Error(key + std::string(range) + it->dump());
  }
  *out = it->get<double>();
  return Status::Ok();
}

// Method "suffix": vLLM's suffix_decoding_* keys (defaults 24 / 10000 / 1.0 /
// 0.1); num_speculative_tokens defaults to the tree depth, as in vLLM.
Status ParseSuffix(const nlohmann::json& j, std::optional<uint32_t> k, proto::SpeculativeConfig* out) {
  std::optional<uint32_t> depth;
  LLMSERVE_RETURN_IF_ERROR(PositiveInt(j, "suffix_decoding_max_tree_depth", &depth));
  double cached = 0, factor = 0, prob = 0;
  LLMSERVE_RETURN_IF_ERROR(NumberIn(j, "suffix_decoding_max_cached_requests", 0, 1 << 24, 10000, &cached));
  if (cached != static_cast<double>(static_cast<int64_t>(cached)))
    return Error("suffix_decoding_max_cached_requests must be an integer, got " + nlohmann::json(cached).dump());
  LLMSERVE_RETURN_IF_ERROR(NumberIn(j, "suffix_decoding_max_spec_factor", 0, 1024, 1.0, &factor));
  LLMSERVE_RETURN_IF_ERROR(NumberIn(j, "suffix_decoding_min_token_prob", 0, 1, 0.1, &prob));
  out->set_suffix_decoding_max_tree_depth(depth.value_or(24));
  out->set_suffix_decoding_max_cached_requests(static_cast<uint32_t>(cached));
  out->set_suffix_decoding_max_spec_factor(factor);
  out->set_suffix_decoding_min_token_prob(prob);
  out->set_num_speculative_tokens(k.value_or(out->suffix_decoding_max_tree_depth()));
  return Status::Ok();
}

bool IsKeyOf(const std::string& method, const std::string& key) {
  if (key == "method" || key == "model" || key == "num_speculative_tokens" || key == "disable_by_batch_size")
    return true;
  if (method == "ngram") return key == "prompt_lookup_min" || key == "prompt_lookup_max";
  return key.starts_with("suffix_decoding_") &&
         (key == "suffix_decoding_max_tree_depth" || key == "suffix_decoding_max_cached_requests" ||
          key == "suffix_decoding_max_spec_factor" || key == "suffix_decoding_min_token_prob");
}

}  // namespace

Status ParseSpeculativeConfig(const std::string& json, proto::SpeculativeConfig* out) {
  out->Clear();
  if (json.empty()) return Status::Ok();
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Error("must be a JSON object, such as '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'");
  auto method = MethodOf(j);
  if (!method.ok()) return method.status();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (!IsKeyOf(*method, key))
      return Error("key \"" + key + "\" is not supported for method " + *method + "; " + kSupported);
  }
  std::optional<uint32_t> k, lo, hi;
  LLMSERVE_RETURN_IF_ERROR(PositiveInt(j, "num_speculative_tokens", &k));
  LLMSERVE_RETURN_IF_ERROR(PositiveInt(j, "prompt_lookup_min", &lo));
  LLMSERVE_RETURN_IF_ERROR(PositiveInt(j, "prompt_lookup_max", &hi));
  std::optional<uint32_t> disable_by;
  if (auto it = j.find("disable_by_batch_size"); it != j.end() && !it->is_null()) {
    // vLLM: a threshold of 1 would never speculate, so it must be > 1.
    if (!it->is_number_integer() || it->get<int64_t>() < 2 || it->get<int64_t>() > (int64_t{1} << 30))
      return Error("disable_by_batch_size must be an integer > 1, got " + it->dump());
    disable_by = static_cast<uint32_t>(it->get<int64_t>());
  }
  if (disable_by) out->set_disable_by_batch_size(*disable_by);
  if (*method == "suffix") {
    out->set_method(*method);
    return ParseSuffix(j, k, out);
  }
  if (!k) return Error("num_speculative_tokens is required for method ngram");
  if (!lo && !hi) lo = hi = 5u;  // vLLM's defaults
  if (!lo) lo = hi;
  if (!hi) hi = lo;
  if (*lo > *hi)
    return Error("prompt_lookup_min=" + std::to_string(*lo) + " must be <= prompt_lookup_max=" + std::to_string(*hi));
  out->set_method(*method);
  out->set_num_speculative_tokens(*k);
  out->set_prompt_lookup_min(*lo);
  out->set_prompt_lookup_max(*hi);
  return Status::Ok();
}

}  // namespace llmserve::deploy
