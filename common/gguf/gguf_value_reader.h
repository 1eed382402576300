#pragma once
// Reading one GGUF metadata value from a byte cursor, bounds-checked.

#include <cstdint>

#include "base/status_or.h"
#include "common/gguf/byte_reader.h"
#include "common/gguf/gguf_value.h"

namespace llmserve::common::gguf {

// Reads a value of GGUF type number `type` at the reader's position.
// DataLoss for an undefined type, an array of arrays, an array longer than
// the bytes left could hold, a bool other than 0 or 1, or truncation.
StatusOr<GgufValue> ReadGgufValue(ByteReader& reader, uint32_t type);

}  // namespace llmserve::common::gguf
