#include "worker/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>

#include "common/mix64.h"
#include "worker/sampler_exp.h"

namespace llmserve::worker {
namespace {

using common::Mix64;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr double kNegligibleLogRatio = 30.0;

// Candidates ordered best first: higher value, then lower token id.
struct Better {
  const std::vector<double>* p;
  bool operator()(int32_t a, int32_t b) const {
    return (*p)[a] != (*p)[b] ? (*p)[a] > (*p)[b] : a < b;
  }
};

void RawLogprobs(const float* logits, size_t vocab, int32_t n, int32_t token, SampledToken* out) {
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < vocab; ++i) mx = std::max(mx, static_cast<double>(logits[i]));
  double sum = 0;
  for (size_t i = 0; i < vocab; ++i) {
    const double d = static_cast<double>(logits[i]) - mx;
    if (d > -kNegligibleLogRatio) sum += std::exp(d);
  }
  const double lse = mx + std::log(sum);
  out->logprob = static_cast<float>(logits[token] - lse);
  int32_t higher = 0;
  for (size_t i = 0; i < vocab; ++i) higher += logits[i] > logits[token];
  out->rank = higher + 1;
  const size_t k = std::min(static_cast<size_t>(n), vocab);
  std::vector<int32_t> idx(vocab);
  for (size_t i = 0; i < vocab; ++i) idx[i] = static_cast<int32_t>(i);
  auto better = [&](int32_t a, int32_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), better);
  for (size_t i = 0; i < k; ++i) out->top.emplace_back(idx[i], static_cast<float>(logits[idx[i]] - lse));
}

// Greedy argmax, or temperature → min_p → top_k → top_p → draw, over the
// processed logits `l`.
SampledToken Choose(const float* l, size_t vocab, const SamplingParams& sp, const SamplerRow& row) {
  SampledToken out;
  if (sp.temperature <= 1e-5f) {
    // 3a. Greedy: the first maximum.
    out.token = static_cast<int32_t>(ArgMax(l, vocab));
  } else {
    // 3b. Temperature, then probabilities relative to the maximum.
    double mx = -std::numeric_limits<double>::infinity();
    for (size_t t = 0; t < vocab; ++t) mx = std::max(mx, static_cast<double>(l[t]));
    // Per-thread buffers: a fresh 1.2 MB vector per row at a 152k vocabulary
    // costs page faults on every step.
    thread_local std::vector<double> p;
    thread_local std::vector<int32_t> cand;
    p.resize(vocab);
    // Tokens below e^-30 of the best are treated as impossible: skipping their
    // exp saves most of the work at a 152k vocabulary, and their total mass is
    // under 2e-8 there.
    const double floor_logit = mx - kNegligibleLogRatio * sp.temperature;
    TemperatureExp(l, vocab, mx, sp.temperature, floor_logit, p.data());
    const double min_keep = sp.min_p > 0 ? static_cast<double>(sp.min_p) : 0.0;  // max p is 1
    if (sp.top_k <= 0 && sp.top_p >= 1.0f) {
      // No truncation: draw over the kept tokens in id order without listing them.
      double total = 0;
      int32_t last = 0;
      for (size_t t = 0; t < vocab; ++t) {
        if (p[t] > 0 && p[t] >= min_keep) {
          total += p[t];
          last = static_cast<int32_t>(t);
        }
      }
      const double target = Sampler::Uniform(row.seed, row.output_position) * total;
      double acc = 0;
      out.token = last;
      for (size_t t = 0; t < vocab; ++t) {
        if (!(p[t] > 0 && p[t] >= min_keep)) continue;
        acc += p[t];
        if (target < acc) {
          out.token = static_cast<int32_t>(t);
          break;
        }
      }
      return out;
    }
    cand.clear();
    for (size_t t = 0; t < vocab; ++t) {
      if (p[t] > 0 && p[t] >= min_keep) cand.push_back(static_cast<int32_t>(t));
    }
    const Better better{&p};
    bool sorted = false;
    if (sp.top_k > 0 && static_cast<size_t>(sp.top_k) < cand.size()) {
      std::nth_element(cand.begin(), cand.begin() + sp.top_k, cand.end(), better);
      cand.resize(static_cast<size_t>(sp.top_k));
    }
    if (sp.top_p < 1.0f) {
      double total = 0;
      for (int32_t t : cand) total += p[t];
      const double want = static_cast<double>(sp.top_p) * total;
      // Sort the best 1024 first; fall back to a full sort only if they do not reach top_p.
      size_t head = std::min<size_t>(1024, cand.size());
      std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(head), cand.end(), better);
      double acc = 0;
      size_t keep = 0;
      for (; keep < head && acc < want; ++keep) acc += p[cand[keep]];
      if (acc < want && head < cand.size()) {
        std::sort(cand.begin(), cand.end(), better);
        for (; keep < cand.size() && acc < want; ++keep) acc += p[cand[keep]];
      }
      cand.resize(std::max<size_t>(keep, 1));
      sorted = true;
    }
    // The draw walks the candidates in a fixed order: best first after top-k,
    // token id order otherwise (any fixed order gives the same distribution,
    // and sorting 152k candidates would dominate the step).
    if (!sorted && sp.top_k > 0) std::sort(cand.begin(), cand.end(), better);
    double total = 0;
    for (int32_t t : cand) total += p[t];
    const double target = Sampler::Uniform(row.seed, row.output_position) * total;
    double acc = 0;
    out.token = cand.empty() ? 0 : cand.back();
    for (int32_t t : cand) {
      acc += p[t];
      if (target < acc) {
        out.token = t;
        break;
      }
    }
  }
  return out;
}

}  // namespace

uint64_t RandomProcessSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

uint64_t Sampler::EffectiveSeed(const SamplingParams& params, const std::string& request_id) const {
  if (params.seed.has_value()) return *params.seed;
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : request_id) h = (h ^ c) * 0x100000001b3ull;
  return Mix64(process_seed_ ^ h);
}

double Sampler::Uniform(uint64_t seed, uint64_t position) {
  const uint64_t r = Mix64(Mix64(seed) ^ (position * 0xd1b54a32d192ed03ull));
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

SampledToken Sampler::SampleRow(const SamplerRow& row, size_t vocab) {
  const SamplingParams& sp = *row.params;
  const size_t num_out = row.output_tokens != nullptr ? row.output_tokens->size() : 0;
  const bool suppress_stops = num_out < static_cast<size_t>(std::max(0, sp.min_tokens)) && !sp.stop_token_ids.empty();
  const bool penalties =
      sp.repetition_penalty != 1.0f || sp.presence_penalty != 0.0f || sp.frequency_penalty != 0.0f;
  if (sp.allowed_token_ids.empty() && sp.logit_bias.empty() && !penalties && !suppress_stops) {
    // Nothing edits the logits: sample from the row itself (no copy).
    SampledToken out = Choose(row.logits, vocab, sp, row);
    if (sp.logprobs >= 0) RawLogprobs(row.logits, vocab, sp.logprobs, out.token, &out);
    return out;
  }
  std::vector<float> l(row.logits, row.logits + vocab);
  // 1. Allowed ids, min_tokens' stop-id mask and logit bias.
  if (!sp.allowed_token_ids.empty()) {
    std::vector<float> masked(vocab, kNegInf);
    for (int32_t t : sp.allowed_token_ids) {
      if (t >= 0 && static_cast<size_t>(t) < vocab) masked[t] = l[t];
    }
    l.swap(masked);
  }
  if (suppress_stops) {
    for (int32_t t : sp.stop_token_ids) {
      if (t >= 0 && static_cast<size_t>(t) < vocab) l[t] = kNegInf;
    }
  }
  for (const auto& [t, b] : sp.logit_bias) {
    if (t >= 0 && static_cast<size_t>(t) < vocab) l[t] += b;
  }
  // 2. Penalties.
  if (penalties) {
    std::unordered_map<int32_t, int32_t> out_count;
    if (row.output_tokens != nullptr) {
      for (int32_t t : *row.output_tokens) ++out_count[t];
    }
    if (sp.repetition_penalty != 1.0f) {
      std::vector<bool> seen(vocab, false);
      if (row.prompt_tokens != nullptr) {
        for (int32_t t : *row.prompt_tokens) {
          if (t >= 0 && static_cast<size_t>(t) < vocab) seen[t] = true;
        }
      }
      for (const auto& [t, c] : out_count) {
        if (t >= 0 && static_cast<size_t>(t) < vocab) seen[t] = true;
      }
      for (size_t t = 0; t < vocab; ++t) {
        if (seen[t]) l[t] = l[t] > 0 ? l[t] / sp.repetition_penalty : l[t] * sp.repetition_penalty;
      }
    }
    for (const auto& [t, c] : out_count) {
      if (t < 0 || static_cast<size_t>(t) >= vocab) continue;
      l[t] -= sp.frequency_penalty * static_cast<float>(c) + sp.presence_penalty;
    }
  }
  SampledToken out = Choose(l.data(), vocab, sp, row);
  if (sp.logprobs >= 0) RawLogprobs(row.logits, vocab, sp.logprobs, out.token, &out);
  return out;
}

std::vector<SampledToken> Sampler::Sample(const std::vector<SamplerRow>& rows, size_t vocab,
                                          kernels::cpu::ThreadPool& pool) const {
  std::vector<SampledToken> out(rows.size());
  pool.ParallelFor(rows.size(), 1, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) out[i] = SampleRow(rows[i], vocab);
  });
  return out;
}

}  // namespace llmserve::worker
