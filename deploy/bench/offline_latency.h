#pragma once
// `llmserve bench latency`: the latency of one batch of requests run to
// completion in this process (vLLM's `vllm bench latency`): --batch-size
// random prompts of --input-len tokens, each generating exactly --output-len
// tokens; --num-iters-warmup unmeasured batches, then --num-iters measured
// ones; average, standard deviation and percentiles of the batch latency,
// plus prefill and decode throughput measured separately (prefill steps vs
// decode-only steps). Prefix caching is off unless asked for, as in vLLM.

namespace llmserve::deploy {

// argv[0] is "llmserve bench latency"; returns the process exit code.
int RunBenchLatency(int argc, char** argv);

}  // namespace llmserve::deploy
