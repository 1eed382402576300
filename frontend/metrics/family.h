#pragma once
// Family: every labelled series of one metric (one name, one HELP text, one
// type, fixed label names). Series are created on first use of a label-value
// tuple and live as long as the family, so callers may keep the reference
// Labels() returns and update it without any lookup on their hot path.
// Collect() copies the values out (series ordered by label values) for the
// text format and for API servers that merge their scrapes.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "frontend/metrics/counter.h"
#include "frontend/metrics/family_snapshot.h"
#include "frontend/metrics/gauge.h"
#include "frontend/metrics/histogram.h"

namespace llmserve::frontend::metrics {

// What all families share; the Registry keeps them through this base.
class FamilyBase {
 public:
  // `merge` matters for gauges only.
  FamilyBase(std::string name, std::string help, std::vector<std::string> label_names, MetricType type,
             GaugeMerge merge = GaugeMerge::kFreshest);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  // The registered name (a counter is exposed with a "_total" suffix).
  const std::string& name() const { return name_; }
  // The name samples and HELP/TYPE lines use.
  const std::string& exposed_name() const { return exposed_name_; }
  // The label names, in the order samples show them.
  const std::vector<std::string>& label_names() const { return label_names_; }
  MetricType type() const { return type_; }

  // Every series' values as of now, ascending by label values.
  virtual FamilySnapshot Collect() const = 0;
  // Appends the HELP and TYPE lines and every series' samples.
  void Render(std::string* out) const { RenderFamily(Collect(), out); }

 protected:
  // The family's description, with no series.
  FamilySnapshot EmptySnapshot() const;

 private:
  std::string name_;
  std::string exposed_name_;
  std::string help_;
  std::vector<std::string> label_names_;
  MetricType type_;
  GaugeMerge merge_;
};

// One series' values, per metric kind (label values left empty).
SeriesSnapshot SnapshotOf(const Counter& series);
SeriesSnapshot SnapshotOf(const Gauge& series);
SeriesSnapshot SnapshotOf(const Histogram& series);

template <class T>
class Family final : public FamilyBase {
  static_assert(std::is_same_v<T, Counter> || std::is_same_v<T, Gauge> || std::is_same_v<T, Histogram>);

 public:
  // `bounds` is used by histograms only, `merge` by gauges only.
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::shared_ptr<const std::vector<double>> bounds = nullptr, GaugeMerge merge = GaugeMerge::kFreshest)
      : FamilyBase(std::move(name), std::move(help), std::move(label_names), TypeOf(), merge),
        bounds_(std::move(bounds)) {}

  // The series with these label values (one per label name, in order),
  // created at zero on first use. The reference stays valid for the family's life.
  T& Labels(const std::vector<std::string>& values);
  // Drops the series with these label values, if any; a reference Labels()
  // returned for it must not be used after.
  void Remove(const std::vector<std::string>& values) {
    std::lock_guard<std::mutex> lock(mu_);
    series_.erase(values);
  }

 private:
  static constexpr MetricType TypeOf() {
    if constexpr (std::is_same_v<T, Counter>) return MetricType::kCounter;
    if constexpr (std::is_same_v<T, Gauge>) return MetricType::kGauge;
    return MetricType::kHistogram;
  }
  FamilySnapshot Collect() const override {
    FamilySnapshot snapshot = EmptySnapshot();
    if (bounds_ != nullptr) snapshot.bounds = *bounds_;
    std::lock_guard<std::mutex> lock(mu_);
    snapshot.series.reserve(series_.size());
    for (const auto& [values, series] : series_) {
      snapshot.series.push_back(SnapshotOf(*series));
      snapshot.series.back().label_values = values;
    }
    return snapshot;
  }

  std::shared_ptr<const std::vector<double>> bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> series_;
};

// Checks the label count (a caller bug otherwise).
void CheckLabelCount(const FamilyBase& family, size_t given);

template <class T>
T& Family<T>::Labels(const std::vector<std::string>& values) {
  CheckLabelCount(*this, values.size());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(values);
  if (it == series_.end()) {
    std::unique_ptr<T> series;
    if constexpr (std::is_same_v<T, Histogram>) {
      series = std::make_unique<Histogram>(bounds_);
    } else {
      series = std::make_unique<T>();
    }
    it = series_.emplace(values, std::move(series)).first;
  }
  return *it->second;
}

}  // namespace llmserve::frontend::metrics
