#include "proto/sampling_params.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

namespace {

// A map keyed by vLLM's SamplingParams field names, defaults omitted.
struct SamplingParamsFields {
  static constexpr wire::Layout kLayout{
      .name = "SamplingParams", .shape = wire::Shape::kMap, .omit_defaults = true};
  template <typename S, typename F>  // S: SamplingParams, const or not
  void operator()(S& s, F&& field) const {
    field("n", s.n);
    field("presence_penalty", s.presence_penalty);
    field("frequency_penalty", s.frequency_penalty);
    field("repetition_penalty", s.repetition_penalty);
    field("temperature", s.temperature);
    field("top_p", s.top_p);
    field("top_k", s.top_k);
    field("min_p", s.min_p);
    field("seed", s.seed);
    field("stop", s.stop);
    field("stop_token_ids", s.stop_token_ids);
    field("ignore_eos", s.ignore_eos);
    field("max_tokens", s.max_tokens);
    field("min_tokens", s.min_tokens);
    field("logprobs", s.logprobs);
    field("prompt_logprobs", s.prompt_logprobs);
    field("detokenize", s.detokenize);
    field("skip_special_tokens", s.skip_special_tokens);
    field("spaces_between_special_tokens", s.spaces_between_special_tokens);
    field("include_stop_str_in_output", s.include_stop_str_in_output);
    field("output_kind", s.output_kind);
    field("structured_outputs", s.structured_outputs);
    field("logit_bias", s.logit_bias);
    field("allowed_token_ids", s.allowed_token_ids);
    field("_all_stop_token_ids", s.all_stop_token_ids);
    field("extra_args", s.extra_args);
  }
};

}  // namespace

void Pack(wire::Packer& p, const SamplingParams& v) { wire::PackStruct<SamplingParamsFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, SamplingParams* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<SamplingParamsFields>(o, out));
  const auto kind = static_cast<int32_t>(out->output_kind);
  if (kind < 0 || kind > 2) return Status::InvalidArgument("SamplingParams: output_kind out of range");
  return Status::Ok();
}

}  // namespace llmserve::proto
