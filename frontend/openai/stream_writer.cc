#include "frontend/openai/stream_writer.h"

#include <algorithm>

#include "frontend/http/sse.h"

namespace llmserve::frontend::openai {

StreamWriter::StreamWriter(Options options, ResponseMeta meta, std::shared_ptr<http::ResponseWriter> writer)
    : options_(options),
      meta_(std::move(meta)),
      writer_(std::move(writer)),
      text_offsets_(static_cast<size_t>(std::max(options.num_choices, 1)), 0) {}

void StreamWriter::Send(const std::string& payload) { writer_->Write(http::SseEvent(payload)); }

std::optional<Usage> StreamWriter::RunningUsage() const {
  if (!options_.include_usage || !options_.continuous_usage_stats) return std::nullopt;
  return Usage{options_.prompt_tokens, completion_tokens_, std::nullopt};
}

void StreamWriter::Begin(http::Headers headers) {
  if (begun_) return;
  begun_ = true;
  headers.emplace_back("Cache-Control", "no-cache");
  writer_->BeginStream(200, "text/event-stream; charset=utf-8", std::move(headers));
  if (options_.api != Api::kChat) return;
  for (int32_t i = 0; i < options_.num_choices; ++i) Send(Dump(ChatRoleChunk(meta_, i, RunningUsage())));
}

void StreamWriter::SendChoice(int32_t index, const std::string& text,
                              std::optional<std::vector<TokenLogprob>> logprobs,
                              std::optional<std::string> finish_reason, StopReason stop_reason) {
  if (options_.api == Api::kChat) {
    ChatChoice c;
    c.index = index;
    c.content = text;
    c.logprobs = std::move(logprobs);
    c.finish_reason = std::move(finish_reason);
    c.stop_reason = std::move(stop_reason);
    Send(Dump(ChatContentChunk(meta_, c, RunningUsage())));
    return;
  }
  CompletionChoice c;
  c.index = index;
  c.text = text;
  c.logprobs = std::move(logprobs);
  if (index >= 0 && static_cast<size_t>(index) < text_offsets_.size()) {
    c.text_offset = text_offsets_[index];
    text_offsets_[index] += static_cast<int32_t>(text.size());
  }
  c.finish_reason = std::move(finish_reason);
  c.stop_reason = std::move(stop_reason);
  Send(Dump(CompletionChunk(meta_, c, RunningUsage())));
}

void StreamWriter::Delta(int32_t index, const std::string& text, int32_t num_tokens,
                         std::optional<std::vector<TokenLogprob>> logprobs) {
  if (!begun_ || done_) return;
  completion_tokens_ += num_tokens;
  if (text.empty() && !logprobs) return;  // nothing a client could see (e.g. a partial UTF-8 character)
  SendChoice(index, text, std::move(logprobs), std::nullopt, {});
}

void StreamWriter::Finish(int32_t index, const std::string& text, int32_t num_tokens,
                          const std::string& finish_reason, StopReason stop_reason,
                          std::optional<std::vector<TokenLogprob>> logprobs) {
  if (!begun_ || done_) return;
  completion_tokens_ += num_tokens;
  SendChoice(index, text, std::move(logprobs), finish_reason, std::move(stop_reason));
}

void StreamWriter::Done(std::optional<int32_t> cached_tokens) {
  if (!begun_ || done_) return;
  done_ = true;
  if (options_.include_usage) {
    Usage usage{options_.prompt_tokens, completion_tokens_, cached_tokens};
    Send(Dump(options_.api == Api::kChat ? ChatUsageChunk(meta_, usage) : CompletionUsageChunk(meta_, usage)));
  }
  writer_->Write(std::string(http::kSseDone));
  writer_->End();
}

void StreamWriter::Fail(const ApiError& error) {
  if (done_) return;
  done_ = true;
  if (!begun_) {
    writer_->Respond(ErrorResponse(error));
    return;
  }
  Send(ErrorBody(error));
  writer_->Write(std::string(http::kSseDone));
  writer_->End();
}

}  // namespace llmserve::frontend::openai
