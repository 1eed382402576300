#pragma once
// A read-only memory-mapped file. Non-copyable; unmaps on destruction.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status_or.h"

namespace llmserve::common {

class MappedFile {
 public:
  // Maps the whole of `path` read-only.
  static StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }  // first byte of the file
  size_t size() const { return size_; }          // length in bytes
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace llmserve::common
