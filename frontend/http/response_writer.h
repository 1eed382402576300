#pragma once
// ResponseWriter: the handle a handler answers its request through. It is
// thread-safe: any thread (an I/O thread, the engine client's output thread)
// may call it; every call is posted to the connection's strand, so bytes go out
// in call order. A handler either calls Respond() once, or BeginStream() then
// any number of Write() and one End(). Calls after the answer is complete, or
// after the client went away, are ignored.
//
// Disconnects: while a request is being answered the server keeps reading the
// socket; when the peer closes it (or a write fails or times out) the writer
// becomes closed() and the OnDisconnect callback runs once, on an I/O thread,
// so the owner can abort the engine request right away.
//
// A writer dropped without an answer sends 500 so that no client waits forever.

#include <functional>
#include <string>

#include "frontend/http/http_message.h"

namespace llmserve::frontend::http {

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  // Sends one complete response; the exchange is then finished.
  virtual void Respond(HttpResponse response) = 0;

  // Starts a chunked response with this status, content type and extra headers.
  virtual void BeginStream(int status, std::string content_type, Headers headers) = 0;

  // Queues `data` as body bytes of the stream begun by BeginStream().
  virtual void Write(std::string data) = 0;

  // Sends the last chunk; the connection then serves its next request.
  virtual void End() = 0;

  // True once the client is gone or the connection was closed by the server.
  virtual bool closed() const = 0;

  // True once Respond() or End() was called.
  virtual bool finished() const = 0;

  // Runs `callback` once, on an I/O thread, if the client disconnects before the
  // answer is complete (right away if it already has). Replaces an earlier one.
  virtual void OnDisconnect(std::function<void()> callback) = 0;

  // Bytes queued by Write() and not yet handed to the socket (for backpressure).
  virtual size_t pending_bytes() const = 0;
};

}  // namespace llmserve::frontend::http
