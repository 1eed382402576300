#include "frontend/metrics/stats_log.h"

#include <glog/logging.h>

#include <cstdio>

#include "frontend/metrics/spec_decode_log.h"

namespace llmserve::frontend::metrics {

std::vector<StatsLine> StatsLog::Lines(const std::vector<EngineSnapshot>& now, double seconds) {
  std::vector<StatsLine> lines;
  const double span = seconds > 0 ? seconds : 1.0;
  for (const EngineSnapshot& s : now) {
    Previous& p = previous_[s.engine];  // a new engine starts from zero
    const double prompt = s.prompt_tokens - p.snapshot.prompt_tokens;
    const double generated = s.generation_tokens - p.snapshot.generation_tokens;
    const double queries = s.prefix_queries - p.snapshot.prefix_queries;
    if (queries > 0) p.hit_rate = (s.prefix_hits - p.snapshot.prefix_hits) / queries;
    const bool has_tokens = prompt > 0 || generated > 0;
    char text[320];
    std::snprintf(text, sizeof(text),
                  "%sEngine %03u: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
                  "Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%",
                  prefix_.c_str(), s.engine, prompt / span, generated / span, static_cast<int>(s.running),
                  static_cast<int>(s.waiting), s.kv_usage * 100.0, p.hit_rate * 100.0);
    const bool idle = !has_tokens && !p.had_tokens;
    lines.push_back(StatsLine{text, idle});
    if (s.spec) {
      if (auto spec = SpecDecodeLogLine(p.spec, *s.spec, span)) lines.push_back(StatsLine{prefix_ + *spec, idle});
      p.spec = *s.spec;
    }
    p.had_tokens = has_tokens;
    p.snapshot = s;
  }
  return lines;
}

StatsLogger::StatsLogger(const FrontendMetrics* metrics, std::chrono::milliseconds interval, std::string prefix)
    : metrics_(metrics), interval_(interval), log_(std::move(prefix)), thread_([this] { Run(); }) {}

StatsLogger::~StatsLogger() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void StatsLogger::Run() {
  auto last = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    for (const StatsLine& line : log_.Lines(metrics_->Snapshot(), seconds)) {
      if (line.idle) VLOG(1) << line.text;
      else LOG(INFO) << line.text;
    }
  }
}

}  // namespace llmserve::frontend::metrics
