#include "proto/scheduler_output.h"

namespace llmserve::proto {

void Pack(wire::Packer& p, const NewRequestData& v) {
  p.pack_array(6);
  wire::Pack(p, v.req_id);
  wire::Pack(p, v.prompt_token_ids);
  Pack(p, v.sampling_params);
  wire::Pack(p, v.block_ids);
  wire::Pack(p, v.num_computed_tokens);
  wire::Pack(p, v.lora_name);
}

Status Read(const msgpack::object& o, std::string_view, NewRequestData* out) {
  wire::ArrayDecoder d(o, "NewRequestData");
  LLMSERVE_RETURN_IF_ERROR(d.Check(6));
  *out = NewRequestData();
  LLMSERVE_RETURN_IF_ERROR(d.Field("req_id", &out->req_id));
  LLMSERVE_RETURN_IF_ERROR(d.Field("prompt_token_ids", &out->prompt_token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("sampling_params", &out->sampling_params));
  LLMSERVE_RETURN_IF_ERROR(d.Field("block_ids", &out->block_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_computed_tokens", &out->num_computed_tokens));
  return d.Field("lora_request", &out->lora_name);
}

void Pack(wire::Packer& p, const CachedRequestData& v) {
  p.pack_array(7);
  wire::Pack(p, v.req_ids);
  wire::Pack(p, v.resumed_req_ids);
  wire::Pack(p, v.new_token_ids);
  wire::Pack(p, v.all_token_ids);
  wire::Pack(p, v.new_block_ids);
  wire::Pack(p, v.num_computed_tokens);
  wire::Pack(p, v.num_output_tokens);
}

Status Read(const msgpack::object& o, std::string_view, CachedRequestData* out) {
  wire::ArrayDecoder d(o, "CachedRequestData");
  LLMSERVE_RETURN_IF_ERROR(d.Check(7));
  *out = CachedRequestData();
  LLMSERVE_RETURN_IF_ERROR(d.Field("req_ids", &out->req_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("resumed_req_ids", &out->resumed_req_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("new_token_ids", &out->new_token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("all_token_ids", &out->all_token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("new_block_ids", &out->new_block_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_computed_tokens", &out->num_computed_tokens));
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_output_tokens", &out->num_output_tokens));
  const size_t n = out->req_ids.size();
  if (out->new_block_ids.size() != n || out->num_computed_tokens.size() != n ||
      out->num_output_tokens.size() != n || (!out->new_token_ids.empty() && out->new_token_ids.size() != n))
    return Status::InvalidArgument("CachedRequestData: parallel lists differ in length");
  return Status::Ok();
}

void Pack(wire::Packer& p, const SchedulerOutput& v) {
  p.pack_array(8);
  wire::Pack(p, v.scheduled_new_reqs);
  Pack(p, v.scheduled_cached_reqs);
  wire::Pack(p, v.num_scheduled_tokens);
  wire::Pack(p, v.total_num_scheduled_tokens);
  wire::Pack(p, v.scheduled_spec_decode_tokens);
  wire::Pack(p, v.num_common_prefix_blocks);
  wire::Pack(p, v.finished_req_ids);
  wire::Pack(p, v.preempted_req_ids);
}

Status Read(const msgpack::object& o, std::string_view, SchedulerOutput* out) {
  wire::ArrayDecoder d(o, "SchedulerOutput");
  LLMSERVE_RETURN_IF_ERROR(d.Check(8));
  *out = SchedulerOutput();
  LLMSERVE_RETURN_IF_ERROR(d.Field("scheduled_new_reqs", &out->scheduled_new_reqs));
  LLMSERVE_RETURN_IF_ERROR(d.Field("scheduled_cached_reqs", &out->scheduled_cached_reqs));
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_scheduled_tokens", &out->num_scheduled_tokens));
  LLMSERVE_RETURN_IF_ERROR(d.Field("total_num_scheduled_tokens", &out->total_num_scheduled_tokens));
  LLMSERVE_RETURN_IF_ERROR(d.Field("scheduled_spec_decode_tokens", &out->scheduled_spec_decode_tokens));
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_common_prefix_blocks", &out->num_common_prefix_blocks));
  LLMSERVE_RETURN_IF_ERROR(d.Field("finished_req_ids", &out->finished_req_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("preempted_req_ids", &out->preempted_req_ids));
  int64_t total = 0;
  for (const auto& [id, n] : out->num_scheduled_tokens) {
    if (n < 0) return Status::InvalidArgument("SchedulerOutput: negative token count for " + id);
    total += n;
  }
  if (total != out->total_num_scheduled_tokens)
    return Status::InvalidArgument("SchedulerOutput: total_num_scheduled_tokens does not match the map");
  return Status::Ok();
}

}  // namespace llmserve::proto
