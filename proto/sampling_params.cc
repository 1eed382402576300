#include "proto/sampling_params.h"

namespace llmserve::proto {

namespace {

// One field list drives both directions so the two cannot drift apart.
struct VisitSamplingParams {
  template <typename S, typename Visitor>  // S: SamplingParams, const or not
  void operator()(S& s, Visitor&& v) const {
    v("n", s.n);
    v("presence_penalty", s.presence_penalty);
    v("frequency_penalty", s.frequency_penalty);
    v("repetition_penalty", s.repetition_penalty);
    v("temperature", s.temperature);
    v("top_p", s.top_p);
    v("top_k", s.top_k);
    v("min_p", s.min_p);
    v("seed", s.seed);
    v("stop", s.stop);
    v("stop_token_ids", s.stop_token_ids);
    v("ignore_eos", s.ignore_eos);
    v("max_tokens", s.max_tokens);
    v("min_tokens", s.min_tokens);
    v("logprobs", s.logprobs);
    v("prompt_logprobs", s.prompt_logprobs);
    v("detokenize", s.detokenize);
    v("skip_special_tokens", s.skip_special_tokens);
    v("spaces_between_special_tokens", s.spaces_between_special_tokens);
    v("include_stop_str_in_output", s.include_stop_str_in_output);
    v("output_kind", s.output_kind);
    v("logit_bias", s.logit_bias);
    v("allowed_token_ids", s.allowed_token_ids);
    v("_all_stop_token_ids", s.all_stop_token_ids);
  }
};

}  // namespace

void Pack(wire::Packer& p, const SamplingParams& v) { wire::PackMap(p, v, VisitSamplingParams()); }

Status Read(const msgpack::object& o, std::string_view, SamplingParams* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadMap(o, "SamplingParams", out, VisitSamplingParams()));
  const auto kind = static_cast<int32_t>(out->output_kind);
  if (kind < 0 || kind > 2) return Status::InvalidArgument("SamplingParams: output_kind out of range");
  return Status::Ok();
}

}  // namespace llmserve::proto
