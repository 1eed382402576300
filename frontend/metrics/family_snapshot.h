#pragma once
// FamilySnapshot: the values of one metric family at one moment, detached
// from its live series. A registry collects them, the text format renders
// them, and API servers sharing a port exchange them (snapshot_file.h) so that
// any of them can render the merge of all (snapshot_merge.h). Besides the
// values it carries what the merge needs: how a gauge family combines across
// API servers and, per gauge series, which report set it.

#include <cstdint>
#include <string>
#include <vector>

namespace llmserve::frontend::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram": the TYPE line's word.
const char* MetricTypeName(MetricType type);

// How the series of one gauge family from several API servers make one scrape
// (prometheus_client's multiprocess_mode, in the few forms llmserve needs).
// Gauges of API servers that are no longer running are left out in every mode.
enum class GaugeMerge {
  kFreshest,  // per label set, the value with the latest ReportStamp (vLLM's "mostrecent")
  kLocal,     // the scraping API server's own series only: every server holds the same (info gauges)
  kMax,       // per label set, the largest value (a gauge whose value is a time)
};

// Which report set a gauge series' value, so that the merge can tell the
// freshest of several API servers' copies (see snapshot_merge.h for the order).
struct ReportStamp {
  int64_t sequence = 0;  // the reporter's own order (an engine's step counter); 0: none
  double wall_s = 0.0;   // Unix seconds when the API server received it; 0: never stamped

  bool operator==(const ReportStamp&) const = default;
};

struct SeriesSnapshot {
  std::vector<std::string> label_values;  // one per label name, in order
  double value = 0.0;                     // counter or gauge
  std::vector<uint64_t> cumulative;       // histogram: count at or below each bound, then +Inf (= count)
  double sum = 0.0;                       // histogram: sum of the observations
  ReportStamp stamp;                      // gauge: which report set `value`

  bool operator==(const SeriesSnapshot&) const = default;
};

struct FamilySnapshot {
  std::string name;  // as registered (a counter is exposed with "_total")
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names;
  std::vector<double> bounds;                   // histogram: finite upper bounds, ascending (+Inf implied)
  GaugeMerge merge = GaugeMerge::kFreshest;     // gauge only
  std::vector<SeriesSnapshot> series;           // ascending by label values

  bool operator==(const FamilySnapshot&) const = default;
};

// The name samples and HELP/TYPE lines use: as prometheus_client, a counter's
// carry "_total".
std::string ExposedName(const std::string& name, MetricType type);

// Appends one family in text format 0.0.4: HELP, TYPE and every series' samples.
void RenderFamily(const FamilySnapshot& family, std::string* out);

// Every family, in order.
std::string RenderFamilies(const std::vector<FamilySnapshot>& families);

}  // namespace llmserve::frontend::metrics
