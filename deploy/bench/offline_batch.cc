#include "deploy/bench/offline_batch.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace llmserve::deploy {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Leaves the engine empty for the caller (finished ids are ignored).
void AbortAll(engine_core::EngineCore& core, const std::unordered_map<std::string, size_t>& index_of) {
  std::vector<std::string> ids;
  ids.reserve(index_of.size());
  for (const auto& [id, i] : index_of) ids.push_back(id);
  core.AbortRequests(ids);
}

}  // namespace

proto::SamplingParams BenchmarkSampling() {
  proto::SamplingParams p;
  p.temperature = 1.0;
  p.top_p = 1.0;
  p.ignore_eos = true;
  return p;
}

StatusOr<OfflineBatchResult> RunOfflineBatch(engine_core::EngineCore& core, const std::vector<OfflineRequest>& requests,
                                             const proto::SamplingParams& sampling,
                                             const std::function<void(size_t, size_t)>& progress) {
  if (core.HasRequests()) return Status::InvalidArgument("the engine still has requests from an earlier batch");
  static uint64_t next_batch = 0;
  const std::string prefix = "bench-" + std::to_string(next_batch++) + "-";
  OfflineBatchResult result;
  result.requests.resize(requests.size());
  std::unordered_map<std::string, size_t> index_of;
  index_of.reserve(requests.size());

  const auto start = Clock::now();
  const double arrival = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (size_t i = 0; i < requests.size(); ++i) {
    proto::EngineCoreRequest r;
    r.request_id = prefix + std::to_string(i);
    r.prompt_token_ids = requests[i].prompt_token_ids;
    r.sampling_params = sampling;
    r.sampling_params.max_tokens = requests[i].max_tokens;
    r.arrival_time = arrival;
    index_of.emplace(r.request_id, i);
    result.requests[i].prompt_tokens = static_cast<int32_t>(requests[i].prompt_token_ids.size());
    result.prompt_tokens += static_cast<int64_t>(requests[i].prompt_token_ids.size());
    const auto before = Clock::now();
    Status s = core.AddRequest(std::move(r));
    result.add_requests_s += Seconds(before, Clock::now());
    if (!s.ok()) {
      AbortAll(core, index_of);
      return s.WithContext("request " + std::to_string(i));
    }
  }

  std::vector<engine_core::ClientOutputs> outputs;
  size_t done = 0;
  while (core.HasRequests()) {
    const auto step_start = Clock::now();
    if (Status s = core.Step(&outputs); !s.ok()) {
      AbortAll(core, index_of);
      return s;
    }
    const auto step_end = Clock::now();
    const double now = Seconds(start, step_end);
    int64_t scheduled = 0;
    int64_t decode = 0;
    bool have_stats = false;
    for (auto& client : outputs) {
      if (const auto& stats = client.outputs.scheduler_stats) {
        have_stats = true;
        result.num_preemptions += stats->num_preemptions;
        for (int32_t n : stats->iteration_tokens) scheduled += n;
      }
      for (const auto& o : client.outputs.outputs) {
        auto it = index_of.find(o.request_id);
        if (it == index_of.end()) continue;
        OfflineRequestTiming& t = result.requests[it->second];
        if (!o.new_token_ids.empty()) {
          if (t.output_tokens == 0) {
            t.ttft_s = now;
            t.cached_tokens = o.num_cached_tokens;
          } else {
            decode += static_cast<int64_t>(o.new_token_ids.size());
          }
          t.output_tokens += static_cast<int32_t>(o.new_token_ids.size());
          t.latency_s = now;
        }
        if (o.finish_reason) {
          if (*o.finish_reason == proto::FinishReason::kAbort || *o.finish_reason == proto::FinishReason::kError) {
            AbortAll(core, index_of);
            return Status::Internal("request " + std::to_string(it->second) + " ended with finish reason '" +
                                    proto::FinishReasonName(*o.finish_reason) + "'" +
                                    (o.error_message ? ": " + *o.error_message : std::string()));
          }
          ++done;
          if (progress) progress(done, requests.size());
        }
      }
    }
    if (!have_stats) {
      AbortAll(core, index_of);
      return Status::InvalidArgument("the scheduler does not report per-step stats (log_stats off)");
    }
    ++result.num_steps;
    const double dt = Seconds(step_start, step_end);
    if (scheduled > decode) {
      result.prefill_tokens += scheduled - decode;
      result.prefill_time_s += dt;
    } else {
      result.decode_tokens += decode;
      result.decode_time_s += dt;
    }
  }
  result.elapsed_s = Seconds(start, Clock::now());
  for (const auto& t : result.requests) {
    result.output_tokens += t.output_tokens;
    result.cached_tokens += t.cached_tokens;
  }
  if (done != requests.size())
    return Status::Internal(std::to_string(requests.size() - done) + " requests left the engine without finishing");
  return result;
}

std::function<void(size_t, size_t)> TerminalProgress(const char* label) {
  if (!isatty(STDERR_FILENO)) return {};
  return [label](size_t done, size_t total) {
    const int width = 40;
    const int filled = static_cast<int>(width * done / std::max<size_t>(total, 1));
    std::fprintf(stderr, "\r%s [%s%s] %zu/%zu", label, std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total);
    if (done == total) std::fputc('\n', stderr);
  };
}

}  // namespace llmserve::deploy
