#pragma once
// A msgpack value of no fixed shape, kept as its encoded bytes: vLLM's
// `dict[str, Any]` fields (kv_transfer_params, SamplingParams.extra_args) and
// the KV connector's per-step metadata, whose layout only the connector knows.
// It is written back verbatim, so a value passes through the engine unchanged.

#include <string>
#include <string_view>

#include "base/status.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// Whoever fills `msgpack` makes it exactly one well-formed value: Pack copies it unchecked.
struct EncodedValue {
  std::string msgpack;  // one encoded msgpack value; empty = absent (nil on the wire)

  bool empty() const { return msgpack.empty(); }
  bool operator==(const EncodedValue&) const = default;
};

// Writes the value's bytes as they are, or nil when empty.
void Pack(wire::Packer& p, const EncodedValue& v);
// Keeps whatever value `o` is (nil reads as empty). Never fails.
Status Read(const msgpack::object& o, std::string_view field, EncodedValue* out);

// The encoding of `o` (its bytes, for an EncodedValue).
std::string EncodeObject(const msgpack::object& o);

// The entry `key` of a map-valued EncodedValue (empty when `map` is empty, not
// a map or has no such key); an error only when `map` is not msgpack.
Status FindEncodedEntry(const EncodedValue& map, std::string_view key, EncodedValue* out);

}  // namespace llmserve::proto
