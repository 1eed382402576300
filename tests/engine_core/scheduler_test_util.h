#pragma once
// Helpers for driving the Scheduler the way the engine does, with the
// workers' replies built by the test (the sampled token values are chosen by
// the test; the scheduler's behaviour is what is checked).

#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_core/scheduler.h"

namespace llmserve::engine_core::testing {

inline proto::EngineCoreRequest MakeRequest(const std::string& id, int32_t prompt_len,
                                            int32_t max_tokens = 16, int32_t first_token = 1000) {
  proto::EngineCoreRequest r;
  r.request_id = id;
  r.prompt_token_ids.resize(static_cast<size_t>(prompt_len));
  std::iota(r.prompt_token_ids.begin(), r.prompt_token_ids.end(), first_token);
  r.sampling_params.max_tokens = max_tokens;
  return r;
}

// Picks the token a request samples this step.
using TokenFn = std::function<int32_t(const Request&)>;

// The reply the workers send for `so`: one sampled token for every request
// whose prompt is fully computed after this step, nothing for partial prefills.
inline proto::ModelRunnerOutput ReplyFor(const Scheduler& s, const proto::SchedulerOutput& so,
                                         const TokenFn& token) {
  proto::ModelRunnerOutput mro;
  for (const auto& [id, n] : so.num_scheduled_tokens) {
    const Request* r = s.FindRequest(id);
    if (r == nullptr) continue;
    mro.req_ids.push_back(id);
    if (r->num_computed_tokens >= r->num_tokens()) {
      mro.sampled_token_ids.push_back({token(*r)});
    } else {
      mro.sampled_token_ids.push_back({});
    }
  }
  return mro;
}

inline int32_t Constant(const Request&) { return 7; }

// One full step with the default reply. Returns the outputs.
inline std::vector<ClientOutputs> Step(Scheduler& s, const TokenFn& token = Constant,
                                       proto::SchedulerOutput* copy = nullptr) {
  const proto::SchedulerOutput& so = s.Schedule();
  if (copy != nullptr) *copy = so;
  return s.UpdateFromOutput(so, ReplyFor(s, so, token));
}

// Every EngineCoreOutput of a step, keyed by request id.
inline std::map<std::string, proto::EngineCoreOutput> ById(const std::vector<ClientOutputs>& outs) {
  std::map<std::string, proto::EngineCoreOutput> m;
  for (const ClientOutputs& c : outs) {
    for (const proto::EngineCoreOutput& o : c.outputs.outputs) m[o.request_id] = o;
  }
  return m;
}

inline std::unique_ptr<Scheduler> MakeScheduler(SchedulerConfig sc, int32_t num_blocks,
                                                int32_t block_size = 4, bool caching = true) {
  KVCacheConfig kc;
  kc.num_blocks = num_blocks;
  kc.block_size = block_size;
  kc.max_model_len = sc.max_model_len;
  kc.enable_prefix_caching = caching;
  auto s = Scheduler::Create(sc, kc);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

}  // namespace llmserve::engine_core::testing
