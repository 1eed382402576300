#include "engine_core/structured_output/ebnf.h"

#include <map>
#include <string>

#include "base/utf8.h"
#include "engine_core/structured_output/char_class.h"

namespace llmserve::engine_core::structured_output {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

class EbnfParser {
 public:
  explicit EbnfParser(std::string_view text) : s_(text) {}

  StatusOr<std::shared_ptr<const Grammar>> Parse(std::string_view root_name) {
    SkipSpace(true);
    while (pos_ < s_.size()) {
      LLMSERVE_RETURN_IF_ERROR(ParseRule());
      SkipSpace(true);
    }
    for (auto& [name, info] : rules_) {
      if (!info.defined) return Error(info.first_use, "undefined rule '" + name + "'");
    }
    auto root = rules_.find(std::string(root_name));
    if (root == rules_.end()) return Status::InvalidArgument("the grammar has no rule '" + std::string(root_name) + "'");
    return builder_.Build(root->second.id);
  }

 private:
  struct RuleInfo {
    int32_t id = -1;
    bool defined = false;
    size_t first_use = 0;
  };

  Status Error(size_t at, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, col = 1;
      else ++col;
    }
    return Status::InvalidArgument("grammar error at " + std::to_string(line) + ":" + std::to_string(col) + ": " +
                                   what);
  }

  // Skips blanks and comments; newlines only when `newlines`.
  void SkipSpace(bool newlines) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) ++pos_;
      else if (c == '#') while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      else break;
    }
  }

  std::string ParseName() {
    size_t b = pos_;
    while (pos_ < s_.size() && IsNameChar(s_[pos_])) ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }

  // True when a rule definition `name ::=` starts at the current position.
  bool AtRuleStart() {
    size_t save = pos_;
    std::string name = ParseName();
    SkipSpace(false);
    bool yes = !name.empty() && s_.substr(pos_, 3) == "::=";
    pos_ = save;
    return yes;
  }

  int32_t RuleId(const std::string& name, size_t at) {
    RuleInfo& info = rules_[name];
    if (info.id < 0) {
      info.id = builder_.AddRule(name);
      info.first_use = at;
    }
    return info.id;
  }

  Status ParseRule() {
    size_t at = pos_;
    std::string name = ParseName();
    if (name.empty()) return Error(pos_, "expected a rule name");
    SkipSpace(false);
    if (s_.substr(pos_, 3) != "::=") return Error(pos_, "expected '::=' after rule name '" + name + "'");
    pos_ += 3;
    int32_t id = RuleId(name, at);
    if (rules_[name].defined) return Error(at, "rule '" + name + "' is defined twice");
    rules_[name].defined = true;
    Expr body;
    LLMSERVE_RETURN_IF_ERROR(ParseAlternates(false, &body));
    builder_.Define(id, std::move(body));
    return Status::Ok();
  }

  Status ParseAlternates(bool nested, Expr* out) {
    std::vector<Expr> alts(1);
    LLMSERVE_RETURN_IF_ERROR(ParseSequence(nested, &alts.back()));
    while (pos_ < s_.size() && s_[pos_] == '|') {
      ++pos_;
      SkipSpace(true);
      alts.emplace_back();
      LLMSERVE_RETURN_IF_ERROR(ParseSequence(nested, &alts.back()));
    }
    *out = AltExpr(std::move(alts));
    return Status::Ok();
  }

  Status ParseSequence(bool nested, Expr* out) {
    std::vector<Expr> items;
    for (;;) {
      SkipSpace(nested);
      if (!nested && pos_ < s_.size() && s_[pos_] == '\n') {
        SkipSpace(true);
        if (pos_ >= s_.size() || AtRuleStart()) break;
      }
      if (pos_ >= s_.size() || s_[pos_] == '|' || s_[pos_] == ')') break;
      Expr item;
      LLMSERVE_RETURN_IF_ERROR(ParseItem(nested, &item));
      items.push_back(std::move(item));
    }
    *out = SeqExpr(std::move(items));
    return Status::Ok();
  }

  Status ParseItem(bool nested, Expr* out) {
    LLMSERVE_RETURN_IF_ERROR(ParsePrimary(out));
    for (;;) {
      SkipSpace(nested);
      if (pos_ >= s_.size()) break;
      char c = s_[pos_];
      if (c == '*') *out = RepeatExpr(std::move(*out), 0, -1), ++pos_;
      else if (c == '+') *out = RepeatExpr(std::move(*out), 1, -1), ++pos_;
      else if (c == '?') *out = RepeatExpr(std::move(*out), 0, 1), ++pos_;
      else if (c == '{') LLMSERVE_RETURN_IF_ERROR(ParseBraces(out));
      else break;
    }
    return Status::Ok();
  }

  Status ParseNumber(int32_t* n) {
    size_t b = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && v < 1000000) v = v * 10 + (s_[pos_++] - '0');
    if (pos_ == b) return Error(pos_, "expected a number");
    if (v > 100000) return Error(b, "repetition count too large");
    *n = static_cast<int32_t>(v);
    return Status::Ok();
  }

  Status ParseBraces(Expr* out) {
    size_t at = pos_++;
    int32_t lo = 0, hi = 0;
    SkipSpace(false);
    LLMSERVE_RETURN_IF_ERROR(ParseNumber(&lo));
    SkipSpace(false);
    hi = lo;
    if (pos_ < s_.size() && s_[pos_] == ',') {
      ++pos_;
      SkipSpace(false);
      hi = -1;
      if (pos_ < s_.size() && s_[pos_] != '}') LLMSERVE_RETURN_IF_ERROR(ParseNumber(&hi));
      SkipSpace(false);
    }
    if (pos_ >= s_.size() || s_[pos_] != '}') return Error(pos_, "expected '}'");
    ++pos_;
    if (hi >= 0 && hi < lo) return Error(at, "repetition {m,n} with n < m");
    *out = RepeatExpr(std::move(*out), lo, hi);
    return Status::Ok();
  }

  Status ParsePrimary(Expr* out) {
    size_t at = pos_;
    char c = s_[pos_];
    if (c == '"') return ParseString(out);
    if (c == '[') return ParseClass(out);
    if (c == '.') {
      ++pos_;
      *out = CharClass::Any().ToExpr();
      return Status::Ok();
    }
    if (c == '(') {
      ++pos_;
      SkipSpace(true);
      LLMSERVE_RETURN_IF_ERROR(ParseAlternates(true, out));
      SkipSpace(true);
      if (pos_ >= s_.size() || s_[pos_] != ')') return Error(at, "'(' is not closed");
      ++pos_;
      return Status::Ok();
    }
    if (IsNameChar(c)) {
      std::string name = ParseName();
      *out = RefExpr(RuleId(name, at));
      return Status::Ok();
    }
    return Error(at, std::string("unexpected character '") + c + "'");
  }

  // Reads one (possibly escaped) code point of a string or class.
  Status ParseChar(uint32_t* cp) {
    if (pos_ >= s_.size()) return Error(pos_, "unexpected end of grammar");
    size_t at = pos_;
    if (s_[pos_] != '\\') {
      char32_t c;
      if (!base::DecodeUtf8(s_, &pos_, &c)) return Error(at, "invalid UTF-8");
      *cp = c;
      return Status::Ok();
    }
    if (++pos_ >= s_.size()) return Error(pos_, "unexpected end of grammar");
    char e = s_[pos_++];
    int hex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (hex) {
      uint32_t v = 0;
      for (int i = 0; i < hex; ++i, ++pos_) {
        char h = pos_ < s_.size() ? s_[pos_] : 0;
        int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
        if (d < 0) return Error(pos_, "expected a hex digit");
        v = v * 16 + d;
      }
      if (v > 0x10FFFF) return Error(at, "code point out of range");
      *cp = v;
      return Status::Ok();
    }
    static const std::map<char, uint32_t> kEsc = {{'n', '\n'}, {'r', '\r'}, {'t', '\t'}, {'0', 0},  {'\\', '\\'},
                                                  {'"', '"'},  {'\'', '\''}, {'[', '['}, {']', ']'}, {'-', '-'},
                                                  {'^', '^'},  {'/', '/'},   {'f', '\f'}, {'v', '\v'}};
    auto it = kEsc.find(e);
    if (it == kEsc.end()) return Error(at, std::string("unknown escape '\\") + e + "'");
    *cp = it->second;
    return Status::Ok();
  }

  Status ParseString(Expr* out) {
    ++pos_;
    std::string bytes;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\n') return Error(pos_, "newline in string");
      uint32_t cp;
      LLMSERVE_RETURN_IF_ERROR(ParseChar(&cp));
      base::AppendUtf8(cp, &bytes);
    }
    if (pos_ >= s_.size()) return Error(pos_, "unterminated string");
    ++pos_;
    *out = LiteralExpr(bytes);
    return Status::Ok();
  }

  Status ParseClass(Expr* out) {
    size_t at = pos_++;
    bool negate = pos_ < s_.size() && s_[pos_] == '^';
    if (negate) ++pos_;
    CharClass cls;
    while (pos_ < s_.size() && s_[pos_] != ']') {
      uint32_t lo, hi;
      LLMSERVE_RETURN_IF_ERROR(ParseChar(&lo));
      hi = lo;
      if (pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
        ++pos_;
        LLMSERVE_RETURN_IF_ERROR(ParseChar(&hi));
        if (hi < lo) return Error(at, "character range out of order");
      }
      cls.Add(lo, hi);
    }
    if (pos_ >= s_.size()) return Error(at, "unterminated character class");
    ++pos_;
    if (negate) cls = cls.Negated();
    if (cls.ranges().empty()) return Error(at, "empty character class");
    *out = cls.ToExpr();
    return Status::Ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
  GrammarBuilder builder_;
  std::map<std::string, RuleInfo> rules_;
};

}  // namespace

StatusOr<std::shared_ptr<const Grammar>> CompileEbnf(std::string_view text, std::string_view root_rule) {
  EbnfParser parser(text);
  return parser.Parse(root_rule);
}

}  // namespace llmserve::engine_core::structured_output
