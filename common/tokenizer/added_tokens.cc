#include "common/tokenizer/added_tokens.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "base/utf8.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;

namespace {
// The last / first code point around a byte offset (0 when none).
char32_t CodePointBefore(std::string_view s, size_t end) {
  if (end == 0) return 0;
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  char32_t cp = 0;
  base::DecodeUtf8(s, &start, &cp);
  return cp;
}
char32_t CodePointAt(std::string_view s, size_t pos) {
  if (pos >= s.size()) return 0;
  char32_t cp = 0;
  base::DecodeUtf8(s, &pos, &cp);
  return cp;
}
bool IsWordChar(char32_t cp) {
  if (cp == 0) return false;
  if (cp == '_') return true;
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}
}  // namespace

int32_t AddedTokens::Child(int32_t node, unsigned char b) const {
  const auto& ch = trie_[node].children;
  auto it = std::lower_bound(ch.begin(), ch.end(), b,
                             [](const auto& p, unsigned char v) { return p.first < v; });
  return it != ch.end() && it->first == b ? it->second : -1;
}

void AddedTokens::Insert(int32_t token_index) {
  first_byte_[static_cast<unsigned char>(tokens_[token_index].content[0])] = true;
  int32_t node = 0;
  for (unsigned char b : tokens_[token_index].content) {
    int32_t next = Child(node, b);
    if (next < 0) {
      next = static_cast<int32_t>(trie_.size());
      trie_.emplace_back();
      auto& ch = trie_[node].children;
      auto it = std::lower_bound(ch.begin(), ch.end(), b,
                                 [](const auto& p, unsigned char v) { return p.first < v; });
      ch.insert(it, {b, next});
    }
    node = next;
  }
  trie_[node].token = token_index;  // a later duplicate content wins, as in HF
}

Status AddedTokens::Load(const json& array, const JsonContext& ctx) {
  if (array.is_null()) return Status::Ok();
  if (!array.is_array()) return ctx.Error("expected an array, found " + JsonTypeName(array));
  for (size_t i = 0; i < array.size(); ++i) {
    const JsonContext c = ctx.Child(i);
    AddedToken t;
    long long id = 0;
    LLMSERVE_RETURN_IF_ERROR(GetInt(array[i], "id", c, true, &id));
    if (id < 0 || id > INT32_MAX) return c.Child("id").Error("id out of range");
    t.id = static_cast<int32_t>(id);
    LLMSERVE_RETURN_IF_ERROR(GetString(array[i], "content", c, true, &t.content));
    if (t.content.empty()) return c.Child("content").Error("empty added token");
    LLMSERVE_RETURN_IF_ERROR(GetBool(array[i], "single_word", c, false, &t.single_word));
    LLMSERVE_RETURN_IF_ERROR(GetBool(array[i], "lstrip", c, false, &t.lstrip));
    LLMSERVE_RETURN_IF_ERROR(GetBool(array[i], "rstrip", c, false, &t.rstrip));
    LLMSERVE_RETURN_IF_ERROR(GetBool(array[i], "special", c, false, &t.special));
    t.normalized = !t.special;  // HF's default
    LLMSERVE_RETURN_IF_ERROR(GetBool(array[i], "normalized", c, false, &t.normalized));
    has_normalized_ = has_normalized_ || t.normalized;
    tokens_.push_back(std::move(t));
    if (static_cast<size_t>(id) >= by_id_.size()) by_id_.resize(static_cast<size_t>(id) + 1, -1);
    by_id_[static_cast<size_t>(id)] = static_cast<int32_t>(tokens_.size() - 1);
    Insert(static_cast<int32_t>(tokens_.size() - 1));
  }
  return Status::Ok();
}

const AddedToken* AddedTokens::FindById(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= by_id_.size() || by_id_[id] < 0) return nullptr;
  return &tokens_[by_id_[id]];
}

const AddedToken* AddedTokens::FindByContent(std::string_view content) const {
  int32_t node = 0;
  for (unsigned char b : content) {
    node = Child(node, b);
    if (node < 0) return nullptr;
  }
  return trie_[node].token >= 0 ? &tokens_[trie_[node].token] : nullptr;
}

void AddedTokens::Split(std::string_view text, bool normalized, bool split_special,
                        std::vector<Section>* out) const {
  size_t start = 0;  // beginning of the pending plain text
  size_t i = 0;
  while (i < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    // Longest token starting at i that is eligible.
    int32_t best = -1;
    size_t best_end = 0;
    int32_t node = 0;
    for (size_t j = i; j < text.size(); ++j) {
      node = Child(node, static_cast<unsigned char>(text[j]));
      if (node < 0) break;
      const int32_t t = trie_[node].token;
      if (t < 0) continue;
      const AddedToken& tok = tokens_[t];
      if (tok.normalized != normalized || (split_special && tok.special)) continue;
      best = t;
      best_end = j + 1;
    }
    if (best >= 0 && tokens_[best].single_word &&
        (IsWordChar(CodePointBefore(text, i)) || IsWordChar(CodePointAt(text, best_end)))) {
      best = -1;
    }
    if (best < 0) {
      ++i;
      continue;
    }
    const AddedToken& tok = tokens_[best];
    size_t match_start = i, match_end = best_end;
    if (tok.lstrip) {
      while (match_start > start && base::IsUnicodeWhitespace(CodePointBefore(text, match_start))) {
        const char32_t cp = CodePointBefore(text, match_start);
        std::string enc;
        base::AppendUtf8(cp, &enc);
        match_start -= enc.size();
      }
    }
    if (tok.rstrip) {
      while (match_end < text.size() && base::IsUnicodeWhitespace(CodePointAt(text, match_end))) {
        match_end += base::Utf8SequenceLength(static_cast<unsigned char>(text[match_end]));
      }
    }
    if (match_start > start) out->push_back({text.substr(start, match_start - start), -1});
    out->push_back({text.substr(match_start, match_end - match_start), tok.id});
    i = start = match_end;
  }
  if (start < text.size()) out->push_back({text.substr(start), -1});
}

}  // namespace llmserve::common::tokenizer
