#pragma once
// Family: every labelled series of one metric (one name, one HELP text, one
// type, fixed label names). Series are created on first use of a label-value
// tuple and live as long as the family, so callers may keep the reference
// Labels() returns and update it without any lookup on their hot path.
// Rendering writes the family's HELP/TYPE lines and samples in text format,
// series ordered by label values.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "frontend/metrics/counter.h"
#include "frontend/metrics/gauge.h"
#include "frontend/metrics/histogram.h"

namespace llmserve::frontend::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram": the TYPE line's word.
const char* MetricTypeName(MetricType type);

// What all families share; the Registry keeps them through this base.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::vector<std::string> label_names, MetricType type);
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

  // Appends the HELP and TYPE lines and every series' samples.
  void Render(std::string* out) const;

 protected:
  // Appends every series' sample lines.
  virtual void RenderSamples(std::string* out) const = 0;
  // Label (name, value) pairs for one series.
  std::vector<std::pair<std::string, std::string>> Pairs(const std::vector<std::string>& values) const;

 private:
  std::string name_;
  std::string exposed_name_;
  std::string help_;
  std::vector<std::string> label_names_;
  MetricType type_;
};

// Sample lines of one series, per metric kind.
void RenderSeries(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  const Counter& series, std::string* out);
void RenderSeries(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  const Gauge& series, std::string* out);
void RenderSeries(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
                  const Histogram& series, std::string* out);

template <class T>
class Family final : public FamilyBase {
  static_assert(std::is_same_v<T, Counter> || std::is_same_v<T, Gauge> || std::is_same_v<T, Histogram>);

 public:
  // `bounds` is used by histograms only.
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::shared_ptr<const std::vector<double>> bounds = nullptr)
      : FamilyBase(std::move(name), std::move(help), std::move(label_names), TypeOf()), bounds_(std::move(bounds)) {}

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
  void RenderSamples(std::string* out) const override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [values, series] : series_) RenderSeries(exposed_name(), Pairs(values), *series, out);
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
