#pragma once
// Building blocks of the msgpack data-plane codecs.
//
// Encoding follows msgspec's conventions that vLLM uses:
//  * array-like structs are msgpack arrays in field order, with trailing fields
//    equal to their defaults omitted (ArrayEncoder);
//  * map-like structs are maps keyed by field name, default fields omitted.
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

#include "proto/status.h"

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

// Encodes an array-like struct: call Field() for every field in order, then
// Finish(). Trailing fields marked default are dropped, as msgspec's
// omit_defaults does for array_like structs.
class ArrayEncoder {
 public:
  template <typename T>
  void Field(const T& value, bool is_default) {
    Pack(packer_, value);
    ends_.push_back(body_.size());
    if (!is_default) used_ = ends_.size();
  }
  // Writes the array (header + the fields up to the last non-default one).
  void Finish(Packer& out);

 private:
  Buffer body_;
  Packer packer_{body_};
  std::vector<size_t> ends_;
  size_t used_ = 0;
};

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

// Reads an array-like struct field by field; fields past the end keep their
// defaults (they were omitted by the encoder).
class ArrayDecoder {
 public:
  // `what` names the struct in error messages.
  ArrayDecoder(const msgpack::object& o, std::string_view what);
  // Not ok when the object is not an array or has more fields than `max_fields`.
  Status Check(size_t max_fields) const;
  template <typename T>
  Status Field(std::string_view name, T* out) {
    if (index_ >= size_) { ++index_; return Status::Ok(); }
    return Read(items_[index_++], name, out).WithContext(what_);
  }
  // Skips a field we carry no data for (encoded as nil by vLLM-compatible peers).
  void Skip() { ++index_; }

 private:
  const msgpack::object* items_ = nullptr;
  size_t size_ = 0;
  size_t index_ = 0;
  bool is_array_ = false;
  std::string what_;
};

// Map-like structs. `visit(s, f)` must call f(name, field) for every field of
// s in a fixed order; the same function drives encoding and decoding.
template <typename T, typename Visit>
void PackMap(Packer& p, const T& v, Visit visit) {
  static const T kDefaults{};
  std::vector<const void*> default_fields;
  visit(kDefaults, [&](const char*, const auto& f) { default_fields.push_back(&f); });
  // The map header needs the number of non-default fields, so compare first.
  std::vector<bool> differs;
  size_t i = 0;
  visit(v, [&](const char*, const auto& f) {
    using F = std::remove_cvref_t<decltype(f)>;
    differs.push_back(!(f == *static_cast<const F*>(default_fields[i++])));
  });
  uint32_t count = 0;
  for (bool d : differs) count += d;
  p.pack_map(count);
  i = 0;
  visit(v, [&](const char* name, const auto& f) {
    if (!differs[i++]) return;
    p.pack(std::string_view(name));
    Pack(p, f);
  });
}

// Unknown keys are ignored, as msgspec does: newer peers may add fields.
template <typename T, typename Visit>
Status ReadMap(const msgpack::object& o, std::string_view what, T* out, Visit visit) {
  if (o.type != msgpack::type::MAP) return TypeError(what, "map", o);
  *out = T{};
  for (uint32_t k = 0; k < o.via.map.size; ++k) {
    const auto& kv = o.via.map.ptr[k];
    if (kv.key.type != msgpack::type::STR) return TypeError(what, "str key", kv.key);
    std::string_view key(kv.key.via.str.ptr, kv.key.via.str.size);
    Status status;
    visit(*out, [&](const char* name, auto& f) {
      if (status.ok() && key == name) status = Read(kv.val, name, &f);
    });
    LLMSERVE_RETURN_IF_ERROR(status.WithContext(what));
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
