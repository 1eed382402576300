#include "deploy/subcommands.h"

#include <cstdio>
#include <cstring>

#include "deploy/bench/bench_command.h"
#include "deploy/chat_template_command.h"
#include "deploy/generate_command.h"
#include "deploy/keygen_command.h"
#include "deploy/make_model_command.h"
#include "deploy/serve_command.h"
#include "deploy/tokenize_command.h"

namespace llmserve::deploy {

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"serve", "Serve a model over an OpenAI-compatible HTTP API (frontend + engines + workers).",
       RunServeCommand},
      {"generate", "Offline batch generation: run a prompts file to completion, JSON lines out.",
       RunGenerateCommand},
      {"make-model", "Write a Hugging Face model directory with random weights and the Qwen3 tokenizer.",
       RunMakeModelCommand},
      {"tokenize", "Encode JSON strings to token ids (or --decode ids) with a model's tokenizer.",
       RunTokenizeCommand},
      {"chat-template", "Render chat requests (JSON lines on stdin) with a model's chat template.",
       RunChatTemplateCommand},
      {"keygen", "Write the cluster key (ZeroMQ CURVE) that secures TCP sockets between nodes.",
       RunKeygenCommand},
      {"bench", "Benchmarks: `bench serve` (online serving metrics, vLLM's flags), `bench sweep` (rates, plot).",
       bench::RunBenchCommand},
  };
  return kSubcommands;
}

namespace {
void PrintHelp(FILE* out) {
  std::fputs("llmserve: LLM serving with vLLM V1's multi-process topology.\n\n"
             "usage: llmserve <command> [arguments] [--flags]\n\ncommands:\n", out);
  for (const auto& c : Subcommands()) std::fprintf(out, "  %-14s %s\n", c.name.c_str(), c.summary.c_str());
  std::fputs("\n`llmserve <command> --help` explains a command's flags.\n", out);
}
}  // namespace

int RunLauncher(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    PrintHelp(stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : Subcommands()) {
    if (c.name != argv[1]) continue;
    std::string program = std::string("llmserve ") + argv[1];
    std::vector<char*> args{program.data()};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    return c.run(static_cast<int>(args.size()) - 1, args.data());
  }
  std::fprintf(stderr, "llmserve: unknown command '%s'\n\n", argv[1]);
  PrintHelp(stderr);
  return 2;
}

}  // namespace llmserve::deploy
