#include "worker/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>

#include "base/mix64.h"
#include "worker/sampler_exp.h"
#include "worker/sampler_select.h"

namespace llmserve::worker {
namespace {

using base::Mix64;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr double kNegligibleLogRatio = 30.0;

// The least p a token keeps under min_p (p of the best token is 1).
double MinP(const SamplingParams& sp) { return sp.min_p > 0 ? static_cast<double>(sp.min_p) : 0.0; }

// Per-thread row of probabilities: a fresh 1.2 MB vector per row at a 152k
// vocabulary costs page faults on every step.
std::vector<double>& RowBuffer(size_t vocab) {
  thread_local std::vector<double> p;
  p.resize(vocab);
  return p;
}

void RawLogprobs(const float* logits, size_t vocab, int32_t n, int32_t token, SampledToken* out) {
  // log-sum-exp over the raw logits (tokens below e^-30 of the best add nothing).
  const double mx = MaxLogit(logits, vocab);
  std::vector<double>& p = RowBuffer(vocab);
  TemperatureExp(logits, vocab, mx, 1.0, mx - kNegligibleLogRatio, 0.0, p.data());
  const double lse = mx + std::log(Draw(p.data(), vocab).total());
  out->logprob = static_cast<float>(logits[token] - lse);
  int32_t higher = 0;
  for (size_t i = 0; i < vocab; ++i) higher += logits[i] > logits[token];
  out->rank = higher + 1;
  for (const auto& [l, t] : TopK(logits, vocab, static_cast<size_t>(n))) {
    out->top.emplace_back(t, static_cast<float>(l - lse));
  }
  // A grammar can leave fewer than n finite logits; vLLM still answers n
  // entries, the rest at -inf (the API writes -9999.0), lowest ids first.
  for (size_t t = 0; out->top.size() < static_cast<size_t>(n) && t < vocab; ++t) {
    if (logits[t] == kNegInf) out->top.emplace_back(static_cast<int32_t>(t), kNegInf);
  }
}

// The weights of the k best tokens (`best`, best first, not empty):
// temperature and min_p into p, then top_p over them best first. Returns how
// many lead tokens stay and their weight in *total.
size_t BestWeights(const std::vector<std::pair<float, int32_t>>& best, const SamplingParams& sp,
                   std::vector<float>& logits, std::vector<double>& p, double* total) {
  logits.resize(best.size());
  p.resize(best.size());
  for (size_t i = 0; i < best.size(); ++i) logits[i] = best[i].first;
  const double mx = logits[0];
  TemperatureExp(logits.data(), logits.size(), mx, sp.temperature, mx - kNegligibleLogRatio * sp.temperature,
                 MinP(sp), p.data());
  *total = 0;
  for (double v : p) *total += v;
  size_t keep = p.size();
  if (sp.top_p < 1.0f) {
    const double want = static_cast<double>(sp.top_p) * *total;
    double acc = 0;
    for (keep = 0; keep < p.size() && acc < want;) acc += p[keep++];
    *total = acc;
  }
  return keep;
}

// Top-k sampling on the k best tokens alone: their weights (BestWeights),
// then the draw in that order.
int32_t ChooseAmongBest(const float* l, size_t vocab, const SamplingParams& sp, double u) {
  const auto best = TopK(l, vocab, static_cast<size_t>(sp.top_k));
  if (best.empty()) return static_cast<int32_t>(ArgMax(l, vocab));  // no finite logit
  thread_local std::vector<float> logits;
  thread_local std::vector<double> p;
  double total = 0;
  const size_t keep = BestWeights(best, sp, logits, p, &total);
  const double target = u * total;
  double acc = 0;
  for (size_t i = 0; i < keep; ++i) {
    if (p[i] == 0) continue;
    acc += p[i];
    if (target < acc) return best[i].second;
  }
  return best[0].second;  // only when u * total rounds up to total
}

// Greedy argmax, or temperature → min_p → top_k → top_p → draw, over the
// processed logits `l`. Without top-k, truncations zero the dropped tokens'
// p and the draw walks the row in token id order (any fixed order gives the
// same distribution; sorting 152k tokens would dominate the step).
SampledToken Choose(const float* l, size_t vocab, const SamplingParams& sp, const SamplerRow& row) {
  SampledToken out;
  if (Sampler::Greedy(sp)) {
    // 3a. Greedy: the first maximum.
    out.token = static_cast<int32_t>(ArgMax(l, vocab));
    return out;
  }
  const double u = Sampler::Uniform(row.seed, row.output_position);
  if (sp.top_k > 0 && static_cast<size_t>(sp.top_k) < vocab) {
    out.token = ChooseAmongBest(l, vocab, sp, u);
    return out;
  }
  // 3b. Temperature, then probabilities relative to the maximum. Tokens
  // below e^-30 of the best are treated as impossible: skipping their exp
  // saves most of the work at a 152k vocabulary, and their total mass is
  // under 2e-8 there.
  const float mx = MaxLogit(l, vocab);
  std::vector<double>& p = RowBuffer(vocab);
  const double floor_logit = mx - kNegligibleLogRatio * sp.temperature;
  TemperatureExp(l, vocab, mx, sp.temperature, floor_logit, MinP(sp), p.data());
  if (sp.top_p < 1.0f) {
    const double want = static_cast<double>(sp.top_p) * Draw(p.data(), vocab).total();
    DropAfter(l, vocab, TopPCut(l, p.data(), vocab, want, static_cast<float>(floor_logit), mx), p.data());
  }
  const Draw draw(p.data(), vocab);
  out.token = draw.total() > 0 ? draw.Pick(u) : static_cast<int32_t>(ArgMax(l, vocab));  // no finite logit
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

namespace {

// The row's logits with the tokens its grammar forbids at -inf, in a
// per-thread buffer (as RowBuffer, to spare page faults every step).
const std::vector<float>& ApplyGrammarMask(const SamplerRow& row, size_t vocab) {
  thread_local std::vector<float> l;
  l.assign(vocab, kNegInf);
  const size_t words = std::min(row.grammar_mask_words, (vocab + 31) / 32);
  for (size_t w = 0; w < words; ++w) {
    auto bits = static_cast<uint32_t>(row.grammar_mask[w]);
    while (bits != 0) {
      const size_t t = w * 32 + static_cast<size_t>(__builtin_ctz(bits));
      bits &= bits - 1;
      if (t < vocab) l[t] = row.logits[t];
    }
  }
  return l;
}

}  // namespace

SampledToken Sampler::SampleRow(const SamplerRow& row, size_t vocab) {
  if (row.grammar_mask == nullptr) return SampleUnmasked(row, vocab);
  // The mask comes first and the rest of the sampler sees only its result.
  const std::vector<float>& masked = ApplyGrammarMask(row, vocab);
  SamplerRow inner = row;
  inner.logits = masked.data();
  inner.grammar_mask = nullptr;
  return SampleUnmasked(inner, vocab);
}

namespace {

bool SuppressesStops(const SamplerRow& row) {
  const SamplingParams& sp = *row.params;
  const size_t num_out = row.output_tokens != nullptr ? row.output_tokens->size() : 0;
  return num_out < static_cast<size_t>(std::max(0, sp.min_tokens)) && !sp.stop_token_ids.empty();
}

bool HasPenalties(const SamplingParams& sp) {
  return sp.repetition_penalty != 1.0f || sp.presence_penalty != 0.0f || sp.frequency_penalty != 0.0f;
}

}  // namespace

bool Sampler::ProcessesLogits(const SamplerRow& row) {
  const SamplingParams& sp = *row.params;
  return !sp.allowed_token_ids.empty() || !sp.logit_bias.empty() || HasPenalties(sp) || SuppressesStops(row);
}

namespace {

// Steps 1 and 2 of the sampler into `l` [vocab]: the row's logits after
// allowed ids, min_tokens' stop mask, logit bias and penalties.
void ProcessLogits(const SamplerRow& row, size_t vocab, std::vector<float>& l) {
  const SamplingParams& sp = *row.params;
  const bool suppress_stops = SuppressesStops(row);
  const bool penalties = HasPenalties(sp);
  l.assign(row.logits, row.logits + vocab);
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
}

// Top-k weights as ChooseAmongBest draws from them, scattered into p [vocab].
double TopKWeights(const float* l, size_t vocab, const SamplingParams& sp, double* p) {
  std::fill(p, p + vocab, 0.0);
  const auto best = TopK(l, vocab, static_cast<size_t>(sp.top_k));
  if (best.empty()) return 0;
  std::vector<float> logits;
  std::vector<double> w;
  double total = 0;
  const size_t keep = BestWeights(best, sp, logits, w, &total);
  for (size_t i = 0; i < keep; ++i) p[best[i].second] = w[i];
  return total;
}

}  // namespace

SampledToken Sampler::SampleUnmasked(const SamplerRow& row, size_t vocab) {
  const SamplingParams& sp = *row.params;
  if (!ProcessesLogits(row)) {
    // Nothing edits the logits: sample from the row itself (no copy).
    SampledToken out = Choose(row.logits, vocab, sp, row);
    if (sp.logprobs >= 0) RawLogprobs(row.logits, vocab, sp.logprobs, out.token, &out);
    return out;
  }
  std::vector<float> l;
  ProcessLogits(row, vocab, l);
  SampledToken out = Choose(l.data(), vocab, sp, row);
  if (sp.logprobs >= 0) RawLogprobs(row.logits, vocab, sp.logprobs, out.token, &out);
  return out;
}

double Sampler::TargetWeights(const SamplerRow& row, size_t vocab, std::vector<double>* p) {
  const SamplingParams& sp = *row.params;
  p->resize(vocab);
  std::vector<float> processed;
  const float* l = row.logits;
  if (ProcessesLogits(row)) {
    ProcessLogits(row, vocab, processed);
    l = processed.data();
  }
  if (sp.top_k > 0 && static_cast<size_t>(sp.top_k) < vocab) return TopKWeights(l, vocab, sp, p->data());
  // The same steps as Choose's full-row path.
  const float mx = MaxLogit(l, vocab);
  const double floor_logit = mx - kNegligibleLogRatio * sp.temperature;
  TemperatureExp(l, vocab, mx, sp.temperature, floor_logit, MinP(sp), p->data());
  if (sp.top_p < 1.0f) {
    const double want = static_cast<double>(sp.top_p) * Draw(p->data(), vocab).total();
    DropAfter(l, vocab, TopPCut(l, p->data(), vocab, want, static_cast<float>(floor_logit), mx), p->data());
  }
  return Draw(p->data(), vocab).total();
}

void Sampler::FillLogprobs(const SamplerRow& row, size_t vocab, int32_t token, SampledToken* out) {
  if (row.params->logprobs >= 0) RawLogprobs(row.logits, vocab, row.params->logprobs, token, out);
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
