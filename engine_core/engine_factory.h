#pragma once
// Builds a ready-to-step EngineCore for a deployment's EngineConfig: loads the
// model (in this process for tensor_parallel_size 1), sizes the KV cache and
// sets the scheduler's budgets. Shared by llmserve-engine and the offline LLM.

#include <functional>
#include <memory>

#include "common/process/memory_shares.h"
#include "engine_core/engine_core.h"
#include "proto/engine_config.pb.h"
#include "base/status_or.h"

namespace llmserve::engine_core {

struct BuiltEngine {
  std::unique_ptr<EngineCore> core;
  uint32_t max_model_len = 0;   // what the engine serves (prompt + output)
  uint32_t block_size = 0;
  // CPU: this engine's share of the host's memory, held while the engine runs.
  std::unique_ptr<common::MemoryShare> memory_share;
};

// Receives the executor BuildEngineCore made and returns the one the engine
// core uses (benchmarks wrap it to time the model apart from the engine).
using ExecutorWrapper = std::function<std::unique_ptr<Executor>(std::unique_ptr<Executor>)>;

// `engine_index` is the engine's DP rank (stamped on its outputs); `wrap`,
// when set, is applied to the executor before the engine core is built.
StatusOr<BuiltEngine> BuildEngineCore(const proto::EngineConfig& config, int32_t engine_index,
                                      const ExecutorWrapper& wrap = {});

}  // namespace llmserve::engine_core
