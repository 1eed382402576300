#pragma once
// The pieces of the Prometheus text exposition format (version 0.0.4) that
// every metric type shares: name checks, escaping and number formatting.
// Numbers are written as Python's prometheus_client writes them ("5.0",
// "0.25", "+Inf", "NaN") so that a scrape of llmserve reads like one of vLLM.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmserve::frontend::metrics {

// The Content-Type of a text-format scrape.
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus).
bool IsValidLabelName(std::string_view name);

// A sample value or bucket bound: shortest round-trip decimal, with ".0" on
// integral values, "+Inf", "-Inf" and "NaN".
std::string FormatValue(double value);

// A label value inside double quotes: backslash, double quote and newline escaped.
std::string EscapeLabelValue(std::string_view value);

// HELP text: backslash and newline escaped.
std::string EscapeHelp(std::string_view help);

// Appends `{a="x",b="y"}` for these pairs (nothing when empty).
void AppendLabels(const std::vector<std::pair<std::string, std::string>>& labels, std::string* out);

}  // namespace llmserve::frontend::metrics
