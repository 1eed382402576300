#pragma once
// The text of an API server's snapshot file: JSON holding the process's
// identity (pid and start time, so that a reader can tell whether it still
// runs) and its families with every value exactly (doubles round-trip; NaN
// and infinities as the strings "NaN", "+Inf", "-Inf").

#include <cstdint>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "frontend/metrics/family_snapshot.h"

namespace llmserve::frontend::metrics {

// Who wrote a snapshot.
struct SnapshotOwner {
  int64_t pid = 0;
  uint64_t start_ticks = 0;  // the process's start time (/proc/PID/stat field 22); 0: unknown
};

struct DecodedSnapshot {
  SnapshotOwner owner;
  std::vector<FamilySnapshot> families;
};

std::string EncodeSnapshot(const SnapshotOwner& owner, const std::vector<FamilySnapshot>& families);

// InvalidArgument when `text` is not a snapshot of this format.
StatusOr<DecodedSnapshot> DecodeSnapshot(const std::string& text);

}  // namespace llmserve::frontend::metrics
