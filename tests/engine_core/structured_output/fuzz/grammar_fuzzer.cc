// libFuzzer target over the grammar front ends (JSON Schema, regex, EBNF,
// choice) and the compiled grammar. The first byte picks the front end and
// its whitespace option, the second steers the walk, the rest is the
// constraint's text. Any text must compile or fail with a status; whatever
// compiles runs a matcher over a byte vocabulary for up to 64 steps, taking
// an allowed token each step. A non-final state with no allowed token, or an
// allowed token the matcher refuses, aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine_core/structured_output/compiled_grammar.h"
#include "engine_core/structured_output/constraint.h"
#include "engine_core/structured_output/matcher.h"

namespace so = llmserve::engine_core::structured_output;

namespace {

// 256 single-byte tokens (id = byte) and EOS = 256, with a small mask cache
// budget so that runs go through the cache starting over.
std::shared_ptr<const so::Vocabulary> ByteVocab() {
  static const std::shared_ptr<const so::Vocabulary> vocab = [] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
    tokens.push_back("");
    return so::Vocabulary::Create(std::move(tokens), {256}, {}, size_t{1} << 20).value();
  }();
  return vocab;
}

llmserve::proto::StructuredOutputsParams ParamsFor(uint8_t pick, std::string text) {
  llmserve::proto::StructuredOutputsParams p;
  p.disable_any_whitespace = (pick & 4) != 0;
  switch (pick % 4) {
    case 0: p.json = std::move(text); break;
    case 1: p.regex = std::move(text); break;
    case 2: p.grammar = std::move(text); break;
    default: {
      std::vector<std::string> choices(1);
      for (char c : text) {
        if (c == '\n') choices.emplace_back();
        else choices.back() += c;
      }
      p.choice = std::move(choices);
    }
  }
  return p;
}

// Walks the matcher, taking allowed tokens picked by `steer`.
void Walk(const std::shared_ptr<const so::CompiledGrammar>& compiled, uint8_t steer) {
  so::GrammarMatcher matcher(compiled);
  std::vector<int32_t> mask(static_cast<size_t>(ByteVocab()->mask_words()));
  std::vector<int32_t> allowed;
  for (int step = 0; step < 64 && !matcher.IsTerminated(); ++step) {
    matcher.FillNextTokenBitmask(mask.data());
    allowed.clear();
    for (int32_t id = 0; id < ByteVocab()->size(); ++id) {
      if (static_cast<uint32_t>(mask[id >> 5]) >> (id & 31) & 1u) allowed.push_back(id);
    }
    if (allowed.empty()) std::abort();  // a state with no way on
    const int32_t id = allowed[(steer + 31u * static_cast<unsigned>(step)) % allowed.size()];
    if (!matcher.AcceptToken(id)) std::abort();  // the mask allowed it
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);
  auto grammar = so::GrammarForConstraint(ParamsFor(data[0], text));
  if (!grammar.ok()) return 0;
  Walk(so::CompiledGrammar::Compile(*grammar, ByteVocab()), data[1]);
  return 0;
}
