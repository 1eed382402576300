#include "common/tokenizer/decoders.h"

#include <nlohmann/json.hpp>

#include "common/tokenizer/byte_level.h"
#include "common/tokenizer/normalizers.h"
#include "common/tokenizer/regex.h"
#include "base/utf8.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;

namespace {

// Maps byte-level code points back to bytes; a token with any other code
// point contributes its raw UTF-8. Invalid UTF-8 becomes U+FFFD.
class ByteLevelDecoder final : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override {
    std::string bytes;
    for (const auto& t : *tokens) {
      const size_t mark = bytes.size();
      size_t pos = 0;
      bool all_mapped = true;
      while (pos < t.size()) {
        char32_t cp;
        const int b = base::DecodeUtf8(t, &pos, &cp) ? UnicodeToByte(cp) : -1;
        if (b < 0) {
          all_mapped = false;
          break;
        }
        bytes.push_back(static_cast<char>(b));
      }
      if (!all_mapped) {
        bytes.resize(mark);
        bytes += t;
      }
    }
    tokens->assign(1, base::IsValidUtf8(bytes) ? std::move(bytes) : base::RepairUtf8(bytes));
  }
  void TokenBytes(std::string* token) const override {
    std::string bytes;
    size_t pos = 0;
    while (pos < token->size()) {
      char32_t cp;
      const int b = base::DecodeUtf8(*token, &pos, &cp) ? UnicodeToByte(cp) : -1;
      if (b < 0) return;  // not a byte-level token: its text as is
      bytes.push_back(static_cast<char>(b));
    }
    token->swap(bytes);
  }
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (size_t i = 0; i < tokens->size(); ++i) {
      std::string& t = (*tokens)[i];
      std::string out;
      for (size_t pos = 0; pos < t.size();) {
        if (t.compare(pos, replacement_.size(), replacement_) == 0) {
          out += ' ';
          pos += replacement_.size();
        } else {
          out += t[pos++];
        }
      }
      // The first token loses the one space the pre-tokenizer prepended.
      if (i == 0 && strip_first_ && !out.empty() && out[0] == ' ') out.erase(0, 1);
      t = std::move(out);
    }
  }
  void TokenBytes(std::string* token) const override {
    std::string out;
    for (size_t pos = 0; pos < token->size();) {
      if (token->compare(pos, replacement_.size(), replacement_) == 0) {
        out += ' ';
        pos += replacement_.size();
      } else {
        out += (*token)[pos++];
      }
    }
    token->swap(out);
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

// "<0xAB>" tokens become bytes; each run of them is decoded as UTF-8 with
// one U+FFFD per maximal invalid subpart (as transformers.js does). HF's Rust
// decoder instead turns a whole invalid run into one U+FFFD per byte; the
// lossy form is chosen because it is prefix-stable, which streaming needs.
class ByteFallbackDecoder final : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens->size());
    std::string run;
    auto flush = [&] {
      if (run.empty()) return;
      out.push_back(base::IsValidUtf8(run) ? run : base::RepairUtf8(run));
      run.clear();
    };
    for (auto& t : *tokens) {
      int byte = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') byte = ParseHex(t[3], t[4]);
      if (byte >= 0) {
        run.push_back(static_cast<char>(byte));
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens->swap(out);
  }
  void TokenBytes(std::string* t) const override {
    if (t->size() == 6 && t->compare(0, 3, "<0x") == 0 && (*t)[5] == '>') {
      const int byte = ParseHex((*t)[3], (*t)[4]);
      if (byte >= 0) t->assign(1, static_cast<char>(byte));
    }
  }

 private:
  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static int ParseHex(char hi, char lo) {
    const int h = Hex(hi), l = Hex(lo);
    return h < 0 || l < 0 ? -1 : h * 16 + l;
  }
};

class FuseDecoder final : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens) const override {
    std::string all;
    for (const auto& t : *tokens) all += t;
    tokens->assign(1, std::move(all));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    const size_t n = content_.size();
    for (auto& t : *tokens) {
      size_t begin = 0, end = t.size();
      for (size_t k = 0; k < start_ && begin + n <= end && t.compare(begin, n, content_) == 0; ++k) begin += n;
      for (size_t k = 0; k < stop_ && end >= begin + n && t.compare(end - n, n, content_) == 0; ++k) end -= n;
      t = t.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::unique_ptr<Regex> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (auto& t : *tokens) t = pattern_->ReplaceAll(t, content_);
  }
  void TokenBytes(std::string* token) const override { *token = pattern_->ReplaceAll(*token, content_); }

 private:
  std::unique_ptr<Regex> pattern_;
  std::string content_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> items) : items_(std::move(items)) {}
  void DecodeChain(std::vector<std::string>* tokens) const override {
    for (const auto& d : items_) d->DecodeChain(tokens);
  }
  void TokenBytes(std::string* token) const override {
    for (const auto& d : items_) d->TokenBytes(token);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> items_;
};

using DecoderPtr = std::unique_ptr<Decoder>;

}  // namespace

StatusOr<DecoderPtr> MakeDecoder(const json& config, const JsonContext& ctx) {
  if (config.is_null()) return DecoderPtr();
  std::string type;
  LLMSERVE_RETURN_IF_ERROR(GetType(config, ctx, &type));
  if (type == "ByteLevel") return DecoderPtr(new ByteLevelDecoder());
  if (type == "Metaspace") {
    std::string replacement = "\xE2\x96\x81", scheme;
    bool add_prefix_space = true;
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "replacement", ctx, false, &replacement));
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "prepend_scheme", ctx, false, &scheme));
    LLMSERVE_RETURN_IF_ERROR(GetBool(config, "add_prefix_space", ctx, false, &add_prefix_space));
    const bool strip_first = scheme.empty() ? add_prefix_space : scheme != "never";
    return DecoderPtr(new MetaspaceDecoder(replacement, strip_first));
  }
  if (type == "ByteFallback") return DecoderPtr(new ByteFallbackDecoder());
  if (type == "Fuse") return DecoderPtr(new FuseDecoder());
  if (type == "Strip") {
    std::string content;
    long long start = 0, stop = 0;
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "content", ctx, true, &content));
    LLMSERVE_RETURN_IF_ERROR(GetInt(config, "start", ctx, false, &start));
    LLMSERVE_RETURN_IF_ERROR(GetInt(config, "stop", ctx, false, &stop));
    if (start < 0 || stop < 0) return ctx.Error("Strip decoder needs non-negative start/stop");
    return DecoderPtr(new StripDecoder(content, static_cast<size_t>(start), static_cast<size_t>(stop)));
  }
  if (type == "Replace") {
    if (!config.contains("pattern")) return ctx.Error("Replace decoder needs \"pattern\"");
    LLMSERVE_ASSIGN_OR_RETURN(auto re, MakePattern(config["pattern"], ctx.Child("pattern")));
    std::string content;
    LLMSERVE_RETURN_IF_ERROR(GetString(config, "content", ctx, true, &content));
    return DecoderPtr(new ReplaceDecoder(std::move(re), content));
  }
  if (type == "Sequence") {
    auto it = config.find("decoders");
    if (it == config.end() || !it->is_array()) return ctx.Error("Sequence decoder needs an array \"decoders\"");
    std::vector<DecoderPtr> items;
    for (size_t i = 0; i < it->size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(auto d, MakeDecoder((*it)[i], ctx.Child("decoders").Child(i)));
      if (d) items.push_back(std::move(d));
    }
    return DecoderPtr(new SequenceDecoder(std::move(items)));
  }
  return ctx.Error("unsupported decoder type \"" + type + "\"");
}

}  // namespace llmserve::common::tokenizer
