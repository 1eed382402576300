#pragma once
// The batch-1 GEMVs of one decoder layer timed alone, and the four of them in
// a row, under each GEMV tuning (kernels/cuda/gemv_bf16.h): which of them
// falls short of the read bandwidth, and what each tuning does to each.

#include "base/status.h"
#include "worker/model_config.h"

namespace llmserve::bench {

// Prints one JSON object. read_bw: bytes per second of the same run's read sweep.
Status PrintGemvSweep(const worker::ModelConfig& config, double read_bw);

}  // namespace llmserve::bench
