#pragma once
// Drives a ModelRunner through the prefills of several requests at once, each
// in its own chunk sizes, as a scheduler would: the worker tests of prompt
// logprobs and of the pooling runner check what comes out of each step.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/worker/worker_test_util.h"
#include "worker/model_runner.h"

namespace llmserve::worker::testing {

struct ChunkedRequest {
  std::string id;
  std::vector<int32_t> prompt;
  std::vector<size_t> chunks;  // prefill chunk sizes, cycled
  int32_t first_block = 0;     // its 8 blocks start here
};

// Schedules every request's prompt in its chunks, all in the same steps,
// until each is prefilled. `admit` fills in request i's NewRequestData
// (its sampling or pooling parameters); `on_output` sees each step's output.
inline void RunChunkedPrefill(ModelRunner& runner, const std::vector<ChunkedRequest>& reqs,
                              const std::function<void(size_t, proto::NewRequestData&)>& admit,
                              const std::function<void(const proto::ModelRunnerOutput&)>& on_output) {
  std::vector<size_t> done(reqs.size(), 0), chunk(reqs.size(), 0);
  for (bool first = true;; first = false) {
    proto::SchedulerOutput s;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const ChunkedRequest& r = reqs[i];
      if (done[i] == r.prompt.size()) continue;
      const size_t n = std::min(r.chunks[chunk[i]++ % r.chunks.size()], r.prompt.size() - done[i]);
      if (first) {
        proto::NewRequestData nr;
        nr.req_id = r.id;
        nr.prompt_token_ids = r.prompt;
        nr.block_ids = {Blocks(r.first_block, 8)};
        admit(i, nr);
        s.scheduled_new_reqs.push_back(std::move(nr));
      } else {
        auto& cached = s.scheduled_cached_reqs;
        cached.req_ids.push_back(r.id);
        cached.num_computed_tokens.push_back(static_cast<int32_t>(done[i]));
        cached.new_block_ids.emplace_back();
      }
      s.num_scheduled_tokens[r.id] = static_cast<int32_t>(n);
      done[i] += n;
    }
    if (s.num_scheduled_tokens.empty()) return;
    const proto::ModelRunnerOutput out = runner.Execute(s);
    EXPECT_FALSE(out.error.has_value()) << *out.error;
    on_output(out);
  }
}

}  // namespace llmserve::worker::testing
