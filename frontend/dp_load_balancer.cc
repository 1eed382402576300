#include "frontend/dp_load_balancer.h"

#include <algorithm>
#include <limits>

#include "base/mix64.h"

namespace llmserve::frontend {

namespace {

using base::Mix64;

uint64_t HashPrefix(std::span<const int32_t> tokens) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (int32_t t : tokens) h = Mix64(h ^ static_cast<uint32_t>(t));
  return h;
}

}  // namespace

StatusOr<DpRouting> ParseDpRouting(std::string_view text) {
  if (text == "score") return DpRouting::kScore;
  if (text == "prefix") return DpRouting::kPrefix;
  return Status::InvalidArgument("--dp-routing must be score or prefix, got '" + std::string(text) + "'");
}

int64_t LoadScore(const RankLoad& load, const DpLoadBalancerConfig& config) {
  if (config.score == ScorePolicy::kRequestCounts) return load.waiting_reqs * 4 + load.running_reqs;
  return load.waiting_tokens + config.request_tokens * (load.waiting_reqs + load.running_reqs);
}

DpLoadBalancer::DpLoadBalancer(DpLoadBalancerConfig config, size_t num_ranks)
    : config_(config), others_(num_ranks), deltas_(num_ranks), own_(num_ranks) {
  config_.client_count = std::max(config_.client_count, 1);
}

RankLoad DpLoadBalancer::EffectiveLoad(size_t rank) const {
  RankLoad l = own_[rank];
  if (!has_snapshot_) return l;
  l.waiting_reqs += others_[rank].waiting_reqs + deltas_[rank].waiting_reqs;
  l.running_reqs += others_[rank].running_reqs + deltas_[rank].running_reqs;
  l.waiting_tokens += others_[rank].waiting_tokens + deltas_[rank].waiting_tokens;
  return l;
}

std::optional<size_t> DpLoadBalancer::PickByScore(const std::vector<bool>& available, int64_t* min_score) const {
  // Scan from this frontend's offset and keep the first strict minimum, so
  // frontends that see equal scores start on different ranks.
  const size_t n = own_.size();
  if (n == 0) return std::nullopt;
  // The scan start also rotates with every dispatch, so ties (common when
  // ranks hold few requests) do not always go to the same rank.
  const size_t start = (n * static_cast<size_t>(std::max(config_.client_index, 0)) /
                            static_cast<size_t>(config_.client_count) +
                        dispatches_) % n;
  std::optional<size_t> best;
  int64_t best_score = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < n; ++i) {
    const size_t r = (start + i) % n;
    if (r >= available.size() || !available[r]) continue;
    const int64_t s = LoadScore(EffectiveLoad(r), config_);
    if (s < best_score) {
      best_score = s;
      best = r;
    }
  }
  *min_score = best_score;
  return best;
}

std::optional<size_t> DpLoadBalancer::Pick(std::span<const int32_t> prompt, const std::vector<bool>& available) const {
  int64_t min_score = 0;
  std::optional<size_t> best = PickByScore(available, &min_score);
  if (!best || config_.routing != DpRouting::kPrefix || config_.affinity_tokens <= 0 ||
      prompt.size() < static_cast<size_t>(config_.affinity_tokens))
    return best;
  // Rendezvous hashing: the available rank with the highest mix(prefix, rank).
  const uint64_t key = HashPrefix(prompt.first(static_cast<size_t>(config_.affinity_tokens)));
  std::optional<size_t> preferred;
  uint64_t best_weight = 0;
  for (size_t r = 0; r < own_.size(); ++r) {
    if (r >= available.size() || !available[r]) continue;
    const uint64_t w = Mix64(key ^ Mix64(r + 1));
    if (!preferred || w > best_weight) {
      best_weight = w;
      preferred = r;
    }
  }
  if (LoadScore(EffectiveLoad(*preferred), config_) <= min_score + config_.affinity_threshold) return preferred;
  return best;
}

void DpLoadBalancer::InsertRank(size_t rank) {
  rank = std::min(rank, own_.size());
  others_.insert(others_.begin() + static_cast<std::ptrdiff_t>(rank), RankLoad{});
  deltas_.insert(deltas_.begin() + static_cast<std::ptrdiff_t>(rank), RankLoad{});
  own_.insert(own_.begin() + static_cast<std::ptrdiff_t>(rank), RankLoad{});
}

void DpLoadBalancer::OnDispatch(size_t rank, int64_t prompt_tokens) {
  if (rank >= own_.size()) return;
  ++dispatches_;
  own_[rank].waiting_reqs += 1;
  own_[rank].waiting_tokens += prompt_tokens;
  const int64_t other_clients = config_.client_count - 1;
  deltas_[rank].waiting_reqs += other_clients;
  deltas_[rank].waiting_tokens += prompt_tokens * other_clients;
}

void DpLoadBalancer::OnFirstToken(size_t rank, int64_t prompt_tokens) {
  if (rank >= own_.size()) return;
  own_[rank].waiting_reqs -= 1;
  own_[rank].waiting_tokens -= prompt_tokens;
  own_[rank].running_reqs += 1;
}

void DpLoadBalancer::OnFinish(size_t rank, int64_t prompt_tokens, bool started) {
  if (rank >= own_.size()) return;
  if (started) {
    own_[rank].running_reqs -= 1;
  } else {
    own_[rank].waiting_reqs -= 1;
    own_[rank].waiting_tokens -= prompt_tokens;
  }
}

void DpLoadBalancer::OnSnapshot(std::span<const RankLoad> loads) {
  for (size_t r = 0; r < own_.size(); ++r) {
    const RankLoad snap = r < loads.size() ? loads[r] : RankLoad{};
    const RankLoad& own = own_[r];
    // What the snapshot holds beyond our own requests. Compared on totals:
    // the engine calls a request running once scheduled, we once it streams.
    const int64_t others_total =
        std::max<int64_t>(0, snap.waiting_reqs + snap.running_reqs - own.waiting_reqs - own.running_reqs);
    others_[r].waiting_reqs = std::min(others_total, std::max<int64_t>(0, snap.waiting_reqs - own.waiting_reqs));
    others_[r].running_reqs = others_total - others_[r].waiting_reqs;
    others_[r].waiting_tokens = std::max<int64_t>(0, snap.waiting_tokens - own.waiting_tokens);
    deltas_[r] = RankLoad{};
  }
  has_snapshot_ = true;
}

}  // namespace llmserve::frontend
