// JSON Schema front end, part 2: strings, formats, numbers, literal values
// and the any-value rules.

#include <cmath>
#include <optional>

#include "engine_core/structured_output/char_class.h"
#include "engine_core/structured_output/json_schema_internal.h"
#include "engine_core/structured_output/regex.h"

namespace llmserve::engine_core::structured_output {
namespace {

// One character of a JSON string body: an unescaped UTF-8 character or an
// escape (\u escapes exclude surrogates so every output is valid UTF-8).
Expr JsonChar() {
  CharClass plain;
  plain.Add(0x20, 0x21);
  plain.Add(0x23, 0x5B);
  plain.Add(0x5D, 0x10FFFF);
  ByteSet hex = ByteSet::Range('0', '9');
  hex |= ByteSet::Range('a', 'f');
  hex |= ByteSet::Range('A', 'F');
  ByteSet hex_lo_d = ByteSet::Range('0', '7');  // \uD0xx..\uD7xx
  ByteSet short_esc;
  for (char c : std::string("\"\\/bfnrt")) short_esc.Add(static_cast<uint8_t>(c));
  ByteSet first_nd = ByteSet::Range('0', '9');  // \u0xxx..\uCxxx, \uExxx, \uFxxx
  first_nd |= ByteSet::Range('a', 'c');
  first_nd |= ByteSet::Range('A', 'C');
  first_nd |= ByteSet::Range('e', 'f');
  first_nd |= ByteSet::Range('E', 'F');
  ByteSet d;
  d.Add('d');
  d.Add('D');
  Expr hex1 = BytesExpr(hex);
  Expr u = AltExpr({SeqExpr({BytesExpr(first_nd), hex1, hex1, hex1}), SeqExpr({BytesExpr(d), BytesExpr(hex_lo_d), hex1, hex1})});
  Expr esc = SeqExpr({LiteralExpr("\\"), AltExpr({BytesExpr(short_esc), SeqExpr({LiteralExpr("u"), u})})});
  return AltExpr({plain.ToExpr(), esc});
}

// Decimal strings of [a, b] for same-length digit strings a <= b.
Expr SameLengthRange(const std::string& a, const std::string& b) {
  if (a == b) return LiteralExpr(a);
  size_t n = a.size();
  if (n == 1) return BytesExpr(ByteSet::Range(a[0], b[0]));
  std::string rest_a = a.substr(1), rest_b = b.substr(1);
  if (a[0] == b[0]) return SeqExpr({LiteralExpr(a.substr(0, 1)), SameLengthRange(rest_a, rest_b)});
  std::vector<Expr> alts;
  alts.push_back(SeqExpr({LiteralExpr(a.substr(0, 1)), SameLengthRange(rest_a, std::string(n - 1, '9'))}));
  if (a[0] + 1 <= b[0] - 1) {
    alts.push_back(SeqExpr({BytesExpr(ByteSet::Range(a[0] + 1, b[0] - 1)),
                            RepeatExpr(BytesExpr(ByteSet::Range('0', '9')), static_cast<int32_t>(n - 1),
                                       static_cast<int32_t>(n - 1))}));
  }
  alts.push_back(SeqExpr({LiteralExpr(b.substr(0, 1)), SameLengthRange(std::string(n - 1, '0'), rest_b)}));
  return AltExpr(std::move(alts));
}

// Canonical decimal strings of the integers in [a, b] (a >= 0; no b = unbounded).
Expr NonNegRange(int64_t a, std::optional<int64_t> b) {
  std::vector<Expr> alts;
  std::string sa = std::to_string(a);
  size_t max_len = b ? std::to_string(*b).size() : sa.size();
  for (size_t len = sa.size(); len <= max_len; ++len) {
    std::string lo = sa;
    if (len != sa.size()) {
      lo.assign(len, '0');
      lo[0] = '1';
    }
    std::string hi = std::string(len, '9');
    if (b && len == max_len) hi = std::to_string(*b);
    if (lo.size() == hi.size() && lo <= hi) alts.push_back(SameLengthRange(lo, hi));
  }
  if (!b) {  // every integer with more digits than a
    alts.push_back(SeqExpr({BytesExpr(ByteSet::Range('1', '9')),
                            RepeatExpr(BytesExpr(ByteSet::Range('0', '9')), static_cast<int32_t>(sa.size()), -1)}));
  }
  return AltExpr(std::move(alts));
}

Expr IntRange(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<Expr> alts;
  // Negative part: "-" then the magnitudes in [max(1, -hi), -lo].
  if (!lo || *lo < 0) {
    int64_t mag_lo = hi && *hi < 0 ? -*hi : 1;
    std::optional<int64_t> mag_hi;
    if (lo) mag_hi = -*lo;
    alts.push_back(SeqExpr({LiteralExpr("-"), NonNegRange(mag_lo, mag_hi)}));
  }
  if (!hi || *hi >= 0) alts.push_back(NonNegRange(lo ? std::max<int64_t>(*lo, 0) : 0, hi));
  return AltExpr(std::move(alts));
}

const char* FormatRegex(const std::string& format) {
  static constexpr const char* kDate =
      "[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))";
  static constexpr const char* kTime =
      "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";
  static const std::string kDateTime = std::string(kDate) + "T" + kTime;
  if (format == "date") return kDate;
  if (format == "time") return kTime;
  if (format == "date-time") return kDateTime.c_str();
  if (format == "uuid") return "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
  if (format == "email") {
    return "[a-zA-Z0-9_+-]+(\\.[a-zA-Z0-9_+-]+)*@([a-zA-Z0-9]([a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?\\.)+"
           "[a-zA-Z]([a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?";
  }
  if (format == "ipv4") return "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}";
  return nullptr;
}

StatusOr<int32_t> Count(const nlohmann::ordered_json& s, const char* key, const std::string& path) {
  if (!s.contains(key)) return -1;
  const auto& v = s[key];
  if (!v.is_number_unsigned() || v.get<uint64_t>() > 100000) {
    return Status::InvalidArgument(path + "/" + key + ": must be a non-negative integer <= 100000");
  }
  return static_cast<int32_t>(v.get<uint64_t>());
}

}  // namespace

Expr JsonSchemaCompiler::Ws() const {
  return options_.any_whitespace ? StarExpr(BytesExpr([] {
    ByteSet s;
    s.Add(' ');
    s.Add('\n');
    s.Add('\t');
    return s;
  }())) : EmptyExpr();
}

Expr JsonSchemaCompiler::ItemSep() const {
  return options_.any_whitespace ? SeqExpr({Ws(), LiteralExpr(","), Ws()}) : LiteralExpr(options_.item_separator);
}

Expr JsonSchemaCompiler::KeySep() const {
  return options_.any_whitespace ? SeqExpr({Ws(), LiteralExpr(":"), Ws()}) : LiteralExpr(options_.key_separator);
}

Expr JsonSchemaCompiler::Literal(const json& v) const { return LiteralExpr(v.dump()); }

Expr JsonSchemaCompiler::StringBody(int32_t min_len, int32_t max_len) {
  auto key = std::make_pair(min_len, max_len);
  auto it = string_rules_.find(key);
  if (it != string_rules_.end()) return RefExpr(it->second);
  int32_t r = b_.AddRule("string_body");
  if ((min_len == 0 && max_len < 0) || max_len == 0) {
    b_.Define(r, SeqExpr({RepeatExpr(JsonChar(), min_len, max_len), LiteralExpr("\"")}));
    b_.MarkShared(r);
  } else {
    // Characters counted at match time (one JsonChar is one code point, as
    // JSON Schema counts): one set of masks for every length range.
    b_.DefineCounted(r, JsonChar(), min_len, max_len, LiteralExpr("\""));
  }
  string_rules_[key] = r;
  return RefExpr(r);
}

StatusOr<Expr> JsonSchemaCompiler::String(const json& s, const std::string& path) {
  LLMSERVE_ASSIGN_OR_RETURN(int32_t min_len, Count(s, "minLength", path));
  LLMSERVE_ASSIGN_OR_RETURN(int32_t max_len, Count(s, "maxLength", path));
  bool lengths = min_len >= 0 || max_len >= 0;
  if (min_len >= 0 && max_len >= 0 && max_len < min_len) {
    return Status::InvalidArgument(path + ": maxLength < minLength");
  }
  std::string pattern;
  if (s.contains("format")) {
    if (!s["format"].is_string()) return Status::InvalidArgument(path + "/format: must be a string");
    const char* re = FormatRegex(s["format"].get<std::string>());
    if (!re) return Status::InvalidArgument(path + "/format: format '" + s["format"].get<std::string>() + "' is not supported");
    pattern = re;
  }
  if (s.contains("pattern")) {
    if (!s["pattern"].is_string()) return Status::InvalidArgument(path + "/pattern: must be a string");
    if (!pattern.empty()) return Status::InvalidArgument(path + ": pattern together with format is not supported");
    pattern = s["pattern"].get<std::string>();
  }
  if (!pattern.empty()) {
    if (lengths) return Status::InvalidArgument(path + ": minLength/maxLength together with pattern or format is not supported");
    // The body and closing quote form a shared rule: its masks are cached
    // across grammars (formats and common patterns recur).
    auto it = pattern_rules_.find(pattern);
    if (it == pattern_rules_.end()) {
      auto body = RegexToExpr(pattern, /*json_escaped=*/true);
      if (!body.ok()) return body.status().WithContext(path + "/pattern");
      int32_t r = b_.AddRule("string_pattern");
      b_.Define(r, SeqExpr({std::move(body).value(), LiteralExpr("\"")}));
      b_.MarkShared(r);
      it = pattern_rules_.emplace(pattern, r).first;
    }
    return SeqExpr({LiteralExpr("\""), RefExpr(it->second)});
  }
  return SeqExpr({LiteralExpr("\""), StringBody(std::max(min_len, 0), max_len)});
}

StatusOr<Expr> JsonSchemaCompiler::Integer(const json& s, const std::string& path) {
  std::optional<int64_t> lo, hi;
  for (const char* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
    if (!s.contains(key)) continue;
    const json& v = s[key];
    if (!v.is_number() || std::fabs(v.get<double>()) > 1e15) {
      return Status::InvalidArgument(path + "/" + key + ": must be a number within +-1e15");
    }
    double d = v.get<double>();
    std::string k = key;
    if (k == "minimum") lo = std::max(lo.value_or(INT64_MIN), static_cast<int64_t>(std::ceil(d)));
    if (k == "exclusiveMinimum") lo = std::max(lo.value_or(INT64_MIN), static_cast<int64_t>(std::floor(d)) + 1);
    if (k == "maximum") hi = std::min(hi.value_or(INT64_MAX), static_cast<int64_t>(std::floor(d)));
    if (k == "exclusiveMaximum") hi = std::min(hi.value_or(INT64_MAX), static_cast<int64_t>(std::ceil(d)) - 1);
  }
  if (lo && hi && *lo > *hi) return Status::InvalidArgument(path + ": no integer satisfies minimum/maximum");
  return IntRange(lo, hi);
}

StatusOr<Expr> JsonSchemaCompiler::Number(const json& s, const std::string& path) {
  for (const char* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
    if (s.contains(key)) {
      return Status::InvalidArgument(path + "/" + key + ": bounds on type number are not supported (only on integer)");
    }
  }
  // Exponents have at most two digits so that no output overflows a double.
  Expr digit = BytesExpr(ByteSet::Range('0', '9'));
  Expr int_part = AltExpr({LiteralExpr("0"), SeqExpr({BytesExpr(ByteSet::Range('1', '9')), StarExpr(digit)})});
  ByteSet e;
  e.Add('e');
  e.Add('E');
  ByteSet sign;
  sign.Add('+');
  sign.Add('-');
  return SeqExpr({OptExpr(LiteralExpr("-")), int_part, OptExpr(SeqExpr({LiteralExpr("."), RepeatExpr(digit, 1, -1)})),
                  OptExpr(SeqExpr({BytesExpr(e), OptExpr(BytesExpr(sign)), RepeatExpr(digit, 1, 2)}))});
}

Expr JsonSchemaCompiler::AnyObject() {
  AnyValue();
  return RefExpr(any_object_);
}

Expr JsonSchemaCompiler::AnyValue() {
  if (any_value_ >= 0) return RefExpr(any_value_);
  any_value_ = b_.AddRule("value");
  any_object_ = b_.AddRule("object");
  any_array_ = b_.AddRule("array");
  Expr string = SeqExpr({LiteralExpr("\""), StringBody(0, -1)});
  Expr member = SeqExpr({LiteralExpr("\""), StringBody(0, -1), KeySep(), RefExpr(any_value_)});
  b_.Define(any_object_, SeqExpr({LiteralExpr("{"), Ws(),
                                  OptExpr(SeqExpr({member, StarExpr(SeqExpr({ItemSep(), member})), Ws()})),
                                  LiteralExpr("}")}));
  b_.Define(any_array_, SeqExpr({LiteralExpr("["), Ws(),
                                 OptExpr(SeqExpr({RefExpr(any_value_), StarExpr(SeqExpr({ItemSep(), RefExpr(any_value_)})), Ws()})),
                                 LiteralExpr("]")}));
  b_.Define(any_value_, AltExpr({RefExpr(any_object_), RefExpr(any_array_), string, *Number(json::object(), ""),
                                 LiteralExpr("true"), LiteralExpr("false"), LiteralExpr("null")}));
  return RefExpr(any_value_);
}

StatusOr<std::shared_ptr<const Grammar>> CompileChoice(const std::vector<std::string>& choices) {
  if (choices.empty()) return Status::InvalidArgument("choice: the list of choices is empty");
  std::vector<Expr> alts;
  for (const std::string& c : choices) alts.push_back(LiteralExpr(c));
  GrammarBuilder b;
  int32_t root = b.AddRule("root");
  b.Define(root, AltExpr(std::move(alts)));
  return b.Build(root);
}

}  // namespace llmserve::engine_core::structured_output
