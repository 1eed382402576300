#include "frontend/metrics/family_snapshot.h"

#include "frontend/metrics/text_format.h"

namespace llmserve::frontend::metrics {

namespace {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

// One "name{labels} value" line.
void AppendSampleLine(const std::string& name, const LabelPairs& labels, double value, std::string* out) {
  *out += name;
  AppendLabels(labels, out);
  *out += ' ';
  *out += FormatValue(value);
  *out += '\n';
}

bool HasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const char* MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

std::string ExposedName(const std::string& name, MetricType type) {
  return type == MetricType::kCounter && !HasSuffix(name, "_total") ? name + "_total" : name;
}

void RenderFamily(const FamilySnapshot& family, std::string* out) {
  const std::string name = ExposedName(family.name, family.type);
  *out += "# HELP " + name + " " + EscapeHelp(family.help) + "\n";
  *out += "# TYPE " + name + " " + MetricTypeName(family.type) + "\n";
  LabelPairs labels;
  for (const SeriesSnapshot& s : family.series) {
    labels.clear();
    for (size_t i = 0; i < s.label_values.size() && i < family.label_names.size(); ++i)
      labels.emplace_back(family.label_names[i], s.label_values[i]);
    if (family.type != MetricType::kHistogram) {
      AppendSampleLine(name, labels, s.value, out);
      continue;
    }
    LabelPairs with_le = labels;
    with_le.emplace_back("le", "");
    for (size_t i = 0; i < s.cumulative.size(); ++i) {
      with_le.back().second = i < family.bounds.size() ? FormatValue(family.bounds[i]) : "+Inf";
      AppendSampleLine(name + "_bucket", with_le, static_cast<double>(s.cumulative[i]), out);
    }
    const uint64_t count = s.cumulative.empty() ? 0 : s.cumulative.back();
    AppendSampleLine(name + "_count", labels, static_cast<double>(count), out);
    AppendSampleLine(name + "_sum", labels, s.sum, out);
  }
}

std::string RenderFamilies(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const FamilySnapshot& f : families) RenderFamily(f, &out);
  return out;
}

}  // namespace llmserve::frontend::metrics
