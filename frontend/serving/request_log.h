#pragma once
// The request log: vLLM's --enable-log-requests and --enable-log-outputs
// lines, written with glog at INFO. Prompts, outputs and token id lists are
// cut to --max-log-len characters / ids when it is set.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/sampling_params.h"

namespace llmserve::frontend::serving {

struct RequestLogOptions {
  bool requests = false;                 // a line per engine request when it is sent
  bool outputs = false;                  // a line per choice when it finishes
  std::optional<int32_t> max_log_len;    // unset: log whole prompts and outputs
};

// "Received request ID: prompt: '...', params: SamplingParams(...), prompt_token_ids: [...]."
std::string ReceivedRequestLine(const RequestLogOptions& o, std::string_view request_id,
                                const std::optional<std::string>& prompt, const proto::SamplingParams& params,
                                const std::vector<int32_t>& prompt_token_ids);

// "Generated response ID: output: '...', output_token_ids: [...], finish_reason: stop"
std::string GeneratedResponseLine(const RequestLogOptions& o, std::string_view request_id, std::string_view output,
                                  const std::vector<int32_t>& output_token_ids, std::string_view finish_reason);

}  // namespace llmserve::frontend::serving
