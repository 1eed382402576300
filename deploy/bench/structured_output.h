#pragma once
// The structured-output mode of `llmserve bench serve` (--structured-output):
// which requests carry a constraint, how it goes into the request body, and
// whether an answer satisfied it.
//
// A fraction --structured-output-ratio of the requests (exactly
// round(ratio * N), chosen by a shuffle seeded from --seed) carries one
// constraint of the chosen kind, the constrained requests taking the corpus
// entries in turn. With the chat API, json and json_object go in
// `response_format` (OpenAI's way); everything else, and every kind with the
// completions API, goes in vLLM's `structured_outputs` object.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status_or.h"
#include "deploy/bench/metrics.h"
#include "deploy/bench/stream_accumulator.h"

namespace llmserve::deploy::bench {

// The kind of constraint requests carry.
enum class StructuredMode { kNone, kJson, kJsonObject, kRegex, kChoice, kGrammar };

// "json", "json_object", "regex", "choice", "grammar" or "none"; other names are errors naming the flag.
StatusOr<StructuredMode> ParseStructuredMode(const std::string& name);
// The flag value naming `mode` ("none" for kNone).
std::string StructuredModeName(StructuredMode mode);

// --structured-output* settings.
struct StructuredOutputOptions {
  StructuredMode mode = StructuredMode::kNone;  // kNone: requests are unconstrained
  double ratio = 1;                             // fraction of requests constrained, in [0, 1]
  std::string schema_file;                      // --structured-output-schema ("" = the built-in corpus)
  std::vector<nlohmann::ordered_json> schemas;  // the schemas read from schema_file
};

// One request's constraint: `value` is a schema, a regex string, a list of
// choices, a grammar string, or `true` for json_object.
struct Constraint {
  StructuredMode mode = StructuredMode::kNone;  // never kNone in a plan
  nlohmann::ordered_json value;                 // what goes into the body
};

// Reads a schema file: one schema object or a non-empty array of them.
StatusOr<std::vector<nlohmann::ordered_json>> LoadSchemaFile(const std::string& path);

// Per request, its constraint or none; deterministic in (options, num_requests, seed).
std::vector<std::optional<Constraint>> PlanConstraints(const StructuredOutputOptions& options,
                                                       size_t num_requests, uint64_t seed);

// Adds `c` to a request body for `api`.
void ApplyConstraint(ApiKind api, const Constraint& c, nlohmann::ordered_json* body);

// Whether an answer satisfies its constraint: json / json_object when the
// whole text parses as JSON (json: with every top-level `required` key
// present); regex / choice / grammar when it is non-empty and finished with
// finish_reason "stop".
bool ConstrainedOutputValid(const Constraint& c, const std::string& text, const std::string& finish_reason);

// Sets metrics->structured_requests and structured_valid from a run's plan and
// outputs (same order); failed requests count as invalid.
void CountStructuredOutputs(const std::vector<std::optional<Constraint>>& plan,
                            const std::vector<RequestOutput>& outputs, BenchmarkMetrics* metrics);

}  // namespace llmserve::deploy::bench
