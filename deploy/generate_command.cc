#include "deploy/generate_command.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/flags.h"
#include "deploy/engine_flags.h"
#include "deploy/model_argument.h"
#include "engine_core/llm.h"

DEFINE_string(prompts, "", "Prompts file: one prompt per line, or JSON lines {\"prompt\": ...} / "
                           "{\"prompt_token_ids\": [...]} with optional per-prompt sampling fields.");
DEFINE_string(output, "", "Where to write the JSON-lines results (default: stdout).");
DEFINE_int32(max_tokens, 16, "Output tokens per prompt at most.");
DEFINE_double(temperature, 1.0, "Sampling temperature (0 = greedy).");
DEFINE_double(top_p, 1.0, "Nucleus sampling mass.");
DEFINE_int32(top_k, 0, "Sample among the top K tokens (0 = all).");
DEFINE_double(min_p, 0.0, "Drop tokens below min_p times the top probability.");
DEFINE_int64(sampling_seed, -1, "Seed for every prompt (-1 = unseeded).");
DEFINE_bool(ignore_eos, false, "Keep generating after EOS.");

namespace llmserve::deploy {

namespace {

proto::SamplingParams BaseParams() {
  proto::SamplingParams p;
  p.max_tokens = FLAGS_max_tokens;
  p.temperature = FLAGS_temperature;
  p.top_p = FLAGS_top_p;
  p.top_k = FLAGS_top_k;
  p.min_p = FLAGS_min_p;
  if (FLAGS_sampling_seed >= 0) p.seed = FLAGS_sampling_seed;
  p.ignore_eos = FLAGS_ignore_eos;
  return p;
}

// One line of the prompts file.
Status ParseLine(const std::string& line, size_t number, const proto::SamplingParams& base,
                 engine_core::LLMPrompt* out) {
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string::npos || line[first] != '{') {
    out->text = line;
    return Status::Ok();
  }
  auto json = nlohmann::json::parse(line, nullptr, false);
  const std::string where = FLAGS_prompts + ":" + std::to_string(number) + ": ";
  if (!json.is_object()) return Status::InvalidArgument(where + "invalid JSON");
  try {
    if (json.contains("prompt")) out->text = json.at("prompt").get<std::string>();
    else if (json.contains("prompt_token_ids")) out->token_ids = json.at("prompt_token_ids").get<std::vector<int32_t>>();
    else return Status::InvalidArgument(where + "needs \"prompt\" or \"prompt_token_ids\"");
    proto::SamplingParams p = base;
    bool custom = false;
    auto take = [&](const char* key, auto* field) {
      if (json.contains(key)) {
        *field = json.at(key).get<std::remove_reference_t<decltype(*field)>>();
        custom = true;
      }
    };
    take("temperature", &p.temperature);
    take("top_p", &p.top_p);
    take("top_k", &p.top_k);
    take("min_p", &p.min_p);
    take("ignore_eos", &p.ignore_eos);
    if (json.contains("max_tokens")) p.max_tokens = json.at("max_tokens").get<int32_t>(), custom = true;
    if (json.contains("seed")) p.seed = json.at("seed").get<int64_t>(), custom = true;
    if (custom) out->sampling = p;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(where + e.what());
  }
  return Status::Ok();
}

}  // namespace

int RunGenerateCommand(int argc, char** argv) {
  common::InitProcess(&argc, &argv,
      "llmserve generate MODEL --prompts FILE [--output FILE] [--max-tokens N] [--temperature T] ...\n"
      "Runs every prompt to completion with continuous batching in this process and writes one JSON\n"
      "line per prompt, in input order: {prompt, prompt_token_ids, text, token_ids, finish_reason}.\n"
      "MODEL is a model directory or a Hugging Face id in the local HF cache (see --revision).");
  if (argc != 2) {
    LOG(ERROR) << "llmserve generate needs exactly one MODEL";
    return 2;
  }
  if (FLAGS_prompts.empty()) {
    LOG(ERROR) << "--prompts FILE is required";
    return 2;
  }
  std::ifstream in(FLAGS_prompts);
  if (!in) {
    LOG(ERROR) << "cannot read --prompts file '" << FLAGS_prompts << "'";
    return 2;
  }
  const proto::SamplingParams base = BaseParams();
  std::vector<engine_core::LLMPrompt> prompts;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    engine_core::LLMPrompt prompt;
    if (Status s = ParseLine(line, number, base, &prompt); !s.ok()) {
      LOG(ERROR) << s.message();
      return 2;
    }
    prompts.push_back(std::move(prompt));
  }
  auto model = ResolveModelArgument(argv[1]);
  if (!model.ok()) {
    LOG(ERROR) << model.status().message();
    return 2;
  }
  proto::EngineConfig config;
  if (Status s = EngineConfigFromFlags(model->dir, &config, model->hf_id); !s.ok()) {
    LOG(ERROR) << s.message();
    return 2;
  }
  if (model->tokenizer_dir != model->dir) config.mutable_model()->set_tokenizer(model->tokenizer_dir);
  auto llm = engine_core::LLM::Create(config);
  if (!llm.ok()) {
    LOG(ERROR) << llm.status().message();
    return 1;
  }
  const bool tty = isatty(STDERR_FILENO);
  auto results = (*llm)->Generate(prompts, base, [tty](size_t done, size_t total) {
    if (!tty) return;
    const int width = 40;
    const int filled = static_cast<int>(width * done / std::max<size_t>(total, 1));
    std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total);
    if (done == total) std::fputc('\n', stderr);
  });
  if (!results.ok()) {
    LOG(ERROR) << results.status().message();
    return 1;
  }
  LOG(INFO) << "generated " << results->size() << " completions; " << (*llm)->num_preemptions()
            << " preemptions";
  std::ofstream file;
  if (!FLAGS_output.empty()) {
    file.open(FLAGS_output);
    if (!file) {
      LOG(ERROR) << "cannot write --output file '" << FLAGS_output << "'";
      return 1;
    }
  }
  std::ostream& out = FLAGS_output.empty() ? std::cout : file;
  for (const auto& r : *results) {
    nlohmann::json j = {{"prompt", r.prompt},     {"prompt_token_ids", r.prompt_token_ids},
                        {"text", r.text},         {"token_ids", r.token_ids},
                        {"finish_reason", r.finish_reason}};
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return 0;
}

}  // namespace llmserve::deploy
