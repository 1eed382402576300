#pragma once
// Helpers for the grammar engine tests: a byte-level vocabulary, whole-string
// matching, and a brute-force mask to compare the fast one against.

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_core/structured_output/compiled_grammar.h"
#include "engine_core/structured_output/matcher.h"

namespace llmserve::engine_core::structured_output::testing {

// 256 single-byte tokens (id = byte) and EOS = 256.
inline std::shared_ptr<const Vocabulary> ByteVocab() {
  static std::shared_ptr<const Vocabulary> v = [] {
    std::vector<std::string> toks;
    for (int b = 0; b < 256; ++b) toks.push_back(std::string(1, static_cast<char>(b)));
    toks.push_back("");
    return Vocabulary::Create(std::move(toks), {256}).value();
  }();
  return v;
}

// True when `s` is a complete match of grammar `g`.
inline bool Matches(const StatusOr<std::shared_ptr<const Grammar>>& g, const std::string& s) {
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return false;
  GrammarMatcher m(CompiledGrammar::Compile(*g, ByteVocab()));
  return m.AcceptBytes(s) && m.CanEnd();
}

// True when `s` is a prefix of some match of `g`.
inline bool IsPrefix(const StatusOr<std::shared_ptr<const Grammar>>& g, const std::string& s) {
  if (!g.ok()) return false;
  GrammarMatcher m(CompiledGrammar::Compile(*g, ByteVocab()));
  return m.AcceptBytes(s);
}

// The allowed tokens by trying each one on a clone.
inline std::vector<int32_t> BruteForceAllowed(const GrammarMatcher& m) {
  std::vector<int32_t> out;
  for (int32_t id = 0; id < m.compiled().vocab().size(); ++id) {
    auto c = m.Clone();
    if (c->AcceptToken(id)) out.push_back(id);
  }
  return out;
}

// The allowed tokens of a bitmask.
inline std::vector<int32_t> MaskIds(GrammarMatcher& m) {
  std::vector<int32_t> mask(m.compiled().vocab().mask_words());
  m.FillNextTokenBitmask(mask.data());
  std::vector<int32_t> out;
  for (int32_t id = 0; id < m.compiled().vocab().size(); ++id)
    if ((static_cast<uint32_t>(mask[id >> 5]) >> (id & 31)) & 1) out.push_back(id);
  return out;
}

}  // namespace llmserve::engine_core::structured_output::testing
