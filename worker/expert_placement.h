#pragma once
// Expert parallelism (vLLM's --enable-expert-parallel): which of a
// mixture-of-experts layer's experts a rank holds, whole, instead of a slice
// of every expert's intermediate dimension.

#include <cstddef>
#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::worker {

// vLLM's --expert-placement-strategy.
enum class ExpertPlacement {
  kLinear,      // rank r holds a contiguous range; the first (E mod size) ranks one more
  kRoundRobin,  // expert e is on rank e mod size
};

// "linear" or "round_robin"; anything else is an InvalidArgument naming both.
StatusOr<ExpertPlacement> ParseExpertPlacement(const std::string& name);

// local[e] is true when rank `rank` of `size` holds expert e of `num_experts`.
std::vector<bool> LocalExperts(size_t num_experts, size_t rank, size_t size, ExpertPlacement placement);

}  // namespace llmserve::worker
