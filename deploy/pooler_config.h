#pragma once
// The pooling runner's flags (vLLM's --runner, --convert, deprecated --task,
// --pooler-config and its older spelling --override-pooler-config) resolved
// into the engine's ModelConfig.pooler: set only when the model embeds.
//
// Defaults follow vLLM for a decoder converted to an embedder: LAST pooling,
// normalized; a sentence-transformers model directory (modules.json with a
// Pooling module) supplies its own pooling mode and whether it normalizes;
// --pooler-config overrides both.

#include <string>

#include "base/status.h"
#include "proto/engine_config.pb.h"

namespace llmserve::deploy {

struct PoolingRunnerFlags {
  std::string runner = "auto";              // auto | generate | pooling
  std::string convert = "auto";             // auto | none | embed
  std::string task = "auto";                // auto | generate | embed (deprecated)
  std::string pooler_config = "";           // JSON: pooling_type (LAST | MEAN | CLS), normalize
  std::string override_pooler_config = "";  // the same, vLLM's older flag
};

// Sets model->pooler when the flags ask for the pooling runner (runner
// pooling, convert embed or task embed), reading `model_dir`'s
// sentence-transformers files; an error names the offending flag or key.
Status ResolvePoolingRunner(const PoolingRunnerFlags& flags, const std::string& model_dir, proto::ModelConfig* model);

}  // namespace llmserve::deploy
