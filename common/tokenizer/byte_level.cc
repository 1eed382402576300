#include "common/tokenizer/byte_level.h"

#include "base/utf8.h"

namespace llmserve::common::tokenizer {
namespace {

struct Tables {
  std::array<std::string, 256> to_unicode;
  std::array<char32_t, 256> code_point{};
  Tables() {
    // Printable Latin-1 bytes map to themselves; the other 68 bytes map to
    // U+0100 upwards, in byte order.
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      code_point[b] = printable ? static_cast<char32_t>(b) : next++;
      base::AppendUtf8(code_point[b], &to_unicode[b]);
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

const std::string& ByteToUnicode(unsigned char b) { return GetTables().to_unicode[b]; }

int UnicodeToByte(char32_t cp) {
  if (cp < 256) {
    const bool printable = (cp >= '!' && cp <= '~') || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE);
    return printable ? static_cast<int>(cp) : -1;
  }
  if (cp >= 256 + 68) return -1;
  // U+0100 + k is the k-th non-printable byte.
  const auto& t = GetTables();
  for (int b = 0; b < 256; ++b) {
    if (t.code_point[b] == cp) return b;
  }
  return -1;
}

void AppendByteLevel(std::string_view bytes, std::string* out) {
  const auto& t = GetTables();
  for (unsigned char b : bytes) out->append(t.to_unicode[b]);
}

}  // namespace llmserve::common::tokenizer
