#pragma once
// The rejection sampler of speculative decoding (vLLM V1's semantics), for
// drafts that come without draft probabilities (the n-gram proposer: the
// draft distribution q is a point mass on the draft token).
//
// A request that verifies drafts d_0..d_{k-1} has k + 1 target rows: row j
// holds the logits after the tokens up to d_{j-1}. Per position j:
//  - greedy: the target's token (the sampler's argmax) is emitted; if it is
//    not d_j, verification stops there. Outputs are therefore exactly those
//    of decoding one token at a time.
//  - random: d_j is accepted with probability p_j(d_j) (p/q with q = 1);
//    otherwise a token is drawn from (p_j - q)+ normalised, i.e. p_j without
//    d_j, and verification stops. Each emitted token is thus distributed as
//    p_j, as without speculation.
// When every draft is accepted the last row gives the bonus token, sampled
// as the sampler samples any row. Draws use counter-based uniforms keyed by
// (request seed, output position), separate streams for acceptance and for
// the recovered token, so a seeded request reproduces whatever the batch.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "worker/sampler.h"

namespace llmserve::worker {

// Verifies `drafts` against `rows` (drafts.size() + 1 rows, row j at output
// position output_position of row 0 plus j, with output_tokens including the
// drafts before j). Returns the emitted tokens: the accepted drafts, then the
// target's token at the first rejection or the bonus token (1 to k + 1
// tokens), with logprobs filled when the rows ask for them.
std::vector<SampledToken> RejectionSample(std::span<const SamplerRow> rows, std::span<const int32_t> drafts,
                                          size_t vocab);

// The uniform [0, 1) that decides acceptance of the draft at (seed, position).
double AcceptanceUniform(uint64_t seed, uint64_t position);

}  // namespace llmserve::worker
