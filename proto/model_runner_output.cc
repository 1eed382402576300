#include "proto/model_runner_output.h"

namespace llmserve::proto {

void Pack(wire::Packer& p, const ModelRunnerOutput& v) {
  p.pack_array(5);
  wire::Pack(p, v.req_ids);
  wire::Pack(p, v.sampled_token_ids);
  wire::Pack(p, v.logprobs);
  wire::Pack(p, v.num_nans_in_logits);
  wire::Pack(p, v.error);
}

Status Read(const msgpack::object& o, std::string_view, ModelRunnerOutput* out) {
  wire::ArrayDecoder d(o, "ModelRunnerOutput");
  LLMSERVE_RETURN_IF_ERROR(d.Check(5));
  *out = ModelRunnerOutput();
  LLMSERVE_RETURN_IF_ERROR(d.Field("req_ids", &out->req_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("sampled_token_ids", &out->sampled_token_ids));
  LLMSERVE_RETURN_IF_ERROR(d.Field("logprobs", &out->logprobs));
  LLMSERVE_RETURN_IF_ERROR(d.Field("num_nans_in_logits", &out->num_nans_in_logits));
  LLMSERVE_RETURN_IF_ERROR(d.Field("error", &out->error));
  if (out->sampled_token_ids.size() != out->req_ids.size() ||
      (!out->logprobs.empty() && out->logprobs.size() != out->req_ids.size()))
    return Status::InvalidArgument("ModelRunnerOutput: parallel lists differ in length");
  return Status::Ok();
}

}  // namespace llmserve::proto
