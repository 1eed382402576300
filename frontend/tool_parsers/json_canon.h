#pragma once
// JsonValueStream: reads one JSON value byte by byte and writes it back the
// way Python's json.dumps(json.loads(text), ensure_ascii=False) would: ", "
// and ": " separators, no other whitespace, non-ASCII text raw, \uXXXX escapes
// decoded, floats in repr() form. Output only grows, and only with bytes that
// are certain, so a stream's output at any point is a prefix of the final
// text: the tool parsers stream it as argument fragments.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace llmserve::frontend::tool_parsers {

// JSON's insignificant whitespace: space, tab, newline, carriage return.
inline bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Python's repr() of a double as json.dumps writes it ("1.0", "1e+16",
// "Infinity").
std::string PyFloatRepr(double value);

// Appends the JSON number `token` as json.dumps(json.loads(token)) writes it;
// false if it is not a JSON number.
bool PyNumberText(std::string_view token, std::string* out);

class JsonValueStream {
 public:
  // Consumes bytes of the value; returns how many it used. It stops early
  // when the value is complete (a number is complete only at the byte after
  // it, which is not consumed) or on an error.
  size_t Feed(std::string_view bytes);
  // The input ended: completes a trailing top-level number.
  void Finish();

  // The value is complete.
  bool done() const { return state_ == State::kDone; }
  // The input is not JSON (or uses a form we reject, such as NaN).
  bool failed() const { return state_ == State::kError; }
  // The canonical text written so far.
  const std::string& out() const { return out_; }

 private:
  enum class State {
    kValue, kKeyOrClose, kKey, kColon, kCommaOrClose,
    kString, kNumber, kLiteral, kDone, kError
  };

  bool Step(char c);  // false: c was not consumed (number terminator)
  bool StartValue(char c);
  void CloseContainer(char c);
  void AfterValue();
  void StringByte(char c);
  void EscapeByte(char c);
  void UnicodeDigit(char c);
  void EmitCodePoint(unsigned cp);
  void EndNumber();
  void Fail() { state_ = State::kError; }

  State state_ = State::kValue;
  std::vector<char> stack_;  // open containers: '{' or '['
  std::string out_;
  std::string token_;        // number or literal being read
  bool in_key_ = false;      // the string being read is an object key
  bool escape_ = false;      // after a backslash
  int hex_left_ = 0;         // \uXXXX digits still to read
  unsigned hex_ = 0;
  unsigned high_surrogate_ = 0;  // waiting for the low half of a pair
  bool want_low_ = false;        // the next escape must be \u of a low surrogate
};

// Canonicalizes a whole JSON text (surrounding whitespace allowed); false if
// it is not exactly one JSON value.
bool CanonicalJson(std::string_view text, std::string* out);

}  // namespace llmserve::frontend::tool_parsers
