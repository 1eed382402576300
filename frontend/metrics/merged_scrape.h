#pragma once
// MergedScrape: GET /metrics of one of several API servers that share a port
// (--api-server-count > 1), showing the values of all of them as one server
// would (snapshot_merge.h): this server's values as of now merged with every
// other server's last snapshot from the SnapshotDirectory.
//
// This server publishes its own snapshot there
//  - on every scrape it answers, before answering, with the very values it
//    shows: so whatever any scrape showed of a server is on disk before the
//    answer leaves, and no later scrape of any server shows a smaller total;
//  - from a thread of its own, every `interval` when its values changed since
//    the last publication, and every second or so regardless (for gauges
//    that move outside FrontendMetrics' record calls);
//  - once more when it is destroyed (the server stops).
// A sibling's values in a scrape are thus at most about `interval` old.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "frontend/metrics/frontend_metrics.h"
#include "frontend/metrics/snapshot_directory.h"

namespace llmserve::frontend::metrics {

class MergedScrape {
 public:
  // `metrics` must outlive this. Its thread publishes every `interval` when values changed, and after
  // `republish_every` regardless.
  MergedScrape(const FrontendMetrics* metrics, std::unique_ptr<SnapshotDirectory> directory,
               std::chrono::milliseconds interval, std::chrono::milliseconds republish_every = std::chrono::seconds(1));
  ~MergedScrape();
  MergedScrape(const MergedScrape&) = delete;
  MergedScrape& operator=(const MergedScrape&) = delete;

  // The merged scrape in text format (publishing this server's snapshot first). Thread-safe.
  std::string Render();

  // Publishes this server's snapshot if its values changed since the last publication (or that was
  // `republish_every` ago). Thread-safe.
  void PublishIfChanged();

 private:
  // Collects and publishes this server's values and returns them (needs publish_mu_).
  std::vector<FamilySnapshot> CollectAndPublish();
  void Run();

  const FrontendMetrics* metrics_;
  std::unique_ptr<SnapshotDirectory> directory_;
  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds republish_every_;
  std::mutex publish_mu_;  // publications reach the file in the order their values were collected
  uint64_t published_changes_ = 0;  // metrics_->changes() at the last publication (guarded by publish_mu_)
  std::chrono::steady_clock::time_point published_at_{};  // guarded by publish_mu_
  bool warned_ = false;  // a failed publication was logged (guarded by publish_mu_)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace llmserve::frontend::metrics
