#pragma once
// Registry: the metric families one process exposes, rendered together as one
// Prometheus text-format scrape (or collected as snapshots, for API servers
// that merge their scrapes). Families are registered once (normally at
// start-up) and live as long as the registry; names must be unique.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/metrics/family.h"

namespace llmserve::frontend::metrics {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a counter family (exposed as NAME_total).
  Family<Counter>& AddCounter(std::string name, std::string help, std::vector<std::string> label_names);
  // Registers a gauge family; `merge` says how several API servers' series of it combine.
  Family<Gauge>& AddGauge(std::string name, std::string help, std::vector<std::string> label_names,
                          GaugeMerge merge = GaugeMerge::kFreshest);
  // Registers a histogram family with these finite, strictly ascending upper bounds (+Inf is implied).
  Family<Histogram>& AddHistogram(std::string name, std::string help, std::vector<std::string> label_names,
                                  std::vector<double> bounds);

  // Every family's values as of now, in registration order.
  std::vector<FamilySnapshot> Collect() const;
  // Every family in registration order, in text format 0.0.4.
  std::string Render() const { return RenderFamilies(Collect()); }

 private:
  void CheckNew(const std::string& name) const;  // needs mu_

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
};

}  // namespace llmserve::frontend::metrics
