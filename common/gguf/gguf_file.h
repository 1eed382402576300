#pragma once
// Reading GGUF files (versions 2 and 3, little-endian; gguf.md in ggml's
// docs), memory-mapped: the header, every metadata value, and the tensor
// infos are parsed and checked at Open; tensor data is never copied here,
// each tensor points into the mapping in its stored (quantized) layout.
//
// Layout: "GGUF", version (u32), tensor count (u64), metadata count (u64),
// metadata (key string, value type u32, value), tensor infos (name string,
// n_dims u32, dims u64 × n_dims, ggml type u32, offset u64), padding to
// `general.alignment` (default 32), then the data section; each tensor's
// offset is from the data section's start and a multiple of the alignment.
// Strings are a u64 length and that many bytes.
//
// Whatever the bytes, Open returns a file or an error naming the problem
// (and the key or tensor where there is one); it never reads out of bounds.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status_or.h"
#include "common/gguf/ggml_type.h"
#include "common/gguf/gguf_metadata.h"
#include "common/mapped_file.h"

namespace llmserve::common::gguf {

class ByteReader;

// The alignment of tensor data when general.alignment is absent.
inline constexpr uint32_t kDefaultAlignment = 32;

// One tensor of a GGUF file.
struct GgufTensorInfo {
  std::string name;
  // ggml order: dims[0] is the row length (contiguous values), so a PyTorch
  // weight [out, in] is stored with dims {in, out}. 1 to 4 entries.
  std::vector<uint64_t> dims;
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;        // from the start of the data section
  uint64_t num_elements = 0;  // product of dims
  uint64_t num_bytes = 0;     // in the stored layout
  const uint8_t* data = nullptr;  // first byte in the mapping; nullptr when num_bytes is 0

  uint64_t row_length() const { return dims[0]; }
  // Product of dims[1..].
  uint64_t num_rows() const;
  // Bytes of one row in the stored layout.
  uint64_t row_bytes() const;
  // "[4096, 1024]" (GGUF order).
  std::string ShapeString() const;
};

class GgufFile {
 public:
  // Maps `path` and parses it; errors start with the file's name.
  static StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses a GGUF image the caller keeps alive for as long as the result
  // (tests, fuzzing); `name` prefixes errors.
  static StatusOr<std::unique_ptr<GgufFile>> Parse(const uint8_t* data, size_t size, const std::string& name);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  // File offset of the data section.
  uint64_t data_offset() const { return data_offset_; }
  const GgufMetadata& metadata() const { return metadata_; }
  // Every tensor, in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const GgufTensorInfo* FindTensor(std::string_view name) const;
  // The name errors start with.
  const std::string& name() const { return name_; }
  // MappedFile::DropResidentPages for an opened file (no-op after Parse).
  void DropResidentPages() const {
    if (mapping_) mapping_->DropResidentPages();
  }

 private:
  explicit GgufFile(std::string name) : name_(name), metadata_(std::move(name)) {}
  Status ParseAll(const uint8_t* data, size_t size);
  Status ParseTensorInfos(ByteReader& reader, uint64_t count);
  Status PlaceTensors(const uint8_t* data, size_t size);

  std::unique_ptr<MappedFile> mapping_;  // null for Parse
  std::string name_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  GgufMetadata metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;  // tensor name → position in tensors_
};

// Rows [first_row, first_row + num_rows) of `tensor` as float32 into
// out[0 .. num_rows × row_length): InvalidArgument past the last row,
// Unimplemented naming the tensor and its type when llmserve cannot
// dequantize the type.
Status DequantizeRows(const GgufTensorInfo& tensor, uint64_t first_row, uint64_t num_rows, float* out);
// The whole tensor as float32 (num_elements values).
StatusOr<std::vector<float>> DequantizeTensor(const GgufTensorInfo& tensor);

}  // namespace llmserve::common::gguf
