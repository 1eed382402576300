#pragma once
// vLLM's `use_beam_search` and `length_penalty` on /v1/completions and
// /v1/chat/completions, and the fields that cannot go with them.
//
// vLLM's beam search (BeamSearchParams) honours n (the beam width),
// max_tokens, temperature, ignore_eos, include_stop_str_in_output and
// length_penalty (and logprobs, from the rows the beams grew from), and
// ignores the other sampling fields. Rather than ignore them silently, a
// beam-search request that sets one of them to anything but its neutral
// value is a 400 naming it: stream on completions (vLLM refuses it too; chat
// streams, as in vLLM), stop, stop_token_ids, min_tokens, top_p,
// top_k, min_p, the penalties, logit_bias, allowed_token_ids, and structured
// outputs (response_format, structured_outputs, guided_*, a required or
// named tool_choice). Each step asks the engine for 2 × n logprobs, so n is
// capped at --max-logprobs / 2, as vLLM's logprobs check caps it.
// length_penalty other than 1 without beam search is a 400 too.

#include "frontend/openai/json_fields.h"
#include "frontend/openai/sampling_request.h"

namespace llmserve::frontend::openai {

// Reads use_beam_search and length_penalty into `out`, then checks that the
// rest of `out` (read already) goes with them; `stream_allowed`: chat.
MaybeError ReadBeamSearchFields(FieldReader& reader, const ParseOptions& options, bool stream_allowed,
                                SamplingRequest* out);

}  // namespace llmserve::frontend::openai
