#pragma once
// `llmserve serve`'s command line before gflags sees it: `--config FILE.yaml`
// expanded (its flags first, so the command line wins), vLLM's spellings of
// our flags rewritten, vLLM flags without effect here dropped with a warning,
// and vLLM flags for features llmserve lacks refused (see deploy/vllm_flags.h).

#include <string>
#include <vector>

#include "base/status_or.h"
#include "deploy/config_file.h"
#include "deploy/vllm_flags.h"

namespace llmserve::deploy {

struct ServeArguments {
  std::vector<std::string> args;      // for gflags, without argv[0]: the config's flags, then the command line's
  std::string model;                  // from --model or the config's `model:`; a positional MODEL wins over it
  std::vector<std::string> warnings;  // one per vLLM flag dropped
};

// Prepares `cli_args` (argv without argv[0]). `is_ours` and `list_style` say
// which flags are llmserve's (GflagsIsOurs / GflagsListStyle in a process).
StatusOr<ServeArguments> PrepareServeArguments(const std::vector<std::string>& cli_args, const IsOurFlag& is_ours,
                                               const ListStyleOf& list_style);

// Whether this process defines the gflag (dashed name; "no-x" for a bool x counts).
bool GflagsIsOurs(const std::string& dashed_name);

// How a YAML list is passed to this process's flags: our flags take one value
// (none takes a comma-separated list today), others are vLLM's.
ListStyle GflagsListStyle(const std::string& dashed_name);

}  // namespace llmserve::deploy
