#pragma once
// Turns the events of one streamed OpenAI completion or chat completion into
// a RequestOutput, timing token chunks as vLLM's benchmark client does: the
// first chunk carrying a choice sets TTFT, each later one appends an ITL gap,
// and the last one sets E2E latency; a usage block (stream_options
// include_usage) gives the token counts. For chat, only chunks whose delta
// carries text count as tokens (the opening role chunk does not).

#include <string>
#include <string_view>

#include "deploy/bench/metrics.h"

namespace llmserve::deploy::bench {

// Which OpenAI API the requests use.
enum class ApiKind { kCompletions, kChat };

class StreamAccumulator {
 public:
  // `output` is filled in; its start is time `start_s` on the caller's clock.
  StreamAccumulator(ApiKind api, double start_s, RequestOutput* output)
      : api_(api), start_s_(start_s), out_(output) {}

  // Handles one event's data received at `now_s`: "[DONE]", a chunk, or an
  // error object (then the request is marked failed).
  void OnEvent(std::string_view data, double now_s);
  // Ends the request: success when a token chunk arrived and no error did.
  void Finish();

 private:
  ApiKind api_;
  double start_s_;
  RequestOutput* out_;
  bool first_token_seen_ = false;
  double last_token_s_ = 0;
  std::string error_;
};

}  // namespace llmserve::deploy::bench
