#include "frontend/tool_parsers/tool_parser.h"

#include <random>

#include "frontend/tool_parsers/parser_util.h"

namespace llmserve::frontend::tool_parsers {
namespace {

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

std::string RandomChars(std::string_view alphabet, int n) {
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string out;
  for (int i = 0; i < n; ++i) out += alphabet[pick(Rng())];
  return out;
}

}  // namespace

std::string MakeToolCallId() {
  return "chatcmpl-tool-" + RandomChars("0123456789abcdef", 32);
}

std::string MakeMistralToolCallId() {
  return RandomChars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 9);
}

const std::vector<std::string>& ToolParserNames() {
  static const std::vector<std::string> names = {"deepseek_v3", "hermes", "llama3_json", "mistral"};
  return names;
}

StatusOr<std::unique_ptr<ToolParser>> MakeToolParser(std::string_view name) {
  if (name == "hermes") return NewHermesParser();
  if (name == "llama3_json") return NewLlama3JsonParser();
  if (name == "mistral") return NewMistralParser();
  if (name == "deepseek_v3") return NewDeepSeekV3Parser();
  std::string known;
  for (const std::string& n : ToolParserNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown tool call parser '" + std::string(name) +
                                 "'; known parsers: " + known);
}

}  // namespace llmserve::frontend::tool_parsers
