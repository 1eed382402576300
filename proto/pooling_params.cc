#include "proto/pooling_params.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

namespace {

struct PoolingParamsFields {
  static constexpr wire::Layout kLayout{.name = "PoolingParams", .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("truncate_prompt_tokens", wire::Nil());  // the frontend truncates before tokens reach the engine
    field("dimensions", s.dimensions);
    field("normalize", s.normalize);
    field("activation", wire::Nil());
    field("softmax", wire::Nil());
    field("step_tag_id", wire::Nil());
    field("returned_token_ids", wire::Nil());
    field("task", s.task);
  }
};

}  // namespace

void Pack(wire::Packer& p, const PoolingParams& v) { wire::PackStruct<PoolingParamsFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, PoolingParams* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<PoolingParamsFields>(o, out));
  if (out->task != "embed") return Status::InvalidArgument("PoolingParams: unsupported task '" + out->task + "'");
  if (out->dimensions && *out->dimensions < 1) return Status::InvalidArgument("PoolingParams: dimensions < 1");
  return Status::Ok();
}

}  // namespace llmserve::proto
