#pragma once
// The periodic stats line of vLLM's LoggingStatLogger, one per engine:
//   Engine 000: Avg prompt throughput: 12.0 tokens/s, Avg generation
//   throughput: 40.3 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache
//   usage: 1.2%, Prefix cache hit rate: 50.0%
// (vLLM's wording, so log parsers written for vLLM keep working; the KV cache
// is wherever the engine keeps it). Throughputs are over the interval, from
// this frontend's requests; the hit rate is over the interval's prefix-cache
// queries (the previous value when there were none). An engine that verified
// drafts in the interval gets vLLM's "SpecDecoding metrics: ..." line after
// its own (spec_decode_log.h). StatsLog turns
// snapshots into lines; StatsLogger prints them every interval.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frontend/metrics/frontend_metrics.h"

namespace llmserve::frontend::metrics {

struct StatsLine {
  std::string text;
  bool idle = false;  // no tokens in this interval nor the one before (vLLM logs it at DEBUG)
};

class StatsLog {
 public:
  // `prefix` goes before each line (e.g. "API server 1: "), may be empty.
  explicit StatsLog(std::string prefix = "") : prefix_(std::move(prefix)) {}
  // One line per engine in `now` (two for one that verified drafts),
  // `seconds` after the previous call.
  std::vector<StatsLine> Lines(const std::vector<EngineSnapshot>& now, double seconds);

 private:
  struct Previous {
    EngineSnapshot snapshot;
    SpecDecodeTotals spec;  // the speculative decoding totals at the last call
    double hit_rate = 0.0;
    bool had_tokens = true;  // the first interval is never idle
  };
  std::string prefix_;
  std::map<uint32_t, Previous> previous_;
};

// Prints StatsLog's lines every `interval` on a thread of its own (glog INFO,
// idle lines at VLOG(1)) until destroyed.
class StatsLogger {
 public:
  StatsLogger(const FrontendMetrics* metrics, std::chrono::milliseconds interval, std::string prefix = "");
  ~StatsLogger();
  StatsLogger(const StatsLogger&) = delete;
  StatsLogger& operator=(const StatsLogger&) = delete;

 private:
  void Run();

  const FrontendMetrics* metrics_;
  std::chrono::milliseconds interval_;
  StatsLog log_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace llmserve::frontend::metrics
