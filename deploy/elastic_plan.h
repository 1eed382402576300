#pragma once
// The pure parts of an elastic data-parallel scale (no sockets, no
// processes), so tests can check them directly: which ranks a scale adds or
// removes, the membership each phase publishes, and whether removed ranks
// have drained according to a coordinator snapshot.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/admin.pb.h"
#include "proto/coordinator.pb.h"

namespace llmserve::deploy {

// What a scale from `current` ranks to the requested size does.
struct ScaleStep {
  uint32_t from = 0;
  uint32_t to = 0;
  std::vector<uint32_t> added;    // ranks from..to-1 (scale up)
  std::vector<uint32_t> removed;  // ranks to..from-1 (scale down)
};

// Plans the scale, or returns the response refusing it (400 for a size of 0
// or above `max_size`).
std::optional<proto::ScaleResponse> PlanScale(uint32_t current, const proto::ScaleRequest& request,
                                             uint32_t max_size, ScaleStep* step);

// Ranks 0..n-1.
std::vector<uint32_t> FirstRanks(uint32_t n);

// The membership to publish: `active` ranks, `scaling` flag, the coordinator
// tracking ranks 0..tracked-1.
proto::Membership MakeMembership(uint64_t epoch, const std::vector<uint32_t>& active, bool scaling,
                                 uint32_t tracked);

// True when `snapshot` already carries membership `epoch` (or a newer one) and
// shows no waiting or running request on any of `ranks`.
bool RanksDrained(const proto::LoadSnapshot& snapshot, uint64_t epoch, const std::vector<uint32_t>& ranks);

// A response with `status` and `message`.
proto::ScaleResponse MakeScaleResponse(uint32_t status, const std::string& message, uint32_t size);

}  // namespace llmserve::deploy
