#include "frontend/http/router.h"

#include <atomic>
#include <chrono>

#include "frontend/http/request_id.h"

namespace llmserve::frontend::http {

namespace {

// Forwards to another writer, adding `headers` to the response or stream head.
class HeaderAddingWriter final : public ResponseWriter {
 public:
  HeaderAddingWriter(std::shared_ptr<ResponseWriter> inner, Headers headers)
      : inner_(std::move(inner)), headers_(std::move(headers)) {}
  void Respond(HttpResponse response) override {
    response.headers.insert(response.headers.end(), headers_.begin(), headers_.end());
    inner_->Respond(std::move(response));
  }
  void BeginStream(int status, std::string content_type, Headers headers) override {
    headers.insert(headers.end(), headers_.begin(), headers_.end());
    inner_->BeginStream(status, std::move(content_type), std::move(headers));
  }
  void Write(std::string data) override { inner_->Write(std::move(data)); }
  void End() override { inner_->End(); }
  bool closed() const override { return inner_->closed(); }
  bool finished() const override { return inner_->finished(); }
  void OnDisconnect(std::function<void()> callback) override { inner_->OnDisconnect(std::move(callback)); }
  size_t pending_bytes() const override { return inner_->pending_bytes(); }

 private:
  std::shared_ptr<ResponseWriter> inner_;
  Headers headers_;
};

// Forwards to another writer and reports the request to the observer once:
// when the response is sent, when a stream ends, or when the writer is
// dropped before either (then with the stream's status, or 499 when nothing
// was sent: nginx's code for a client that went away).
class ObservingWriter final : public ResponseWriter {
 public:
  // A copy of the observer: a writer can outlive the router (a job finishing
  // while the server stops).
  ObservingWriter(std::shared_ptr<ResponseWriter> inner, RequestObserver observer, std::string handler,
                  std::string method)
      : inner_(std::move(inner)), observer_(std::move(observer)), handler_(std::move(handler)), method_(std::move(method)),
        start_(std::chrono::steady_clock::now()) {}
  ~ObservingWriter() override { Report(); }
  void Respond(HttpResponse response) override {
    status_ = response.status;
    inner_->Respond(std::move(response));
    Report();
  }
  void BeginStream(int status, std::string content_type, Headers headers) override {
    status_ = status;
    inner_->BeginStream(status, std::move(content_type), std::move(headers));
  }
  void Write(std::string data) override { inner_->Write(std::move(data)); }
  void End() override {
    inner_->End();
    Report();
  }
  bool closed() const override { return inner_->closed(); }
  bool finished() const override { return inner_->finished(); }
  void OnDisconnect(std::function<void()> callback) override { inner_->OnDisconnect(std::move(callback)); }
  size_t pending_bytes() const override { return inner_->pending_bytes(); }

 private:
  void Report() {
    if (reported_.exchange(true)) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    observer_(handler_, method_, status_ != 0 ? status_ : 499, seconds);
  }

  std::shared_ptr<ResponseWriter> inner_;
  const RequestObserver observer_;
  const std::string handler_, method_;
  const std::chrono::steady_clock::time_point start_;
  int status_ = 0;
  std::atomic<bool> reported_{false};
};

}  // namespace

HttpResponse PlainErrorResponse(int status, const std::string& message) {
  return HttpResponse::Make(status, "text/plain; charset=utf-8", message + "\n");
}

void Router::Add(std::string method, std::string path, Handler handler) {
  routes_[std::move(path)][std::move(method)] = std::move(handler);
}

void Router::AddFilter(std::string prefix, Filter filter) {
  filters_.emplace_back(std::move(prefix), std::move(filter));
}

void Router::Dispatch(HttpRequest request, std::shared_ptr<ResponseWriter> writer) const {
  if (observer_) {
    const std::string handler = routes_.count(request.path) ? request.path : "none";
    writer = std::make_shared<ObservingWriter>(std::move(writer), observer_, handler, request.method);
  }
  Headers extra;
  if (request_id_headers_) extra.emplace_back("X-Request-Id", ResponseRequestId(request));
  if (cors_) {
    if (std::optional<HttpResponse> preflight = CorsPreflight(*cors_, request)) {
      preflight->headers.insert(preflight->headers.end(), extra.begin(), extra.end());
      writer->Respond(std::move(*preflight));
      return;
    }
    Headers cors = CorsResponseHeaders(*cors_, request);
    extra.insert(extra.end(), cors.begin(), cors.end());
  }
  if (!extra.empty()) writer = std::make_shared<HeaderAddingWriter>(std::move(writer), std::move(extra));
  for (const auto& [prefix, filter] : filters_) {
    if (request.path.compare(0, prefix.size(), prefix) != 0) continue;
    if (std::optional<HttpResponse> answer = filter(request)) {
      writer->Respond(std::move(*answer));
      return;
    }
  }
  auto by_path = routes_.find(request.path);
  if (by_path == routes_.end()) {
    writer->Respond(Error(404, "Not Found"));
    return;
  }
  auto by_method = by_path->second.find(request.method);
  if (by_method == by_path->second.end()) {
    HttpResponse response = Error(405, "Method Not Allowed");
    std::string allow;
    for (const auto& [method, handler] : by_path->second) {
      allow += allow.empty() ? method : ", " + method;
    }
    response.headers.emplace_back("Allow", allow);
    writer->Respond(std::move(response));
    return;
  }
  by_method->second(std::move(request), std::move(writer));
}

}  // namespace llmserve::frontend::http
