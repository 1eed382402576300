#include "frontend/openai/request_body.h"

#include <cstdint>

namespace llmserve::frontend::openai {

bool IsValidUtf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size(), i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

MaybeError ParseJsonObject(std::string_view body, nlohmann::json* out) {
  if (!IsValidUtf8(body)) return BadRequest("The request body is not valid UTF-8.");
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return BadRequest("The request body is empty; expected a JSON object.");
  }
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    return BadRequest(std::string("Invalid JSON in the request body: ") + e.what());
  }
  if (!parsed.is_object()) {
    return BadRequest("The request body must be a JSON object, got " + JsonTypeName(parsed) + ".");
  }
  *out = std::move(parsed);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
