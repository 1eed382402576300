#pragma once
// The data-plane messages and the two calls that move them to and from bytes.

#include <string>
#include <string_view>

#include "proto/engine_core_output.h"
#include "proto/engine_core_request.h"
#include "proto/model_runner_output.h"
#include "proto/sampling_params.h"
#include "proto/scheduler_output.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// Plain values (ids, lists of ids) are messages too, e.g. an ABORT body.
using wire::Pack;
using wire::Read;

// Appends the msgpack encoding of `value` to `buffer` (reuse one buffer per
// socket to avoid allocations: call buffer.clear() first).
template <typename T>
void EncodeInto(const T& value, wire::Buffer& buffer) {
  wire::Packer packer(buffer);
  Pack(packer, value);
}

// The msgpack encoding of `value`.
template <typename T>
std::string Encode(const T& value) {
  wire::Buffer buffer;
  EncodeInto(value, buffer);
  return std::string(buffer.data(), buffer.size());
}

// Decodes one whole message. Malformed, truncated or oversized input is an
// error; nothing is allocated beyond a small multiple of `len`.
template <typename T>
Status Decode(const char* data, size_t len, T* out) {
  return wire::DecodeWith(data, len, out, [](const msgpack::object& o, T* v) { return Read(o, "", v); });
}

template <typename T>
Status Decode(std::string_view bytes, T* out) {
  return Decode(bytes.data(), bytes.size(), out);
}

}  // namespace llmserve::proto
