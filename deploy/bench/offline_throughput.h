#pragma once
// `llmserve bench throughput`: offline throughput in this process (vLLM's
// `vllm bench throughput`): every prompt of a dataset (random, ShareGPT JSON
// or our JSON lines; see offline_dataset.h) is submitted at once and the
// engine runs until all are done. Reports requests/s and tokens/s over the
// whole run (vLLM's JSON keys), and prefill and decode tokens/s measured
// separately on prefill steps and decode-only steps.

namespace llmserve::deploy {

// argv[0] is "llmserve bench throughput"; returns the process exit code.
int RunBenchThroughput(int argc, char** argv);

}  // namespace llmserve::deploy
