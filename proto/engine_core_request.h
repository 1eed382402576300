#pragma once
// Frontend -> engine messages. Every message is a multipart ZMQ message whose
// first frame is one RequestType byte and whose second is the msgpack body.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/pooling_params.h"
#include "proto/sampling_params.h"
#include "base/status.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// The type byte (vLLM EngineCoreRequestType). kExecutorFailed and kWakeup are
// engine-internal sentinels and never cross a socket.
enum class RequestType : uint8_t {
  kAdd = 0x00,           // body: EngineCoreRequest
  kAbort = 0x01,         // body: array of request-id strings
  kStartDpWave = 0x02,   // body: [new_wave, exclude_engine_index]; from the coordinator
  kUtility = 0x03,       // body: UtilityRequest
  kExecutorFailed = 0x04,
  kWakeup = 0x05,
};

// Returns the type for a received first frame, or an error for unknown bytes.
Status ParseRequestType(const void* frame, size_t size, RequestType* out);

// One generation request (vLLM EngineCoreRequest). Encoded as an array in
// vLLM's field order; fields we carry no data for are encoded as nil so that
// positions line up with vLLM's, and trailing defaults are omitted.
struct EngineCoreRequest {
  std::string request_id;                  // 1: unique within the deployment
  std::vector<int32_t> prompt_token_ids;   // 2
  // 3: mm_features (nil: no multimodal inputs)
  SamplingParams sampling_params;          // 4 (a pooling request: unused, max_tokens 1)
  std::optional<PoolingParams> pooling_params;  // 5: set = a pooling request (an embedding)
  double arrival_time = 0.0;               // 6: seconds since the epoch, frontend clock
  std::optional<std::string> lora_name;    // 7: lora_request (its name); nil = base model
  std::optional<std::string> cache_salt;   // 8: isolates prefix-cache reuse
  std::optional<int32_t> data_parallel_rank;  // 9: pinned DP rank (X-data-parallel-rank)
  // 10: prompt_embeds (nil)
  bool prompt_is_token_ids = false;        // 11: the client sent ids, not text
  int32_t client_index = 0;                // 12: which frontend gets the outputs
  int64_t current_wave = 0;                // 13: DP wave the frontend saw
  int32_t priority = 0;                    // 14: lower value = scheduled first (PRIORITY policy)
  // 15-17: trace_headers, resumable, external_req_id (nil)
  // 18: false = a structured-output constraint starts only after the end of
  // reasoning (</think>); nil or true = from the first output token (vLLM main).
  std::optional<bool> reasoning_ended;

  bool operator==(const EngineCoreRequest&) const = default;
};

void Pack(wire::Packer& p, const EngineCoreRequest& v);
Status Read(const msgpack::object& o, std::string_view field, EngineCoreRequest* out);

// A utility call (vLLM: (client_index, call_id, method_name, args)). Arguments
// travel as one msgpack-encoded blob whose shape the method defines.
struct UtilityRequest {
  int32_t client_index = 0;
  int64_t call_id = 0;
  std::string method;
  std::vector<std::string> args;  // string arguments, e.g. request ids

  bool operator==(const UtilityRequest&) const = default;
};

void Pack(wire::Packer& p, const UtilityRequest& v);
Status Read(const msgpack::object& o, std::string_view field, UtilityRequest* out);

// START_DP_WAVE body.
struct StartDpWave {
  int64_t wave = 0;
  int32_t exclude_engine_index = -1;  // the engine that already started; -1 none

  bool operator==(const StartDpWave&) const = default;
};

void Pack(wire::Packer& p, const StartDpWave& v);
Status Read(const msgpack::object& o, std::string_view field, StartDpWave* out);

}  // namespace llmserve::proto
