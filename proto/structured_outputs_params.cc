#include "proto/structured_outputs_params.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

namespace {

// A map keyed by vLLM's StructuredOutputsParams field names, defaults omitted.
struct StructuredOutputsParamsFields {
  static constexpr wire::Layout kLayout{
      .name = "StructuredOutputsParams", .shape = wire::Shape::kMap, .omit_defaults = true};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("json", s.json);
    field("regex", s.regex);
    field("choice", s.choice);
    field("grammar", s.grammar);
    field("json_object", s.json_object);
    field("disable_any_whitespace", s.disable_any_whitespace);
    field("disable_additional_properties", s.disable_additional_properties);
    field("whitespace_pattern", s.whitespace_pattern);
  }
};

}  // namespace

std::string StructuredOutputsParams::CacheKey() const {
  // The wire encoding names every field that changes the grammar.
  wire::Buffer buffer;
  wire::Packer p(buffer);
  Pack(p, *this);
  return std::string(buffer.data(), buffer.size());
}

void Pack(wire::Packer& p, const StructuredOutputsParams& v) {
  wire::PackStruct<StructuredOutputsParamsFields>(p, v);
}

Status Read(const msgpack::object& o, std::string_view, StructuredOutputsParams* out) {
  return wire::ReadStruct<StructuredOutputsParamsFields>(o, out);
}

}  // namespace llmserve::proto
