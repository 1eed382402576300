#include "proto/shared_storage_metadata.h"

#include "proto/wire_struct.h"

namespace llmserve::proto {

namespace {

struct SharedStorageRequestMetaFields {
  static constexpr wire::Layout kLayout{.name = "SharedStorageRequestMeta"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("req_id", s.req_id);
    field("key", s.key);
    field("is_store", s.is_store);
    field("first_token", s.first_token);
    field("end_token", s.end_token);
    field("block_ids", s.block_ids);
  }
};

struct SharedStorageMetadataFields {
  static constexpr wire::Layout kLayout{.name = "SharedStorageMetadata"};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("requests", s.requests);
  }
};

}  // namespace

void Pack(wire::Packer& p, const SharedStorageRequestMeta& v) {
  wire::PackStruct<SharedStorageRequestMetaFields>(p, v);
}

Status Read(const msgpack::object& o, std::string_view, SharedStorageRequestMeta* out) {
  LLMSERVE_RETURN_IF_ERROR(wire::ReadStruct<SharedStorageRequestMetaFields>(o, out));
  if (out->first_token < 0 || out->end_token < out->first_token)
    return Status::InvalidArgument("SharedStorageRequestMeta " + out->req_id + ": bad token range");
  return Status::Ok();
}

void Pack(wire::Packer& p, const SharedStorageMetadata& v) { wire::PackStruct<SharedStorageMetadataFields>(p, v); }

Status Read(const msgpack::object& o, std::string_view, SharedStorageMetadata* out) {
  return wire::ReadStruct<SharedStorageMetadataFields>(o, out);
}

EncodedValue EncodeSharedStorageMetadata(const SharedStorageMetadata& meta) {
  wire::Buffer buffer;
  wire::Packer p(buffer);
  Pack(p, meta);
  return EncodedValue{std::string(buffer.data(), buffer.size())};
}

Status DecodeSharedStorageMetadata(const EncodedValue& value, SharedStorageMetadata* out) {
  *out = SharedStorageMetadata{};
  if (value.empty()) return Status::Ok();
  msgpack::object_handle handle;
  LLMSERVE_RETURN_IF_ERROR(wire::Unpack(value.msgpack.data(), value.msgpack.size(), &handle));
  return Read(handle.get(), "kv_connector_metadata", out);
}

}  // namespace llmserve::proto
