#include "proto/scheduler_output.h"

#include <bit>
#include <cstring>

#include "proto/wire_struct.h"

namespace llmserve::proto {

namespace {

// vLLM NewRequestData's order, for the fields we carry.
struct NewRequestDataFields {
  static constexpr wire::Layout kLayout{.name = "NewRequestData"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("req_id", s.req_id);
    field("prompt_token_ids", s.prompt_token_ids);
    field("sampling_params", s.sampling_params);
    field("block_ids", s.block_ids);
    field("num_computed_tokens", s.num_computed_tokens);
    field("lora_request", s.lora_name);
    field("pooling_params", s.pooling_params);
  }
};

struct CachedRequestDataFields {
  static constexpr wire::Layout kLayout{.name = "CachedRequestData"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("req_ids", s.req_ids);
    field("resumed_req_ids", s.resumed_req_ids);
    field("new_token_ids", s.new_token_ids);
    field("all_token_ids", s.all_token_ids);
    field("new_block_ids", s.new_block_ids);
    field("num_computed_tokens", s.num_computed_tokens);
    field("num_output_tokens", s.num_output_tokens);
  }
};

struct SchedulerOutputFields {
  static constexpr wire::Layout kLayout{.name = "SchedulerOutput"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("scheduled_new_reqs", s.scheduled_new_reqs);
    field("scheduled_cached_reqs", s.scheduled_cached_reqs);
    field("num_scheduled_tokens", s.num_scheduled_tokens);
    field("total_num_scheduled_tokens", s.total_num_scheduled_tokens);
    field("scheduled_spec_decode_tokens", s.scheduled_spec_decode_tokens);
    field("num_common_prefix_blocks", s.num_common_prefix_blocks);
    field("finished_req_ids", s.finished_req_ids);
    field("preempted_req_ids", s.preempted_req_ids);
    field("structured_output_request_ids", s.structured_output_request_ids);
    field("grammar_bitmask", s.grammar_bitmask);
    field("kv_connector_metadata", s.kv_connector_metadata);
  }
};

}  // namespace

void Pack(wire::Packer& p, const GrammarBitmask& v) {
  if (v.words.empty()) {
    p.pack_nil();
    return;
  }
  static_assert(std::endian::native == std::endian::little, "the bitmask travels as little-endian words");
  const auto bytes = static_cast<uint32_t>(v.words.size() * sizeof(int32_t));
  p.pack_bin(bytes);
  p.pack_bin_body(reinterpret_cast<const char*>(v.words.data()), bytes);
}

Status Read(const msgpack::object& o, std::string_view field, GrammarBitmask* out) {
  out->words.clear();
  if (o.type == msgpack::type::NIL) return Status::Ok();
  if (o.type != msgpack::type::BIN) return wire::TypeError(field, "bin or nil", o);
  if (o.via.bin.size % sizeof(int32_t) != 0)
    return Status::InvalidArgument("field '" + std::string(field) + "': not a whole number of int32 words");
  out->words.resize(o.via.bin.size / sizeof(int32_t));
  std::memcpy(out->words.data(), o.via.bin.ptr, o.via.bin.size);
  return Status::Ok();
}

void Pack(wire::Packer& p, const NewRequestData& v) { wire::PackStruct<NewRequestDataFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, NewRequestData* out) {
  return wire::ReadStruct<NewRequestDataFields>(o, out);
}

void Pack(wire::Packer& p, const CachedRequestData& v) { wire::PackStruct<CachedRequestDataFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, CachedRequestData* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<CachedRequestDataFields>(o, out));
  const size_t n = out->req_ids.size();
  if (out->new_block_ids.size() != n || out->num_computed_tokens.size() != n ||
      out->num_output_tokens.size() != n || (!out->new_token_ids.empty() && out->new_token_ids.size() != n))
    return Status::InvalidArgument("CachedRequestData: parallel lists differ in length");
  return Status::Ok();
}

void Pack(wire::Packer& p, const SchedulerOutput& v) { wire::PackStruct<SchedulerOutputFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, SchedulerOutput* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<SchedulerOutputFields>(o, out));
  int64_t total = 0;
  for (const auto& [id, n] : out->num_scheduled_tokens) {
    if (n < 0) return Status::InvalidArgument("SchedulerOutput: negative token count for " + id);
    total += n;
  }
  if (total != out->total_num_scheduled_tokens)
    return Status::InvalidArgument("SchedulerOutput: total_num_scheduled_tokens does not match the map");
  const size_t rows = out->structured_output_request_ids.size();
  const size_t words = out->grammar_bitmask.words.size();
  if ((rows == 0) != (words == 0) || (rows > 0 && words % rows != 0))
    return Status::InvalidArgument("SchedulerOutput: grammar_bitmask does not hold one row per structured request");
  for (const auto& [id, row] : out->structured_output_request_ids) {
    if (row < 0 || static_cast<size_t>(row) >= rows)
      return Status::InvalidArgument("SchedulerOutput: grammar_bitmask row out of range for " + id);
  }
  return Status::Ok();
}

}  // namespace llmserve::proto
