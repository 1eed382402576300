#include "frontend/metrics/family.h"

#include <glog/logging.h>

#include "frontend/metrics/text_format.h"

namespace llmserve::frontend::metrics {

namespace {
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One "name{labels} value" line.
void AppendSample(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  double value, std::string* out) {
  *out += name;
  AppendLabels(labels, out);
  *out += ' ';
  *out += FormatValue(value);
  *out += '\n';
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

FamilyBase::FamilyBase(std::string name, std::string help, std::vector<std::string> label_names, MetricType type)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)), type_(type) {
  CHECK(IsValidMetricName(name_)) << "invalid metric name '" << name_ << "'";
  for (const auto& l : label_names_) {
    CHECK(IsValidLabelName(l)) << name_ << ": invalid label name '" << l << "'";
    CHECK(!(type_ == MetricType::kHistogram && l == "le")) << name_ << ": 'le' is reserved for histogram buckets";
  }
  // As prometheus_client: a counter's samples and HELP/TYPE lines carry "_total".
  exposed_name_ = type_ == MetricType::kCounter && !EndsWith(name_, "_total") ? name_ + "_total" : name_;
}

void FamilyBase::Render(std::string* out) const {
  *out += "# HELP " + exposed_name_ + " " + EscapeHelp(help_) + "\n";
  *out += "# TYPE " + exposed_name_ + " " + MetricTypeName(type_) + "\n";
  RenderSamples(out);
}

std::vector<std::pair<std::string, std::string>> FamilyBase::Pairs(const std::vector<std::string>& values) const {
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(values.size() + 1);
  for (size_t i = 0; i < values.size(); ++i) pairs.emplace_back(label_names_[i], values[i]);
  return pairs;
}

void CheckLabelCount(const FamilyBase& family, size_t given) {
  CHECK_EQ(given, family.label_names().size()) << family.name() << ": wrong number of label values";
}

void RenderSeries(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  const Counter& series, std::string* out) {
  AppendSample(name, labels, series.value(), out);
}

void RenderSeries(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  const Gauge& series, std::string* out) {
  AppendSample(name, labels, series.value(), out);
}

void RenderSeries(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  const Histogram& series, std::string* out) {
  const Histogram::Snapshot s = series.snapshot();
  auto with_le = labels;
  with_le.emplace_back("le", "");
  for (size_t i = 0; i < s.cumulative.size(); ++i) {
    with_le.back().second = i < s.bounds.size() ? FormatValue(s.bounds[i]) : "+Inf";
    AppendSample(name + "_bucket", with_le, static_cast<double>(s.cumulative[i]), out);
  }
  AppendSample(name + "_count", labels, static_cast<double>(s.count), out);
  AppendSample(name + "_sum", labels, s.sum, out);
}

}  // namespace llmserve::frontend::metrics
