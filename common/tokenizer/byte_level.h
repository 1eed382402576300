#pragma once
// GPT-2's byte-to-unicode table: every byte maps to a printable code point so
// that byte-level BPE vocabularies can be stored as text ("Ġ" is the space).

#include <array>
#include <string>
#include <string_view>

namespace llmserve::common::tokenizer {

// The UTF-8 text of the code point that stands for byte `b`.
const std::string& ByteToUnicode(unsigned char b);

// The byte that code point `cp` stands for, or -1 when `cp` is not in the table.
int UnicodeToByte(char32_t cp);

// Appends the byte-level form of `bytes` (each byte replaced by its code point).
void AppendByteLevel(std::string_view bytes, std::string* out);

}  // namespace llmserve::common::tokenizer
