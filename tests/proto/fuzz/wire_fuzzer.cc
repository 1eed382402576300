// libFuzzer target over every wire decoder (msgpack and protobuf).
#include <cstddef>
#include <cstdint>

#include "tests/proto/decode_all.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  llmserve::proto::testing::DecodeAll(data, size);
  return 0;
}
