#pragma once
// vLLM's `vllm serve` flags that llmserve has no flag of its own for, so that
// a vLLM command line works with `vllm serve` replaced by `llmserve serve`.
// Two tables: flags that are accepted and dropped with a warning (they change
// nothing a client can see on this backend), and flags that ask for a feature
// llmserve lacks, which are a startup error rather than a silent no-op.
// docs/vllm-serve-flags.md lists every vLLM flag; a test keeps the two in step.

#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status_or.h"

namespace llmserve::deploy {

// How a vLLM flag takes its value (argparse's nargs / action).
enum class VllmArity {
  kNone,      // store_true: `--x`
  kBool,      // BooleanOptionalAction: `--x` or `--no-x`
  kOne,       // `--x v` or `--x=v`
  kOptional,  // nargs='?': `--x`, `--x v` or `--x=v`
  kList,      // nargs='+' (or repeated): `--x v1 v2 ...`
};

// A vLLM flag accepted with no effect on llmserve.
struct NoEffectVllmFlag {
  std::string_view name;    // dashed, without "--"
  VllmArity arity;
  std::string_view reason;  // why it changes nothing here; ends the warning
};

// A vLLM flag for a feature llmserve does not have yet.
struct RejectedVllmFlag {
  std::string_view name;      // dashed, without "--"
  VllmArity arity;
  std::string_view feature;   // what is missing, for the error message
  std::string_view harmless;  // comma-separated values that ask for what llmserve does anyway
};

// What the error (and docs/vllm-serve-flags.md) says about a rejected flag:
// the missing feature, then the values accepted anyway ("pipeline
// parallelism (accepted: 1)").
std::string DescribeRejected(const RejectedVllmFlag& flag);

// The tables, sorted by name.
std::span<const NoEffectVllmFlag> NoEffectVllmFlags();
std::span<const RejectedVllmFlag> RejectedVllmFlags();

// Other spellings of flags: vLLM's short aliases ("-tp", "-q") and vLLM flags
// that llmserve has under another name ("--kv-cache-memory-bytes").
struct VllmFlagAlias {
  std::string_view spelling;   // without dashes: "tp" for -tp
  bool short_form;             // spelled with one dash
  std::string_view canonical;  // the long name it stands for (ours or a table's), dashed, no "--"
};
std::span<const VllmFlagAlias> VllmFlagAliases();

// Whether a dashed flag name (no "--") is one of llmserve's own flags; a
// "no-" prefix of a bool flag counts. Our flags always win over the tables.
using IsOurFlag = std::function<bool(const std::string& dashed_name)>;

// Rewrites aliases to our names and removes the no-effect vLLM flags with
// their values (`--x v`, `--x=v`, `--x_y`, `--no-x`), adding one warning per
// flag to `warnings` ("--x has no effect on llmserve: <reason>"; a flag
// already in `warned` is not warned about again). A rejected flag is an
// InvalidArgument error naming it. Everything else (positionals, our flags,
// unknown flags, all after "--") is kept, in order.
StatusOr<std::vector<std::string>> FilterVllmFlags(const std::vector<std::string>& args, const IsOurFlag& is_ours,
                                                   std::set<std::string>* warned,
                                                   std::vector<std::string>* warnings);

}  // namespace llmserve::deploy
