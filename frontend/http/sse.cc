#include "frontend/http/sse.h"

namespace llmserve::frontend::http {

std::string SseEvent(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  size_t start = 0;
  while (true) {
    size_t nl = payload.find('\n', start);
    out += "data: ";
    if (nl == std::string_view::npos) {
      out.append(payload.substr(start));
      out += '\n';
      break;
    }
    out.append(payload.substr(start, nl - start));
    out += '\n';
    start = nl + 1;
  }
  out += '\n';
  return out;
}

std::string SseNamedEvent(std::string_view name, std::string_view payload) {
  std::string out = "event: ";
  out.append(name);
  out += '\n';
  return out + SseEvent(payload);
}

void SseStream::Begin(Headers extra_headers) {
  extra_headers.emplace_back("Cache-Control", "no-cache");
  writer_->BeginStream(200, "text/event-stream; charset=utf-8", std::move(extra_headers));
}

void SseStream::Done() {
  writer_->Write(std::string(kSseDone));
  writer_->End();
}

}  // namespace llmserve::frontend::http
