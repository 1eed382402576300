#pragma once
// The built-in demo model `llmserve serve` serves without a MODEL_DIR: a tiny
// Qwen3 with random weights and the real tokenizer, generated on first use.

#include <string>

#include "base/status_or.h"

namespace llmserve::deploy {

// The demo model's directory under $XDG_CACHE_HOME (or ~/.cache)/llmserve,
// generated there first if it is not.
StatusOr<std::string> EnsureDemoModel();

}  // namespace llmserve::deploy
