// libFuzzer target over the Jinja engine, which reads chat templates from
// model files and from requests (chat_template): the input is a template,
// then optionally a NUL byte and a JSON object of variables (without one,
// the variables a chat template gets: messages, tools, bos_token, ...).
// Parse and render must succeed or give an error naming the problem, never
// crash; a parse error names its line, and a render that succeeds gives the
// same text twice.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "jinja/json_value.h"
#include "jinja/template.h"
#include "tests/fuzz_require.h"

namespace llmserve::jinja::fuzz {

using Json = nlohmann::ordered_json;

using llmserve::testing::FuzzRequire;

const Json& ChatVars() {
  static const Json* vars = new Json(Json::parse(R"({
    "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true, "enable_thinking": false,
    "messages": [{"role": "system", "content": "sys"},
                 {"role": "user", "content": "héllo <b>"},
                 {"role": "assistant", "content": "<think>\nr\n</think>\n\nok", "tool_calls": [
                   {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
                 {"role": "tool", "content": "42"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "documents": null})"));
  return *vars;
}

std::vector<std::pair<std::string, Value>> Vars(const Json& object) {
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [name, value] : object.items()) out.emplace_back(name, FromJson(value));
  return out;
}

}  // namespace llmserve::jinja::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = llmserve::jinja::fuzz;
  using llmserve::jinja::Template;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string source = input.substr(0, nul);
  f::Json vars = f::ChatVars();
  if (nul != std::string::npos) {
    f::Json given = f::Json::parse(input.substr(nul + 1), nullptr, /*allow_exceptions=*/false);
    if (given.is_object()) vars = std::move(given);
  }
  auto parsed = Template::Parse(source);
  if (!parsed.ok()) {
    const std::string& m = parsed.status().message();
    f::FuzzRequire(m.find(" at line ") != std::string::npos || m.find("nesting") != std::string::npos,
                   "a parse error without a position");
    return 0;
  }
  llmserve::jinja::RenderEnv env;
  env.max_steps = 100000;
  env.now = [] { return std::tm{}; };
  auto first = (*parsed)->Render(f::Vars(vars), env);
  if (!first.ok()) {
    f::FuzzRequire(!first.status().message().empty(), "a render error without a message");
    return 0;
  }
  auto second = (*parsed)->Render(f::Vars(vars), env);
  f::FuzzRequire(second.ok() && *second == *first, "two renders differ");
  return 0;
}
