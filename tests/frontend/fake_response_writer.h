#pragma once
// An http::ResponseWriter that keeps what a job answers, for the job tests.

#include <functional>
#include <string>
#include <vector>

#include "frontend/http/response_writer.h"

namespace llmserve::frontend::testing {

class FakeResponseWriter : public http::ResponseWriter {
 public:
  void Respond(http::HttpResponse response) override { responses.push_back(std::move(response)); }
  void BeginStream(int status, std::string, http::Headers) override { stream_status = status; }
  void Write(std::string data) override { stream += data; }
  void End() override { stream_ended = true; }
  bool closed() const override { return false; }
  bool finished() const override { return !responses.empty(); }
  void OnDisconnect(std::function<void()> callback) override { on_disconnect = std::move(callback); }
  size_t pending_bytes() const override { return 0; }

  std::vector<http::HttpResponse> responses;
  std::function<void()> on_disconnect;
  int stream_status = 0;
  std::string stream;
  bool stream_ended = false;
};

}  // namespace llmserve::frontend::testing
