#include "frontend/tool_parsers/json_canon.h"

#include "base/utf8.h"

namespace llmserve::frontend::tool_parsers {
namespace {

bool IsJsonDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

size_t JsonValueStream::Feed(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() && state_ != State::kDone && state_ != State::kError) {
    if (Step(bytes[i])) ++i;  // a number's terminator is stepped again
  }
  return i;
}

void JsonValueStream::Finish() {
  if (state_ == State::kNumber && stack_.empty()) EndNumber();
}

bool JsonValueStream::Step(char c) {
  switch (state_) {
    case State::kValue:
      if (!IsJsonWhitespace(c)) return StartValue(c);
      return true;
    case State::kKeyOrClose:
    case State::kKey:
      if (IsJsonWhitespace(c)) return true;
      if (c == '}' && state_ == State::kKeyOrClose) {
        CloseContainer(c);
      } else if (c == '"') {
        out_ += '"';
        in_key_ = true;
        state_ = State::kString;
      } else {
        Fail();
      }
      return true;
    case State::kColon:
      if (IsJsonWhitespace(c)) return true;
      if (c != ':') return Fail(), true;
      out_ += ": ";
      state_ = State::kValue;
      return true;
    case State::kCommaOrClose:
      if (IsJsonWhitespace(c)) return true;
      if (c == ',') {
        out_ += ", ";
        state_ = stack_.back() == '{' ? State::kKey : State::kValue;
      } else if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) {
        CloseContainer(c);
      } else {
        Fail();
      }
      return true;
    case State::kString:
      StringByte(c);
      return true;
    case State::kNumber:
      if (IsJsonDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
        token_ += c;
        return true;
      }
      EndNumber();
      return false;
    case State::kLiteral: {
      token_ += c;
      for (std::string_view lit : {"true", "false", "null"}) {
        if (lit == token_) {
          out_ += token_;
          AfterValue();
          return true;
        }
        if (lit.substr(0, token_.size()) == token_) return true;
      }
      Fail();
      return true;
    }
    case State::kDone:
    case State::kError:
      return false;
  }
  return false;
}

bool JsonValueStream::StartValue(char c) {
  if (c == '{' || c == '[') {
    out_ += c;
    stack_.push_back(c);
    state_ = c == '{' ? State::kKeyOrClose : State::kValue;
  } else if (c == ']' && !stack_.empty() && stack_.back() == '[' && out_.back() == '[') {
    CloseContainer(c);  // empty array
  } else if (c == '"') {
    out_ += '"';
    in_key_ = false;
    state_ = State::kString;
  } else if (c == '-' || IsJsonDigit(c)) {
    token_.assign(1, c);
    state_ = State::kNumber;
  } else if (c == 't' || c == 'f' || c == 'n') {
    token_.assign(1, c);
    state_ = State::kLiteral;
  } else {
    Fail();
  }
  return true;
}

void JsonValueStream::CloseContainer(char c) {
  out_ += c;
  stack_.pop_back();
  AfterValue();
}

void JsonValueStream::AfterValue() {
  state_ = stack_.empty() ? State::kDone : State::kCommaOrClose;
}

void JsonValueStream::StringByte(char c) {
  if (hex_left_ > 0) return UnicodeDigit(c);
  if (escape_) return EscapeByte(c);
  if (want_low_ && c != '\\') return Fail();
  if (c == '\\') {
    escape_ = true;
  } else if (c == '"') {
    out_ += '"';
    if (in_key_) {
      state_ = State::kColon;
    } else {
      AfterValue();
    }
  } else if (static_cast<unsigned char>(c) < 0x20) {
    Fail();  // raw control characters are invalid (Python's strict mode)
  } else {
    out_ += c;  // UTF-8 bytes pass through unchanged
  }
}

void JsonValueStream::EscapeByte(char c) {
  escape_ = false;
  if (want_low_ && c != 'u') return Fail();
  switch (c) {
    case '"': return EmitCodePoint('"');
    case '\\': return EmitCodePoint('\\');
    case '/': return EmitCodePoint('/');
    case 'b': return EmitCodePoint('\b');
    case 'f': return EmitCodePoint('\f');
    case 'n': return EmitCodePoint('\n');
    case 'r': return EmitCodePoint('\r');
    case 't': return EmitCodePoint('\t');
    case 'u':
      hex_left_ = 4;
      hex_ = 0;
      return;
    default:
      return Fail();
  }
}

void JsonValueStream::UnicodeDigit(char c) {
  unsigned d;
  if (IsJsonDigit(c)) {
    d = static_cast<unsigned>(c - '0');
  } else if (c >= 'a' && c <= 'f') {
    d = static_cast<unsigned>(c - 'a' + 10);
  } else if (c >= 'A' && c <= 'F') {
    d = static_cast<unsigned>(c - 'A' + 10);
  } else {
    return Fail();
  }
  hex_ = hex_ * 16 + d;
  if (--hex_left_ > 0) return;
  bool low = hex_ >= 0xDC00 && hex_ <= 0xDFFF;
  if (want_low_) {
    want_low_ = false;
    if (!low) return Fail();
    return EmitCodePoint(0x10000 + ((high_surrogate_ - 0xD800) << 10) + (hex_ - 0xDC00));
  }
  if (hex_ >= 0xD800 && hex_ <= 0xDBFF) {
    high_surrogate_ = hex_;
    want_low_ = true;
    return;
  }
  if (low) return Fail();  // a lone low surrogate
  EmitCodePoint(hex_);
}

void JsonValueStream::EmitCodePoint(unsigned cp) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (cp) {
    case '"': out_ += "\\\""; return;
    case '\\': out_ += "\\\\"; return;
    case '\n': out_ += "\\n"; return;
    case '\r': out_ += "\\r"; return;
    case '\t': out_ += "\\t"; return;
    case '\b': out_ += "\\b"; return;
    case '\f': out_ += "\\f"; return;
    default: break;
  }
  if (cp < 0x20) {
    out_ += "\\u00";
    out_ += kHex[cp >> 4];
    out_ += kHex[cp & 0xF];
    return;
  }
  base::AppendUtf8(static_cast<char32_t>(cp), &out_);
}

void JsonValueStream::EndNumber() {
  if (!PyNumberText(token_, &out_)) return Fail();
  AfterValue();
}

bool CanonicalJson(std::string_view text, std::string* out) {
  JsonValueStream stream;
  size_t used = stream.Feed(text);
  stream.Finish();
  if (!stream.done()) return false;
  for (char c : text.substr(used)) {
    if (!IsJsonWhitespace(c)) return false;
  }
  *out = stream.out();
  return true;
}

}  // namespace llmserve::frontend::tool_parsers
