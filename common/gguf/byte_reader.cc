#include "common/gguf/byte_reader.h"

namespace llmserve::common::gguf {

Status ByteReader::Need(uint64_t bytes, const char* what) const {
  if (bytes <= remaining()) return Status::Ok();
  return Status::DataLoss("truncated: " + std::string(what) + " needs " + std::to_string(bytes) +
                          " bytes at offset " + std::to_string(offset_) + ", the file has " +
                          std::to_string(remaining()) + " left");
}

Status ByteReader::ReadString(std::string* out, const char* what) {
  uint64_t length = 0;
  LLMSERVE_RETURN_IF_ERROR(Read(&length, what));
  LLMSERVE_RETURN_IF_ERROR(Need(length, what));
  out->assign(reinterpret_cast<const char*>(data_ + offset_), length);
  offset_ += length;
  return Status::Ok();
}

}  // namespace llmserve::common::gguf
