#include "common/tokenizer/pre_tokenizers.h"

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "common/tokenizer/byte_level.h"
#include "common/tokenizer/normalizers.h"
#include "common/tokenizer/regex.h"
#include "base/utf8.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;
using Ranges = std::vector<std::pair<size_t, size_t>>;

void SplitAtMatches(const std::string& piece, const Ranges& matches, bool invert,
                    SplitBehavior behavior, std::vector<std::string>* out) {
  // Segments covering the piece: (start, end, is_delimiter).
  struct Segment {
    size_t start, end;
    bool delim;
  };
  std::vector<Segment> segs;
  segs.reserve(matches.size() * 2 + 1);
  size_t prev = 0;
  for (auto [s, e] : matches) {
    if (s > prev) segs.push_back({prev, s, invert});
    segs.push_back({s, e, !invert});
    prev = e;
  }
  if (prev < piece.size()) segs.push_back({prev, piece.size(), invert});

  std::vector<std::pair<size_t, size_t>> result;
  result.reserve(segs.size());
  bool previous_delim = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const auto& g : segs) {
        if (!g.delim) result.emplace_back(g.start, g.end);
      }
      break;
    case SplitBehavior::kIsolated:
      for (const auto& g : segs) result.emplace_back(g.start, g.end);
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& g : segs) {
        if (g.delim && !previous_delim && !result.empty()) {
          result.back().second = g.end;
        } else {
          result.emplace_back(g.start, g.end);
        }
        previous_delim = g.delim;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (size_t k = segs.size(); k-- > 0;) {
        const auto& g = segs[k];
        if (g.delim && !previous_delim && !result.empty()) {
          result.back().first = g.start;
        } else {
          result.emplace_back(g.start, g.end);
        }
        previous_delim = g.delim;
      }
      std::reverse(result.begin(), result.end());
      break;
    case SplitBehavior::kContiguous:
      for (const auto& g : segs) {
        if (g.delim && previous_delim && !result.empty()) {
          result.back().second = g.end;
        } else {
          result.emplace_back(g.start, g.end);
        }
        previous_delim = g.delim;
      }
      break;
  }
  for (auto [s, e] : result) {
    if (e > s) out->emplace_back(piece, s, e - s);
  }
}

namespace {

// Returns prefix + s (written out to avoid a GCC 12 -Wrestrict false positive
// on std::string::insert).
std::string Prepended(std::string_view prefix, const std::string& s) {
  std::string out;
  out.reserve(prefix.size() + s.size());
  out.append(prefix);
  out.append(s);
  return out;
}

// Applies `split_one` to every piece, replacing the list.
template <typename F>
void ForEachPiece(std::vector<std::string>* pieces, F&& split_one) {
  std::vector<std::string> out;
  out.reserve(pieces->size() * 2);
  for (const auto& p : *pieces) split_one(p, &out);
  pieces->swap(out);
}

// Byte ranges of the characters of `s` for which `pred` holds, one per char.
Ranges CharMatches(const std::string& s, const std::function<bool(char32_t)>& pred) {
  Ranges r;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    char32_t cp;
    base::DecodeUtf8(s, &pos, &cp);
    if (pred(cp)) r.emplace_back(start, pos);
  }
  return r;
}

bool IsPunctuation(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool IsNumeric(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

class RegexSplit final : public PreTokenizer {
 public:
  RegexSplit(std::unique_ptr<Regex> re, SplitBehavior b, bool invert)
      : re_(std::move(re)), behavior_(b), invert_(invert) {}
  void PreTokenize(std::vector<std::string>* pieces, bool) const override {
    Ranges matches;
    ForEachPiece(pieces, [&](const std::string& p, std::vector<std::string>* out) {
      matches.clear();
      re_->FindAll(p, &matches);
      SplitAtMatches(p, matches, invert_, behavior_, out);
    });
  }

 private:
  std::unique_ptr<Regex> re_;
  SplitBehavior behavior_;
  bool invert_;
};

class CharSplit final : public PreTokenizer {
 public:
  CharSplit(std::function<bool(char32_t)> pred, SplitBehavior b) : pred_(std::move(pred)), behavior_(b) {}
  void PreTokenize(std::vector<std::string>* pieces, bool) const override {
    ForEachPiece(pieces, [&](const std::string& p, std::vector<std::string>* out) {
      SplitAtMatches(p, CharMatches(p, pred_), false, behavior_, out);
    });
  }

 private:
  std::function<bool(char32_t)> pred_;
  SplitBehavior behavior_;
};

constexpr const char* kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, std::unique_ptr<Regex> re)
      : add_prefix_space_(add_prefix_space), re_(std::move(re)) {}
  void PreTokenize(std::vector<std::string>* pieces, bool) const override {
    if (re_) {
      std::vector<std::string> split;
      Ranges matches;
      for (auto& p : *pieces) {
        if (add_prefix_space_ && (p.empty() || p[0] != ' ')) p = Prepended(" ", p);
        matches.clear();
        re_->FindAll(p, &matches);
        SplitAtMatches(p, matches, false, SplitBehavior::kIsolated, &split);
      }
      pieces->swap(split);
    } else if (add_prefix_space_) {
      for (auto& p : *pieces) {
        if (p.empty() || p[0] != ' ') p = Prepended(" ", p);
      }
    }
    std::string mapped;
    for (auto& p : *pieces) {
      mapped.clear();
      AppendByteLevel(p, &mapped);
      p.swap(mapped);
    }
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> re_;  // null when use_regex is false
};

enum class PrependScheme { kAlways, kFirst, kNever };

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void PreTokenize(std::vector<std::string>* pieces, bool first_section) const override {
    std::vector<std::string> out;
    for (size_t i = 0; i < pieces->size(); ++i) {
      std::string p;
      for (char c : (*pieces)[i]) {
        if (c == ' ') {
          p += replacement_;
        } else {
          p += c;
        }
      }
      const bool starts = p.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && (scheme_ == PrependScheme::kAlways ||
                      (scheme_ == PrependScheme::kFirst && first_section && i == 0))) {
        p = Prepended(replacement_, p);
      }
      if (!split_) {
        out.push_back(std::move(p));
        continue;
      }
      Ranges matches;
      for (size_t pos = p.find(replacement_); pos != std::string::npos;
           pos = p.find(replacement_, pos + replacement_.size())) {
        matches.emplace_back(pos, pos + replacement_.size());
      }
      SplitAtMatches(p, matches, false, SplitBehavior::kMergedWithNext, &out);
    }
    pieces->swap(out);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> items)
      : items_(std::move(items)) {}
  void PreTokenize(std::vector<std::string>* pieces, bool first_section) const override {
    for (const auto& p : items_) p->PreTokenize(pieces, first_section);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> items_;
};

Status ParseBehavior(const json& config, const JsonContext& ctx, SplitBehavior fallback,
                     SplitBehavior* out) {
  std::string b;
  LLMSERVE_RETURN_IF_ERROR(GetString(config, "behavior", ctx, false, &b));
  if (b.empty()) {
    *out = fallback;
  } else if (b == "Removed") {
    *out = SplitBehavior::kRemoved;
  } else if (b == "Isolated") {
    *out = SplitBehavior::kIsolated;
  } else if (b == "MergedWithPrevious") {
    *out = SplitBehavior::kMergedWithPrevious;
  } else if (b == "MergedWithNext") {
    *out = SplitBehavior::kMergedWithNext;
  } else if (b == "Contiguous") {
    *out = SplitBehavior::kContiguous;
  } else {
    return ctx.Child("behavior").Error("unsupported split behavior \"" + b + "\"");
  }
  return Status::Ok();
}

using PreTokenizerPtr = std::unique_ptr<PreTokenizer>;

}  // namespace

StatusOr<PreTokenizerPtr> MakePreTokenizer(const json& config, const JsonContext& ctx) {
  if (config.is_null()) return PreTokenizerPtr();
  std::string type;
  LLMSERVE_RETURN_IF_ERROR(GetType(config, ctx, &type));
  if (type == "Split") {
    if (!config.contains("pattern")) return ctx.Error("Split pre-tokenizer needs \"pattern\"");
    LLMSERVE_ASSIGN_OR_RETURN(auto re, MakePattern(config["pattern"], ctx.Child("pattern")));
    SplitBehavior behavior;
    LLMSERVE_RETURN_IF_ERROR(ParseBehavior(config, ctx, SplitBehavior::kIsolated, &behavior));
    bool invert = false;
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "invert", ctx, false, &invert));
    return PreTokenizerPtr(new RegexSplit(std::move(re), behavior, invert));
  }
  if (type == "ByteLevel") {
    bool add_prefix_space = true, use_regex = true;
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "add_prefix_space", ctx, false, &add_prefix_space));
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "use_regex", ctx, false, &use_regex));
    std::unique_ptr<Regex> re;
    if (use_regex) {
      LLMSERVE_ASSIGN_OR_RETURN(re, Regex::Compile(kGpt2Pattern, false));
    }
    return PreTokenizerPtr(new ByteLevelPreTokenizer(add_prefix_space, std::move(re)));
  }
  if (type == "Metaspace") {
    std::string replacement = "\xE2\x96\x81", scheme_name;
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "replacement", ctx, false, &replacement));
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "prepend_scheme", ctx, false, &scheme_name));
    bool add_prefix_space = true, split = true;
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "add_prefix_space", ctx, false, &add_prefix_space));
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "split", ctx, false, &split));
    PrependScheme scheme = add_prefix_space ? PrependScheme::kAlways : PrependScheme::kNever;
    if (scheme_name == "always") {
      scheme = PrependScheme::kAlways;
    } else if (scheme_name == "first") {
      scheme = PrependScheme::kFirst;
    } else if (scheme_name == "never") {
      scheme = PrependScheme::kNever;
    } else if (!scheme_name.empty()) {
      return ctx.Child("prepend_scheme").Error("unsupported prepend_scheme \"" + scheme_name + "\"");
    }
    return PreTokenizerPtr(new MetaspacePreTokenizer(replacement, scheme, split));
  }
  if (type == "Digits") {
    bool individual = false;
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "individual_digits", ctx, false, &individual));
    return PreTokenizerPtr(new CharSplit(IsNumeric, individual ? SplitBehavior::kIsolated
                                                               : SplitBehavior::kContiguous));
  }
  if (type == "Punctuation") {
    SplitBehavior behavior;
    LLMSERVE_RETURN_IF_ERROR(ParseBehavior(config, ctx, SplitBehavior::kIsolated, &behavior));
    return PreTokenizerPtr(new CharSplit(IsPunctuation, behavior));
  }
  if (type == "Whitespace") {
    LLMSERVE_ASSIGN_OR_RETURN(auto re, Regex::Compile("\\w+|[^\\w\\s]+", false));
    return PreTokenizerPtr(new RegexSplit(std::move(re), SplitBehavior::kRemoved, true));
  }
  if (type == "WhitespaceSplit") {
    return PreTokenizerPtr(new CharSplit(base::IsUnicodeWhitespace, SplitBehavior::kRemoved));
  }
  if (type == "BertPreTokenizer") {
    std::vector<PreTokenizerPtr> items;
    items.emplace_back(new CharSplit(base::IsUnicodeWhitespace, SplitBehavior::kRemoved));
    items.emplace_back(new CharSplit(IsPunctuation, SplitBehavior::kIsolated));
    return PreTokenizerPtr(new SequencePreTokenizer(std::move(items)));
  }
  if (type == "Sequence") {
    auto it = config.find("pretokenizers");
    if (it == config.end() || !it->is_array()) {
      return ctx.Error("Sequence pre-tokenizer needs an array \"pretokenizers\"");
    }
    std::vector<PreTokenizerPtr> items;
    for (size_t i = 0; i < it->size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(auto p, MakePreTokenizer((*it)[i], ctx.Child("pretokenizers").Child(i)));
      if (p) items.push_back(std::move(p));
    }
    return PreTokenizerPtr(new SequencePreTokenizer(std::move(items)));
  }
  return ctx.Error("unsupported pre-tokenizer type \"" + type + "\"");
}

}  // namespace llmserve::common::tokenizer
