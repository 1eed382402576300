#include "deploy/bench/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace llmserve::deploy::bench {

StatusOr<GoodputSlo> ParseGoodput(const std::vector<std::string>& pairs) {
  GoodputSlo slo;
  for (const auto& pair : pairs) {
    const size_t colon = pair.find(':');
    if (colon == std::string::npos || pair.find(':', colon + 1) != std::string::npos) {
      return Status::InvalidArgument("--goodput: expected KEY:VALUE (milliseconds), got '" + pair + "'");
    }
    const std::string key = pair.substr(0, colon);
    const std::string value = pair.substr(colon + 1);
    char* end = nullptr;
    const double ms = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || std::isnan(ms)) {
      return Status::InvalidArgument("--goodput: '" + value + "' is not a number of milliseconds");
    }
    if (ms < 0) return Status::InvalidArgument("--goodput: " + key + " must be non-negative");
    if (key == "ttft") slo.ttft_ms = ms;
    else if (key == "tpot") slo.tpot_ms = ms;
    else if (key == "e2el") slo.e2el_ms = ms;
    else return Status::InvalidArgument("--goodput: unknown metric '" + key + "' (use ttft, tpot or e2el)");
  }
  return slo;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

MetricStats Summarize(const std::vector<double>& seconds, const std::vector<double>& percentiles) {
  MetricStats s;
  if (!seconds.empty()) {
    double sum = 0;
    for (double v : seconds) sum += v;
    const double mean = sum / static_cast<double>(seconds.size());
    double sq = 0;
    for (double v : seconds) sq += (v - mean) * (v - mean);
    s.mean_ms = mean * 1000;
    s.std_ms = std::sqrt(sq / static_cast<double>(seconds.size())) * 1000;
    s.median_ms = Percentile(seconds, 50) * 1000;
  }
  for (double p : percentiles) s.percentiles_ms.emplace_back(p, Percentile(seconds, p) * 1000);
  return s;
}

double RequestTpot(const RequestOutput& o) {
  if (o.output_tokens <= 1) return 0;
  return (o.latency - o.ttft) / static_cast<double>(o.output_tokens - 1);
}

namespace {

// Requests in flight at the busiest instant: a sweep over [start, end) intervals
// where an end at the same instant as a start comes first.
int64_t PeakConcurrency(const std::vector<RequestOutput>& outputs) {
  std::vector<std::pair<double, int>> events;
  for (const auto& o : outputs) {
    if (!o.success) continue;
    events.emplace_back(o.start_time, +1);
    events.emplace_back(o.start_time + o.latency, -1);
  }
  std::sort(events.begin(), events.end());
  int64_t now = 0, peak = 0;
  for (const auto& e : events) peak = std::max(peak, now += e.second);
  return peak;
}

// Most token chunks that arrived within one one-second bucket, counted from the
// earliest successful start.
double PeakTokensPerSecond(const std::vector<RequestOutput>& outputs) {
  double first = HUGE_VAL, last = 0;
  for (const auto& o : outputs) {
    if (!o.success) continue;
    first = std::min(first, o.start_time);
    last = std::max(last, o.start_time + o.latency);
  }
  if (first == HUGE_VAL) return 0;
  std::vector<double> buckets(static_cast<size_t>(std::ceil(last - first)) + 1, 0.0);
  for (const auto& o : outputs) {
    if (!o.success) continue;
    double t = o.start_time + o.ttft;
    auto add = [&](double at) {
      const double b = std::floor(at - first);
      if (b >= 0 && b < static_cast<double>(buckets.size())) buckets[static_cast<size_t>(b)] += 1;
    };
    add(t);
    for (double gap : o.itl) add(t += gap);
  }
  return *std::max_element(buckets.begin(), buckets.end());
}

}  // namespace

BenchmarkMetrics ComputeMetrics(const std::vector<RequestOutput>& outputs, double duration_s,
                                const std::vector<double>& percentiles, const GoodputSlo& slo) {
  BenchmarkMetrics m;
  std::vector<double> ttfts, tpots, itls, e2els;
  int64_t good = 0;
  for (const auto& o : outputs) {
    if (!o.success) {
      ++m.failed;
      m.output_lens.push_back(0);
      continue;
    }
    ++m.completed;
    m.output_lens.push_back(o.output_tokens);
    m.total_input += o.prompt_len;
    m.total_output += o.output_tokens;
    const double tpot = RequestTpot(o);
    if (o.output_tokens > 1) tpots.push_back(tpot);
    itls.insert(itls.end(), o.itl.begin(), o.itl.end());
    ttfts.push_back(o.ttft);
    e2els.push_back(o.latency);
    const bool meets = (!slo.ttft_ms || o.ttft * 1000 <= *slo.ttft_ms) &&
                       (!slo.tpot_ms || tpot * 1000 <= *slo.tpot_ms) &&
                       (!slo.e2el_ms || o.latency * 1000 <= *slo.e2el_ms);
    if (slo.any() && meets) ++good;
  }
  const double d = duration_s > 0 ? duration_s : 1e-9;
  m.request_throughput = static_cast<double>(m.completed) / d;
  m.request_goodput = static_cast<double>(good) / d;
  m.output_throughput = static_cast<double>(m.total_output) / d;
  m.total_token_throughput = static_cast<double>(m.total_input + m.total_output) / d;
  m.ttft = Summarize(ttfts, percentiles);
  m.tpot = Summarize(tpots, percentiles);
  m.itl = Summarize(itls, percentiles);
  m.e2el = Summarize(e2els, percentiles);
  m.max_output_tokens_per_s = PeakTokensPerSecond(outputs);
  m.max_concurrent_requests = PeakConcurrency(outputs);
  return m;
}

}  // namespace llmserve::deploy::bench
