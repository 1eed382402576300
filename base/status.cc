#include "base/status.h"

#include <glog/logging.h>

#include <cstdlib>

#include "base/status_or.h"

namespace llmserve {

namespace {
const char* CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

namespace status_internal {
void DieOfStatusOrMisuse(const char* what, const Status& status) {
  LOG(FATAL) << what << " (" << status.ToString() << ")";
  std::abort();  // LOG(FATAL) does not return; this tells the compiler so
}
}  // namespace status_internal

}  // namespace llmserve
