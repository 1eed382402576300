#include "base/utf8.h"

namespace llmserve::base {

bool DecodeUtf8(std::string_view s, size_t* pos, char32_t* cp) {
  const size_t n = s.size();
  size_t i = *pos;
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    *pos = i + 1;
    return true;
  }
  size_t len = 0;
  char32_t value = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    value = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    value = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    value = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    *pos = i + 1;
    return false;
  }
  size_t j = 1;
  for (; j < len; ++j) {
    if (i + j >= n) break;
    const auto b = static_cast<unsigned char>(s[i + j]);
    const unsigned char l = j == 1 ? lo : 0x80, h = j == 1 ? hi : 0xBF;
    if (b < l || b > h) break;
    value = (value << 6) | (b & 0x3F);
  }
  if (j < len) {  // maximal subpart: the valid bytes consumed so far
    *pos = i + j;
    return false;
  }
  *cp = value;
  *pos = i + len;
  return true;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsValidUtf8(std::string_view s) {
  size_t pos = 0;
  char32_t cp;
  while (pos < s.size()) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (!DecodeUtf8(s, &pos, &cp)) return false;
  }
  return true;
}

std::string RepairUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  char32_t cp;
  while (pos < s.size()) {
    const size_t start = pos;
    if (DecodeUtf8(s, &pos, &cp)) {
      out.append(s.substr(start, pos - start));
    } else {
      out.append(kReplacementChar);
    }
  }
  return out;
}

size_t CompleteUtf8PrefixLength(std::string_view s) {
  // Only the last three bytes can belong to an unfinished sequence.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const size_t i = n - back;
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) return n;
    if (b < 0xC0) continue;  // continuation byte: look further back
    if (b < 0xC2 || b > 0xF4) return n;           // can never start a sequence
    if (Utf8SequenceLength(b) <= back) return n;  // complete (or invalid)
    size_t pos = i;
    char32_t cp;
    // Incomplete: hold it back only if the bytes so far are a valid prefix.
    DecodeUtf8(s, &pos, &cp);
    return pos == n ? i : n;
  }
  return n;
}

std::u32string ToCodePoints(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t pos = 0;
  char32_t cp;
  while (pos < s.size()) out.push_back(DecodeUtf8(s, &pos, &cp) ? cp : U'\uFFFD');
  return out;
}

std::string FromCodePoints(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) AppendUtf8(cp, &out);
  return out;
}

size_t CountCodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool IsAscii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

bool IsUnicodeWhitespace(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85:
    case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace llmserve::base
