#pragma once
// The options of `llmserve bench latency|throughput` that are not engine
// flags, in argparse style as vLLM spells them (`--input-len 32`,
// `--input-len=32`, dashes or underscores). They are taken out of argv before
// the engine flags go to gflags: gflags' flags are global to the `llmserve`
// binary, where names such as --num-prompts or --output-json belong to other
// commands too.

#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::deploy {

// One option with its default (a switch has no value on the command line).
struct OfflineOption {
  std::string name;       // dashed, without "--", e.g. "input-len"
  std::string value;      // the default until parsed; "" = unset
  std::string help;       // one line for --help
  bool is_switch = false; // true: takes no value ("true" when given)
  bool given = false;     // set by Extract when it appeared
};

class OfflineOptions {
 public:
  explicit OfflineOptions(std::vector<OfflineOption> options) : options_(std::move(options)) {}

  // Takes the known options (and their values) out of argv; everything else
  // stays, in order, for gflags. A known option without its value is an error.
  Status Extract(int* argc, char** argv);
  // "  --name=default  help" lines, for the --help text.
  std::string Usage() const;

  // The option's value (its default when not given).
  const std::string& Get(const std::string& name) const;
  // Whether it appeared on the command line.
  bool Given(const std::string& name) const;
  // The value as an integer >= `min`; errors name the option.
  StatusOr<int64_t> Int(const std::string& name, int64_t min) const;
  // The value as a number in [min, max).
  StatusOr<double> Double(const std::string& name, double min, double max) const;

 private:
  const OfflineOption& Find(const std::string& name) const;
  std::vector<OfflineOption> options_;
};

// The model directory: --model DIR (an option named "model") or the one
// positional argument left in argv after flag parsing, not both.
StatusOr<std::string> ModelDirFromArgs(const OfflineOptions& options, int argc, char** argv);

// Logs `s` as an error and returns `exit_code`, for a command's main.
int ReportFailure(const Status& s, int exit_code);

// numpy.percentile's default (linear interpolation between closest ranks) of
// `values` at `percent` in [0, 100]; 0 for no values.
double Percentile(std::vector<double> values, double percent);

}  // namespace llmserve::deploy
