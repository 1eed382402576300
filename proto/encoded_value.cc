#include "proto/encoded_value.h"

namespace llmserve::proto {

void Pack(wire::Packer& p, const EncodedValue& v) {
  if (v.msgpack.empty()) {
    p.pack_nil();
    return;
  }
  // pack_str_body appends raw bytes (no header): the value is already msgpack.
  p.pack_str_body(v.msgpack.data(), static_cast<uint32_t>(v.msgpack.size()));
}

std::string EncodeObject(const msgpack::object& o) {
  wire::Buffer buffer;
  msgpack::pack(buffer, o);
  return std::string(buffer.data(), buffer.size());
}

Status Read(const msgpack::object& o, std::string_view, EncodedValue* out) {
  if (o.type == msgpack::type::NIL) {
    out->msgpack.clear();
    return Status::Ok();
  }
  out->msgpack = EncodeObject(o);
  return Status::Ok();
}

Status FindEncodedEntry(const EncodedValue& map, std::string_view key, EncodedValue* out) {
  out->msgpack.clear();
  if (map.empty()) return Status::Ok();
  msgpack::object_handle handle;
  LLMSERVE_RETURN_IF_ERROR(wire::Unpack(map.msgpack.data(), map.msgpack.size(), &handle));
  const msgpack::object& o = handle.get();
  if (o.type != msgpack::type::MAP) return Status::Ok();
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    const msgpack::object_kv& kv = o.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR && std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) == key) {
      return Read(kv.val, key, out);
    }
  }
  return Status::Ok();
}

}  // namespace llmserve::proto
