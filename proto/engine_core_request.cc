#include "proto/engine_core_request.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

Status ParseRequestType(const void* frame, size_t size, RequestType* out) {
  if (size != 1) return Status::InvalidArgument("request type frame must be 1 byte, got " + std::to_string(size));
  uint8_t b = *static_cast<const uint8_t*>(frame);
  if (b > static_cast<uint8_t>(RequestType::kUtility))
    return Status::InvalidArgument("unknown request type byte " + std::to_string(b));
  *out = static_cast<RequestType>(b);
  return Status::Ok();
}

namespace {

// vLLM EngineCoreRequest's field order; positions we carry no data for are nil.
struct EngineCoreRequestFields {
  static constexpr wire::Layout kLayout{.name = "EngineCoreRequest", .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("request_id", s.request_id, wire::kRequired);
    field("prompt_token_ids", s.prompt_token_ids, wire::kRequired);
    field("mm_features", wire::Nil(), wire::kRequired);
    field("sampling_params", s.sampling_params, wire::kRequired);
    field("pooling_params", s.pooling_params, wire::kRequired);
    field("arrival_time", s.arrival_time, wire::kRequired);
    field("lora_request", s.lora_name);
    field("cache_salt", s.cache_salt);
    field("data_parallel_rank", s.data_parallel_rank);
    field("prompt_embeds", wire::Nil());
    field("prompt_is_token_ids", s.prompt_is_token_ids);
    field("client_index", s.client_index);
    field("current_wave", s.current_wave);
    field("priority", s.priority);
    // vLLM's fields past priority; nil ones are accepted from a peer, never written by us.
    field("trace_headers", wire::Nil());
    field("resumable", wire::Nil());
    field("external_req_id", wire::Nil());
    field("reasoning_ended", s.reasoning_ended);
    field("reasoning_parser_kwargs", wire::Nil());
    field("abort_immediately", wire::Nil());
  }
};

// vLLM: (client_index, call_id, method_name, args).
struct UtilityRequestFields {
  static constexpr wire::Layout kLayout{.name = "UtilityRequest"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("client_index", s.client_index);
    field("call_id", s.call_id);
    field("method_name", s.method);
    field("args", s.args);
  }
};

struct StartDpWaveFields {
  static constexpr wire::Layout kLayout{.name = "StartDpWave"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("wave", s.wave);
    field("exclude_engine_index", s.exclude_engine_index);
  }
};

}  // namespace

void Pack(wire::Packer& p, const EngineCoreRequest& v) { wire::PackStruct<EngineCoreRequestFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, EngineCoreRequest* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<EngineCoreRequestFields>(o, out));
  if (out->request_id.empty()) return Status::InvalidArgument("EngineCoreRequest: empty request_id");
  return Status::Ok();
}

void Pack(wire::Packer& p, const UtilityRequest& v) { wire::PackStruct<UtilityRequestFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, UtilityRequest* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<UtilityRequestFields>(o, out));
  if (out->method.empty()) return Status::InvalidArgument("UtilityRequest: empty method name");
  return Status::Ok();
}

void Pack(wire::Packer& p, const StartDpWave& v) { wire::PackStruct<StartDpWaveFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, StartDpWave* out) {
  return wire::ReadStruct<StartDpWaveFields>(o, out);
}

}  // namespace llmserve::proto
