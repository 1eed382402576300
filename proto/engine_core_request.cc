#include "proto/engine_core_request.h"

namespace llmserve::proto {

Status ParseRequestType(const void* frame, size_t size, RequestType* out) {
  if (size != 1) return Status::InvalidArgument("request type frame must be 1 byte, got " + std::to_string(size));
  uint8_t b = *static_cast<const uint8_t*>(frame);
  if (b > static_cast<uint8_t>(RequestType::kUtility))
    return Status::InvalidArgument("unknown request type byte " + std::to_string(b));
  *out = static_cast<RequestType>(b);
  return Status::Ok();
}

void Pack(wire::Packer& p, const EngineCoreRequest& v) {
  static const EngineCoreRequest d;
  const std::optional<int32_t> none;
  wire::ArrayEncoder e;
  e.Field(v.request_id, false);
  e.Field(v.prompt_token_ids, false);
  e.Field(none, true);  // mm_features
  e.Field(v.sampling_params, false);
  e.Field(none, true);  // pooling_params
  e.Field(v.arrival_time, false);
  e.Field(v.lora_name, v.lora_name == d.lora_name);
  e.Field(v.cache_salt, v.cache_salt == d.cache_salt);
  e.Field(v.data_parallel_rank, v.data_parallel_rank == d.data_parallel_rank);
  e.Field(none, true);  // prompt_embeds
  e.Field(v.prompt_is_token_ids, v.prompt_is_token_ids == d.prompt_is_token_ids);
  e.Field(v.client_index, v.client_index == d.client_index);
  e.Field(v.current_wave, v.current_wave == d.current_wave);
  e.Field(v.priority, v.priority == d.priority);
  e.Finish(p);
}

Status Read(const msgpack::object& o, std::string_view, EngineCoreRequest* out) {
  *out = EngineCoreRequest();
  wire::ArrayDecoder d(o, "EngineCoreRequest");
  // vLLM's struct has 20 fields; ones past priority are accepted and ignored.
  LLMSERVE_RETURN_IF_ERROR(d.Check(20));
  LLMSERVE_RETURN_IF_ERROR(d.Field("request_id", &out->request_id));
  LLMSERVE_RETURN_IF_ERROR(d.Field("prompt_token_ids", &out->prompt_token_ids));
  d.Skip();  // mm_features
  LLMSERVE_RETURN_IF_ERROR(d.Field("sampling_params", &out->sampling_params));
  d.Skip();  // pooling_params
  LLMSERVE_RETURN_IF_ERROR(d.Field("arrival_time", &out->arrival_time));
  LLMSERVE_RETURN_IF_ERROR(d.Field("lora_request", &out->lora_name));
  LLMSERVE_RETURN_IF_ERROR(d.Field("cache_salt", &out->cache_salt));
  LLMSERVE_RETURN_IF_ERROR(d.Field("data_parallel_rank", &out->data_parallel_rank));
  d.Skip();  // prompt_embeds
  LLMSERVE_RETURN_IF_ERROR(d.Field("prompt_is_token_ids", &out->prompt_is_token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("client_index", &out->client_index));
  LLMSERVE_RETURN_IF_ERROR(d.Field("current_wave", &out->current_wave));
  LLMSERVE_RETURN_IF_ERROR(d.Field("priority", &out->priority));
  if (out->request_id.empty()) return Status::InvalidArgument("EngineCoreRequest: empty request_id");
  return Status::Ok();
}

void Pack(wire::Packer& p, const UtilityRequest& v) {
  p.pack_array(4);
  wire::Pack(p, v.client_index);
  wire::Pack(p, v.call_id);
  wire::Pack(p, v.method);
  wire::Pack(p, v.args);
}

Status Read(const msgpack::object& o, std::string_view, UtilityRequest* out) {
  wire::ArrayDecoder d(o, "UtilityRequest");
  LLMSERVE_RETURN_IF_ERROR(d.Check(4));
  *out = UtilityRequest();
  LLMSERVE_RETURN_IF_ERROR(d.Field("client_index", &out->client_index));
  LLMSERVE_RETURN_IF_ERROR(d.Field("call_id", &out->call_id));
  LLMSERVE_RETURN_IF_ERROR(d.Field("method_name", &out->method));
  LLMSERVE_RETURN_IF_ERROR(d.Field("args", &out->args));
  if (out->method.empty()) return Status::InvalidArgument("UtilityRequest: empty method name");
  return Status::Ok();
}

void Pack(wire::Packer& p, const StartDpWave& v) {
  p.pack_array(2);
  wire::Pack(p, v.wave);
  wire::Pack(p, v.exclude_engine_index);
}

Status Read(const msgpack::object& o, std::string_view, StartDpWave* out) {
  wire::ArrayDecoder d(o, "StartDpWave");
  LLMSERVE_RETURN_IF_ERROR(d.Check(2));
  *out = StartDpWave();
  LLMSERVE_RETURN_IF_ERROR(d.Field("wave", &out->wave));
  return d.Field("exclude_engine_index", &out->exclude_engine_index);
}

}  // namespace llmserve::proto
