#include "deploy/tokenize_command.h"

#include <gflags/gflags.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/flags.h"
#include "common/tokenizer/tokenizer.h"
#include "deploy/model_argument.h"

// Flag names carry a tokenize_ prefix so they cannot collide with other
// subcommands' flags in the same binary; RunTokenizeCommand maps the short
// spellings (--decode, --no-special, ...) onto them.
DEFINE_bool(tokenize_decode, false,
            "llmserve tokenize: read JSON arrays of ids, write JSON strings (also --decode).");
DEFINE_bool(tokenize_add_special_tokens, true,
            "llmserve tokenize: add BOS/EOS etc. as tokenizer.json/tokenizer_config.json say "
            "(also --add-special-tokens; --no-special turns it off).");
DEFINE_bool(tokenize_skip_special_tokens, false,
            "llmserve tokenize --decode: drop special tokens from the text (also --skip-special-tokens).");

namespace llmserve::deploy {
namespace {

constexpr char kUsage[] =
    "llmserve tokenize MODEL_DIR [--decode] [--no-special] [--skip-special-tokens]\n"
    "Reads one JSON string per line on stdin and writes its token ids as one JSON array per\n"
    "line. With --decode, reads JSON arrays of ids and writes JSON strings. MODEL_DIR needs\n"
    "tokenizer.json (tokenizer_config.json optional); it may be a Hugging Face id in the local\n"
    "HF cache (see --revision).\n"
    "  --add-special-tokens[=true|false]  add special tokens (default true: as the tokenizer says)\n"
    "  --no-special                       same as --add-special-tokens=false\n"
    "  --skip-special-tokens              with --decode, drop special tokens";

// Rewrites the command's short flag spellings to the prefixed gflags names.
std::string MapArgument(const std::string& arg) {
  static const std::pair<const char*, const char*> kMap[] = {
      {"--decode", "--tokenize_decode"},
      {"--no-special", "--notokenize_add_special_tokens"},
      {"--no_special", "--notokenize_add_special_tokens"},
      {"--add-special-tokens", "--tokenize_add_special_tokens"},
      {"--add_special_tokens", "--tokenize_add_special_tokens"},
      {"--no-add-special-tokens", "--notokenize_add_special_tokens"},
      {"--skip-special-tokens", "--tokenize_skip_special_tokens"},
      {"--skip_special_tokens", "--tokenize_skip_special_tokens"},
  };
  const std::string name = arg.substr(0, arg.find('='));
  for (const auto& [from, to] : kMap) {
    if (name == from) return to + arg.substr(name.size());
  }
  return arg;
}

int Fail(size_t line_no, const std::string& message) {
  std::fprintf(stderr, "llmserve tokenize: line %zu: %s\n", line_no, message.c_str());
  return 1;
}

}  // namespace

int RunTokenizeCommand(int argc, char** argv) {
  std::vector<std::string> storage;
  for (int i = 0; i < argc; ++i) storage.push_back(i == 0 ? argv[i] : MapArgument(argv[i]));
  std::vector<char*> args;
  for (auto& s : storage) args.push_back(s.data());
  args.push_back(nullptr);
  int n = argc;
  char** v = args.data();
  common::InitProcess(&n, &v, kUsage);
  if (n != 2) {
    std::fprintf(stderr, "usage: %s\n", kUsage);
    return 2;
  }
  auto model = ResolveModelArgument(v[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "llmserve tokenize: %s\n", model.status().message().c_str());
    return 2;
  }
  auto tok = common::tokenizer::Tokenizer::FromDirectory(model->tokenizer_dir);
  if (!tok.ok()) {
    std::fprintf(stderr, "llmserve tokenize: %s\n", tok.status().message().c_str());
    return 1;
  }
  const auto& t = **tok;
  std::string line;
  size_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json in = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (in.is_discarded()) return Fail(line_no, "not valid JSON");
    if (FLAGS_tokenize_decode) {
      if (!in.is_array()) return Fail(line_no, "expected a JSON array of token ids");
      std::vector<int32_t> ids;
      for (const auto& v : in) {
        if (!v.is_number_integer()) return Fail(line_no, "expected integer token ids");
        ids.push_back(v.get<int32_t>());
      }
      std::cout << nlohmann::json(t.Decode(ids, FLAGS_tokenize_skip_special_tokens)).dump() << '\n';
    } else {
      if (!in.is_string()) return Fail(line_no, "expected a JSON string");
      std::cout << nlohmann::json(t.Encode(in.get_ref<const std::string&>(),
                                           FLAGS_tokenize_add_special_tokens)).dump()
                << '\n';
    }
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace llmserve::deploy
