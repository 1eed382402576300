#pragma once
// A cursor over a byte range that never reads past its end: every read
// checks the bytes left first and fails with DataLoss saying how many bytes
// it needed at which offset. Values are little-endian (GGUF's byte order).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "base/status.h"

namespace llmserve::common::gguf {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return size_ - offset_; }

  // Reads one integer or float; `what` names it in the error.
  template <typename T>
  Status Read(T* out, const char* what) {
    static_assert(std::is_arithmetic_v<T>);
    LLMSERVE_RETURN_IF_ERROR(Need(sizeof(T), what));
    std::memcpy(out, data_ + offset_, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
    offset_ += sizeof(T);
    return Status::Ok();
  }
  // Reads a GGUF string: a uint64 length, then that many bytes.
  Status ReadString(std::string* out, const char* what);

 private:
  Status Need(uint64_t bytes, const char* what) const;

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

}  // namespace llmserve::common::gguf
