#include "deploy/bench/spec_decode_stats.h"

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "deploy/bench/load_runner.h"

namespace llmserve::deploy::bench {
namespace {

constexpr std::string_view kSpecDrafts = "vllm:spec_decode_num_drafts_total";
constexpr std::string_view kSpecDraftTokens = "vllm:spec_decode_num_draft_tokens_total";
constexpr std::string_view kSpecAccepted = "vllm:spec_decode_num_accepted_tokens_total";
constexpr std::string_view kSpecPerPos = "vllm:spec_decode_num_accepted_tokens_per_pos_total";

// The value of label `name` in a sample line's `{...}` block, "" when absent.
std::string SpecLabelValue(std::string_view labels, std::string_view name) {
  const std::string key = std::string(name) + "=\"";
  size_t at = 0;
  while ((at = labels.find(key, at)) != std::string_view::npos) {
    if (at == 0 || labels[at - 1] == '{' || labels[at - 1] == ',' || labels[at - 1] == ' ') break;
    ++at;
  }
  if (at == std::string_view::npos) return "";
  const size_t start = at + key.size();
  const size_t end = labels.find('"', start);
  return end == std::string_view::npos ? "" : std::string(labels.substr(start, end - start));
}

}  // namespace

std::optional<SpecDecodeCounters> ParseSpecDecodeCounters(const std::string& metrics_text) {
  SpecDecodeCounters c;
  bool found = false;
  std::istringstream in(metrics_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string_view l(line);
    const size_t name_end = l.find_first_of("{ ");
    if (name_end == std::string_view::npos) continue;
    const std::string_view name = l.substr(0, name_end);
    // The value follows the labels' closing brace (label values may hold spaces).
    const size_t close = l[name_end] == '{' ? l.find('}', name_end) : name_end;
    if (close == std::string_view::npos) continue;
    const std::string_view labels = l.substr(name_end, close - name_end);
    const std::string rest(l.substr(close + (l[name_end] == '{' ? 1 : 0)));
    char* end = nullptr;
    const double value = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) continue;
    if (name == kSpecDrafts) {
      c.num_drafts += value;
    } else if (name == kSpecDraftTokens) {
      c.num_draft_tokens += value;
    } else if (name == kSpecAccepted) {
      c.num_accepted_tokens += value;
    } else if (name == kSpecPerPos) {
      const std::string pos = SpecLabelValue(labels, "position");
      if (pos.empty()) continue;
      c.accepted_per_pos[std::atoi(pos.c_str())] += value;
    } else {
      continue;
    }
    found = true;
  }
  if (!found) return std::nullopt;
  return c;
}

std::optional<SpecDecodeCounters> FetchSpecDecodeCounters(const Endpoint& endpoint) {
  auto body = HttpGet(endpoint, "/metrics", 30);
  if (!body.ok()) return std::nullopt;
  return ParseSpecDecodeCounters(*body);
}

std::optional<SpecDecodeSummary> SummarizeSpecDecode(const std::optional<SpecDecodeCounters>& before,
                                                     const std::optional<SpecDecodeCounters>& after) {
  if (!after) return std::nullopt;
  // A server registers the counters with its first report of speculation
  // (llmserve's frontend does): none before the run means zeros.
  const SpecDecodeCounters zero;
  if (!before) return SummarizeSpecDecode(zero, after);
  const double drafts = after->num_drafts - before->num_drafts;
  const double drafted = after->num_draft_tokens - before->num_draft_tokens;
  const double accepted = after->num_accepted_tokens - before->num_accepted_tokens;
  if (drafted <= 0) return std::nullopt;
  SpecDecodeSummary s;
  s.num_drafts = static_cast<int64_t>(drafts);
  s.draft_tokens = static_cast<int64_t>(drafted);
  s.accepted_tokens = static_cast<int64_t>(accepted);
  s.acceptance_rate = accepted / drafted * 100.0;
  s.acceptance_length = drafts > 0 ? 1.0 + accepted / drafts : 0.0;
  if (drafts > 0) {
    // Every position either scrape knows, in order; one only `before` has did not move.
    std::map<int, double> positions = after->accepted_per_pos;
    for (const auto& [pos, v] : before->accepted_per_pos) positions.emplace(pos, v);
    for (const auto& [pos, now] : positions) {
      const auto b = before->accepted_per_pos.find(pos);
      const double then = b == before->accepted_per_pos.end() ? 0.0 : b->second;
      s.per_position_acceptance_rates.push_back((now - then) / drafts);
    }
  }
  return s;
}

}  // namespace llmserve::deploy::bench
