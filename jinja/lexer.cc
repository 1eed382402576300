#include "jinja/lexer.h"

#include <cstring>

#include "jinja/error.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {

void Fail(std::string message) { throw TemplateError{std::move(message)}; }

std::string DescribePosition(int line, int column) {
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

namespace {

// Python's \s over UTF-8: returns the byte length of the whitespace code point
// at s[i], or 0.
size_t SpaceAt(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return IsPySpace(c) ? 1 : 0;
  size_t len = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : (c >= 0xC0) ? 2 : 1;
  if (i + len > s.size()) return 0;
  std::u32string cp = ToCodePoints(std::string_view(s).substr(i, len));
  return (cp.size() == 1 && IsPySpace(cp[0])) ? len : 0;
}

// Python's str.rstrip() of s[begin, end): returns the new end.
size_t RStripEnd(const std::string& s, size_t begin, size_t end) {
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (SpaceAt(s, start) != end - start) break;
    end = start;
  }
  return end;
}

class Lexer {
 public:
  explicit Lexer(const std::string& raw) {
    // Normalise newlines and drop one trailing newline, as jinja2 does.
    src_.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        src_ += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        src_ += raw[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  std::vector<Token> Run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      size_t tag = FindTagStart(pos_);
      if (tag == std::string::npos) {
        Emit(Token::Type::kData, src_.substr(pos_));
        Advance(src_.size());
        break;
      }
      char kind = src_[tag + 1];  // '{', '%' or '#'
      char sign = (tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+')) ? src_[tag + 2] : 0;
      size_t text_end = tag;
      if (sign == '-') {
        text_end = RStripEnd(src_, pos_, tag);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: drop spaces between the line start and a block/comment tag.
        size_t l_pos = tag;
        while (l_pos > pos_ && src_[l_pos - 1] != '\n') --l_pos;
        bool at_line = l_pos > pos_ || line_starting;
        if (at_line && l_pos < tag) {
          size_t i = l_pos;
          while (i < tag) {
            size_t n = SpaceAt(src_, i);
            if (!n) break;
            i += n;
          }
          if (i == tag) text_end = l_pos;
        }
      }
      if (text_end > pos_) Emit(Token::Type::kData, src_.substr(pos_, text_end - pos_));
      Advance(tag);
      size_t after_open = tag + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        line_starting = LexComment(after_open);
      } else if (kind == '%' && IsRawBegin(after_open)) {
        line_starting = LexRaw(tag);
      } else {
        line_starting = LexTag(kind == '{', after_open);
      }
    }
    tokens_.push_back(Token{Token::Type::kEof, "", line_, col_});
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  // Moves the position to `to`, keeping line/column up to date.
  void Advance(size_t to) {
    for (; pos_ < to; ++pos_) {
      if (src_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else if ((static_cast<unsigned char>(src_[pos_]) & 0xC0) != 0x80) {
        ++col_;
      }
    }
  }

  void Emit(Token::Type type, std::string text) {
    tokens_.push_back(Token{type, std::move(text), line_, col_});
  }

  [[noreturn]] void FailHere(const std::string& msg, int line, int col) {
    throw TemplateError{msg, line, col};
  }

  // Block/comment end `+E`, `-E\s*`, `E\n?` at i: returns the end offset or npos.
  size_t MatchEnd(size_t i, const char* end, bool trim) const {
    size_t n = std::strlen(end);
    if (src_.compare(i, 1, "+") == 0 && src_.compare(i + 1, n, end) == 0) return i + 1 + n;
    if (src_.compare(i, 1, "-") == 0 && src_.compare(i + 1, n, end) == 0) {
      size_t j = i + 1 + n;
      while (j < src_.size()) {
        size_t s = SpaceAt(src_, j);
        if (!s) break;
        j += s;
      }
      return j;
    }
    if (src_.compare(i, n, end) == 0) {
      size_t j = i + n;
      if (trim && j < src_.size() && src_[j] == '\n') ++j;
      return j;
    }
    return std::string::npos;
  }

  bool LexComment(size_t body) {
    int line = line_, col = col_;
    for (size_t i = body; i < src_.size(); ++i) {
      size_t end = MatchEnd(i, "#}", true);
      if (end != std::string::npos) {
        Advance(end);
        return src_[end - 1] == '\n';
      }
    }
    FailHere("Missing end of comment tag", line, col);
  }

  size_t SkipSpaces(size_t i) const {
    while (i < src_.size()) {
      size_t s = SpaceAt(src_, i);
      if (!s) break;
      i += s;
    }
    return i;
  }

  bool IsRawBegin(size_t i) const {
    i = SkipSpaces(i);
    if (src_.compare(i, 3, "raw") != 0) return false;
    size_t j = SkipSpaces(i + 3);
    return src_.compare(j, 3, "-%}") == 0 || src_.compare(j, 2, "%}") == 0;
  }

  bool LexRaw(size_t tag) {
    int line = line_, col = col_;
    size_t i = SkipSpaces(src_.find("raw", tag) + 3);
    size_t body = src_.compare(i, 1, "-") == 0 ? SkipSpaces(i + 3) : i + 2;
    // Find `{%[-+]? endraw ...%}`.
    for (size_t t = src_.find("{%", body); t != std::string::npos; t = src_.find("{%", t + 1)) {
      size_t j = t + 2;
      char sign = (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) ? src_[j] : 0;
      if (sign) ++j;
      j = SkipSpaces(j);
      if (src_.compare(j, 6, "endraw") != 0) continue;
      j = SkipSpaces(j + 6);
      size_t end = MatchEnd(j, "%}", true);
      if (end == std::string::npos) continue;
      size_t text_end = sign == '-' ? RStripEnd(src_, body, t) : t;
      Advance(body);
      if (text_end > body) Emit(Token::Type::kData, src_.substr(body, text_end - body));
      Advance(end);
      return src_[end - 1] == '\n';
    }
    FailHere("Missing end of raw directive", line, col);
  }

  static bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

  // Digits with optional single underscores between them, at i; returns end or i.
  size_t ScanDigits(size_t i) const {
    size_t j = i;
    while (j < src_.size() && IsDigitChar(src_[j])) {
      ++j;
      if (j + 1 < src_.size() && src_[j] == '_' && IsDigitChar(src_[j + 1])) ++j;
    }
    return j;
  }

  // Lexes the inside of {{ }} or {% %} starting at `body`; returns line_starting.
  bool LexTag(bool variable, size_t body) {
    int open_line = line_, open_col = col_;
    tokens_.push_back(Token{variable ? Token::Type::kVarBegin : Token::Type::kBlockBegin, "", line_, col_});
    Advance(body);
    std::vector<char> balance;
    const char* end_str = variable ? "}}" : "%}";
    while (true) {
      if (pos_ >= src_.size()) {
        FailHere(std::string("unexpected end of template, expected '") + end_str + "' to close the tag opened at " +
                     DescribePosition(open_line, open_col),
                 line_, col_);
      }
      if (balance.empty()) {
        size_t end = std::string::npos;
        if (variable) {
          if (src_.compare(pos_, 3, "-}}") == 0) end = MatchEnd(pos_, "}}", false);
          else if (src_.compare(pos_, 2, "}}") == 0) end = pos_ + 2;
        } else {
          end = MatchEnd(pos_, "%}", true);
        }
        if (end != std::string::npos) {
          tokens_.push_back(Token{variable ? Token::Type::kVarEnd : Token::Type::kBlockEnd, "", line_, col_});
          Advance(end);
          return src_[end - 1] == '\n';
        }
      }
      char c = src_[pos_];
      size_t sp = SpaceAt(src_, pos_);
      if (sp) {
        Advance(SkipSpaces(pos_));
        continue;
      }
      int line = line_, col = col_;
      if (IsDigitChar(c)) {
        LexNumber();
      } else if (IsNameStart(c)) {
        size_t j = pos_;
        while (j < src_.size() && (IsNameStart(src_[j]) || IsDigitChar(src_[j]))) ++j;
        tokens_.push_back(Token{Token::Type::kName, src_.substr(pos_, j - pos_), line, col});
        Advance(j);
      } else if (c == '\'' || c == '"') {
        LexString(c);
      } else {
        static const char* kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
                                     "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"};
        const char* found = nullptr;
        for (const char* op : kOps) {
          if (src_.compare(pos_, std::strlen(op), op) == 0) {
            found = op;
            break;
          }
        }
        if (!found) {
          std::string ch = src_.substr(pos_, 1);
          FailHere("unexpected char '" + ch + "'", line, col);
        }
        std::string op = found;
        if (op == "(" || op == "[" || op == "{") {
          balance.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
        } else if (op == ")" || op == "]" || op == "}") {
          if (balance.empty()) FailHere("unexpected '" + op + "'", line, col);
          if (balance.back() != op[0]) {
            FailHere("unexpected '" + op + "', expected '" + std::string(1, balance.back()) + "'", line, col);
          }
          balance.pop_back();
        }
        tokens_.push_back(Token{Token::Type::kOperator, op, line, col});
        Advance(pos_ + op.size());
      }
    }
  }

  void LexNumber() {
    int line = line_, col = col_;
    size_t j = ScanDigits(pos_);
    bool is_float = false;
    // Fraction: `.digits` (but not `1.foo` attribute-like access).
    if (j + 1 < src_.size() && src_[j] == '.' && IsDigitChar(src_[j + 1])) {
      j = ScanDigits(j + 1);
      is_float = true;
    }
    if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
      size_t k = j + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && IsDigitChar(src_[k])) {
        j = ScanDigits(k);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = pos_; i < j; ++i) {
      if (src_[i] != '_') text += src_[i];
    }
    tokens_.push_back(Token{is_float ? Token::Type::kFloat : Token::Type::kInteger, text, line, col});
    Advance(j);
  }

  void LexString(char quote) {
    int line = line_, col = col_;
    std::string value;
    size_t i = pos_ + 1;
    while (true) {
      if (i >= src_.size()) FailHere("unterminated string literal", line, col);
      char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) FailHere("unterminated string literal", line, col);
      char e = src_[i + 1];
      i += 2;
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\n': break;  // line continuation
        case 'x': case 'u': case 'U': {
          size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + n > src_.size()) FailHere("truncated \\" + std::string(1, e) + " escape", line, col);
          char32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            char h = src_[i + k];
            int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0) FailHere("truncated \\" + std::string(1, e) + " escape", line, col);
            cp = cp * 16 + static_cast<char32_t>(d);
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            FailHere("illegal Unicode character in string literal", line, col);
          }
          AppendUtf8(cp, &value);
          i += n;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && i < src_.size() && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i) {
              cp = cp * 8 + static_cast<char32_t>(src_[i] - '0');
            }
            AppendUtf8(cp, &value);
          } else {
            value += '\\';
            value += e;
          }
      }
    }
    tokens_.push_back(Token{Token::Type::kString, std::move(value), line, col});
    Advance(i + 1);
  }

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Tokenize(const std::string& source) { return Lexer(source).Run(); }

}  // namespace llmserve::jinja
