#include "deploy/bench/structured_output.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include "deploy/bench/structured_corpus.h"

namespace llmserve::deploy::bench {

namespace {

constexpr struct {
  StructuredMode mode;
  const char* name;
} kModes[] = {
    {StructuredMode::kJson, "json"},   {StructuredMode::kJsonObject, "json_object"},
    {StructuredMode::kRegex, "regex"}, {StructuredMode::kChoice, "choice"},
    {StructuredMode::kGrammar, "grammar"},
};

// Mixed into the seed so the choice of constrained requests is independent of the dataset's draws.
constexpr uint64_t kPlanSalt = 0x5354525543540001ULL;

// The corpus entry `k` (cycling) for `mode`.
nlohmann::ordered_json CorpusValue(const StructuredOutputOptions& o, size_t k) {
  switch (o.mode) {
    case StructuredMode::kJson: {
      const auto& schemas = o.schemas.empty() ? BuiltinJsonSchemas() : o.schemas;
      return schemas[k % schemas.size()];
    }
    case StructuredMode::kRegex: return BuiltinRegexes()[k % BuiltinRegexes().size()];
    case StructuredMode::kChoice: return BuiltinChoices()[k % BuiltinChoices().size()];
    case StructuredMode::kGrammar: return BuiltinGrammars()[k % BuiltinGrammars().size()];
    case StructuredMode::kJsonObject:
    case StructuredMode::kNone: break;
  }
  return true;
}

}  // namespace

StatusOr<StructuredMode> ParseStructuredMode(const std::string& name) {
  if (name == "none") return StructuredMode::kNone;
  for (const auto& m : kModes) {
    if (name == m.name) return m.mode;
  }
  return Status::InvalidArgument("--structured-output must be json, json_object, regex, choice, grammar or none, got '" +
                                 name + "'");
}

std::string StructuredModeName(StructuredMode mode) {
  for (const auto& m : kModes) {
    if (mode == m.mode) return m.name;
  }
  return "none";
}

StatusOr<std::vector<nlohmann::ordered_json>> LoadSchemaFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status::InvalidArgument("--structured-output-schema: cannot read '" + path + "'");
  std::stringstream text;
  text << f.rdbuf();
  const auto j = nlohmann::ordered_json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("--structured-output-schema: '" + path + "' is not JSON");
  std::vector<nlohmann::ordered_json> out;
  if (j.is_object()) out.push_back(j);
  if (j.is_array()) {
    for (const auto& s : j) {
      if (!s.is_object()) {
        return Status::InvalidArgument("--structured-output-schema: every schema in '" + path +
                                       "' must be a JSON object");
      }
      out.push_back(s);
    }
  }
  if (out.empty()) {
    return Status::InvalidArgument("--structured-output-schema: '" + path +
                                   "' must hold a schema object or a non-empty array of them");
  }
  return out;
}

std::vector<std::optional<Constraint>> PlanConstraints(const StructuredOutputOptions& o, size_t num_requests,
                                                       uint64_t seed) {
  std::vector<std::optional<Constraint>> plan(num_requests);
  if (o.mode == StructuredMode::kNone || num_requests == 0) return plan;
  const auto wanted = static_cast<size_t>(std::llround(std::clamp(o.ratio, 0.0, 1.0) * num_requests));
  std::vector<size_t> order(num_requests);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed ^ kPlanSalt);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<bool> chosen(num_requests, false);
  for (size_t i = 0; i < wanted; ++i) chosen[order[i]] = true;
  size_t k = 0;
  for (size_t i = 0; i < num_requests; ++i) {
    if (chosen[i]) plan[i] = Constraint{o.mode, CorpusValue(o, k++)};
  }
  return plan;
}

void ApplyConstraint(ApiKind api, const Constraint& c, nlohmann::ordered_json* body) {
  nlohmann::ordered_json& b = *body;
  if (api == ApiKind::kChat && c.mode == StructuredMode::kJson) {
    b["response_format"] = {{"type", "json_schema"},
                            {"json_schema", {{"name", "bench_schema"}, {"schema", c.value}}}};
    return;
  }
  if (api == ApiKind::kChat && c.mode == StructuredMode::kJsonObject) {
    b["response_format"] = {{"type", "json_object"}};
    return;
  }
  b["structured_outputs"] = nlohmann::ordered_json::object();
  b["structured_outputs"][StructuredModeName(c.mode)] = c.value;
}

bool ConstrainedOutputValid(const Constraint& c, const std::string& text, const std::string& finish_reason) {
  if (c.mode == StructuredMode::kJson || c.mode == StructuredMode::kJsonObject) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return false;
    if (c.mode == StructuredMode::kJsonObject) return true;
    const auto required = c.value.find("required");
    if (required == c.value.end() || !required->is_array() || required->empty()) return true;
    if (!j.is_object()) return false;
    return std::all_of(required->begin(), required->end(), [&](const nlohmann::ordered_json& key) {
      return !key.is_string() || j.contains(key.get<std::string>());
    });
  }
  return !text.empty() && finish_reason == "stop";
}

void CountStructuredOutputs(const std::vector<std::optional<Constraint>>& plan,
                            const std::vector<RequestOutput>& outputs, BenchmarkMetrics* metrics) {
  metrics->structured_requests = metrics->structured_valid = 0;
  for (size_t i = 0; i < plan.size() && i < outputs.size(); ++i) {
    if (!plan[i]) continue;
    ++metrics->structured_requests;
    const RequestOutput& out = outputs[i];
    if (out.success && ConstrainedOutputValid(*plan[i], out.generated_text, out.finish_reason)) {
      ++metrics->structured_valid;
    }
  }
}

}  // namespace llmserve::deploy::bench
