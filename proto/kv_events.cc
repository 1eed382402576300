#include "proto/kv_events.h"

#include "proto/wire_codec.h"

namespace llmserve::proto {

namespace {

using wire::Pack;
using wire::Packer;
using wire::Read;

void PackEvent(Packer& p, const BlockStored& e) {
  p.pack_array(8);
  p.pack(std::string("BlockStored"));
  Pack(p, e.block_hashes);
  Pack(p, e.parent_block_hash);
  Pack(p, e.token_ids);
  Pack(p, e.block_size);
  Pack(p, e.lora_id);
  Pack(p, e.medium);
  Pack(p, e.lora_name);
}

void PackEvent(Packer& p, const BlockRemoved& e) {
  p.pack_array(3);
  p.pack(std::string("BlockRemoved"));
  Pack(p, e.block_hashes);
  Pack(p, e.medium);
}

void PackEvent(Packer& p, const AllBlocksCleared&) {
  p.pack_array(1);
  p.pack(std::string("AllBlocksCleared"));
}

// Reads field `i` of an array-like struct (element 0 is the tag), leaving the
// default when the array is shorter.
template <typename T>
Status ReadField(const msgpack::object_array& a, uint32_t i, std::string_view name, T* out) {
  if (i >= a.size) return Status::Ok();
  return Read(a.ptr[i], name, out);
}

Status ReadEvent(const msgpack::object& o, KVCacheEvent* out) {
  if (o.type != msgpack::type::ARRAY || o.via.array.size == 0)
    return wire::TypeError("event", "tagged array", o);
  const msgpack::object_array& a = o.via.array;
  std::string tag;
  LLMSERVE_RETURN_IF_ERROR(Read(a.ptr[0], "event tag", &tag));
  if (tag == "BlockStored") {
    BlockStored e;
    e.medium.reset();  // a missing medium is None, as in vLLM
    if (a.size < 5) return Status::InvalidArgument("BlockStored needs at least 4 fields");
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 1, "block_hashes", &e.block_hashes));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 2, "parent_block_hash", &e.parent_block_hash));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 3, "token_ids", &e.token_ids));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 4, "block_size", &e.block_size));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 5, "lora_id", &e.lora_id));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 6, "medium", &e.medium));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 7, "lora_name", &e.lora_name));
    *out = std::move(e);
    return Status::Ok();
  }
  if (tag == "BlockRemoved") {
    BlockRemoved e;
    e.medium.reset();
    if (a.size < 2) return Status::InvalidArgument("BlockRemoved needs its block_hashes");
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 1, "block_hashes", &e.block_hashes));
    LLMSERVE_RETURN_IF_ERROR(ReadField(a, 2, "medium", &e.medium));
    *out = std::move(e);
    return Status::Ok();
  }
  if (tag == "AllBlocksCleared") {
    *out = AllBlocksCleared{};
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown KV cache event '" + tag + "'");
}

}  // namespace

std::string EncodeKVEventBatch(const KVEventBatch& batch) {
  wire::Buffer buffer;
  Packer p(buffer);
  p.pack_array(3);
  Pack(p, batch.ts);
  p.pack_array(static_cast<uint32_t>(batch.events.size()));
  for (const KVCacheEvent& e : batch.events) std::visit([&](const auto& ev) { PackEvent(p, ev); }, e);
  Pack(p, batch.data_parallel_rank);
  return std::string(buffer.data(), buffer.size());
}

StatusOr<KVEventBatch> DecodeKVEventBatch(std::string_view payload) {
  msgpack::object_handle handle;
  LLMSERVE_RETURN_IF_ERROR(wire::Unpack(payload.data(), payload.size(), &handle));
  const msgpack::object& o = handle.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size < 2)
    return wire::TypeError("KVEventBatch", "array [ts, events, dp_rank]", o);
  const msgpack::object_array& a = o.via.array;
  KVEventBatch batch;
  LLMSERVE_RETURN_IF_ERROR(Read(a.ptr[0], "ts", &batch.ts));
  if (a.ptr[1].type != msgpack::type::ARRAY) return wire::TypeError("events", "array", a.ptr[1]);
  for (uint32_t i = 0; i < a.ptr[1].via.array.size; ++i) {
    LLMSERVE_RETURN_IF_ERROR(ReadEvent(a.ptr[1].via.array.ptr[i], &batch.events.emplace_back()));
  }
  if (a.size > 2) LLMSERVE_RETURN_IF_ERROR(Read(a.ptr[2], "data_parallel_rank", &batch.data_parallel_rank));
  return batch;
}

}  // namespace llmserve::proto
