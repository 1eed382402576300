#include "deploy/bench/bench_command.h"

#include <cstdio>
#include <cstring>

#include "deploy/bench/offline_latency.h"
#include "deploy/bench/offline_throughput.h"
#include "deploy/bench/serve_bench.h"
#include "deploy/bench/sweep.h"

namespace llmserve::deploy::bench {

const std::vector<BenchSubcommand>& BenchSubcommands() {
  static const std::vector<BenchSubcommand> kTable = {
      {"serve", "Load an OpenAI-compatible server (ours, vLLM, llama-server) and report vLLM's serving metrics.",
       RunBenchServeCommand},
      {"sweep", "Run `bench serve` at several request rates against one or more servers; plot latency vs "
                "throughput (PNG, gnuplot).",
       RunBenchSweepCommand},
      {"latency", "Latency of one batch run to completion in this process, no HTTP (vllm bench latency).",
       deploy::RunBenchLatency},
      {"throughput", "Offline throughput of a dataset submitted at once in this process (vllm bench throughput).",
       deploy::RunBenchThroughput},
  };
  return kTable;
}

namespace {

void PrintHelp(FILE* out) {
  std::fputs("usage: llmserve bench <benchmark> [--flags]\n\nbenchmarks:\n", out);
  for (const auto& b : BenchSubcommands()) std::fprintf(out, "  %-10s %s\n", b.name.c_str(), b.summary.c_str());
  std::fputs("\n`llmserve bench <benchmark> --help` lists its flags.\n", out);
}

}  // namespace

int RunBenchCommand(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    PrintHelp(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& b : BenchSubcommands()) {
    if (b.name != argv[1]) continue;
    std::string program = std::string("llmserve bench ") + argv[1];
    std::vector<char*> args{program.data()};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    return b.run(static_cast<int>(args.size()) - 1, args.data());
  }
  std::string names;
  for (const auto& b : BenchSubcommands()) names += (names.empty() ? "" : ", ") + b.name;
  std::fprintf(stderr, "llmserve bench: unknown benchmark '%s' (available: %s)\n\n", argv[1], names.c_str());
  PrintHelp(stderr);
  return 2;
}

}  // namespace llmserve::deploy::bench
