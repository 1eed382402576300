#pragma once
// The MODEL argument of `llmserve serve`, `generate`, `tokenize` and
// `chat-template`: a directory, or a Hugging Face id found in the local cache
// at --revision (vLLM's flag), so vLLM users' command lines work unchanged.

#include <string>

#include "base/status_or.h"
#include "deploy/hf_cache.h"

namespace llmserve::deploy {

// Resolves `model` with --revision, in --download-dir or else the cache this
// process's HF variables name; logs where a Hugging Face id was found.
StatusOr<ResolvedModel> ResolveModelArgument(const std::string& model);

}  // namespace llmserve::deploy
