#pragma once
// Building blocks of the msgpack data-plane codecs: Pack() and Read() for
// scalars and containers, and Unpack() for a whole message. Structs are built
// from these by proto/wire_struct.h.
//
// Decoding never trusts the peer: Unpack() bounds every container by the input
// size (so a tiny message cannot make us allocate gigabytes), and every field
// read checks its type and reports the field's name on mismatch.

#include <msgpack.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace llmserve::proto::wire {

using Buffer = msgpack::sbuffer;
using Packer = msgpack::packer<msgpack::sbuffer>;

// Parses one msgpack value that must span all of [data, data+len).
Status Unpack(const char* data, size_t len, msgpack::object_handle* out);

Status TypeError(std::string_view field, std::string_view expected, const msgpack::object& got);

Status Read(const msgpack::object& o, std::string_view field, bool* out);
Status Read(const msgpack::object& o, std::string_view field, int32_t* out);
Status Read(const msgpack::object& o, std::string_view field, int64_t* out);
Status Read(const msgpack::object& o, std::string_view field, uint32_t* out);
Status Read(const msgpack::object& o, std::string_view field, uint64_t* out);
Status Read(const msgpack::object& o, std::string_view field, double* out);
Status Read(const msgpack::object& o, std::string_view field, float* out);
Status Read(const msgpack::object& o, std::string_view field, std::string* out);

// ---- declarations first, so the container templates find each other -------------
template <typename E> requires std::is_enum_v<E> void Pack(Packer& p, E v);
template <typename T> void Pack(Packer& p, const std::optional<T>& v);
template <typename T> void Pack(Packer& p, const std::vector<T>& v);
template <typename K, typename V> void Pack(Packer& p, const std::map<K, V>& m);
template <typename E> requires std::is_enum_v<E>
Status Read(const msgpack::object& o, std::string_view field, E* out);
template <typename T> Status Read(const msgpack::object& o, std::string_view field, std::optional<T>* out);
template <typename T> Status Read(const msgpack::object& o, std::string_view field, std::vector<T>* out);
template <typename K, typename V>
Status Read(const msgpack::object& o, std::string_view field, std::map<K, V>* out);

// ---- encoding -----------------------------------------------------------------
inline void Pack(Packer& p, bool v) { p.pack(v); }
inline void Pack(Packer& p, int32_t v) { p.pack(v); }
inline void Pack(Packer& p, int64_t v) { p.pack(v); }
inline void Pack(Packer& p, uint32_t v) { p.pack(v); }
inline void Pack(Packer& p, uint64_t v) { p.pack(v); }
// A float is always a msgpack float (float64 / float32), as msgspec and
// python-msgpack write it; msgpack-c's own packer would write 0.0 as the
// integer 0 and -0.0 as 0, losing the sign.
void Pack(Packer& p, double v);
void Pack(Packer& p, float v);
inline void Pack(Packer& p, const std::string& v) { p.pack(v); }
template <typename E>
  requires std::is_enum_v<E>
void Pack(Packer& p, E v) {
  p.pack(static_cast<int64_t>(v));
}
template <typename T>
void Pack(Packer& p, const std::optional<T>& v) {
  if (v) Pack(p, *v); else p.pack_nil();
}
template <typename T>
void Pack(Packer& p, const std::vector<T>& v) {
  p.pack_array(static_cast<uint32_t>(v.size()));
  for (const auto& e : v) Pack(p, e);
}
template <typename K, typename V>
void Pack(Packer& p, const std::map<K, V>& m) {
  p.pack_map(static_cast<uint32_t>(m.size()));
  for (const auto& [k, v] : m) { Pack(p, k); Pack(p, v); }
}

// ---- decoding -----------------------------------------------------------------

// Enums travel as their integer value; callers validate the range.
template <typename E>
  requires std::is_enum_v<E>
Status Read(const msgpack::object& o, std::string_view field, E* out) {
  int64_t v = 0;
  LLMSERVE_RETURN_IF_ERROR(Read(o, field, &v));
  *out = static_cast<E>(v);
  return Status::Ok();
}

template <typename T>
Status Read(const msgpack::object& o, std::string_view field, std::optional<T>* out) {
  if (o.type == msgpack::type::NIL) {
    out->reset();
    return Status::Ok();
  }
  T value{};
  LLMSERVE_RETURN_IF_ERROR(Read(o, field, &value));
  *out = std::move(value);
  return Status::Ok();
}

template <typename T>
Status Read(const msgpack::object& o, std::string_view field, std::vector<T>* out) {
  if (o.type != msgpack::type::ARRAY) return TypeError(field, "array", o);
  out->clear();
  out->resize(o.via.array.size);
  for (uint32_t i = 0; i < o.via.array.size; ++i) {
    T& element = (*out)[i];
    LLMSERVE_RETURN_IF_ERROR(Read(o.via.array.ptr[i], field, &element));
  }
  return Status::Ok();
}

template <typename K, typename V>
Status Read(const msgpack::object& o, std::string_view field, std::map<K, V>* out) {
  if (o.type != msgpack::type::MAP) return TypeError(field, "map", o);
  out->clear();
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    K key{};
    V value{};
    LLMSERVE_RETURN_IF_ERROR(Read(o.via.map.ptr[i].key, field, &key));
    LLMSERVE_RETURN_IF_ERROR(Read(o.via.map.ptr[i].val, field, &value));
    (*out)[std::move(key)] = std::move(value);
  }
  return Status::Ok();
}

// Decodes `data` (a whole msgpack message) into `out` with `read`.
template <typename T, typename ReadFn>
Status DecodeWith(const char* data, size_t len, T* out, ReadFn read) {
  msgpack::object_handle handle;
  LLMSERVE_RETURN_IF_ERROR(Unpack(data, len, &handle));
  return read(handle.get(), out);
}

}  // namespace llmserve::proto::wire
