#include "frontend/metrics/registry.h"

#include <glog/logging.h>

namespace llmserve::frontend::metrics {

void Registry::CheckNew(const std::string& name) const {
  for (const auto& f : families_) CHECK(f->name() != name) << "metric '" << name << "' registered twice";
}

Family<Counter>& Registry::AddCounter(std::string name, std::string help, std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckNew(name);
  auto family = std::make_unique<Family<Counter>>(std::move(name), std::move(help), std::move(label_names));
  Family<Counter>& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

Family<Gauge>& Registry::AddGauge(std::string name, std::string help, std::vector<std::string> label_names,
                                  GaugeMerge merge) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckNew(name);
  auto family =
      std::make_unique<Family<Gauge>>(std::move(name), std::move(help), std::move(label_names), nullptr, merge);
  Family<Gauge>& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

Family<Histogram>& Registry::AddHistogram(std::string name, std::string help, std::vector<std::string> label_names,
                                          std::vector<double> bounds) {
  CHECK(ValidBucketBounds(bounds)) << name << ": bucket bounds must be finite and strictly ascending";
  std::lock_guard<std::mutex> lock(mu_);
  CheckNew(name);
  auto family = std::make_unique<Family<Histogram>>(std::move(name), std::move(help), std::move(label_names),
                                                    std::make_shared<const std::vector<double>>(std::move(bounds)));
  Family<Histogram>& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

std::vector<FamilySnapshot> Registry::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<FamilySnapshot> out;
  out.reserve(families_.size());
  for (const auto& f : families_) out.push_back(f->Collect());
  return out;
}

}  // namespace llmserve::frontend::metrics
