#include "frontend/metrics/snapshot_merge.h"

#include <cmath>
#include <map>
#include <string>

namespace llmserve::frontend::metrics {

namespace {

// One family of the merged scrape as it is built: the first server's
// description, and its series by label values.
struct MergedFamily {
  FamilySnapshot description;  // no series
  std::map<std::vector<std::string>, SeriesSnapshot> series;

  bool Accepts(const FamilySnapshot& f) const {
    return f.type == description.type && f.label_names == description.label_names && f.bounds == description.bounds &&
           (f.type != MetricType::kGauge || f.merge == description.merge);
  }
};

// Whether a server's copy of a family adds anything to the merge.
bool Contributes(const FamilySnapshot& f, bool local, bool running) {
  if (f.type != MetricType::kGauge) return true;
  return running && (local || f.merge != GaugeMerge::kLocal);
}

void AddSum(const SeriesSnapshot& from, SeriesSnapshot* into) {
  into->value += from.value;
  into->sum += from.sum;
  if (into->cumulative.size() != from.cumulative.size()) return;  // cannot happen: the bounds are equal
  for (size_t i = 0; i < from.cumulative.size(); ++i) into->cumulative[i] += from.cumulative[i];
}

void AddGauge(GaugeMerge merge, const SeriesSnapshot& from, SeriesSnapshot* into) {
  switch (merge) {
    case GaugeMerge::kFreshest:
      if (FresherThan(from.stamp, into->stamp)) *into = from;
      break;
    case GaugeMerge::kMax:
      if (from.value > into->value) into->value = from.value;
      break;
    case GaugeMerge::kLocal:
      break;  // only the scraping server's copy, which came first
  }
}

void AddFamily(const FamilySnapshot& f, MergedFamily* into) {
  for (const SeriesSnapshot& s : f.series) {
    auto [it, inserted] = into->series.try_emplace(s.label_values, s);
    if (inserted) continue;
    if (f.type == MetricType::kGauge) {
      AddGauge(f.merge, s, &it->second);
    } else {
      AddSum(s, &it->second);
    }
  }
}

}  // namespace

bool FresherThan(const ReportStamp& candidate, const ReportStamp& best) {
  if (std::abs(candidate.wall_s - best.wall_s) < kReorderWindowS && candidate.sequence != best.sequence)
    return candidate.sequence > best.sequence;
  return candidate.wall_s > best.wall_s;
}

std::vector<FamilySnapshot> MergeSnapshots(const std::vector<FamilySnapshot>& local,
                                           const std::vector<ServerSnapshot>& others) {
  std::vector<MergedFamily> merged;
  std::map<std::string, size_t> by_name;
  auto add_server = [&](const std::vector<FamilySnapshot>& families, bool is_local, bool running) {
    for (const FamilySnapshot& f : families) {
      if (!Contributes(f, is_local, running)) continue;
      auto [it, inserted] = by_name.try_emplace(f.name, merged.size());
      if (inserted) {
        merged.emplace_back();
        merged.back().description = f;
        merged.back().description.series.clear();
      }
      MergedFamily& m = merged[it->second];
      if (m.Accepts(f)) AddFamily(f, &m);
    }
  };
  add_server(local, /*is_local=*/true, /*running=*/true);
  for (const ServerSnapshot& other : others) add_server(other.families, /*is_local=*/false, other.running);

  std::vector<FamilySnapshot> out;
  out.reserve(merged.size());
  for (MergedFamily& m : merged) {
    out.push_back(std::move(m.description));
    out.back().series.reserve(m.series.size());
    for (auto& [labels, s] : m.series) out.back().series.push_back(std::move(s));
  }
  return out;
}

}  // namespace llmserve::frontend::metrics
