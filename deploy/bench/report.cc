#include "deploy/bench/report.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string_view>

namespace llmserve::deploy::bench {

std::string PercentileName(double p) {
  if (p == std::floor(p)) return std::to_string(static_cast<int64_t>(p));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", p);
  return buf;
}

std::string PyFloat(double v) {
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {

// Concatenation without operator+ chains (GCC 12 -Wrestrict false positives on them).
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) out.append(p);
  return out;
}

const MetricStats& Stats(const BenchmarkMetrics& m, const std::string& name) {
  if (name == "ttft") return m.ttft;
  if (name == "tpot") return m.tpot;
  if (name == "itl") return m.itl;
  return m.e2el;
}

struct MetricTitle {
  const char* name;
  const char* upper;
  const char* header;
};
constexpr MetricTitle kTitles[] = {
    {"ttft", "TTFT", "Time to First Token"},
    {"tpot", "TPOT", "Time per Output Token (excl. 1st token)"},
    {"itl", "ITL", "Inter-token Latency"},
    {"e2el", "E2EL", "End-to-end Latency"},
};

bool Selected(const ServeBenchOptions& o, const char* name) {
  for (const auto& m : o.percentile_metrics) {
    if (m == name) return true;
  }
  return false;
}

std::string Centered(const std::string& title, char fill) {
  const size_t width = 50;
  if (title.size() >= width) return title;
  const size_t left = (width - title.size()) / 2;
  std::string out(left, fill);
  out += title;
  out.append(width - title.size() - left, fill);
  return out;
}

}  // namespace

nlohmann::json ResultJson(const ServeBenchOptions& o, const RunFacts& f, const BenchmarkMetrics& m,
                          const std::vector<RequestOutput>& outputs) {
  nlohmann::json j;
  j["date"] = f.date;
  j["endpoint_type"] = o.backend;
  j["backend"] = o.backend;
  j["label"] = o.label.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.label);
  j["model_id"] = f.model_id;
  j["tokenizer_id"] = f.tokenizer_id;
  j["num_prompts"] = o.num_prompts;
  for (const auto& [k, v] : o.metadata) j[k] = v;
  j["request_rate"] = std::isinf(o.request_rate) ? nlohmann::json("inf") : nlohmann::json(o.request_rate);
  j["burstiness"] = o.burstiness;
  j["max_concurrency"] = o.max_concurrency ? nlohmann::json(o.max_concurrency) : nlohmann::json(nullptr);
  j["duration"] = f.duration_s;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input;
  j["total_output_tokens"] = m.total_output;
  j["request_throughput"] = m.request_throughput;
  j["request_goodput"] = o.goodput.any() ? nlohmann::json(m.request_goodput) : nlohmann::json(nullptr);
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = m.max_concurrent_requests;
  j["output_tokens_source"] = f.output_tokens_source;
  j["dataset_name"] = o.dataset_name;
  if (o.structured.mode != StructuredMode::kNone) {
    j["structured_output"] = StructuredModeName(o.structured.mode);
    j["structured_output_ratio"] = o.structured.ratio;
    j["structured_requests"] = m.structured_requests;
    j["structured_valid"] = m.structured_valid;
  }
  if (m.spec_decode) {
    const SpecDecodeSummary& sd = *m.spec_decode;
    j["spec_decode_acceptance_rate"] = sd.acceptance_rate;
    j["spec_decode_acceptance_length"] = sd.acceptance_length;
    j["spec_decode_num_drafts"] = sd.num_drafts;
    j["spec_decode_draft_tokens"] = sd.draft_tokens;
    j["spec_decode_accepted_tokens"] = sd.accepted_tokens;
    j["spec_decode_per_position_acceptance_rates"] = sd.per_position_acceptance_rates;
  }
  for (const auto& t : kTitles) {
    if (!Selected(o, t.name)) continue;
    const MetricStats& s = Stats(m, t.name);
    j[Cat({"mean_", t.name, "_ms"})] = s.mean_ms;
    j[Cat({"median_", t.name, "_ms"})] = s.median_ms;
    j[Cat({"std_", t.name, "_ms"})] = s.std_ms;
    for (const auto& [p, v] : s.percentiles_ms) j[Cat({"p", PercentileName(p), "_", t.name, "_ms"})] = v;
  }
  if (o.save_detailed) {
    auto& in = j["input_lens"] = nlohmann::json::array();
    auto& ttfts = j["ttfts"] = nlohmann::json::array();
    auto& itls = j["itls"] = nlohmann::json::array();
    auto& lat = j["latencies"] = nlohmann::json::array();
    auto& starts = j["start_times"] = nlohmann::json::array();
    auto& queues = j["queue_times"] = nlohmann::json::array();
    auto& texts = j["generated_texts"] = nlohmann::json::array();
    auto& errors = j["errors"] = nlohmann::json::array();
    for (const auto& r : outputs) {
      in.push_back(r.prompt_len);
      ttfts.push_back(r.ttft);
      itls.push_back(r.itl);
      lat.push_back(r.latency);
      starts.push_back(r.start_time);
      queues.push_back(r.queue_time);
      texts.push_back(r.generated_text);
      errors.push_back(r.error);
    }
    j["output_lens"] = m.output_lens;
  }
  return j;
}

std::string ResultTable(const ServeBenchOptions& o, const RunFacts& f, const BenchmarkMetrics& m) {
  std::string out;
  char line[160];
  auto row = [&](const std::string& label, const std::string& value) {
    std::snprintf(line, sizeof(line), "%-40s %-10s\n", label.c_str(), value.c_str());
    out += line;
  };
  auto num = [](double v) {
    char b[64];
    std::snprintf(b, sizeof(b), "%.2f", v);
    return std::string(b);
  };
  out += Centered(" Serving Benchmark Result ", '=') + "\n";
  row("Successful requests:", std::to_string(m.completed));
  row("Failed requests:", std::to_string(m.failed));
  if (o.max_concurrency) row("Maximum request concurrency:", std::to_string(o.max_concurrency));
  if (!std::isinf(o.request_rate)) row("Request rate configured (RPS):", num(o.request_rate));
  row("Benchmark duration (s):", num(f.duration_s));
  row("Total input tokens:", std::to_string(m.total_input));
  row("Total generated tokens:", std::to_string(m.total_output));
  row("Request throughput (req/s):", num(m.request_throughput));
  if (o.goodput.any()) row("Request goodput (req/s):", num(m.request_goodput));
  row("Output token throughput (tok/s):", num(m.output_throughput));
  row("Peak output token throughput (tok/s):", num(m.max_output_tokens_per_s));
  row("Peak concurrent requests:", std::to_string(m.max_concurrent_requests));
  row("Total token throughput (tok/s):", num(m.total_token_throughput));
  if (o.structured.mode != StructuredMode::kNone) {
    row("Structured output mode:", StructuredModeName(o.structured.mode));
    row("Structured requests:", std::to_string(m.structured_requests));
    row("Structured outputs valid:", std::to_string(m.structured_valid));
  }
  for (const auto& t : kTitles) {
    if (!Selected(o, t.name)) continue;
    const MetricStats& s = Stats(m, t.name);
    out += Centered(t.header, '-') + "\n";
    row(Cat({"Mean ", t.upper, " (ms):"}), num(s.mean_ms));
    row(Cat({"Median ", t.upper, " (ms):"}), num(s.median_ms));
    for (const auto& [p, v] : s.percentiles_ms) row(Cat({"P", PercentileName(p), " ", t.upper, " (ms):"}), num(v));
  }
  if (m.spec_decode) {
    const SpecDecodeSummary& sd = *m.spec_decode;
    out += Centered("Speculative Decoding", '-') + "\n";
    row("Acceptance rate (%):", num(sd.acceptance_rate));
    row("Acceptance length:", num(sd.acceptance_length));
    row("Drafts:", std::to_string(sd.num_drafts));
    row("Draft tokens:", std::to_string(sd.draft_tokens));
    row("Accepted tokens:", std::to_string(sd.accepted_tokens));
    if (!sd.per_position_acceptance_rates.empty()) out += "Per-position acceptance (%):\n";
    for (size_t i = 0; i < sd.per_position_acceptance_rates.size(); ++i) {
      row(Cat({"  Position ", std::to_string(i), ":"}), num(sd.per_position_acceptance_rates[i] * 100.0));
    }
  }
  out += std::string(50, '=') + "\n";
  return out;
}

std::string DefaultResultFilename(const ServeBenchOptions& o, const RunFacts& f) {
  std::string model = f.model_id;
  while (model.size() > 1 && model.back() == '/') model.pop_back();
  if (const size_t slash = model.find_last_of('/'); slash != std::string::npos) model = model.substr(slash + 1);
  std::string name = Cat({o.label.empty() ? o.backend : o.label, "-", PyFloat(o.request_rate), "qps"});
  if (o.max_concurrency) name += Cat({"-concurrency", std::to_string(o.max_concurrency)});
  return Cat({name, "-", model, "-", f.date, ".json"});
}

}  // namespace llmserve::deploy::bench
