#include "common/tokenizer/normalizers.h"

#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "common/tokenizer/regex.h"
#include "base/utf8.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;

namespace {

// Unicode normalization forms through utf8proc, applied only to the parts of
// the text that can change. A "stable" code point is a starter that no form
// decomposes (or, for NFC/NFKC, that is already composed) and that never ends
// a composition, so text splits at stable code points into independently
// normalizable pieces; a piece starts at the stable code point before an
// unstable run, since a combining mark may compose with it.
class UnicodeNormalizer final : public Normalizer {
 public:
  UnicodeNormalizer(int options, bool compose, bool compat)
      : options_(options), compose_(compose), compat_(compat) {}
  void Normalize(std::string* text) const override {
    const std::string& in = *text;
    std::string out;
    size_t copied = 0, pos = 0, prev_start = 0;
    bool any = false;
    while (pos < in.size()) {
      const size_t start = pos;
      if (static_cast<unsigned char>(in[pos]) < 0x80) {
        prev_start = start;
        ++pos;
        continue;
      }
      char32_t cp = 0;
      base::DecodeUtf8(in, &pos, &cp);
      if (Stable(cp)) {
        prev_start = start;
        continue;
      }
      const size_t begin = (prev_start < start && prev_start >= copied) ? prev_start : start;
      size_t end = pos;
      while (end < in.size()) {
        size_t next = end;
        char32_t c2 = 0;
        base::DecodeUtf8(in, &next, &c2);
        if (c2 < 0x80 || Stable(c2)) break;
        end = next;
      }
      if (!any) out.reserve(in.size() + 16);
      any = true;
      out.append(in, copied, begin - copied);
      AppendMapped(std::string_view(in).substr(begin, end - begin), &out);
      copied = pos = end;
    }
    if (!any) return;
    out.append(in, copied, std::string::npos);
    text->swap(out);
  }

 private:
  bool Stable(char32_t cp) const {
    if (cp < 0x80) return true;
    if (cp < 0x300) return compose_ && !compat_;  // Latin-1 has compatibility mappings
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3041 && cp <= 0x3096) ||
           (cp >= 0x30A1 && cp <= 0x30FA) || (compose_ && cp >= 0xAC00 && cp <= 0xD7A3);
  }
  void AppendMapped(std::string_view piece, std::string* out) const {
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(piece.data()),
                                            static_cast<utf8proc_ssize_t>(piece.size()), &mapped,
                                            static_cast<utf8proc_option_t>(options_));
    if (n >= 0) {
      out->append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
    } else {
      out->append(piece);
    }
    std::free(mapped);
  }

  int options_;
  bool compose_, compat_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::unique_ptr<Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void Normalize(std::string* text) const override {
    *text = pattern_->ReplaceAll(*text, content_);
  }

 private:
  std::unique_ptr<Regex> pattern_;
  std::string content_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prepend) : prepend_(std::move(prepend)) {}
  void Normalize(std::string* text) const override {
    if (text->empty()) return;
    std::string out;
    out.reserve(prepend_.size() + text->size());
    out.append(prepend_);
    out.append(*text);
    text->swap(out);
  }

 private:
  std::string prepend_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void Normalize(std::string* text) const override {
    size_t begin = 0, end = text->size();
    if (left_) {
      while (begin < end) {
        size_t pos = begin;
        char32_t cp;
        if (!base::DecodeUtf8(*text, &pos, &cp) || !base::IsUnicodeWhitespace(cp)) break;
        begin = pos;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>((*text)[start]) & 0xC0) == 0x80) --start;
        size_t pos = start;
        char32_t cp;
        if (!base::DecodeUtf8(*text, &pos, &cp) || !base::IsUnicodeWhitespace(cp)) break;
        end = start;
      }
    }
    *text = text->substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

// Removes combining marks (category Mn), as HF's StripAccents does after NFD.
class StripAccentsNormalizer final : public Normalizer {
 public:
  void Normalize(std::string* text) const override {
    std::string out;
    out.reserve(text->size());
    size_t pos = 0;
    while (pos < text->size()) {
      const size_t start = pos;
      char32_t cp;
      base::DecodeUtf8(*text, &pos, &cp);
      if (utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_MN) continue;
      out.append(*text, start, pos - start);
    }
    *text = std::move(out);
  }
};

// Lowercase with Unicode simple case mapping, plus U+0130 -> "i\u0307" and
// final sigma, as Rust's str::to_lowercase.
class LowercaseNormalizer final : public Normalizer {
 public:
  void Normalize(std::string* text) const override {
    std::vector<char32_t> cps;
    size_t pos = 0;
    while (pos < text->size()) {
      char32_t cp;
      base::DecodeUtf8(*text, &pos, &cp);
      cps.push_back(cp);
    }
    std::string out;
    out.reserve(text->size());
    for (size_t i = 0; i < cps.size(); ++i) {
      const char32_t cp = cps[i];
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
      } else if (cp == 0x130) {
        out.append("i\xCC\x87");
      } else if (cp == 0x3A3) {
        const bool after_letter = i > 0 && IsCased(cps[i - 1]);
        const bool before_letter = i + 1 < cps.size() && IsCased(cps[i + 1]);
        base::AppendUtf8(after_letter && !before_letter ? 0x3C2 : 0x3C3, &out);
      } else {
        base::AppendUtf8(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))), &out);
      }
    }
    *text = std::move(out);
  }

 private:
  static bool IsCased(char32_t cp) {
    const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT;
  }
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> items)
      : items_(std::move(items)) {}
  void Normalize(std::string* text) const override {
    for (const auto& n : items_) n->Normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> items_;
};

}  // namespace

StatusOr<std::unique_ptr<Regex>> MakePattern(const json& pattern, const JsonContext& ctx) {
  if (!pattern.is_object()) {
    return ctx.Error("expected a pattern object {\"String\": ...} or {\"Regex\": ...}, found " +
                     JsonTypeName(pattern));
  }
  for (const char* kind : {"String", "Regex"}) {
    auto it = pattern.find(kind);
    if (it == pattern.end()) continue;
    if (!it->is_string()) {
      return ctx.Child(kind).Error("expected a string, found " + JsonTypeName(*it));
    }
    auto re = Regex::Compile(it->get_ref<const std::string&>(), /*literal=*/kind[0] == 'S');
    if (!re.ok()) return ctx.Child(kind).Error(re.status().message());
    return re;
  }
  return ctx.Error("pattern has neither \"String\" nor \"Regex\"");
}

StatusOr<std::unique_ptr<Normalizer>> MakeNormalizer(const json& config, const JsonContext& ctx) {
  if (config.is_null()) return std::unique_ptr<Normalizer>();
  std::string type;
  LLMSERVE_RETURN_IF_ERROR(GetType(config, ctx, &type));
  if (type == "NFC") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_COMPOSE, true, false));
  if (type == "NFD") return std::unique_ptr<Normalizer>(new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE, false, false));
  if (type == "NFKC") {
    return std::unique_ptr<Normalizer>(
        new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT, true, true));
  }
  if (type == "NFKD") {
    return std::unique_ptr<Normalizer>(
        new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, false, true));
  }
  if (type == "Replace") {
    if (!config.contains("pattern")) return ctx.Error("Replace normalizer needs \"pattern\"");
    LLMSERVE_ASSIGN_OR_RETURN(auto re, MakePattern(config["pattern"], ctx.Child("pattern")));
    std::string content;
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "content", ctx, true, &content));
    return std::unique_ptr<Normalizer>(new ReplaceNormalizer(std::move(re), content));
  }
  if (type == "Prepend") {
    std::string prepend;
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "prepend", ctx, true, &prepend));
    return std::unique_ptr<Normalizer>(new PrependNormalizer(prepend));
  }
  if (type == "Strip") {
    bool left = true, right = true;
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "strip_left", ctx, false, &left));
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "strip_right", ctx, false, &right));
    return std::unique_ptr<Normalizer>(new StripNormalizer(left, right));
  }
  if (type == "StripAccents") return std::unique_ptr<Normalizer>(new StripAccentsNormalizer());
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new LowercaseNormalizer());
  if (type == "Sequence") {
    auto it = config.find("normalizers");
    if (it == config.end() || !it->is_array()) {
      return ctx.Error("Sequence normalizer needs an array \"normalizers\"");
    }
    std::vector<std::unique_ptr<Normalizer>> items;
    for (size_t i = 0; i < it->size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(auto n, MakeNormalizer((*it)[i], ctx.Child("normalizers").Child(i)));
      if (n) items.push_back(std::move(n));
    }
    return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(items)));
  }
  return ctx.Error("unsupported normalizer type \"" + type + "\"");
}

}  // namespace llmserve::common::tokenizer
