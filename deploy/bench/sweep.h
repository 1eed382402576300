#pragma once
// `llmserve bench sweep`: `bench serve` at several request rates against one
// or more servers, then one PNG (gnuplot) with latency against output token
// throughput — p50 and p99 TTFT on the left, p50 and p99 ITL on the right,
// one colour per server — so servers can be compared in one picture.

#include <string>
#include <vector>

namespace llmserve::deploy::bench {

// The gnuplot script that draws one server per label from its tab-separated
// data file (columns: rate, req/s, tok/s, p50/p99 TTFT ms, p50/p99 ITL ms)
// into `png_path`.
std::string SweepGnuplotScript(const std::vector<std::string>& labels, const std::vector<std::string>& data_files,
                               const std::string& png_path);

// The `llmserve bench sweep` command.
int RunBenchSweepCommand(int argc, char** argv);

}  // namespace llmserve::deploy::bench
