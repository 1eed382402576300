#include "deploy/elastic_plan.h"

#include <algorithm>

namespace llmserve::deploy {

proto::ScaleResponse MakeScaleResponse(uint32_t status, const std::string& message, uint32_t size) {
  proto::ScaleResponse r;
  r.set_ok(status == 200);
  r.set_http_status(status);
  r.set_message(message);
  r.set_data_parallel_size(size);
  return r;
}

std::optional<proto::ScaleResponse> PlanScale(uint32_t current, const proto::ScaleRequest& request,
                                             uint32_t max_size, ScaleStep* step) {
  const uint32_t to = request.new_data_parallel_size();
  if (to < 1)
    return MakeScaleResponse(400, "new_data_parallel_size must be at least 1", current);
  if (to > max_size)
    return MakeScaleResponse(400, "new_data_parallel_size must be at most " + std::to_string(max_size), current);
  *step = ScaleStep{current, to, {}, {}};
  for (uint32_t r = current; r < to; ++r) step->added.push_back(r);
  for (uint32_t r = to; r < current; ++r) step->removed.push_back(r);
  return std::nullopt;
}

std::vector<uint32_t> FirstRanks(uint32_t n) {
  std::vector<uint32_t> ranks;
  for (uint32_t r = 0; r < n; ++r) ranks.push_back(r);
  return ranks;
}

proto::Membership MakeMembership(uint64_t epoch, const std::vector<uint32_t>& active, bool scaling,
                                 uint32_t tracked) {
  proto::Membership m;
  m.set_epoch(epoch);
  for (uint32_t r : active) m.add_active_ranks(r);
  m.set_scaling(scaling);
  m.set_tracked_ranks(tracked);
  return m;
}

bool RanksDrained(const proto::LoadSnapshot& snapshot, uint64_t epoch, const std::vector<uint32_t>& ranks) {
  if (!snapshot.has_membership() || snapshot.membership().epoch() < epoch) return false;
  for (uint32_t rank : ranks) {
    for (const auto& e : snapshot.engines()) {
      if (e.data_parallel_rank() != rank) continue;
      if (e.num_waiting_reqs() + e.num_running_reqs() > 0) return false;
    }
  }
  return true;
}

}  // namespace llmserve::deploy
