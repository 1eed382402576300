#include "frontend/openai/responses.h"

#include <cmath>

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;

double Finite(double logprob) { return std::isfinite(logprob) ? logprob : -9999.0; }

json Bytes(const std::string& text) {
  json bytes = json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

json StopReasonJson(const StopReason& reason) {
  if (const auto* id = std::get_if<int32_t>(&reason)) return *id;
  if (const auto* s = std::get_if<std::string>(&reason)) return *s;
  return nullptr;
}

json Nullable(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

json CompletionLogprobs(const std::optional<std::vector<TokenLogprob>>& logprobs, int32_t text_offset) {
  if (!logprobs) return nullptr;
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
  int64_t offset = text_offset;
  for (const TokenLogprob& t : *logprobs) {
    tokens.push_back(t.token);
    if (t.null_logprob) {
      token_logprobs.push_back(nullptr);
      top.push_back(nullptr);
    } else {
      token_logprobs.push_back(Finite(t.logprob));
      json alternatives = json::object();
      for (const auto& [token, lp] : t.top) alternatives[token] = Finite(lp);
      top.push_back(std::move(alternatives));
    }
    offsets.push_back(offset);
    offset += static_cast<int64_t>(t.token.size());
  }
  return {{"text_offset", offsets}, {"token_logprobs", token_logprobs}, {"tokens", tokens}, {"top_logprobs", top}};
}

json ChatLogprobs(const std::optional<std::vector<TokenLogprob>>& logprobs) {
  if (!logprobs) return nullptr;
  json content = json::array();
  for (const TokenLogprob& t : *logprobs) {
    json top = json::array();
    for (const auto& [token, lp] : t.top) top.push_back({{"token", token}, {"logprob", Finite(lp)}, {"bytes", Bytes(token)}});
    content.push_back({{"token", t.token}, {"logprob", Finite(t.logprob)}, {"bytes", Bytes(t.token)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json Header(const ResponseMeta& meta, const char* object) {
  return {{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model}};
}

json CompletionChoiceJson(const CompletionChoice& c) {
  json out = {{"index", c.index},
              {"text", c.text},
              {"logprobs", CompletionLogprobs(c.logprobs, c.text_offset)},
              {"finish_reason", Nullable(c.finish_reason)},
              {"stop_reason", StopReasonJson(c.stop_reason)}};
  if (c.prompt_token_ids) out["prompt_token_ids"] = *c.prompt_token_ids;
  if (c.token_ids) out["token_ids"] = *c.token_ids;
  if (!c.prompt_logprobs.is_null()) out["prompt_logprobs"] = c.prompt_logprobs;
  return out;
}

}  // namespace

json UsageJson(const Usage& usage) {
  json details = usage.cached_tokens ? json{{"cached_tokens", *usage.cached_tokens}} : json(nullptr);
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"prompt_tokens_details", details}};
}

json CompletionResponse(const ResponseMeta& meta, const std::vector<CompletionChoice>& choices, const Usage& usage) {
  json out = Header(meta, "text_completion");
  json list = json::array();
  for (const auto& c : choices) list.push_back(CompletionChoiceJson(c));
  out["choices"] = std::move(list);
  out["usage"] = UsageJson(usage);
  return out;
}

json CompletionChunk(const ResponseMeta& meta, const CompletionChoice& choice, const std::optional<Usage>& usage) {
  json out = Header(meta, "text_completion");
  out["choices"] = json::array({CompletionChoiceJson(choice)});
  if (usage) out["usage"] = UsageJson(*usage);
  return out;
}

json CompletionUsageChunk(const ResponseMeta& meta, const Usage& usage) {
  json out = Header(meta, "text_completion");
  out["choices"] = json::array();
  out["usage"] = UsageJson(usage);
  return out;
}

namespace {

// A call as a message carries it (whole), or as a chunk does (pieces, with index).
json ToolCallJson(const ChatToolCall& call, bool chunk) {
  json fn = json::object();
  if (call.name) fn["name"] = *call.name;
  if (call.arguments) fn["arguments"] = *call.arguments;
  json out = json::object();
  if (chunk) out["index"] = call.index;
  if (call.id) {
    out["id"] = *call.id;
    out["type"] = "function";
  }
  out["function"] = std::move(fn);
  return out;
}

json ToolCallsJson(const std::vector<ChatToolCall>& calls, bool chunk) {
  json list = json::array();
  for (const auto& call : calls) list.push_back(ToolCallJson(call, chunk));
  return list;
}

}  // namespace

json ChatCompletionResponse(const ResponseMeta& meta, const std::vector<ChatChoice>& choices, const Usage& usage,
                            const json& prompt_logprobs) {
  json out = Header(meta, "chat.completion");
  json list = json::array();
  for (const auto& c : choices) {
    json message = {{"role", "assistant"},
                    {"content", c.content_null ? json(nullptr) : json(c.content)},
                    {"tool_calls", ToolCallsJson(c.tool_calls, false)}};
    if (c.reasoning) {
      message["reasoning_content"] = *c.reasoning;
      message["reasoning"] = *c.reasoning;
    }
    list.push_back({{"index", c.index},
                    {"message", std::move(message)},
                    {"logprobs", ChatLogprobs(c.logprobs)},
                    {"finish_reason", Nullable(c.finish_reason)},
                    {"stop_reason", StopReasonJson(c.stop_reason)}});
  }
  out["choices"] = std::move(list);
  out["usage"] = UsageJson(usage);
  if (!prompt_logprobs.is_null()) out["prompt_logprobs"] = prompt_logprobs;
  return out;
}

json ChatRoleChunk(const ResponseMeta& meta, int32_t index, const std::optional<Usage>& usage) {
  json out = Header(meta, "chat.completion.chunk");
  out["choices"] = json::array({{{"index", index},
                                 {"delta", {{"role", "assistant"}, {"content", ""}}},
                                 {"logprobs", nullptr},
                                 {"finish_reason", nullptr}}});
  if (usage) out["usage"] = UsageJson(*usage);
  return out;
}

json ChatContentChunk(const ResponseMeta& meta, const ChatChoice& choice, const std::optional<Usage>& usage) {
  json out = Header(meta, "chat.completion.chunk");
  json delta = json::object();
  const bool other = choice.reasoning || !choice.tool_calls.empty();
  if (!choice.content.empty() || (!choice.finish_reason && !other)) delta["content"] = choice.content;
  if (choice.reasoning) {
    delta["reasoning_content"] = *choice.reasoning;
    delta["reasoning"] = *choice.reasoning;
  }
  if (!choice.tool_calls.empty()) delta["tool_calls"] = ToolCallsJson(choice.tool_calls, true);
  json c = {{"index", choice.index},
            {"delta", std::move(delta)},
            {"logprobs", ChatLogprobs(choice.logprobs)},
            {"finish_reason", Nullable(choice.finish_reason)}};
  if (choice.finish_reason) c["stop_reason"] = StopReasonJson(choice.stop_reason);
  out["choices"] = json::array({std::move(c)});
  if (usage) out["usage"] = UsageJson(*usage);
  return out;
}

json ChatUsageChunk(const ResponseMeta& meta, const Usage& usage) {
  json out = Header(meta, "chat.completion.chunk");
  out["choices"] = json::array();
  out["usage"] = UsageJson(usage);
  return out;
}

std::string Dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace llmserve::frontend::openai
