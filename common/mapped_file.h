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
  // Drops the pages read so far from this process's resident set (they stay
  // in the page cache; reading them again maps them back), for a caller that
  // copied what it needs.
  void DropResidentPages() const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace llmserve::common
