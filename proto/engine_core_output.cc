#include "proto/engine_core_output.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
    case FinishReason::kError: return "error";
  }
  return "error";
}

namespace {

// vLLM's prefill_stats, where num_cached_tokens travels.
struct PrefillStats {
  int32_t num_cached_tokens = 0;
  bool operator==(const PrefillStats&) const = default;
};

struct PrefillStatsFields {
  static constexpr wire::Layout kLayout{
      .name = "prefill_stats", .shape = wire::Shape::kMap, .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("num_cached_tokens", s.num_cached_tokens);
  }
};

void Pack(wire::Packer& p, const PrefillStats& v) { wire::PackStruct<PrefillStatsFields>(p, v); }
Status Read(const msgpack::object& o, std::string_view, PrefillStats* out) {
  return wire::ReadStruct<PrefillStatsFields>(o, out);
}

// EngineCoreOutput's stop_reason position: the stop token id (int), the stop
// string (str) or nil.
template <typename Output>  // EngineCoreOutput, const or not
struct StopReason {
  explicit StopReason(Output& o) : output(o) {}
  Output& output;
};

void Pack(wire::Packer& p, const StopReason<const EngineCoreOutput>& r) {
  if (r.output.stop_string) wire::Pack(p, *r.output.stop_string);
  else wire::Pack(p, r.output.stop_token_id);
}
Status Read(const msgpack::object& o, std::string_view field, StopReason<EngineCoreOutput>* r) {
  if (o.type == msgpack::type::STR) return wire::Read(o, field, &r->output.stop_string.emplace());
  return wire::Read(o, field, &r->output.stop_token_id);
}

// EngineCoreOutput's prefill_stats position: nil, or {num_cached_tokens} when
// prompt tokens came from the prefix cache.
template <typename Output>
struct PrefillStatsOf {
  explicit PrefillStatsOf(Output& o) : output(o) {}
  Output& output;
};

void Pack(wire::Packer& p, const PrefillStatsOf<const EngineCoreOutput>& r) {
  if (r.output.num_cached_tokens == 0) p.pack_nil();
  else Pack(p, PrefillStats{r.output.num_cached_tokens});
}
Status Read(const msgpack::object& o, std::string_view field, PrefillStatsOf<EngineCoreOutput>* r) {
  std::optional<PrefillStats> stats;
  LLMSERVE_RETURN_IF_ERROR(wire::Read(o, field, &stats));
  r->output.num_cached_tokens = stats ? stats->num_cached_tokens : 0;
  return Status::Ok();
}

// vLLM LogprobsLists: [logprob_token_ids, logprobs, sampled_token_ranks].
struct LogprobsFields {
  static constexpr wire::Layout kLayout{.name = "Logprobs"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("logprob_token_ids", s.token_ids);
    field("logprobs", s.logprobs);
    field("sampled_token_ranks", s.sampled_token_ranks);
  }
};

struct EngineCoreEventFields {
  static constexpr wire::Layout kLayout{
      .name = "EngineCoreEvent", .shape = wire::Shape::kMap, .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("type", s.type);
    field("timestamp", s.timestamp);
  }
};

// vLLM EngineCoreOutput's field order; positions we carry no data for are nil.
struct EngineCoreOutputFields {
  static constexpr wire::Layout kLayout{.name = "EngineCoreOutput", .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    int32_t num_nans_in_logits = 0;  // not carried: written as 0, read to check its type
    field("request_id", s.request_id, wire::kRequired);
    field("new_token_ids", s.new_token_ids, wire::kRequired);
    field("new_logprobs", s.new_logprobs);
    field("new_prompt_logprobs_tensors", s.new_prompt_logprobs);
    field("pooling_output", s.pooling_output);
    field("finish_reason", s.finish_reason);
    field("stop_reason", StopReason(s));
    field("events", wire::NilOrList(s.events));
    field("kv_transfer_params", s.kv_transfer_params);
    field("trace_headers", wire::Nil());
    field("prefill_stats", PrefillStatsOf(s));
    field("routed_experts", wire::Nil());
    field("num_nans_in_logits", num_nans_in_logits);
    field("error_code", s.error_code);  // our extension
    field("error_message", s.error_message);
  }
};

struct SpecDecodingStatsFields {
  static constexpr wire::Layout kLayout{.name = "SpecDecodingStats", .shape = wire::Shape::kMap};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("num_spec_tokens", s.num_spec_tokens);
    field("num_drafts", s.num_drafts);
    field("num_draft_tokens", s.num_draft_tokens);
    field("num_accepted_tokens", s.num_accepted_tokens);
    field("num_accepted_tokens_per_pos", s.num_accepted_tokens_per_pos);
  }
};

struct SchedulerStatsFields {
  static constexpr wire::Layout kLayout{
      .name = "SchedulerStats", .shape = wire::Shape::kMap, .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("num_running_reqs", s.num_running_reqs);
    field("num_waiting_reqs", s.num_waiting_reqs);
    field("num_waiting_tokens", s.num_waiting_tokens);
    field("kv_cache_usage", s.kv_cache_usage);
    field("prefix_cache_queries", s.prefix_cache_queries);
    field("prefix_cache_hits", s.prefix_cache_hits);
    field("num_preemptions", s.num_preemptions);
    field("step_counter", s.step_counter);
    field("current_wave", s.current_wave);
    field("iteration_tokens", s.iteration_tokens);
    field("spec_decoding_stats", s.spec_decoding_stats);
  }
};

struct UtilityOutputFields {
  static constexpr wire::Layout kLayout{.name = "UtilityOutput"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("call_id", s.call_id);
    field("failure_message", s.failure_message);
    field("result", s.result);
  }
};

struct EngineCoreOutputsFields {
  static constexpr wire::Layout kLayout{.name = "EngineCoreOutputs", .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("engine_index", s.engine_index);
    field("outputs", s.outputs);
    field("scheduler_stats", s.scheduler_stats);
    field("timestamp", s.timestamp);
    field("utility_output", s.utility_output);
    field("finished_requests", s.finished_requests);
    field("wave_complete", s.wave_complete);
    field("start_wave", s.start_wave);
  }
};

}  // namespace

void Pack(wire::Packer& p, const Logprobs& v) { wire::PackStruct<LogprobsFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, Logprobs* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<LogprobsFields>(o, out));
  if (out->token_ids.size() != out->logprobs.size() ||
      out->token_ids.size() != out->sampled_token_ranks.size())
    return Status::InvalidArgument("Logprobs: rows of token_ids, logprobs and ranks differ");
  for (size_t i = 0; i < out->token_ids.size(); ++i)
    if (out->token_ids[i].size() != out->logprobs[i].size())
      return Status::InvalidArgument("Logprobs: row " + std::to_string(i) + " has mismatched widths");
  return Status::Ok();
}

void Pack(wire::Packer& p, const EngineCoreEvent& v) { wire::PackStruct<EngineCoreEventFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, EngineCoreEvent* out) {
  return wire::ReadStruct<EngineCoreEventFields>(o, out);
}

void Pack(wire::Packer& p, const EngineCoreOutput& v) { wire::PackStruct<EngineCoreOutputFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, EngineCoreOutput* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<EngineCoreOutputFields>(o, out));
  if (out->finish_reason && (static_cast<int32_t>(*out->finish_reason) < 0 ||
                             static_cast<int32_t>(*out->finish_reason) > 3))
    return Status::InvalidArgument("EngineCoreOutput: finish_reason out of range");
  if (out->error_code && (static_cast<int>(*out->error_code) < 0 ||
                          static_cast<int>(*out->error_code) > static_cast<int>(StatusCode::kInternal)))
    return Status::InvalidArgument("EngineCoreOutput: error_code out of range");
  return Status::Ok();
}

void Pack(wire::Packer& p, const SpecDecodingStats& v) { wire::PackStruct<SpecDecodingStatsFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, SpecDecodingStats* out) {
  return wire::ReadStruct<SpecDecodingStatsFields>(o, out);
}

void Pack(wire::Packer& p, const SchedulerStats& v) { wire::PackStruct<SchedulerStatsFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, SchedulerStats* out) {
  return wire::ReadStruct<SchedulerStatsFields>(o, out);
}

void Pack(wire::Packer& p, const UtilityOutput& v) { wire::PackStruct<UtilityOutputFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, UtilityOutput* out) {
  return wire::ReadStruct<UtilityOutputFields>(o, out);
}

void Pack(wire::Packer& p, const EngineCoreOutputs& v) { wire::PackStruct<EngineCoreOutputsFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, EngineCoreOutputs* out) {
  return wire::ReadStruct<EngineCoreOutputsFields>(o, out);
}

}  // namespace llmserve::proto
