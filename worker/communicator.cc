#include "worker/communicator.h"

#include <cstring>

namespace llmserve::worker {

Status SingleProcessCommunicator::AllGather(const float* in, size_t n, float* out) {
  if (in != out) std::memmove(out, in, n * sizeof(float));
  return Status::Ok();
}

}  // namespace llmserve::worker
