#pragma once
// SnapshotDirectory: the folder where the API servers of one deployment (one
// node's `llmserve serve --api-server-count N`) leave their metric snapshots,
// one file per process, "api-server-<index>-<pid>-<start>.json". A process
// replaces its own file atomically (written aside, then renamed over it), so a
// reader sees one whole snapshot or the one before. Files stay after their process
// exits: the merge keeps counting what it counted (snapshot_merge.h). A file
// names its process by pid and start time (also inside, for readers), so
// that a pid reused by another process neither overwrites an exited server's
// file nor makes it look running.

#include <memory>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "frontend/metrics/family_snapshot.h"
#include "frontend/metrics/snapshot_merge.h"

namespace llmserve::frontend::metrics {

class SnapshotDirectory {
 public:
  // Uses `dir` (created if missing) for API server `index` of this process.
  static StatusOr<std::unique_ptr<SnapshotDirectory>> Open(const std::string& dir, int32_t index);
  SnapshotDirectory(const SnapshotDirectory&) = delete;
  SnapshotDirectory& operator=(const SnapshotDirectory&) = delete;

  // Replaces this process's snapshot with `families`. Not thread-safe: the
  // caller serialises publications (they must reach the file in order).
  Status Publish(const std::vector<FamilySnapshot>& families);

  // Every other process's last snapshot, with whether it still runs. Files
  // that cannot be read or decoded are skipped (and logged once each).
  std::vector<ServerSnapshot> ReadOthers() const;

  // This process's file.
  const std::string& path() const { return path_; }

 private:
  SnapshotDirectory(std::string dir, std::string file_name);

  std::string dir_;
  std::string file_name_;  // in dir_
  std::string path_;
  std::string temp_path_;  // written, then renamed to path_
};

// Whether process `pid` runs and started at `start_ticks` (0: any start).
bool ProcessRunning(int64_t pid, uint64_t start_ticks);

// This process's start time in clock ticks since boot (/proc/self/stat); 0 if unknown.
uint64_t ProcessStartTicks(int64_t pid);

}  // namespace llmserve::frontend::metrics
