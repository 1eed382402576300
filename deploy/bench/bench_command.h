#pragma once
// `llmserve bench <benchmark> [flags]`: dispatches to one benchmark. To add a
// benchmark, add a row to the table in bench_command.cc.

#include <string>
#include <vector>

namespace llmserve::deploy::bench {

// One `llmserve bench` benchmark.
struct BenchSubcommand {
  std::string name;     // as typed, e.g. "serve"
  std::string summary;  // one line for `llmserve bench --help`
  // Runs it; argv[0] is "llmserve bench <name>", flags not yet parsed.
  int (*run)(int argc, char** argv);
};

// Every benchmark, in the order help lists them.
const std::vector<BenchSubcommand>& BenchSubcommands();

// The `llmserve bench` command: argv[0] is "llmserve bench", argv[1] the benchmark.
int RunBenchCommand(int argc, char** argv);

}  // namespace llmserve::deploy::bench
