#include "common/gguf/gguf_writer.h"

#include <glog/logging.h>

#include <fstream>
#include <type_traits>

#include "common/gguf/quantize.h"

namespace llmserve::common::gguf {

namespace {

template <typename T> struct IsVector : std::false_type {};
template <typename E> struct IsVector<std::vector<E>> : std::true_type {};

// Appends little-endian values and GGUF strings to a byte string.
class ByteSink {
 public:
  explicit ByteSink(std::string* out) : out_(out) {}
  template <typename T>
  void Put(T value) {
    static_assert(std::is_arithmetic_v<T>);
    out_->append(reinterpret_cast<const char*>(&value), sizeof(T));  // little-endian hosts
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out_->append(s);
  }
  // One element of GGUF type T (a bool is one byte).
  template <typename T>
  void PutElement(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) PutString(value);
    else if constexpr (std::is_same_v<T, bool>) Put<uint8_t>(value ? 1 : 0);
    else Put(value);
  }
  void PadTo(uint32_t alignment) { out_->append((alignment - out_->size() % alignment) % alignment, '\0'); }

 private:
  std::string* out_;
};

void PutValue(ByteSink& sink, const GgufValue& value) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (IsVector<V>::value) {
          using E = typename V::value_type;
          sink.Put(static_cast<uint32_t>(GgufValueType::kArray));
          sink.Put(static_cast<uint32_t>(GgufTypeOf<E>::kType));
          sink.Put<uint64_t>(v.size());
          for (size_t i = 0; i < v.size(); ++i) sink.PutElement(static_cast<E>(v[i]));
        } else {
          sink.Put(static_cast<uint32_t>(GgufTypeOf<V>::kType));
          sink.PutElement(v);
        }
      },
      value.storage());
}

uint64_t AlignUp(uint64_t n, uint32_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  CHECK(alignment != 0 && (alignment & (alignment - 1)) == 0) << "alignment " << alignment;
  if (alignment != kDefaultAlignment) Set("general.alignment", alignment);
}

void GgufWriter::Set(const std::string& key, GgufValue value) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

Status GgufWriter::AddRaw(std::string name, std::vector<uint64_t> dims, GgmlType type, std::vector<uint8_t> bytes) {
  for (const Tensor& t : tensors_) {
    if (t.name == name) return Status::InvalidArgument("tensor '" + name + "' is already in the file");
  }
  if (dims.empty() || dims.size() > 4) return Status::InvalidArgument("tensor '" + name + "' needs 1 to 4 dims");
  uint64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
  StatusOr<uint64_t> row_bytes = RowBytes(type, dims[0]);
  if (!row_bytes.ok()) return row_bytes.status().WithContext("tensor '" + name + "'");
  if (bytes.size() != rows * *row_bytes) {
    return Status::InvalidArgument("tensor '" + name + "': " + std::to_string(bytes.size()) + " bytes, expected " +
                                   std::to_string(rows * *row_bytes));
  }
  tensors_.push_back({std::move(name), std::move(dims), type, std::move(bytes)});
  return Status::Ok();
}

Status GgufWriter::Add(std::string name, std::vector<uint64_t> dims, GgmlType type, const std::vector<float>& values) {
  if (dims.empty()) return Status::InvalidArgument("tensor '" + name + "' needs 1 to 4 dims");
  uint64_t count = 1;
  for (uint64_t d : dims) count *= d;
  if (values.size() != count) {
    return Status::InvalidArgument("tensor '" + name + "': " + std::to_string(values.size()) +
                                   " values, expected " + std::to_string(count));
  }
  StatusOr<uint64_t> row_bytes = RowBytes(type, dims[0]);
  if (!row_bytes.ok()) return row_bytes.status().WithContext("tensor '" + name + "'");
  std::vector<uint8_t> bytes(count == 0 ? 0 : count / dims[0] * *row_bytes);
  Status s = QuantizeRow(type, values.data(), count, bytes.data());
  if (!s.ok()) return s.WithContext("tensor '" + name + "'");
  return AddRaw(std::move(name), std::move(dims), type, std::move(bytes));
}

std::string GgufWriter::Serialize() const {
  std::string out;
  ByteSink sink(&out);
  sink.Put<uint32_t>(0x46554747);  // "GGUF"
  sink.Put<uint32_t>(3);
  sink.Put<uint64_t>(tensors_.size());
  sink.Put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    sink.PutString(key);
    PutValue(sink, value);
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    sink.PutString(t.name);
    sink.Put<uint32_t>(t.dims.size());
    for (uint64_t d : t.dims) sink.Put(d);
    sink.Put(static_cast<uint32_t>(t.type));
    sink.Put(offset);
    offset = AlignUp(offset + t.bytes.size(), alignment_);
  }
  sink.PadTo(alignment_);
  for (const Tensor& t : tensors_) {
    out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    sink.PadTo(alignment_);
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) const {
  const std::string bytes = Serialize();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status::Internal(path + ": write failed");
  return Status::Ok();
}

}  // namespace llmserve::common::gguf
