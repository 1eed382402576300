// dp_routing_bench: how evenly DP load balancing spreads a long-tailed
// workload, token-aware score vs vLLM's waiting*4 + running, on the same
// simulated run (same arrivals, same lengths, same seed).
//
// The simulation drives the real DpLoadBalancer. Each of R ranks runs a
// chunked-prefill scheduler: every step serves one decode token per running
// request, then fills the rest of a token budget with prompt chunks in FCFS
// order; a step takes c0 + c1 * tokens. Ranks report (waiting, running,
// waiting tokens) after every step; the coordinator publishes a snapshot to
// every frontend each 100 ms, between which each frontend adds its optimistic
// increments, exactly as llmserve's frontends do. KV capacity is not modelled.
//
// Output: per policy, the time-weighted mean over the run of max/mean
// in-flight requests per rank (the imbalance figure), the same for
// outstanding token work, requests routed per rank (max/mean), and time to
// first token and end-to-end latency (mean, p99), as one JSON line per policy
// and load, each the mean over five seeds.
//
// usage: dp_routing_bench [--ranks 4] [--frontends 2] [--requests 6000] [--seed 1] [--request-tokens 256]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "frontend/dp_load_balancer.h"

namespace {

using llmserve::frontend::DpLoadBalancer;
using llmserve::frontend::DpLoadBalancerConfig;
using llmserve::frontend::RankLoad;
using llmserve::frontend::ScorePolicy;

struct Params {
  int ranks = 4;
  int frontends = 2;
  int requests = 6000;
  uint64_t seed = 1;
  int budget = 2048;        // max_num_batched_tokens
  int max_seqs = 128;       // max_num_seqs
  double c0 = 0.006;        // seconds per step
  double c1 = 0.00002;      // seconds per scheduled token
  double publish = 0.100;   // coordinator snapshot interval
  int request_tokens = 256;  // the token-aware score's per-request charge
};

struct Request {
  double arrival = 0;
  int prompt = 0, output = 0;
  int prompt_left = 0, output_left = 0;
  bool scheduled = false;  // left the waiting queue
  bool started = false;    // produced its first token
  double first_token = -1, done = -1;
  int rank = -1, frontend = 0;
};

struct Rank {
  std::deque<int> reqs;  // unfinished, arrival order
  bool busy = false;
  double step_end = 0;
  std::vector<std::pair<int, int>> plan;  // (request, tokens) of the step in flight
};

struct Workload {
  std::vector<double> arrival;
  std::vector<int> prompt, output;
};

// Long-tailed lengths: lognormal prompts (median 300 tokens, sigma 1.3, up to
// 16k) and outputs (median 80, sigma 1.0, up to 2k); Poisson arrivals.
Workload MakeWorkload(const Params& p, double rate) {
  std::mt19937_64 rng(p.seed);
  std::lognormal_distribution<double> prompt(std::log(300.0), 1.3), output(std::log(80.0), 1.0);
  std::exponential_distribution<double> gap(rate);
  Workload w;
  double t = 0;
  for (int i = 0; i < p.requests; ++i) {
    t += gap(rng);
    w.arrival.push_back(t);
    w.prompt.push_back(std::clamp(static_cast<int>(prompt(rng)), 16, 16000));
    w.output.push_back(std::clamp(static_cast<int>(output(rng)), 1, 2000));
  }
  return w;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

struct Result {
  double inflight_imbalance = 0, work_imbalance = 0, routed_imbalance = 0;
  double ttft_mean = 0, ttft_p99 = 0, e2e_mean = 0, e2e_p99 = 0, makespan = 0;
};

// The workload's requests, spread over the frontends round-robin.
std::vector<Request> MakeRequests(const Params& p, const Workload& w) {
  std::vector<Request> reqs(w.arrival.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].arrival = w.arrival[i];
    reqs[i].prompt = reqs[i].prompt_left = w.prompt[i];
    reqs[i].output = reqs[i].output_left = w.output[i];
    reqs[i].frontend = static_cast<int>(i) % p.frontends;
  }
  return reqs;
}

// One load balancer per frontend, as the frontends build theirs.
std::vector<DpLoadBalancer> MakeBalancers(const Params& p, ScorePolicy policy) {
  std::vector<DpLoadBalancer> lbs;
  for (int f = 0; f < p.frontends; ++f) {
    DpLoadBalancerConfig c;
    c.score = policy;
    c.request_tokens = p.request_tokens;
    c.client_index = f;
    c.client_count = p.frontends;
    lbs.emplace_back(c, static_cast<size_t>(p.ranks));
  }
  return lbs;
}

// Plans rank r's next step at time `now`: decodes first, then prompt chunks
// (FCFS) within the token budget and the sequence limit.
void StartStep(const Params& p, double now, std::vector<Request>* reqs_ptr, Rank* rank) {
  std::vector<Request>& reqs = *reqs_ptr;
  Rank& r = *rank;
  r.plan.clear();
  int budget = p.budget;
  int seqs = 0;
  for (int id : r.reqs) {  // decodes first
    Request& q = reqs[static_cast<size_t>(id)];
    if (q.scheduled && q.prompt_left == 0 && budget > 0 && seqs < p.max_seqs) {
      r.plan.emplace_back(id, 1);
      --budget;
      ++seqs;
    }
  }
  for (int id : r.reqs) {  // then prompt chunks, FCFS
    Request& q = reqs[static_cast<size_t>(id)];
    if (q.prompt_left > 0 && budget > 0 && seqs < p.max_seqs) {
      const int chunk = std::min(budget, q.prompt_left);
      r.plan.emplace_back(id, chunk);
      q.scheduled = true;
      budget -= chunk;
      ++seqs;
    }
  }
  r.busy = !r.plan.empty();
  if (r.busy) r.step_end = now + p.c0 + p.c1 * (p.budget - budget);
}

// The load rank r reports in a coordinator snapshot.
RankLoad LoadOf(const Rank& r, const std::vector<Request>& reqs) {
  RankLoad l;
  for (int id : r.reqs) {
    const Request& q = reqs[static_cast<size_t>(id)];
    if (q.scheduled) {
      ++l.running_reqs;
    } else {
      ++l.waiting_reqs;
      l.waiting_tokens += q.prompt_left;
    }
  }
  return l;
}

// Latency figures over the finished requests.
Result Summarize(const std::vector<Request>& reqs) {
  Result res;
  std::vector<double> ttft, e2e;
  for (const Request& q : reqs) {
    ttft.push_back(q.first_token - q.arrival);
    e2e.push_back(q.done - q.arrival);
    res.makespan = std::max(res.makespan, q.done);
  }
  for (double v : ttft) res.ttft_mean += v / static_cast<double>(ttft.size());
  for (double v : e2e) res.e2e_mean += v / static_cast<double>(e2e.size());
  res.ttft_p99 = Percentile(ttft, 0.99);
  res.e2e_p99 = Percentile(e2e, 0.99);
  return res;
}

Result Simulate(const Params& p, const Workload& w, ScorePolicy policy) {
  std::vector<Request> reqs = MakeRequests(p, w);
  std::vector<DpLoadBalancer> lbs = MakeBalancers(p, policy);
  std::vector<Rank> ranks(static_cast<size_t>(p.ranks));
  std::vector<int> routed(static_cast<size_t>(p.ranks), 0);
  const std::vector<bool> available(static_cast<size_t>(p.ranks), true);
  const std::vector<int32_t> tokens(16000, 1);
  size_t next_arrival = 0, finished = 0;
  double now = 0, next_publish = p.publish;
  double weighted_inflight = 0, weighted_work = 0, busy_time = 0;

  auto start_step = [&](Rank& r) { StartStep(p, now, &reqs, &r); };
  auto accumulate = [&](double until) {
    const double dt = until - now;
    if (dt <= 0) return;
    double max_n = 0, sum_n = 0, max_w = 0, sum_w = 0;
    for (const Rank& r : ranks) {
      double n = static_cast<double>(r.reqs.size()), work = 0;
      for (int id : r.reqs) work += reqs[static_cast<size_t>(id)].prompt_left + reqs[static_cast<size_t>(id)].output_left;
      max_n = std::max(max_n, n);
      sum_n += n;
      max_w = std::max(max_w, work);
      sum_w += work;
    }
    if (sum_n > 0) {
      weighted_inflight += dt * max_n / (sum_n / p.ranks);
      weighted_work += dt * max_w / (sum_w / p.ranks);
      busy_time += dt;
    }
  };

  while (finished < reqs.size()) {
    // The next event: an arrival, a step end or a publish.
    double t_arrival = next_arrival < reqs.size() ? reqs[next_arrival].arrival : INFINITY;
    double t_step = INFINITY;
    size_t step_rank = 0;
    for (size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i].busy && ranks[i].step_end < t_step) t_step = ranks[i].step_end, step_rank = i;
    const double t = std::min({t_arrival, t_step, next_publish});
    accumulate(t);
    now = t;
    if (t == next_publish) {
      std::vector<RankLoad> snap;
      for (const Rank& r : ranks) snap.push_back(LoadOf(r, reqs));
      for (auto& lb : lbs) lb.OnSnapshot(snap);
      next_publish += p.publish;
    } else if (t == t_arrival) {
      Request& q = reqs[next_arrival];
      DpLoadBalancer& lb = lbs[static_cast<size_t>(q.frontend)];
      const size_t r = *lb.Pick(std::span<const int32_t>(tokens.data(), static_cast<size_t>(q.prompt)), available);
      lb.OnDispatch(r, q.prompt);
      q.rank = static_cast<int>(r);
      ranks[r].reqs.push_back(static_cast<int>(next_arrival));
      routed[r]++;
      ++next_arrival;
      if (!ranks[r].busy) start_step(ranks[r]);
    } else {
      Rank& r = ranks[step_rank];
      for (auto [id, n] : r.plan) {
        Request& q = reqs[static_cast<size_t>(id)];
        DpLoadBalancer& lb = lbs[static_cast<size_t>(q.frontend)];
        if (q.prompt_left > 0) {
          q.prompt_left -= n;
          if (q.prompt_left > 0) continue;
        }
        --q.output_left;  // a decode token, or the first token after the last prompt chunk
        if (!q.started) {
          q.started = true;
          q.first_token = now;
          lb.OnFirstToken(step_rank, q.prompt);
        }
        if (q.output_left == 0) {
          q.done = now;
          lb.OnFinish(step_rank, q.prompt, true);
          ++finished;
        }
      }
      r.reqs.erase(std::remove_if(r.reqs.begin(), r.reqs.end(),
                                  [&](int id) { return reqs[static_cast<size_t>(id)].done >= 0; }),
                   r.reqs.end());
      start_step(r);
    }
  }
  const double mean_routed = static_cast<double>(reqs.size()) / p.ranks;
  Result res = Summarize(reqs);
  res.inflight_imbalance = weighted_inflight / busy_time;
  res.work_imbalance = weighted_work / busy_time;
  res.routed_imbalance = *std::max_element(routed.begin(), routed.end()) / mean_routed;
  return res;
}

void Accumulate(const Result& r, int n, Result* sum) {
  const double w = 1.0 / n;
  sum->inflight_imbalance += w * r.inflight_imbalance;
  sum->work_imbalance += w * r.work_imbalance;
  sum->routed_imbalance += w * r.routed_imbalance;
  sum->ttft_mean += w * r.ttft_mean;
  sum->ttft_p99 += w * r.ttft_p99;
  sum->e2e_mean += w * r.e2e_mean;
  sum->e2e_p99 += w * r.e2e_p99;
  sum->makespan += w * r.makespan;
}

void Print(const char* name, double rate, const Result& r) {
  std::printf("{\"policy\":\"%s\",\"arrival_rate\":%.1f,\"inflight_max_over_mean\":%.3f,\"work_max_over_mean\":%.3f,"
              "\"routed_max_over_mean\":%.3f,\"ttft_mean_s\":%.3f,\"ttft_p99_s\":%.3f,\"e2e_mean_s\":%.3f,"
              "\"e2e_p99_s\":%.3f,\"makespan_s\":%.2f}\n",
              name, rate, r.inflight_imbalance, r.work_imbalance, r.routed_imbalance, r.ttft_mean, r.ttft_p99,
              r.e2e_mean, r.e2e_p99, r.makespan);
}

}  // namespace

int main(int argc, char** argv) {
  Params p;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long v = std::strtol(argv[i + 1], nullptr, 10);
    if (v < 1) {
      std::fprintf(stderr, "%s needs a positive integer\n", flag.c_str());
      return 2;
    }
    if (flag == "--ranks") p.ranks = static_cast<int>(v);
    else if (flag == "--frontends") p.frontends = static_cast<int>(v);
    else if (flag == "--requests") p.requests = static_cast<int>(v);
    else if (flag == "--seed") p.seed = static_cast<uint64_t>(v);
    else if (flag == "--request-tokens") p.request_tokens = static_cast<int>(v);
    else {
      std::fprintf(stderr, "unknown flag %s\nusage: dp_routing_bench [--ranks N] [--frontends F] [--requests M] [--seed S] [--request-tokens T]\n",
                   flag.c_str());
      return 2;
    }
  }
  // Arrival rates per rank (requests/s): moderate and heavy load for this cost model.
  // Each figure is the mean over 5 workloads (seeds seed..seed+4); both
  // policies see the same 5.
  constexpr int kSeeds = 5;
  for (double per_rank : {20.0, 30.0, 40.0, 50.0}) {
    const double rate = per_rank * p.ranks;
    Result token, counts;
    for (int k = 0; k < kSeeds; ++k) {
      Params pk = p;
      pk.seed = p.seed + static_cast<uint64_t>(k);
      const Workload w = MakeWorkload(pk, rate);
      Accumulate(Simulate(pk, w, ScorePolicy::kTokenAware), kSeeds, &token);
      Accumulate(Simulate(pk, w, ScorePolicy::kRequestCounts), kSeeds, &counts);
    }
    Print("token_aware", rate, token);
    Print("vllm_waiting4_running", rate, counts);
  }
  return 0;
}
