// Compares llmserve's tokenizer with reference encodings produced by
// gen_reference.js (@lenml/tokenizers, a port of transformers.js):
//   tokenizer_conformance MODEL_DIR CASES.jsonl [--bos-divergence]
// For every case it checks encode without and with special tokens, decode,
// decode with skip_special_tokens and transformers' clean-up, and prints each
// mismatch (the first 20 in detail). Exit status 0 only with 0 mismatches.
//
// --bos-divergence: the reference does not apply tokenizer_config.json's
// add_bos_token (transformers.js ignores it); transformers' LlamaTokenizerFast
// does, and so do we, so the expected ids with special tokens get BOS first.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/tokenizer/tokenizer.h"

using llmserve::common::tokenizer::Tokenizer;
using nlohmann::json;

namespace {

std::string IdsToString(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR CASES.jsonl [--bos-divergence]\n", argv[0]);
    return 2;
  }
  const bool bos_divergence = argc > 3 && std::string(argv[3]) == "--bos-divergence";
  std::ifstream in(argv[2]);
  if (!in) {  // the reference fixture was skipped (no node / npm packages)
    std::fprintf(stderr, "SKIP: no reference cases at %s\n", argv[2]);
    return 77;
  }
  auto tok = Tokenizer::FromDirectory(argv[1]);
  if (!tok.ok()) {
    std::fprintf(stderr, "load failed: %s\n", tok.status().ToString().c_str());
    return 1;
  }
  size_t cases = 0, mismatches = 0, bytes = 0;
  std::string line;
  auto report = [&](size_t n, const char* what, const std::string& text, const std::string& want,
                    const std::string& got) {
    ++mismatches;
    if (mismatches <= 20) {
      std::fprintf(stderr, "case %zu: %s mismatch\n  text: %s\n  want: %s\n  got:  %s\n", n, what,
                   json(text).dump().c_str(), want.c_str(), got.c_str());
    }
  };
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json c = json::parse(line, nullptr, false);
    if (c.is_discarded()) {
      std::fprintf(stderr, "bad JSON on line %zu\n", cases + 1);
      return 1;
    }
    ++cases;
    const std::string text = c["text"];
    bytes += text.size();
    const std::vector<int32_t> want = c["ids"];
    std::vector<int32_t> want_special = c["ids_special"];
    if (bos_divergence && (*tok)->bos_token_id()) {
      want_special.insert(want_special.begin(), *(*tok)->bos_token_id());
    }
    const auto got = (*tok)->Encode(text, false);
    if (got != want) report(cases, "encode", text, IdsToString(want), IdsToString(got));
    const auto got_special = (*tok)->Encode(text, true);
    if (got_special != want_special) {
      report(cases, "encode(add_special_tokens)", text, IdsToString(want_special), IdsToString(got_special));
    }
    const std::string decoded = (*tok)->Decode(want, false);
    if (decoded != c["decoded"]) {
      report(cases, "decode", text, json(c["decoded"]).dump(), json(decoded).dump());
    }
    const std::string skipped = (*tok)->Decode(want, true);
    if (skipped != c["decoded_skip"]) {
      report(cases, "decode(skip_special_tokens)", text, json(c["decoded_skip"]).dump(), json(skipped).dump());
    }
    const std::string cleaned = Tokenizer::CleanUpTokenizationSpaces(decoded);
    if (cleaned != c["decoded_cleanup"]) {
      report(cases, "decode+clean_up_tokenization_spaces", text, json(c["decoded_cleanup"]).dump(),
             json(cleaned).dump());
    }
  }
  std::printf("%s: %zu cases (%zu bytes of text), %zu mismatches\n", argv[1], cases, bytes, mismatches);
  if (cases == 0) return 1;
  return mismatches == 0 ? 0 : 1;
}
