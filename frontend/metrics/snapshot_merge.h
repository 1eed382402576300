#pragma once
// The scrape of several API servers that share one port, as one server would
// show it (what prometheus_client's multiprocess collector does for vLLM):
//  - counters and histograms (buckets, sum, count) are summed per label set,
//    over every server that ever ran, running or not: a server that exits
//    leaves its last snapshot behind, so totals never go down;
//  - gauges combine per their family's GaugeMerge, over running servers only
//    (a server that exited reports nothing current);
//  - families appear in the scraping server's order, then those only other
//    servers have, in the order first met; series ascend by label values.
// A family whose type, labels or buckets differ from the first server's that
// has it is left out from that server (it cannot combine; all servers of a
// deployment register the same families).
//
// kFreshest picks, per label set, the copy with the latest ReportStamp: two
// copies received within kReorderWindowS of each other are ordered by their
// sequence (an engine's step counter), since the order in which different
// processes happened to receive two reports says little at that scale; copies
// further apart by the time they were received (an engine restarted at the
// same rank counts its steps from 0 again). Ties go to the scraping server.

#include <cstdint>
#include <vector>

#include "frontend/metrics/family_snapshot.h"

namespace llmserve::frontend::metrics {

// Receipt times closer than this are ordered by the reports' own sequence.
inline constexpr double kReorderWindowS = 0.5;

// One other API server's last published snapshot.
struct ServerSnapshot {
  int64_t pid = 0;
  bool running = true;  // false: the process exited (its gauges are left out)
  std::vector<FamilySnapshot> families;
};

// Whether a gauge value stamped `candidate` is fresher than one stamped `best`.
bool FresherThan(const ReportStamp& candidate, const ReportStamp& best);

// The scrape of the scraping server (`local`, its values as of now) and `others`.
std::vector<FamilySnapshot> MergeSnapshots(const std::vector<FamilySnapshot>& local,
                                           const std::vector<ServerSnapshot>& others);

}  // namespace llmserve::frontend::metrics
