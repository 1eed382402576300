#include "worker/expert_placement.h"

#include <algorithm>

namespace llmserve::worker {

StatusOr<ExpertPlacement> ParseExpertPlacement(const std::string& name) {
  if (name == "linear") return ExpertPlacement::kLinear;
  if (name == "round_robin") return ExpertPlacement::kRoundRobin;
  return Status::InvalidArgument("--expert-placement-strategy must be linear or round_robin, not '" + name + "'");
}

std::vector<bool> LocalExperts(size_t num_experts, size_t rank, size_t size, ExpertPlacement placement) {
  std::vector<bool> local(num_experts, false);
  if (placement == ExpertPlacement::kRoundRobin) {
    for (size_t e = rank; e < num_experts; e += size) local[e] = true;
    return local;
  }
  const size_t base = num_experts / size, extra = num_experts % size;
  const size_t first = rank * base + std::min(rank, extra), count = base + (rank < extra ? 1 : 0);
  for (size_t e = first; e < first + count; ++e) local[e] = true;
  return local;
}

}  // namespace llmserve::worker
