#include "deploy/chat_template_command.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>

#include "common/flags.h"
#include "deploy/model_argument.h"
#include "frontend/chat_template/chat_template.h"

DEFINE_string(render_template_name, "",
              "chat-template: which template of a named list to use (default: HF's choice, "
              "'tool_use' when tools are given and it exists, else 'default').");
DEFINE_string(render_template_file, "",
              "chat-template: render with this Jinja file instead of the model's chat template "
              "(special tokens still come from MODEL_DIR/tokenizer_config.json).");

namespace llmserve::deploy {

int RenderChatRequests(const frontend::ChatTemplate& tmpl, std::istream& in, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  std::string line;
  int line_no = 0, failures = 0;
  auto fail = [&](const std::string& message) {
    out << Json({{"error", "line " + std::to_string(line_no) + ": " + message}}).dump() << "\n";
    ++failures;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json req = Json::parse(line, nullptr, false);
    if (req.is_discarded()) {
      fail("not valid JSON");
      continue;
    }
    if (!req.is_object()) {
      fail("expected a JSON object with \"messages\"");
      continue;
    }
    if (!req.contains("messages") || !req["messages"].is_array()) {
      fail("\"messages\" must be an array");
      continue;
    }
    if (req.contains("add_generation_prompt") && !req["add_generation_prompt"].is_boolean()) {
      fail("\"add_generation_prompt\" must be true or false");
      continue;
    }
    Json kwargs = Json::object();
    bool bad = false;
    for (const auto& [k, v] : req.items()) {
      if (k == "messages" || k == "add_generation_prompt" || k == "tools") continue;
      if (k == "chat_template_kwargs") {
        if (!v.is_object()) {
          fail("\"chat_template_kwargs\" must be an object");
          bad = true;
          break;
        }
        for (const auto& [kk, vv] : v.items()) kwargs[kk] = vv;
      } else {
        kwargs[k] = v;
      }
    }
    if (bad) continue;
    bool agp = req.value("add_generation_prompt", false);
    Json tools = req.contains("tools") ? req["tools"] : Json();
    auto rendered = tmpl.Render(req["messages"], agp, tools, kwargs);
    if (!rendered.ok()) {
      fail(rendered.status().message());
      continue;
    }
    out << Json(*rendered).dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  }
  out.flush();
  return failures;
}

int RunChatTemplateCommand(int argc, char** argv) {
  common::InitProcess(&argc, &argv,
      "llmserve chat-template MODEL_DIR [--flags]\n"
      "Reads one JSON object per line on stdin, e.g.\n"
      "  {\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"add_generation_prompt\": true,\n"
      "   \"tools\": [...], \"enable_thinking\": false}\n"
      "and writes the prompt MODEL_DIR's chat template renders as one JSON string per line\n"
      "(or {\"error\": ...} for a bad line; the exit status is then 1). Keys other than messages,\n"
      "add_generation_prompt and tools (and the entries of chat_template_kwargs) are template\n"
      "variables. MODEL_DIR needs only tokenizer_config.json (or chat_template.jinja); it may be a Hugging Face\n"
      "id in the local HF cache (see --revision).");
  if (argc != 2) {
    std::cerr << "llmserve chat-template: expected exactly one MODEL_DIR argument (see --help)\n";
    return 2;
  }
  auto model = ResolveModelArgument(argv[1]);
  if (!model.ok()) {
    std::cerr << "llmserve chat-template: " << model.status().message() << "\n";
    return 2;
  }
  frontend::ChatTemplateOptions options;
  options.template_name = FLAGS_render_template_name;
  StatusOr<frontend::ChatTemplate> tmpl = Status::Internal("unset");
  if (FLAGS_render_template_file.empty()) {
    tmpl = frontend::ChatTemplate::FromModelDir(model->tokenizer_dir, options);
  } else {
    auto base = frontend::ChatTemplate::FromModelDir(model->tokenizer_dir, options);
    std::ifstream file(FLAGS_render_template_file, std::ios::binary);
    if (!file) {
      std::cerr << "llmserve chat-template: cannot open " << FLAGS_render_template_file << "\n";
      return 2;
    }
    std::string source((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<std::pair<std::string, std::string>> tokens;
    if (base.ok()) tokens = base->special_tokens();
    tmpl = frontend::ChatTemplate::FromSource(source, tokens, options);
  }
  if (!tmpl.ok()) {
    std::cerr << "llmserve chat-template: " << tmpl.status().ToString() << "\n";
    return 2;
  }
  int failures = RenderChatRequests(*tmpl, std::cin, std::cout);
  if (failures > 0) {
    std::cerr << "llmserve chat-template: " << failures << " line(s) failed\n";
    return 1;
  }
  return 0;
}

}  // namespace llmserve::deploy
