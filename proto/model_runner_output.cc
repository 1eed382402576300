#include "proto/model_runner_output.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

namespace {

// vLLM KVConnectorOutput's order (0.11); the stats are not carried.
struct KVConnectorOutputFields {
  static constexpr wire::Layout kLayout{.name = "KVConnectorOutput"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("finished_sending", wire::NilOrList(s.finished_sending));
    field("finished_recving", wire::NilOrList(s.finished_recving));
    field("kv_connector_stats", wire::Nil());
    field("invalid_block_ids", s.invalid_block_ids);
  }
};

struct ModelRunnerOutputFields {
  static constexpr wire::Layout kLayout{.name = "ModelRunnerOutput"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("req_ids", s.req_ids);
    field("sampled_token_ids", s.sampled_token_ids);
    field("logprobs", s.logprobs);
    field("num_nans_in_logits", s.num_nans_in_logits);
    field("error", s.error);
    field("prompt_logprobs_dict", s.prompt_logprobs);
    field("pooler_output", s.pooler_output);
    field("kv_connector_output", s.kv_connector_output);
  }
};

}  // namespace

void Pack(wire::Packer& p, const KVConnectorOutput& v) { wire::PackStruct<KVConnectorOutputFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, KVConnectorOutput* out) {
  return wire::ReadStruct<KVConnectorOutputFields>(o, out);
}

void Pack(wire::Packer& p, const ModelRunnerOutput& v) { wire::PackStruct<ModelRunnerOutputFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, ModelRunnerOutput* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<ModelRunnerOutputFields>(o, out));
  if (out->sampled_token_ids.size() != out->req_ids.size() ||
      (!out->logprobs.empty() && out->logprobs.size() != out->req_ids.size()))
    return Status::InvalidArgument("ModelRunnerOutput: parallel lists differ in length");
  return Status::Ok();
}

}  // namespace llmserve::proto
