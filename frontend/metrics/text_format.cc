#include "frontend/metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace llmserve::frontend::metrics {

namespace {
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsAlpha(c) || c == '_' || c == ':' || (i > 0 && IsDigit(c)))) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsAlpha(c) || c == '_' || (i > 0 && IsDigit(c)))) return false;
  }
  return true;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  std::string s(buf, ec == std::errc() ? end : buf);
  // Python's repr keeps a decimal point on integral floats ("5.0"); to_chars does not.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

void AppendLabels(const std::vector<std::pair<std::string, std::string>>& labels, std::string* out) {
  if (labels.empty()) return;
  *out += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) *out += ',';
    *out += labels[i].first;
    *out += "=\"";
    *out += EscapeLabelValue(labels[i].second);
    *out += '"';
  }
  *out += '}';
}

}  // namespace llmserve::frontend::metrics
