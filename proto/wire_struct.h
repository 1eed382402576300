#pragma once
// Structs on the wire, written once. Each message has one field list, a
// stateless `Fields` type whose call operator names every field in wire order:
//
//   struct UtilityOutputFields {
//     static constexpr wire::Layout kLayout{.name = "UtilityOutput"};
//     template <typename S, typename F>  // S: the struct, const or not
//     void operator()(S& s, F&& field) const {
//       field("call_id", s.call_id);
//       field("failure_message", s.failure_message);
//       field("result", s.result);
//     }
//   };
//
// PackStruct<Fields> and ReadStruct<Fields> walk the same list, so the two
// directions cannot drift apart and an array's length comes from the list.
//
// The rules are msgspec's, which vLLM uses:
//  * an array-like struct is a msgpack array of its fields in order; with
//    omit_defaults, trailing fields equal to their default are dropped;
//  * a map-like struct is a map from field name to value, in field order; with
//    omit_defaults, fields equal to their default are left out;
//  * a field declared kRequired (msgspec: one without a default) is always written.
// A field equals its default when it encodes to the same bytes as that field
// of a default-constructed struct.
//
// Decoding never trusts the peer: a field of the wrong type is an error naming
// the struct and field; array fields past the end keep their defaults (the
// encoder omitted them); unknown map keys are ignored (newer peers add fields).

#include <msgpack.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "proto/wire_codec.h"

namespace llmserve::proto::wire {

// Whether a field may be omitted when it holds its default.
enum class Presence { kDefaulted, kRequired };
inline constexpr Presence kRequired = Presence::kRequired;

enum class Shape { kArray, kMap };

// How a struct travels.
struct Layout {
  const char* name;             // the struct's name in error messages
  Shape shape = Shape::kArray;  // msgspec array_like, or a map keyed by field name
  bool omit_defaults = false;   // msgspec omit_defaults
};

// A position of vLLM's struct we carry no data for: written as nil; whatever a
// peer sends there is accepted and ignored.
struct Nil {};
inline void Pack(Packer& p, Nil) { p.pack_nil(); }
inline Status Read(const msgpack::object&, std::string_view, Nil*) { return Status::Ok(); }

// A list that a peer may also send as nil (vLLM's `list | None`); we write a list.
template <typename List>  // std::vector<T>, const or not
struct NilOrList {
  explicit NilOrList(List& l) : list(l) {}
  List& list;
};
template <typename T>
void Pack(Packer& p, const NilOrList<const std::vector<T>>& v) {
  Pack(p, v.list);
}
template <typename T>
Status Read(const msgpack::object& o, std::string_view field, NilOrList<std::vector<T>>* out) {
  if (o.type == msgpack::type::NIL) {
    out->list.clear();
    return Status::Ok();
  }
  return Read(o, field, &out->list);
}

namespace internal {

// The encodings of a default-constructed S's fields, in wire order; its size
// is the struct's field count.
template <typename Fields, typename S>
const std::vector<std::string>& DefaultEncodings() {
  static const std::vector<std::string> encodings = [] {
    const S defaults{};
    std::vector<std::string> out;
    Fields()(defaults, [&](const char*, const auto& f, Presence = Presence::kDefaulted) {
      Buffer buffer;
      Packer p(buffer);
      Pack(p, f);
      out.emplace_back(buffer.data(), buffer.size());
    });
    return out;
  }();
  return encodings;
}

// Whether a field whose encoding is `value` is written.
inline bool IsWritten(const Layout& layout, Presence presence, std::string_view value,
                      std::string_view default_value) {
  return !layout.omit_defaults || presence == Presence::kRequired || value != default_value;
}

// Appends bytes that are already msgpack (pack_str_body writes no header).
inline void AppendEncoded(Packer& p, const char* data, size_t size) {
  if (size > 0) p.pack_str_body(data, static_cast<uint32_t>(size));
}

template <typename Fields, typename S>
void PackArray(Packer& p, const S& s) {
  constexpr const Layout& layout = Fields::kLayout;
  const std::vector<std::string>& defaults = DefaultEncodings<Fields, S>();
  if constexpr (!Fields::kLayout.omit_defaults) {  // every field: no need to look back
    p.pack_array(static_cast<uint32_t>(defaults.size()));
    Fields()(s, [&](const char*, const auto& f, Presence = Presence::kDefaulted) { Pack(p, f); });
    return;
  }
  // Pack every field, then cut after the last one that is written.
  Buffer body;
  Packer fields(body);
  size_t index = 0, count = 0, length = 0;
  Fields()(s, [&](const char*, const auto& f, Presence presence = Presence::kDefaulted) {
    const size_t begin = body.size();
    Pack(fields, f);
    const std::string_view value(body.data() + begin, body.size() - begin);
    if (IsWritten(layout, presence, value, defaults[index++])) {
      count = index;
      length = body.size();
    }
  });
  p.pack_array(static_cast<uint32_t>(count));
  AppendEncoded(p, body.data(), length);
}

template <typename Fields, typename S>
void PackMap(Packer& p, const S& s) {
  constexpr const Layout& layout = Fields::kLayout;
  const std::vector<std::string>& defaults = DefaultEncodings<Fields, S>();
  // The map header needs the count of written fields, so they go to `body` first.
  Buffer body, value;
  Packer entries(body), values(value);
  size_t index = 0;
  uint32_t count = 0;
  Fields()(s, [&](const char* name, const auto& f, Presence presence = Presence::kDefaulted) {
    value.clear();
    Pack(values, f);
    const std::string_view encoded(value.data(), value.size());
    if (!IsWritten(layout, presence, encoded, defaults[index++])) return;
    entries.pack(std::string_view(name));
    AppendEncoded(entries, value.data(), value.size());
    ++count;
  });
  p.pack_map(count);
  AppendEncoded(p, body.data(), body.size());
}

template <typename Fields, typename S>
Status ReadArray(const msgpack::object& o, S* out) {
  constexpr const Layout& layout = Fields::kLayout;
  if (o.type != msgpack::type::ARRAY)
    return Status::InvalidArgument(std::string(layout.name) + ": expected an array-encoded struct");
  const size_t size = o.via.array.size;
  const size_t most = DefaultEncodings<Fields, S>().size();
  if (size > most)
    return Status::InvalidArgument(std::string(layout.name) + ": " + std::to_string(size) +
                                   " fields, at most " + std::to_string(most) + " expected");
  *out = S{};
  size_t index = 0;
  Status status;
  Fields()(*out, [&](const char* name, auto&& f, Presence = Presence::kDefaulted) {
    if (status.ok() && index < size) status = Read(o.via.array.ptr[index], name, &f).WithContext(layout.name);
    ++index;
  });
  return status;
}

template <typename Fields, typename S>
Status ReadMap(const msgpack::object& o, S* out) {
  constexpr const Layout& layout = Fields::kLayout;
  if (o.type != msgpack::type::MAP) return TypeError(layout.name, "map", o);
  *out = S{};
  for (uint32_t k = 0; k < o.via.map.size; ++k) {
    const msgpack::object_kv& kv = o.via.map.ptr[k];
    if (kv.key.type != msgpack::type::STR) return TypeError(layout.name, "str key", kv.key);
    const std::string_view key(kv.key.via.str.ptr, kv.key.via.str.size);
    Status status;
    Fields()(*out, [&](const char* name, auto&& f, Presence = Presence::kDefaulted) {
      if (status.ok() && key == name) status = Read(kv.val, name, &f);
    });
    LLMSERVE_RETURN_IF_ERROR(status.WithContext(layout.name));
  }
  return Status::Ok();
}

}  // namespace internal

// Writes `s` as its Fields describe it.
template <typename Fields, typename S>
void PackStruct(Packer& p, const S& s) {
  if constexpr (Fields::kLayout.shape == Shape::kMap) internal::PackMap<Fields>(p, s);
  else internal::PackArray<Fields>(p, s);
}

// Reads `*out` as its Fields describe it; on error `*out` is unspecified.
template <typename Fields, typename S>
Status ReadStruct(const msgpack::object& o, S* out) {
  if constexpr (Fields::kLayout.shape == Shape::kMap) return internal::ReadMap<Fields>(o, out);
  else return internal::ReadArray<Fields>(o, out);
}

}  // namespace llmserve::proto::wire
