#include "frontend/metrics/family.h"

#include <glog/logging.h>

#include "frontend/metrics/text_format.h"

namespace llmserve::frontend::metrics {

FamilyBase::FamilyBase(std::string name, std::string help, std::vector<std::string> label_names, MetricType type,
                       GaugeMerge merge)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)), type_(type), merge_(merge) {
  CHECK(IsValidMetricName(name_)) << "invalid metric name '" << name_ << "'";
  for (const auto& l : label_names_) {
    CHECK(IsValidLabelName(l)) << name_ << ": invalid label name '" << l << "'";
    CHECK(!(type_ == MetricType::kHistogram && l == "le")) << name_ << ": 'le' is reserved for histogram buckets";
  }
  exposed_name_ = ExposedName(name_, type_);
}

FamilySnapshot FamilyBase::EmptySnapshot() const {
  FamilySnapshot snapshot;
  snapshot.name = name_;
  snapshot.help = help_;
  snapshot.type = type_;
  snapshot.label_names = label_names_;
  snapshot.merge = merge_;
  return snapshot;
}

void CheckLabelCount(const FamilyBase& family, size_t given) {
  CHECK_EQ(given, family.label_names().size()) << family.name() << ": wrong number of label values";
}

SeriesSnapshot SnapshotOf(const Counter& series) {
  SeriesSnapshot s;
  s.value = series.value();
  return s;
}

SeriesSnapshot SnapshotOf(const Gauge& series) {
  SeriesSnapshot s;
  s.value = series.value();
  return s;
}

SeriesSnapshot SnapshotOf(const Histogram& series) {
  Histogram::Snapshot h = series.snapshot();
  SeriesSnapshot s;
  s.cumulative = std::move(h.cumulative);
  s.sum = h.sum;
  return s;
}

}  // namespace llmserve::frontend::metrics
