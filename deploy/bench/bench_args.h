#pragma once
// Command-line arguments in Python argparse's style, so that a `vllm bench serve`
// command line works unchanged: `--name VALUE`, `--name=VALUE`, switches
// (`--ignore-eos`), and flags that take several values (`--goodput ttft:100
// tpot:20`). Dashes and underscores in a name are the same. gflags cannot take
// several values after one flag, and its flags are global to the `llmserve`
// binary (where --seed or --model already mean something else), hence this
// small parser for the bench subcommands.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::deploy::bench {

// One flag a bench subcommand accepts.
struct ArgSpec {
  enum class Kind {
    kValue,   // exactly one value
    kSwitch,  // no value (true when present); `--name=false` also accepted
    kList,    // one or more values up to the next `--flag`; repeatable
  };
  std::string name;           // dashed, without the leading "--", e.g. "request-rate"
  Kind kind = Kind::kValue;   // how many values follow the flag
  std::string default_value;  // for kValue: used when the flag is absent ("" = unset)
  std::string help;           // one line for --help
};

class ArgParser {
 public:
  // `usage` is printed above the flag list by Help().
  ArgParser(std::string usage, std::vector<ArgSpec> specs);

  // Parses argv[1..argc). Unknown flags, missing values and positional
  // arguments (beyond `max_positional`) are InvalidArgument errors.
  Status Parse(int argc, char** argv, size_t max_positional = 0);
  // True when --help or -h was given.
  bool help_requested() const { return help_; }
  // The usage text and every flag with its default and help line.
  std::string Help() const;

  // Whether the flag appeared on the command line.
  bool Has(const std::string& name) const;
  // A kValue flag's value, or its default when absent.
  std::string Get(const std::string& name) const;
  // A kSwitch flag's state.
  bool Switch(const std::string& name) const;
  // A kList flag's values in order (all occurrences), empty when absent.
  std::vector<std::string> List(const std::string& name) const;
  // Get() as a number; errors name the flag. "inf" is accepted by Double.
  StatusOr<double> Double(const std::string& name) const;
  StatusOr<int64_t> Int(const std::string& name) const;
  // Positional arguments in order.
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  const ArgSpec* Find(const std::string& name) const;

  std::string usage_;
  std::vector<ArgSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;  // by dashed name
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Splits "a,b,c" into {"a","b","c"}, trimming spaces and dropping empty parts.
std::vector<std::string> SplitComma(const std::string& s);

}  // namespace llmserve::deploy::bench
