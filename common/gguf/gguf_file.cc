#include "common/gguf/gguf_file.h"

#include <filesystem>

#include "common/gguf/byte_reader.h"
#include "common/gguf/dequantize.h"
#include "common/gguf/gguf_value_reader.h"

namespace llmserve::common::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;                      // "GGUF" as a little-endian uint32
constexpr uint64_t kMinMetadataEntryBytes = 8 + 4 + 1;       // empty key, type, a 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, one dim, type, offset
constexpr uint32_t kMaxDims = 4;                             // GGML_MAX_DIMS

// The first four bytes, printable: "GGUF", or "\x7fELF".
std::string MagicString(uint32_t magic) {
  std::string out;
  for (int i = 0; i < 4; ++i) {
    const unsigned char c = static_cast<unsigned char>(magic >> (8 * i));
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 0xf];
    }
  }
  return out;
}

Status CheckVersion(uint32_t version) {
  if (version == 2 || version == 3) return Status::Ok();
  if (version == 0x02000000u || version == 0x03000000u) {
    return Status::Unimplemented("big-endian GGUF files are not supported");
  }
  return Status::Unimplemented("GGUF version " + std::to_string(version) + " is not supported (only 2 and 3)");
}

Status ReadHeader(ByteReader& reader, uint32_t* version, uint64_t* tensor_count, uint64_t* kv_count) {
  uint32_t magic = 0;
  LLMSERVE_RETURN_IF_ERROR(reader.Read(&magic, "the magic"));
  if (magic != kMagic) {
    return Status::DataLoss("not a GGUF file: it starts with '" + MagicString(magic) + "', not 'GGUF'");
  }
  LLMSERVE_RETURN_IF_ERROR(reader.Read(version, "the version"));
  LLMSERVE_RETURN_IF_ERROR(CheckVersion(*version));
  LLMSERVE_RETURN_IF_ERROR(reader.Read(tensor_count, "the tensor count"));
  LLMSERVE_RETURN_IF_ERROR(reader.Read(kv_count, "the metadata count"));
  if (*kv_count > reader.remaining() / kMinMetadataEntryBytes) {
    return Status::DataLoss("metadata count " + std::to_string(*kv_count) + " cannot fit in the " +
                            std::to_string(reader.remaining()) + " bytes after the header");
  }
  if (*tensor_count > reader.remaining() / kMinTensorInfoBytes) {
    return Status::DataLoss("tensor count " + std::to_string(*tensor_count) + " cannot fit in the " +
                            std::to_string(reader.remaining()) + " bytes after the header");
  }
  return Status::Ok();
}

Status ReadMetadata(ByteReader& reader, uint64_t count, GgufMetadata* metadata) {
  for (uint64_t i = 0; i < count; ++i) {
    std::string key;
    uint32_t type = 0;
    Status s = reader.ReadString(&key, "a metadata key");
    if (s.ok()) s = reader.Read(&type, "a metadata value type");
    if (!s.ok()) return s.WithContext("metadata entry " + std::to_string(i));
    StatusOr<GgufValue> value = ReadGgufValue(reader, type);
    if (!value.ok()) return value.status().WithContext("metadata key '" + key + "'");
    Status added = metadata->Add(std::move(key), std::move(value).value());
    if (!added.ok()) return Status::DataLoss(added.message());
  }
  return Status::Ok();
}

// general.alignment: a uint32 power of two (gguf.md), 32 when absent.
StatusOr<uint32_t> AlignmentOf(const GgufMetadata& metadata) {
  const GgufValue* value = metadata.Find("general.alignment");
  if (value == nullptr) return kDefaultAlignment;
  const uint32_t* typed = value->get_if<uint32_t>();
  if (typed == nullptr) return Status::DataLoss("general.alignment is " + value->TypeName() + ", expected uint32");
  const uint32_t alignment = *typed;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return Status::DataLoss("general.alignment is " + std::to_string(alignment) + ", not a power of two");
  }
  return alignment;
}

// Reads one tensor info and checks what it says on its own: dims, type, sizes.
Status ReadTensorInfo(ByteReader& reader, GgufTensorInfo* t) {
  uint32_t n_dims = 0, type = 0;
  LLMSERVE_RETURN_IF_ERROR(reader.Read(&n_dims, "the number of dimensions"));
  if (n_dims < 1 || n_dims > kMaxDims) {
    return Status::DataLoss("has " + std::to_string(n_dims) + " dimensions (GGUF allows 1 to 4)");
  }
  t->dims.resize(n_dims);
  for (uint64_t& d : t->dims) LLMSERVE_RETURN_IF_ERROR(reader.Read(&d, "a dimension"));
  LLMSERVE_RETURN_IF_ERROR(reader.Read(&type, "the ggml type"));
  LLMSERVE_RETURN_IF_ERROR(reader.Read(&t->offset, "the data offset"));
  const GgmlTypeInfo* info = FindGgmlType(type);
  if (info == nullptr) return Status::DataLoss("has unknown ggml type " + std::to_string(type));
  t->type = info->type;
  // Bound the product of the non-zero dims too, so num_rows() cannot overflow.
  uint64_t product = 1;
  bool empty = false;
  for (uint64_t d : t->dims) {
    if (d == 0) {
      empty = true;
    } else if (product > static_cast<uint64_t>(INT64_MAX) / d) {
      return Status::DataLoss("has dimensions " + t->ShapeString() + " whose product overflows 63 bits");
    } else {
      product *= d;
    }
  }
  t->num_elements = empty ? 0 : product;
  if (t->row_length() % info->block_size != 0) {
    return Status::DataLoss(std::string("is ") + info->name + " with rows of " + std::to_string(t->row_length()) +
                            " values, not a multiple of the block size " + std::to_string(info->block_size));
  }
  const uint64_t blocks = t->num_elements / info->block_size;
  if (blocks > UINT64_MAX / info->block_bytes) return Status::DataLoss("has a byte size that overflows 64 bits");
  t->num_bytes = blocks * info->block_bytes;
  return Status::Ok();
}

}  // namespace

uint64_t GgufTensorInfo::num_rows() const {
  uint64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];  // no overflow: checked at parse
  return rows;
}

uint64_t GgufTensorInfo::row_bytes() const { return RowBytes(type, row_length()).value(); }

std::string GgufTensorInfo::ShapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  LLMSERVE_ASSIGN_OR_RETURN(auto mapping, MappedFile::Open(path));
  auto file = std::unique_ptr<GgufFile>(new GgufFile(std::filesystem::path(path).filename().string()));
  Status s = file->ParseAll(mapping->data(), mapping->size());
  if (!s.ok()) return s.WithContext(file->name_);
  file->mapping_ = std::move(mapping);
  return file;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Parse(const uint8_t* data, size_t size, const std::string& name) {
  auto file = std::unique_ptr<GgufFile>(new GgufFile(name));
  Status s = file->ParseAll(data, size);
  if (!s.ok()) return s.WithContext(name);
  return file;
}

Status GgufFile::ParseAll(const uint8_t* data, size_t size) {
  ByteReader reader(data, size);
  uint64_t tensor_count = 0, kv_count = 0;
  LLMSERVE_RETURN_IF_ERROR(ReadHeader(reader, &version_, &tensor_count, &kv_count));
  LLMSERVE_RETURN_IF_ERROR(ReadMetadata(reader, kv_count, &metadata_));
  LLMSERVE_ASSIGN_OR_RETURN(alignment_, AlignmentOf(metadata_));
  LLMSERVE_RETURN_IF_ERROR(ParseTensorInfos(reader, tensor_count));
  const uint64_t end_of_infos = reader.offset();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;  // no overflow: ≤ size + 2^31
  return PlaceTensors(data, size);
}

Status GgufFile::ParseTensorInfos(ByteReader& reader, uint64_t count) {
  tensors_.reserve(count);  // bounded by the bytes left (ReadHeader)
  for (uint64_t i = 0; i < count; ++i) {
    GgufTensorInfo t;
    Status s = reader.ReadString(&t.name, "a tensor name");
    if (!s.ok()) return s.WithContext("tensor info " + std::to_string(i));
    s = ReadTensorInfo(reader, &t);
    if (!s.ok()) return Status(s.code(), "tensor '" + t.name + "' " + s.message());
    tensors_.push_back(std::move(t));
  }
  return Status::Ok();
}

// Checks each tensor's place in the data section and points it there.
Status GgufFile::PlaceTensors(const uint8_t* data, size_t size) {
  const uint64_t data_size = size > data_offset_ ? size - data_offset_ : 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    GgufTensorInfo& t = tensors_[i];
    if (!index_.emplace(t.name, i).second) return Status::DataLoss("tensor '" + t.name + "' appears twice");
    if (t.offset % alignment_ != 0) {
      return Status::DataLoss("tensor '" + t.name + "' offset " + std::to_string(t.offset) +
                              " is not a multiple of the alignment " + std::to_string(alignment_));
    }
    if (t.offset > data_size || t.num_bytes > data_size - t.offset) {
      return Status::DataLoss("tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", +" +
                              std::to_string(t.num_bytes) + ") runs past the end of the file (the data section has " +
                              std::to_string(data_size) + " bytes)");
    }
    t.data = t.num_bytes > 0 ? data + data_offset_ + t.offset : nullptr;
  }
  return Status::Ok();
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Status DequantizeRows(const GgufTensorInfo& tensor, uint64_t first_row, uint64_t num_rows, float* out) {
  const GgmlTypeInfo& info = TypeInfo(tensor.type);
  if (!info.dequantizable) {
    return Status::Unimplemented("tensor '" + tensor.name + "' has type " + info.name +
                                 ", which llmserve cannot dequantize (supported: " + DequantizableTypeNames() + ")");
  }
  if (first_row > tensor.num_rows() || num_rows > tensor.num_rows() - first_row) {
    return Status::InvalidArgument("tensor '" + tensor.name + "' has " + std::to_string(tensor.num_rows()) +
                                   " rows; asked for " + std::to_string(num_rows) + " from row " +
                                   std::to_string(first_row));
  }
  if (num_rows == 0 || tensor.row_length() == 0) return Status::Ok();
  return DequantizeRow(tensor.type, tensor.data + first_row * tensor.row_bytes(), num_rows * tensor.row_length(),
                       out);
}

StatusOr<std::vector<float>> DequantizeTensor(const GgufTensorInfo& tensor) {
  std::vector<float> out(tensor.num_elements);
  LLMSERVE_RETURN_IF_ERROR(DequantizeRows(tensor, 0, tensor.num_rows(), out.data()));
  return out;
}

}  // namespace llmserve::common::gguf
