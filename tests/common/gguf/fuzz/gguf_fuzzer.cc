// libFuzzer target over the GGUF reader: any bytes must parse or fail with a
// status, and whatever parses must dequantize without reading out of bounds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace llmserve::common::gguf;
  auto file = GgufFile::Parse(data, size, "fuzz.gguf");
  if (!file.ok()) return 0;
  std::vector<float> row;
  for (const GgufTensorInfo& t : (*file)->tensors()) {
    if (t.num_rows() == 0 || t.row_length() == 0 || t.row_length() > (1u << 16)) continue;
    row.resize(t.row_length());
    (void)DequantizeRows(t, t.num_rows() - 1, 1, row.data());  // the last row: the one nearest the end
  }
  return 0;
}
