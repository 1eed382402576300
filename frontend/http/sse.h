#pragma once
// Server-Sent Events on top of a ResponseWriter: `text/event-stream`, one
// `data: <payload>\n\n` event per message (optionally named by an `event:` line), and the OpenAI terminator
// `data: [DONE]\n\n`.

#include <memory>
#include <string>
#include <string_view>

#include "frontend/http/response_writer.h"

namespace llmserve::frontend::http {

// The bytes of one SSE event carrying `payload` (one `data:` line per line of payload).
std::string SseEvent(std::string_view payload);

// The bytes of an event named `name` (an `event:` line; the Responses API's
// streams name every event by its type).
std::string SseNamedEvent(std::string_view name, std::string_view payload);

// The OpenAI stream terminator event.
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// Writes an SSE stream through a ResponseWriter. Thread-safe as the writer is.
class SseStream {
 public:
  // Wraps `writer`; nothing is sent until Begin().
  explicit SseStream(std::shared_ptr<ResponseWriter> writer) : writer_(std::move(writer)) {}

  // Sends the 200 header with Content-Type text/event-stream and no caching.
  void Begin(Headers extra_headers = {});

  // Sends one event carrying `payload` (usually a JSON object).
  void Send(std::string_view payload) { writer_->Write(SseEvent(payload)); }

  // Sends one event named `name` carrying `payload`.
  void SendNamed(std::string_view name, std::string_view payload) { writer_->Write(SseNamedEvent(name, payload)); }

  // Sends `data: [DONE]` and ends the stream.
  void Done();

  // Ends the stream without the [DONE] terminator.
  void End() { writer_->End(); }

  // True once the client has gone away.
  bool closed() const { return writer_->closed(); }

  // The underlying writer (for OnDisconnect and pending_bytes).
  ResponseWriter& writer() { return *writer_; }

 private:
  std::shared_ptr<ResponseWriter> writer_;
};

}  // namespace llmserve::frontend::http
