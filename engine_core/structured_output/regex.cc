#include "engine_core/structured_output/regex.h"

#include <string>

#include "base/utf8.h"
#include "engine_core/structured_output/char_class.h"

namespace llmserve::engine_core::structured_output {
namespace {

// The JSON string-literal form of the members of `cls`.
Expr JsonEscapedClass(const CharClass& cls) {
  CharClass safe, plain;
  plain.Add(0x20, 0x21);
  plain.Add(0x23, 0x5B);
  plain.Add(0x5D, 0x10FFFF);
  std::vector<Expr> alts;
  for (auto [lo, hi] : cls.ranges()) {
    for (auto [plo, phi] : plain.ranges()) {
      uint32_t a = std::max(lo, plo), b = std::min(hi, phi);
      if (a <= b) safe.Add(a, b);
    }
    for (uint32_t c = lo; c <= hi && c < 0x20; ++c) {
      static const char* kShort[] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     "\\b",   "\\t",   "\\n",   nullptr, "\\f",   "\\r"};
      char buf[8];
      snprintf(buf, sizeof(buf), "\\u%04x", c);
      alts.push_back(c < 14 && kShort[c] ? LiteralExpr(kShort[c]) : LiteralExpr(buf));
    }
    if (lo <= '"' && '"' <= hi) alts.push_back(LiteralExpr("\\\""));
    if (lo <= '\\' && '\\' <= hi) alts.push_back(LiteralExpr("\\\\"));
  }
  if (!safe.ranges().empty()) alts.insert(alts.begin(), safe.ToExpr());
  return AltExpr(std::move(alts));
}

class RegexParser {
 public:
  RegexParser(std::string_view p, bool json) : s_(p), json_(json) {}

  StatusOr<Expr> Parse() {
    if (pos_ < s_.size() && s_[pos_] == '^') ++pos_;
    Expr e;
    LLMSERVE_RETURN_IF_ERROR(ParseAlt(&e));
    if (pos_ < s_.size()) return Error(pos_, "unbalanced ')'");
    return e;
  }

 private:
  Status Error(size_t at, const std::string& what) const {
    return Status::InvalidArgument("regex error at offset " + std::to_string(at) + ": " + what);
  }

  Expr Emit(const CharClass& cls) const { return json_ ? JsonEscapedClass(cls) : cls.ToExpr(); }

  bool AtEndAnchor() const { return s_[pos_] == '$' && (pos_ + 1 == s_.size() || s_[pos_ + 1] == ')' || s_[pos_ + 1] == '|'); }

  Status ParseAlt(Expr* out) {
    std::vector<Expr> alts(1);
    LLMSERVE_RETURN_IF_ERROR(ParseSeq(&alts.back()));
    while (pos_ < s_.size() && s_[pos_] == '|') {
      ++pos_;
      alts.emplace_back();
      LLMSERVE_RETURN_IF_ERROR(ParseSeq(&alts.back()));
    }
    *out = AltExpr(std::move(alts));
    return Status::Ok();
  }

  Status ParseSeq(Expr* out) {
    std::vector<Expr> items;
    while (pos_ < s_.size() && s_[pos_] != '|' && s_[pos_] != ')') {
      if (AtEndAnchor()) {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '^' && items.empty()) {
        ++pos_;
        continue;
      }
      Expr atom;
      LLMSERVE_RETURN_IF_ERROR(ParseAtom(&atom));
      LLMSERVE_RETURN_IF_ERROR(ParseQuantifiers(&atom));
      items.push_back(std::move(atom));
    }
    *out = SeqExpr(std::move(items));
    return Status::Ok();
  }

  bool ReadInt(int32_t* v) {
    size_t b = pos_;
    int64_t x = 0;
    while (pos_ < s_.size() && isdigit(static_cast<unsigned char>(s_[pos_])) && x < 1000000) x = x * 10 + (s_[pos_++] - '0');
    *v = static_cast<int32_t>(std::min<int64_t>(x, 1000000));
    return pos_ > b;
  }

  Status ParseQuantifiers(Expr* atom) {
    while (pos_ < s_.size()) {
      size_t at = pos_;
      char c = s_[pos_];
      int32_t lo, hi;
      if (c == '*') lo = 0, hi = -1, ++pos_;
      else if (c == '+') lo = 1, hi = -1, ++pos_;
      else if (c == '?') lo = 0, hi = 1, ++pos_;
      else if (c == '{') {
        ++pos_;
        if (!ReadInt(&lo)) return Error(at, "expected a count after '{'");
        hi = lo;
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          if (!ReadInt(&hi)) hi = -1;
        }
        if (pos_ >= s_.size() || s_[pos_] != '}') return Error(pos_, "expected '}'");
        ++pos_;
        if (hi >= 0 && hi < lo) return Error(at, "quantifier {m,n} with n < m");
        if (lo > 10000 || hi > 10000) return Error(at, "quantifier count too large");
      } else {
        break;
      }
      if (pos_ < s_.size() && (s_[pos_] == '?' || s_[pos_] == '+')) {
        if (s_[pos_] == '+') return Error(pos_, "possessive quantifiers are not supported");
        ++pos_;  // lazy: same language
      }
      *atom = RepeatExpr(std::move(*atom), lo, hi);
    }
    return Status::Ok();
  }

  Status ParseGroup(Expr* out) {
    size_t at = pos_++;
    if (s_.substr(pos_, 2) == "?:") {
      pos_ += 2;
    } else if (s_.substr(pos_, 3) == "?P<" || s_.substr(pos_, 2) == "?<") {
      if (s_.substr(pos_, 3) == "?<=" || s_.substr(pos_, 3) == "?<!") return Error(at, "lookbehind is not supported");
      size_t close = s_.find('>', pos_);
      if (close == std::string_view::npos) return Error(at, "unterminated group name");
      pos_ = close + 1;
    } else if (pos_ < s_.size() && s_[pos_] == '?') {
      return Error(at, "group flag or lookaround '(?" + std::string(s_.substr(pos_ + 1, 1)) + "' is not supported");
    }
    LLMSERVE_RETURN_IF_ERROR(ParseAlt(out));
    if (pos_ >= s_.size() || s_[pos_] != ')') return Error(at, "unbalanced '('");
    ++pos_;
    return Status::Ok();
  }

  Status ParseAtom(Expr* out) {
    size_t at = pos_;
    char c = s_[pos_];
    if (c == '(') return ParseGroup(out);
    if (c == '[') {
      CharClass cls;
      LLMSERVE_RETURN_IF_ERROR(ParseClass(&cls));
      *out = Emit(cls);
      return Status::Ok();
    }
    if (c == '.') {
      ++pos_;
      CharClass nl;
      nl.Add('\n', '\n');
      *out = Emit(nl.Negated());
      return Status::Ok();
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') return Error(at, std::string("nothing to repeat before '") + c + "'");
    CharClass cls;
    LLMSERVE_RETURN_IF_ERROR(ParseChar(false, &cls));
    *out = Emit(cls);
    return Status::Ok();
  }

  Status ParseHex(int digits, uint32_t* v) {
    *v = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      char h = pos_ < s_.size() ? s_[pos_] : 0;
      if (!isxdigit(static_cast<unsigned char>(h))) return Error(pos_, "expected a hex digit");
      *v = *v * 16 + (isdigit(static_cast<unsigned char>(h)) ? h - '0' : (tolower(h) - 'a' + 10));
    }
    return Status::Ok();
  }

  // One character or escape (a class for \d etc.). In a class, \b is backspace.
  Status ParseChar(bool in_class, CharClass* out) {
    size_t at = pos_;
    if (s_[pos_] != '\\') {
      char32_t cp;
      if (!base::DecodeUtf8(s_, &pos_, &cp)) return Error(at, "invalid UTF-8");
      out->Add(cp, cp);
      return Status::Ok();
    }
    if (++pos_ >= s_.size()) return Error(at, "trailing backslash");
    char e = s_[pos_++];
    uint32_t v = 0;
    switch (e) {
      case 'd': out->Add(CharClass::Digit()); return Status::Ok();
      case 'D': out->Add(CharClass::Digit().Negated()); return Status::Ok();
      case 'w': out->Add(CharClass::Word()); return Status::Ok();
      case 'W': out->Add(CharClass::Word().Negated()); return Status::Ok();
      case 's': out->Add(CharClass::Space()); return Status::Ok();
      case 'S': out->Add(CharClass::Space().Negated()); return Status::Ok();
      case 'n': v = '\n'; break;
      case 'r': v = '\r'; break;
      case 't': v = '\t'; break;
      case 'f': v = '\f'; break;
      case 'v': v = '\v'; break;
      case '0': v = 0; break;
      case 'x': LLMSERVE_RETURN_IF_ERROR(ParseHex(2, &v)); break;
      case 'u': LLMSERVE_RETURN_IF_ERROR(ParseHex(4, &v)); break;
      case 'b':
        if (!in_class) return Error(at, "word boundary \\b is not supported");
        v = '\b';
        break;
      default:
        if (isalnum(static_cast<unsigned char>(e))) {
          return Error(at, std::string("escape '\\") + e + "' (backreference, boundary or class) is not supported");
        }
        v = static_cast<unsigned char>(e);
    }
    out->Add(v, v);
    return Status::Ok();
  }

  Status ParseClass(CharClass* out) {
    size_t at = pos_++;
    bool negate = pos_ < s_.size() && s_[pos_] == '^';
    if (negate) ++pos_;
    CharClass cls;
    bool first = true;
    while (pos_ < s_.size() && (s_[pos_] != ']' || first)) {
      first = false;
      CharClass lo;
      size_t item = pos_;
      LLMSERVE_RETURN_IF_ERROR(ParseChar(true, &lo));
      bool single = lo.ranges().size() == 1 && lo.ranges()[0].first == lo.ranges()[0].second;
      if (single && pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
        ++pos_;
        CharClass hi;
        LLMSERVE_RETURN_IF_ERROR(ParseChar(true, &hi));
        uint32_t a = lo.ranges()[0].first, b = hi.ranges()[0].first;
        if (hi.ranges().size() != 1 || b < a) return Error(item, "bad character range");
        cls.Add(a, b);
      } else {
        cls.Add(lo);
      }
    }
    if (pos_ >= s_.size()) return Error(at, "unterminated character class");
    ++pos_;
    *out = negate ? cls.Negated() : cls;
    if (out->ranges().empty()) return Error(at, "empty character class");
    return Status::Ok();
  }

  std::string_view s_;
  bool json_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<Expr> RegexToExpr(std::string_view pattern, bool json_escaped) {
  RegexParser p(pattern, json_escaped);
  return p.Parse();
}

StatusOr<std::shared_ptr<const Grammar>> CompileRegex(std::string_view pattern) {
  LLMSERVE_ASSIGN_OR_RETURN(Expr e, RegexToExpr(pattern));
  GrammarBuilder b;
  int32_t root = b.AddRule("root");
  b.Define(root, std::move(e));
  return b.Build(root);
}

}  // namespace llmserve::engine_core::structured_output
