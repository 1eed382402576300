#include "proto/engine_core_output.h"

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

// ---- Logprobs: [token_ids, logprobs, sampled_token_ranks] ----------------------
void Pack(wire::Packer& p, const Logprobs& v) {
  p.pack_array(3);
  wire::Pack(p, v.token_ids);
  wire::Pack(p, v.logprobs);
  wire::Pack(p, v.sampled_token_ranks);
}

Status Read(const msgpack::object& o, std::string_view, Logprobs* out) {
  wire::ArrayDecoder d(o, "Logprobs");
  LLMSERVE_RETURN_IF_ERROR(d.Check(3));
  *out = Logprobs();
  LLMSERVE_RETURN_IF_ERROR(d.Field("logprob_token_ids", &out->token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("logprobs", &out->logprobs));
  LLMSERVE_RETURN_IF_ERROR(d.Field("sampled_token_ranks", &out->sampled_token_ranks));
  if (out->token_ids.size() != out->logprobs.size() ||
      out->token_ids.size() != out->sampled_token_ranks.size())
    return Status::InvalidArgument("Logprobs: rows of token_ids, logprobs and ranks differ");
  for (size_t i = 0; i < out->token_ids.size(); ++i)
    if (out->token_ids[i].size() != out->logprobs[i].size())
      return Status::InvalidArgument("Logprobs: row " + std::to_string(i) + " has mismatched widths");
  return Status::Ok();
}

// ---- EngineCoreEvent: map {type, timestamp} ------------------------------------
namespace {
struct VisitEvent {
  template <typename S, typename V>
  void operator()(S& s, V&& v) const {
    v("type", s.type);
    v("timestamp", s.timestamp);
  }
};
}  // namespace

void Pack(wire::Packer& p, const EngineCoreEvent& v) { wire::PackMap(p, v, VisitEvent()); }
Status Read(const msgpack::object& o, std::string_view, EngineCoreEvent* out) {
  return wire::ReadMap(o, "EngineCoreEvent", out, VisitEvent());
}

// ---- EngineCoreOutput: array in vLLM's field order -----------------------------
// request_id, new_token_ids, new_logprobs, new_prompt_logprobs_tensors,
// pooling_output, finish_reason, stop_reason (int | str), events,
// kv_transfer_params, trace_headers, prefill_stats {num_cached_tokens}, ...
namespace {
struct PrefillStats {
  int32_t num_cached_tokens = 0;
  bool operator==(const PrefillStats&) const = default;
};
struct VisitPrefillStats {
  template <typename S, typename V>
  void operator()(S& s, V&& v) const { v("num_cached_tokens", s.num_cached_tokens); }
};
void Pack(wire::Packer& p, const PrefillStats& v) { wire::PackMap(p, v, VisitPrefillStats()); }
Status Read(const msgpack::object& o, std::string_view, PrefillStats* out) {
  return wire::ReadMap(o, "prefill_stats", out, VisitPrefillStats());
}
}  // namespace

void Pack(wire::Packer& p, const EngineCoreOutput& v) {
  const std::optional<int32_t> none;
  wire::ArrayEncoder e;
  e.Field(v.request_id, false);
  e.Field(v.new_token_ids, false);
  e.Field(v.new_logprobs, !v.new_logprobs);
  e.Field(none, true);  // new_prompt_logprobs_tensors
  e.Field(none, true);  // pooling_output
  e.Field(v.finish_reason, !v.finish_reason);
  if (v.stop_string) e.Field(*v.stop_string, false);
  else e.Field(v.stop_token_id, !v.stop_token_id);
  e.Field(v.events, v.events.empty());
  e.Field(none, true);  // kv_transfer_params
  e.Field(none, true);  // trace_headers
  std::optional<PrefillStats> prefill;
  if (v.num_cached_tokens != 0) prefill = PrefillStats{v.num_cached_tokens};
  e.Field(prefill, !prefill);
  e.Field(none, true);  // routed_experts
  e.Field(int32_t{0}, true);  // num_nans_in_logits
  e.Field(v.error_code, !v.error_code);
  e.Field(v.error_message, !v.error_message);
  e.Finish(p);
}

Status Read(const msgpack::object& o, std::string_view, EngineCoreOutput* out) {
  *out = EngineCoreOutput();
  wire::ArrayDecoder d(o, "EngineCoreOutput");
  LLMSERVE_RETURN_IF_ERROR(d.Check(15));
  LLMSERVE_RETURN_IF_ERROR(d.Field("request_id", &out->request_id));
  LLMSERVE_RETURN_IF_ERROR(d.Field("new_token_ids", &out->new_token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("new_logprobs", &out->new_logprobs));
  d.Skip();
  d.Skip();
  LLMSERVE_RETURN_IF_ERROR(d.Field("finish_reason", &out->finish_reason));
  if (out->finish_reason && (static_cast<int32_t>(*out->finish_reason) < 0 ||
                             static_cast<int32_t>(*out->finish_reason) > 3))
    return Status::InvalidArgument("EngineCoreOutput: finish_reason out of range");
  // stop_reason is an int (token id), a str (stop string) or nil.
  const msgpack::object* items = o.via.array.ptr;
  if (o.via.array.size > 6 && items[6].type == msgpack::type::STR) {
    out->stop_string.emplace(items[6].via.str.ptr, items[6].via.str.size);
    d.Skip();
  } else {
    LLMSERVE_RETURN_IF_ERROR(d.Field("stop_reason", &out->stop_token_id));
  }
  std::optional<std::vector<EngineCoreEvent>> events;
  LLMSERVE_RETURN_IF_ERROR(d.Field("events", &events));
  if (events) out->events = std::move(*events);
  d.Skip();
  d.Skip();
  std::optional<PrefillStats> prefill;
  LLMSERVE_RETURN_IF_ERROR(d.Field("prefill_stats", &prefill));
  if (prefill) out->num_cached_tokens = prefill->num_cached_tokens;
  d.Skip();  // routed_experts
  int32_t nans = 0;
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_nans_in_logits", &nans));
  LLMSERVE_RETURN_IF_ERROR(d.Field("error_code", &out->error_code));
  if (out->error_code && (static_cast<int>(*out->error_code) < 0 ||
                          static_cast<int>(*out->error_code) > static_cast<int>(StatusCode::kInternal)))
    return Status::InvalidArgument("EngineCoreOutput: error_code out of range");
  return d.Field("error_message", &out->error_message);
}

// ---- SchedulerStats: map ----------------------------------------------------------
namespace {
struct VisitSchedulerStats {
  template <typename S, typename V>
  void operator()(S& s, V&& v) const {
    v("num_running_reqs", s.num_running_reqs);
    v("num_waiting_reqs", s.num_waiting_reqs);
    v("num_waiting_tokens", s.num_waiting_tokens);
    v("kv_cache_usage", s.kv_cache_usage);
    v("prefix_cache_queries", s.prefix_cache_queries);
    v("prefix_cache_hits", s.prefix_cache_hits);
    v("num_preemptions", s.num_preemptions);
    v("step_counter", s.step_counter);
    v("current_wave", s.current_wave);
    v("iteration_tokens", s.iteration_tokens);
  }
};
}  // namespace

void Pack(wire::Packer& p, const SchedulerStats& v) { wire::PackMap(p, v, VisitSchedulerStats()); }
Status Read(const msgpack::object& o, std::string_view, SchedulerStats* out) {
  return wire::ReadMap(o, "SchedulerStats", out, VisitSchedulerStats());
}

// ---- UtilityOutput: [call_id, failure_message, result] --------------------------
void Pack(wire::Packer& p, const UtilityOutput& v) {
  p.pack_array(3);
  wire::Pack(p, v.call_id);
  wire::Pack(p, v.failure_message);
  wire::Pack(p, v.result);
}

Status Read(const msgpack::object& o, std::string_view, UtilityOutput* out) {
  wire::ArrayDecoder d(o, "UtilityOutput");
  LLMSERVE_RETURN_IF_ERROR(d.Check(3));
  *out = UtilityOutput();
  LLMSERVE_RETURN_IF_ERROR(d.Field("call_id", &out->call_id));
  LLMSERVE_RETURN_IF_ERROR(d.Field("failure_message", &out->failure_message));
  return d.Field("result", &out->result);
}

// ---- EngineCoreOutputs: array ------------------------------------------------------
void Pack(wire::Packer& p, const EngineCoreOutputs& v) {
  wire::ArrayEncoder e;
  e.Field(v.engine_index, v.engine_index == 0);
  e.Field(v.outputs, v.outputs.empty());
  e.Field(v.scheduler_stats, !v.scheduler_stats);
  e.Field(v.timestamp, v.timestamp == 0.0);
  e.Field(v.utility_output, !v.utility_output);
  e.Field(v.finished_requests, !v.finished_requests);
  e.Field(v.wave_complete, !v.wave_complete);
  e.Field(v.start_wave, !v.start_wave);
  e.Finish(p);
}

Status Read(const msgpack::object& o, std::string_view, EngineCoreOutputs* out) {
  *out = EngineCoreOutputs();
  wire::ArrayDecoder d(o, "EngineCoreOutputs");
  LLMSERVE_RETURN_IF_ERROR(d.Check(8));
  LLMSERVE_RETURN_IF_ERROR(d.Field("engine_index", &out->engine_index));
  LLMSERVE_RETURN_IF_ERROR(d.Field("outputs", &out->outputs));
  LLMSERVE_RETURN_IF_ERROR(d.Field("scheduler_stats", &out->scheduler_stats));
  LLMSERVE_RETURN_IF_ERROR(d.Field("timestamp", &out->timestamp));
  LLMSERVE_RETURN_IF_ERROR(d.Field("utility_output", &out->utility_output));
  LLMSERVE_RETURN_IF_ERROR(d.Field("finished_requests", &out->finished_requests));
  LLMSERVE_RETURN_IF_ERROR(d.Field("wave_complete", &out->wave_complete));
  return d.Field("start_wave", &out->start_wave);
}

}  // namespace llmserve::proto
