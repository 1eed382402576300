#pragma once
// Writing GGUF v3 files: metadata of every value type, tensors of any type
// llmserve can quantize (or raw bytes already in a type's layout), each
// tensor's data at a multiple of the alignment. For tests and test models;
// the whole file is built in memory.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "common/gguf/ggml_type.h"
#include "common/gguf/gguf_file.h"
#include "common/gguf/gguf_value.h"

namespace llmserve::common::gguf {

class GgufWriter {
 public:
  // `alignment` (a power of two, CHECKed) is written as general.alignment
  // when it is not the default 32.
  explicit GgufWriter(uint32_t alignment = kDefaultAlignment);

  // Sets `key`; a key set before keeps its place and takes the new value.
  // Setting general.alignment does not move the tensors (tests use this to
  // write a file that disagrees with itself).
  void Set(const std::string& key, GgufValue value);
  // Adds a tensor whose bytes are in `type`'s layout already. InvalidArgument
  // when the name is taken or the byte count does not match dims and type.
  Status AddRaw(std::string name, std::vector<uint64_t> dims, GgmlType type, std::vector<uint8_t> bytes);
  // Quantises `values` (the product of dims of them, dims[0] per row) to
  // `type` and adds the tensor (errors: QuantizeRow's, or a count mismatch).
  Status Add(std::string name, std::vector<uint64_t> dims, GgmlType type, const std::vector<float>& values);

  // The file's bytes.
  std::string Serialize() const;
  // Writes Serialize() to `path`.
  Status WriteFile(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    GgmlType type;
    std::vector<uint8_t> bytes;
  };
  uint32_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace llmserve::common::gguf
