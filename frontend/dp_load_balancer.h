#pragma once
// DpLoadBalancer: which data-parallel rank gets the next request. A pure
// policy object (no sockets, no clock), so tests and the routing benchmark can
// drive it directly; EngineCoreClient owns one per frontend.
//
// Inputs: this frontend's own exact accounting of the requests it has in
// flight on each rank, the coordinator's per-rank snapshot (waiting / running
// requests and waiting prompt tokens) for what the other frontends put there,
// optimistic increments for those other frontends since that snapshot, and
// this frontend's start offset among the API servers.
//
// Unlike vLLM, which replaces its view wholesale with each snapshot (up to
// 100 ms old, blind to what this frontend sent since and to what finished), a
// rank's load here is: own requests now + (snapshot - own requests when the
// snapshot arrived) + the increments. With one frontend the view is exact at
// every instant; with several, only the others' share is as old as the
// snapshot. (Wholesale replacement left the ranks of a 4-rank test far from
// even: docs/perf/2026-11-22-dp-routing.md.)
//
// Token-aware score (the default):
//     score = waiting_tokens + request_tokens * (waiting_reqs + running_reqs)
// waiting_tokens are the prompt tokens the rank still has to prefill before a
// new request's prefill can start: they are the bulk of a newcomer's time to
// first token and the part that request counts alone cannot see (one 8k-token
// prompt queues as much work as 500 short chat turns). Every request, waiting
// or running, is also charged `request_tokens` (default 256) token-equivalents
// for the decode work it still holds: each running request takes one token of
// every step's budget and one batch slot until it finishes, and under a
// long-tailed output length L a request in flight still has about
// E[L^2] / (2 E[L]) tokens to go (about 180 for outputs with median 80 and
// log-sigma 1), more than the mean output. In bench/frontend's
// simulation, weights 16..512 all gave lower time to first token than vLLM's
// score; 256 matched vLLM's request-count balance while doing so. vLLM's
// score, waiting*4 + running, is kept as ScorePolicy::kRequestCounts for comparison.
//
// Own accounting: requests this frontend sent that have not produced a token
// count as waiting with their prompt tokens, those that have as running.
// Without a coordinator (DP=1, tests) the snapshot never arrives and own
// accounting is the whole view.
//
// Prefix affinity (DpRouting::kPrefix): the first `affinity_tokens` prompt
// tokens are hashed and mapped to a rank by rendezvous hashing over the
// available ranks (a rank joining or leaving moves only its own share of
// prefixes), so requests that share those leading blocks meet the same
// prefix cache. The preferred rank is used unless its score exceeds the
// lowest score by more than `affinity_threshold`; then the score decides.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status_or.h"

namespace llmserve::frontend {

// How a rank is chosen for requests without a pinned rank.
enum class DpRouting { kScore, kPrefix };

// "score" or "prefix" (the --dp-routing values); anything else is an error.
StatusOr<DpRouting> ParseDpRouting(std::string_view text);

// The score formula.
enum class ScorePolicy {
  kTokenAware,     // waiting_tokens + request_tokens * (waiting + running)
  kRequestCounts,  // vLLM: waiting * 4 + running
};

// One rank's load, as the coordinator published it (or as tracked locally).
struct RankLoad {
  int64_t waiting_reqs = 0;
  int64_t running_reqs = 0;
  int64_t waiting_tokens = 0;  // prompt tokens not yet computed in the waiting queue
};

struct DpLoadBalancerConfig {
  DpRouting routing = DpRouting::kScore;
  ScorePolicy score = ScorePolicy::kTokenAware;
  int64_t request_tokens = 256;       // token-equivalent charged per waiting/running request
  int32_t affinity_tokens = 64;       // leading prompt tokens hashed for prefix affinity
  int64_t affinity_threshold = 2048;  // score margin over the minimum before affinity yields
  int32_t client_index = 0;           // this frontend's index among API servers
  int32_t client_count = 1;           // API servers routing over the same ranks
};

// The score of `load` under `config.score` (lower is better).
int64_t LoadScore(const RankLoad& load, const DpLoadBalancerConfig& config);

class DpLoadBalancer {
 public:
  // Routes over `num_ranks` ranks (indices 0..num_ranks-1).
  DpLoadBalancer(DpLoadBalancerConfig config, size_t num_ranks);

  // Picks a rank for a request with `prompt` among ranks whose `available`
  // entry is true; nullopt when none is. Does not record the dispatch.
  std::optional<size_t> Pick(std::span<const int32_t> prompt, const std::vector<bool>& available) const;

  // Records that a request with `prompt_tokens` went to `rank`: this
  // frontend's own accounting, and the optimistic increment for the other
  // frontends (client_count - 1 copies, assuming they do likewise) until the
  // next snapshot.
  void OnDispatch(size_t rank, int64_t prompt_tokens);
  // The request on `rank` produced its first token (own accounting only).
  void OnFirstToken(size_t rank, int64_t prompt_tokens);
  // The request on `rank` finished or was aborted; `started`: it had produced a token.
  void OnFinish(size_t rank, int64_t prompt_tokens, bool started);

  // A coordinator snapshot (rank order, one entry per rank): the other
  // frontends' share becomes snapshot minus own accounting; the optimistic
  // increments it now accounts for are dropped.
  void OnSnapshot(std::span<const RankLoad> loads);

  // Inserts an idle rank at index `rank` (later indices move up by one): a
  // rank that joined in an elastic scale-up.
  void InsertRank(size_t rank);

  // The load the policy sees for `rank` now (own + others + increments).
  RankLoad EffectiveLoad(size_t rank) const;
  // Whether a coordinator snapshot has arrived.
  bool has_snapshot() const { return has_snapshot_; }
  const DpLoadBalancerConfig& config() const { return config_; }

 private:
  std::optional<size_t> PickByScore(const std::vector<bool>& available, int64_t* min_score) const;

  DpLoadBalancerConfig config_;
  std::vector<RankLoad> others_;    // last snapshot minus own accounting at that time
  std::vector<RankLoad> deltas_;    // other frontends' optimistic increments since then
  std::vector<RankLoad> own_;       // this frontend's requests in flight
  bool has_snapshot_ = false;
  size_t dispatches_ = 0;  // requests dispatched so far: rotates the tie-break
};

}  // namespace llmserve::frontend
