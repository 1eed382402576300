#include "worker/rejection_sampler.h"

#include <glog/logging.h>

#include "base/mix64.h"
#include "worker/sampler_select.h"

namespace llmserve::worker {

double AcceptanceUniform(uint64_t seed, uint64_t position) {
  // A stream of its own: the recovered token's draw uses Sampler::Uniform at
  // the same position, and the two must be independent.
  return Sampler::Uniform(base::Mix64(seed ^ 0x5be0cd19137e2179ull), position);
}

namespace {

// Position j of a random row: accepts `draft` or emits the recovered token.
// Returns true when the draft was accepted.
bool VerifyRandom(const SamplerRow& row, int32_t draft, size_t vocab, SampledToken* out) {
  thread_local std::vector<double> p;
  const double total = Sampler::TargetWeights(row, vocab, &p);
  if (total <= 0) {  // no finite logit: whatever the sampler does
    *out = Sampler::SampleRow(row, vocab);
    return false;
  }
  const double p_draft = draft >= 0 && static_cast<size_t>(draft) < vocab ? p[static_cast<size_t>(draft)] / total : 0;
  if (AcceptanceUniform(row.seed, row.output_position) < p_draft) {
    out->token = draft;
  } else {
    // (p - q)+ with q the point mass on the draft: p without the draft.
    if (p_draft > 0) p[static_cast<size_t>(draft)] = 0;
    const Draw draw(p.data(), vocab);
    out->token = draw.total() > 0 ? draw.Pick(Sampler::Uniform(row.seed, row.output_position)) : draft;
  }
  Sampler::FillLogprobs(row, vocab, out->token, out);
  return out->token == draft;
}

}  // namespace

std::vector<SampledToken> RejectionSample(std::span<const SamplerRow> rows, std::span<const int32_t> drafts,
                                          size_t vocab) {
  CHECK_EQ(rows.size(), drafts.size() + 1) << "one target row per draft plus the bonus row";
  std::vector<SampledToken> out;
  out.reserve(rows.size());
  for (size_t j = 0; j < drafts.size(); ++j) {
    const SamplerRow& row = rows[j];
    SampledToken t;
    bool accepted;
    // Sampling the target and comparing is exact too for a point-mass draft
    // (accepted with probability p(d)); greedy rows need it to stay argmax.
    if (Sampler::Greedy(*row.params) || row.grammar_mask != nullptr) {
      t = Sampler::SampleRow(row, vocab);
      accepted = t.token == drafts[j];
    } else {
      accepted = VerifyRandom(row, drafts[j], vocab, &t);
    }
    out.push_back(std::move(t));
    if (!accepted) return out;
  }
  out.push_back(Sampler::SampleRow(rows.back(), vocab));  // the bonus token
  return out;
}

}  // namespace llmserve::worker
