#include "frontend/metrics/merged_scrape.h"

#include <glog/logging.h>

#include "frontend/metrics/snapshot_merge.h"

namespace llmserve::frontend::metrics {

MergedScrape::MergedScrape(const FrontendMetrics* metrics, std::unique_ptr<SnapshotDirectory> directory,
                           std::chrono::milliseconds interval, std::chrono::milliseconds republish_every)
    : metrics_(metrics), directory_(std::move(directory)), interval_(interval), republish_every_(republish_every) {
  {
    std::lock_guard<std::mutex> lock(publish_mu_);
    CollectAndPublish();  // the others see this server (its engine series at zero) from the start
  }
  thread_ = std::thread([this] { Run(); });
}

MergedScrape::~MergedScrape() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> lock(publish_mu_);
  CollectAndPublish();  // what this server counted until it stopped stays counted
}

std::vector<FamilySnapshot> MergedScrape::CollectAndPublish() {
  // Read the change count before collecting: a change during Collect publishes again next time.
  const uint64_t changes = metrics_->changes();
  std::vector<FamilySnapshot> families = metrics_->Collect();
  if (Status s = directory_->Publish(families); !s.ok()) {
    if (!warned_) LOG(WARNING) << "metrics: other API servers will not see this one's values: " << s.message();
    warned_ = true;
    return families;
  }
  published_changes_ = changes;
  published_at_ = std::chrono::steady_clock::now();
  return families;
}

std::string MergedScrape::Render() {
  std::vector<FamilySnapshot> own;
  {
    std::lock_guard<std::mutex> lock(publish_mu_);
    own = CollectAndPublish();
  }
  return RenderFamilies(MergeSnapshots(own, directory_->ReadOthers()));
}

void MergedScrape::PublishIfChanged() {
  std::lock_guard<std::mutex> lock(publish_mu_);
  const bool due = std::chrono::steady_clock::now() - published_at_ >= republish_every_;
  if (due || metrics_->changes() != published_changes_) CollectAndPublish();
}

void MergedScrape::Run() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stop_cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    PublishIfChanged();
    lock.lock();
  }
}

}  // namespace llmserve::frontend::metrics
