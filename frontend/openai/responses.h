#pragma once
// Builders for the OpenAI response objects, in vLLM's shapes:
//   text_completion          {id, object, created, model, choices[{index, text, logprobs, finish_reason, stop_reason}], usage}
//   chat.completion          {id, object, created, model, choices[{index, message{role, content, tool_calls}, logprobs, finish_reason, stop_reason}], usage}
//   streaming chunks         one choice per chunk; chat starts each choice with a role delta,
//                            ends it with a finish_reason chunk; an optional last chunk has
//                            "choices": [] and the usage (stream_options.include_usage).
// Completion logprobs are {tokens, token_logprobs, top_logprobs, text_offset};
// chat logprobs are {content: [{token, logprob, bytes, top_logprobs[{token, logprob, bytes}]}]}.
// -inf logprobs are written as -9999.0, as vLLM does.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmserve::frontend::openai {

// Fields every response object of one request shares.
struct ResponseMeta {
  std::string id;       // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;  // seconds since the epoch
  std::string model;    // the served model name
};

// Token counts of one request.
struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  std::optional<int32_t> cached_tokens;  // prompt tokens from the prefix cache, if reported
};

// One output token's logprob and its top alternatives (decoded text, logprob).
struct TokenLogprob {
  std::string token;
  double logprob = 0.0;
  std::vector<std::pair<std::string, double>> top;
  bool null_logprob = false;  // an echoed first prompt token: logprob and top are null
};

// Why a choice stopped beyond finish_reason: nothing, the stop token id, or the stop string.
using StopReason = std::variant<std::monostate, int32_t, std::string>;

struct CompletionChoice {
  int32_t index = 0;
  std::string text;                                // the whole text, or this chunk's delta
  std::optional<std::vector<TokenLogprob>> logprobs;
  int32_t text_offset = 0;                         // offset of `text` in the choice's full text
  std::optional<std::string> finish_reason;        // "stop", "length", "abort"...
  StopReason stop_reason;
  // With return_token_ids: the prompt's ids (first chunk only when streaming)
  // and the output ids of this text (this chunk's when streaming).
  std::optional<std::vector<int32_t>> prompt_token_ids;
  std::optional<std::vector<int32_t>> token_ids;
  nlohmann::json prompt_logprobs;  // vLLM's per-choice prompt_logprobs, or null: left out
};

// A function call in a chat message, or a piece of one in a stream chunk.
struct ChatToolCall {
  int32_t index = 0;                     // position among the choice's calls (chunks only)
  std::optional<std::string> id;         // "chatcmpl-tool-..."; a stream sends it on the call's first chunk
  std::optional<std::string> name;       // likewise
  std::optional<std::string> arguments;  // a JSON text, or a fragment of it in a chunk
};

struct ChatChoice {
  int32_t index = 0;
  std::string content;                             // the whole text, or this chunk's delta
  bool content_null = false;                       // message: "content": null (only tool calls)
  std::optional<std::string> reasoning;            // reasoning_content (and vLLM main's "reasoning")
  std::vector<ChatToolCall> tool_calls;
  std::optional<std::vector<TokenLogprob>> logprobs;
  std::optional<std::string> finish_reason;
  StopReason stop_reason;
};

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"}.
nlohmann::json UsageJson(const Usage& usage);

// A complete text_completion object.
nlohmann::json CompletionResponse(const ResponseMeta& meta, const std::vector<CompletionChoice>& choices,
                                  const Usage& usage);

// One text_completion stream chunk carrying one choice's delta (usage only with continuous stats).
nlohmann::json CompletionChunk(const ResponseMeta& meta, const CompletionChoice& choice,
                               const std::optional<Usage>& usage = std::nullopt);

// The last text_completion chunk: no choices, the usage.
nlohmann::json CompletionUsageChunk(const ResponseMeta& meta, const Usage& usage);

// A complete chat.completion object.
// `prompt_logprobs` (vLLM: the response's, not a choice's) is left out when null.
nlohmann::json ChatCompletionResponse(const ResponseMeta& meta, const std::vector<ChatChoice>& choices,
                                      const Usage& usage, const nlohmann::json& prompt_logprobs = nullptr);

// The first chunk of a chat choice: delta {"role": "assistant", "content": ""}.
nlohmann::json ChatRoleChunk(const ResponseMeta& meta, int32_t index,
                             const std::optional<Usage>& usage = std::nullopt);

// A chat chunk with a content delta (and the finish_reason on the choice's last chunk).
nlohmann::json ChatContentChunk(const ResponseMeta& meta, const ChatChoice& choice,
                                const std::optional<Usage>& usage = std::nullopt);

// The last chat chunk: no choices, the usage.
nlohmann::json ChatUsageChunk(const ResponseMeta& meta, const Usage& usage);

// Serializes a response object compactly; invalid UTF-8 in texts is replaced, never thrown.
std::string Dump(const nlohmann::json& value);

}  // namespace llmserve::frontend::openai
