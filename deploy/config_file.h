#pragma once
// `--config FILE.yaml`, read as vLLM reads it: a YAML mapping whose keys are
// flag names without "--" (dashes or underscores) and whose values become
// command-line arguments:
//   true -> `--k`, false or null -> nothing, a list -> `--k v1 v2 ...`,
//   a mapping -> `--k=<json>`, any other scalar -> `--k=<text>`;
// `model:` names the model instead. (vLLM passes null as the string "None",
// which its optional flags read as "unset"; leaving the flag out is the same.)
// Scalars are typed as PyYAML's safe_load types them (YAML 1.1: yes/no/on/off
// are booleans), since that is what vLLM users' files were written against.

#include <functional>
#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::deploy {

// How a YAML list becomes arguments for a flag name.
enum class ListStyle {
  kSeparateValues,  // not one of our flags (a vLLM flag): `--k v1 v2 ...`, as vLLM does
  kSingleValue,     // one of our flags taking one value: a one-item list only
  kCommaJoined,     // one of our flags taking a comma-separated list: `--k=v1,v2`
};
using ListStyleOf = std::function<ListStyle(const std::string& dashed_name)>;

// The arguments a config file stands for.
struct ConfigFileArgs {
  std::vector<std::string> args;  // in the file's order
  std::string model;              // the `model:` key; "" when absent
};

// Converts YAML `text`; errors name `source` and the line ("cfg.yaml:3: ...").
StatusOr<ConfigFileArgs> ConfigArgsFromYaml(const std::string& text, const std::string& source,
                                            const ListStyleOf& list_style);

// Reads `path` (a .yaml or .yml file, as vLLM requires) and converts it.
StatusOr<ConfigFileArgs> ReadConfigFile(const std::string& path, const ListStyleOf& list_style);

}  // namespace llmserve::deploy
