// Encode throughput of llmserve's tokenizer (single thread), reported by
// scripts/bench_tokenizer next to npm tiktoken on the same corpus.
//   tokenizer_bench CORPUS_FILE NAME=MODEL_DIR... [--benchmark_* flags]
// Counters: bytes_per_second (MB/s in the table) and tokens/s. "warm" keeps
// the BPE piece cache across iterations (a server's steady state); "cold"
// clears it before every pass over the corpus.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "common/tokenizer/tokenizer_config.h"

using llmserve::common::tokenizer::ReadFileToString;
using llmserve::common::tokenizer::Tokenizer;

namespace {

void BM_Encode(benchmark::State& state, const Tokenizer* tok, const std::string* corpus, bool cold) {
  size_t tokens = 0;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      tok->ClearCache();
      state.ResumeTiming();
    }
    auto ids = tok->Encode(*corpus, false);
    tokens += ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus->size()));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["tokens"] = static_cast<double>(tokens / state.iterations());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CORPUS_FILE NAME=MODEL_DIR... [--benchmark_* flags]\n", argv[0]);
    return 2;
  }
  auto corpus = ReadFileToString(argv[1]);
  if (!corpus.ok()) {
    std::fprintf(stderr, "%s\n", corpus.status().ToString().c_str());
    return 1;
  }
  static std::string text;
  text = *corpus;
  static std::vector<std::unique_ptr<Tokenizer>> tokenizers;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "expected NAME=MODEL_DIR, got %s\n", arg.c_str());
      return 2;
    }
    auto tok = Tokenizer::FromDirectory(arg.substr(eq + 1));
    if (!tok.ok()) {
      std::fprintf(stderr, "%s\n", tok.status().ToString().c_str());
      return 1;
    }
    tokenizers.push_back(std::move(tok).value());
    const Tokenizer* t = tokenizers.back().get();
    const std::string name = arg.substr(0, eq);
    benchmark::RegisterBenchmark(("encode/" + name + "/warm").c_str(), BM_Encode, t, &text, false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("encode/" + name + "/cold").c_str(), BM_Encode, t, &text, true)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
