#pragma once
// Process start-up shared by every executable: gflags with vLLM's dashed
// spellings (--max-num-seqs, --no-enable-prefix-caching), a --help that lists
// only llmserve's own flags, and glog writing to stderr.

#include <string>

namespace llmserve::common {

// Rewrites dashed flag names to gflags' underscores, handles --help/-h (prints
// `usage` and the flags defined in llmserve sources, then exits 0), parses the
// flags (removing them from argv; positional arguments stay, in order) and
// initialises glog. Unknown flags are an error with a non-zero exit.
void InitProcess(int* argc, char*** argv, const std::string& usage);

// --log-format (else $LLMSERVE_LOG_FORMAT): text leaves glog as it is, json
// sends its records to stderr as JSON lines (common/json_log.h); exits 2 on
// another value. Exports the choice to $LLMSERVE_LOG_FORMAT for the
// processes this one starts. InitProcess calls it; `program` is argv[0].
void InitLogFormat(const std::string& program);

// The help text InitProcess prints: `usage`, then every llmserve flag as
// `--dashed-name=<default>  (type) description`, sorted by name.
std::string FlagsHelp(const std::string& usage);

// Normalises one command-line argument: "--max-num-seqs=4" -> "--max_num_seqs=4",
// "--no-enable-prefix-caching" -> "--noenable_prefix_caching" when that bool flag
// exists. Arguments that are not flags are returned unchanged.
std::string NormalizeFlagArgument(const std::string& arg);

}  // namespace llmserve::common
