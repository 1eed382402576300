#pragma once
// UTF-8, the one module for it: decoding one code point, encoding,
// validation, lossy repair (invalid bytes become U+FFFD), code-point strings
// and the Unicode White_Space property. Used by the tokenizer and by Jinja.

#include <cstddef>
#include <string>
#include <string_view>

namespace llmserve::base {

// The replacement character U+FFFD, UTF-8 encoded.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Decodes the code point starting at s[*pos] and advances *pos past it.
// Returns false (and advances by the length of the maximal invalid subpart,
// at least 1) when the bytes there are not valid UTF-8.
bool DecodeUtf8(std::string_view s, size_t* pos, char32_t* cp);

// Appends the UTF-8 encoding of `cp` to `out`.
void AppendUtf8(char32_t cp, std::string* out);

// True when `s` is entirely valid UTF-8.
bool IsValidUtf8(std::string_view s);

// Copies `s`, replacing each maximal invalid subpart with U+FFFD (the
// WHATWG / Rust `from_utf8_lossy` convention).
std::string RepairUtf8(std::string_view s);

// Length of the longest prefix of `s` that does not end inside an incomplete
// (but so far valid) multi-byte sequence. Bytes that can never become valid
// are not held back.
size_t CompleteUtf8PrefixLength(std::string_view s);

// Number of bytes of the UTF-8 sequence whose lead byte is `lead` (1 for
// ASCII and for bytes that cannot start a sequence).
inline size_t Utf8SequenceLength(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Decodes all of `s` into code points; each maximal invalid subpart becomes
// U+FFFD (what Python's bytes.decode('utf-8', 'replace') gives).
std::u32string ToCodePoints(std::string_view s);

// Encodes code points as UTF-8.
std::string FromCodePoints(std::u32string_view s);

// Number of code points in valid UTF-8 `s` (Python's len(str)).
size_t CountCodePoints(std::string_view s);

// True when every byte is ASCII (then bytes == code points).
bool IsAscii(std::string_view s);

// The Unicode White_Space property (what Rust's char::is_whitespace tests).
bool IsUnicodeWhitespace(char32_t cp);

}  // namespace llmserve::base
