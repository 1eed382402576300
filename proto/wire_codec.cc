#include "proto/wire_codec.h"

#include <bit>
#include <cmath>
#include <limits>

namespace llmserve::proto::wire {

namespace {
constexpr size_t kMaxDepth = 32;

const char* TypeName(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "bool";
    case msgpack::type::POSITIVE_INTEGER: return "uint";
    case msgpack::type::NEGATIVE_INTEGER: return "int";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "float";
    case msgpack::type::STR: return "str";
    case msgpack::type::BIN: return "bin";
    case msgpack::type::ARRAY: return "array";
    case msgpack::type::MAP: return "map";
    case msgpack::type::EXT: return "ext";
  }
  return "unknown";
}

template <typename Int>
Status ReadInteger(const msgpack::object& o, std::string_view field, Int* out) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    if (o.via.u64 > static_cast<uint64_t>(std::numeric_limits<Int>::max()))
      return Status::InvalidArgument("field '" + std::string(field) + "' is out of range");
    *out = static_cast<Int>(o.via.u64);
    return Status::Ok();
  }
  if (o.type == msgpack::type::NEGATIVE_INTEGER) {
    if constexpr (std::is_unsigned_v<Int>) {
      return Status::InvalidArgument("field '" + std::string(field) + "' must not be negative");
    } else {
      if (o.via.i64 < static_cast<int64_t>(std::numeric_limits<Int>::min()))
        return Status::InvalidArgument("field '" + std::string(field) + "' is out of range");
      *out = static_cast<Int>(o.via.i64);
      return Status::Ok();
    }
  }
  return TypeError(field, "integer", o);
}
}  // namespace

Status Unpack(const char* data, size_t len, msgpack::object_handle* out) {
  // No container may claim more elements than there are bytes left in the
  // message: this bounds what the unpacker allocates by the input size.
  const msgpack::unpack_limit limit(len, len, len, len, len, kMaxDepth);
  try {
    size_t offset = 0;
    *out = msgpack::unpack(data, len, offset, nullptr, nullptr, limit);
    if (offset != len) return Status::DataLoss("msgpack message has trailing bytes");
  } catch (const msgpack::insufficient_bytes&) {
    return Status::DataLoss("msgpack message is truncated");
  } catch (const msgpack::depth_size_overflow&) {
    return Status::DataLoss("msgpack message nests too deeply");
  } catch (const msgpack::size_overflow& e) {
    return Status::DataLoss(std::string("msgpack container larger than the message: ") + e.what());
  } catch (const std::exception& e) {
    return Status::DataLoss(std::string("malformed msgpack message: ") + e.what());
  }
  return Status::Ok();
}

namespace {
// Appends a msgpack float: the type byte, then the IEEE bits big-endian.
template <typename Bits>
void PackFloatBits(Packer& p, uint8_t type, Bits bits) {
  char buf[1 + sizeof(Bits)];
  buf[0] = static_cast<char>(type);
  for (size_t i = 0; i < sizeof(Bits); ++i)
    buf[1 + i] = static_cast<char>(bits >> (8 * (sizeof(Bits) - 1 - i)));
  // pack_str_body appends raw bytes with no header.
  p.pack_str_body(buf, static_cast<uint32_t>(sizeof(buf)));
}
}  // namespace

void Pack(Packer& p, double v) { PackFloatBits(p, 0xcb, std::bit_cast<uint64_t>(v)); }
void Pack(Packer& p, float v) { PackFloatBits(p, 0xca, std::bit_cast<uint32_t>(v)); }

Status TypeError(std::string_view field, std::string_view expected, const msgpack::object& got) {
  return Status::InvalidArgument("field '" + std::string(field) + "': expected " +
                                 std::string(expected) + ", got " + TypeName(got));
}

Status Read(const msgpack::object& o, std::string_view field, bool* out) {
  if (o.type != msgpack::type::BOOLEAN) return TypeError(field, "bool", o);
  *out = o.via.boolean;
  return Status::Ok();
}
Status Read(const msgpack::object& o, std::string_view field, int32_t* out) { return ReadInteger(o, field, out); }
Status Read(const msgpack::object& o, std::string_view field, int64_t* out) { return ReadInteger(o, field, out); }
Status Read(const msgpack::object& o, std::string_view field, uint32_t* out) { return ReadInteger(o, field, out); }
Status Read(const msgpack::object& o, std::string_view field, uint64_t* out) { return ReadInteger(o, field, out); }

Status Read(const msgpack::object& o, std::string_view field, double* out) {
  switch (o.type) {
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: *out = o.via.f64; return Status::Ok();
    case msgpack::type::POSITIVE_INTEGER: *out = static_cast<double>(o.via.u64); return Status::Ok();
    case msgpack::type::NEGATIVE_INTEGER: *out = static_cast<double>(o.via.i64); return Status::Ok();
    default: return TypeError(field, "number", o);
  }
}

Status Read(const msgpack::object& o, std::string_view field, float* out) {
  double d = 0;
  LLMSERVE_RETURN_IF_ERROR(Read(o, field, &d));
  *out = static_cast<float>(d);
  return Status::Ok();
}

Status Read(const msgpack::object& o, std::string_view field, std::string* out) {
  if (o.type != msgpack::type::STR) return TypeError(field, "str", o);
  out->assign(o.via.str.ptr, o.via.str.size);
  return Status::Ok();
}

}  // namespace llmserve::proto::wire
