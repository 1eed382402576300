#include "frontend/http/router.h"

#include <atomic>
#include <chrono>
#include <string_view>

#include "frontend/http/request_id.h"

namespace llmserve::frontend::http {

namespace {

// The segments of a path ("/a/b" -> "a", "b"; "/" -> none).
std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path.front() == '/') path.remove_prefix(1);
    const size_t end = path.find('/');
    out.push_back(path.substr(0, end));
    path.remove_prefix(end == std::string_view::npos ? path.size() : end);
  }
  return out;
}

bool IsParam(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

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
  if (path.find('{') == std::string::npos) {
    routes_[std::move(path)][std::move(method)] = std::move(handler);
    return;
  }
  for (PathTemplate& t : templates_) {
    if (t.path != path) continue;
    t.methods[std::move(method)] = std::move(handler);
    return;
  }
  PathTemplate t{path, {}, {}};
  for (std::string_view s : Segments(path)) t.segments.emplace_back(s);
  t.methods[std::move(method)] = std::move(handler);
  templates_.push_back(std::move(t));
}

const Router::Methods* Router::Find(HttpRequest& request, std::string* route) const {
  if (auto exact = routes_.find(request.path); exact != routes_.end()) {
    *route = exact->first;
    return &exact->second;
  }
  const std::vector<std::string_view> segments = Segments(request.path);
  for (const PathTemplate& t : templates_) {
    if (t.segments.size() != segments.size()) continue;
    std::map<std::string, std::string, std::less<>> params;
    bool match = true;
    for (size_t i = 0; match && i < segments.size(); ++i) {
      if (IsParam(t.segments[i])) {
        match = !segments[i].empty();
        params.emplace(t.segments[i].substr(1, t.segments[i].size() - 2), segments[i]);
      } else {
        match = t.segments[i] == segments[i];
      }
    }
    if (!match) continue;
    request.path_params = std::move(params);
    *route = t.path;
    return &t.methods;
  }
  return nullptr;
}

void Router::AddFilter(std::string prefix, Filter filter) {
  filters_.emplace_back(std::move(prefix), std::move(filter));
}

void Router::Dispatch(HttpRequest request, std::shared_ptr<ResponseWriter> writer) const {
  std::string route = "none";
  const Methods* methods = Find(request, &route);
  if (observer_) writer = std::make_shared<ObservingWriter>(std::move(writer), observer_, route, request.method);
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
  if (methods == nullptr) {
    writer->Respond(Error(404, "Not Found"));
    return;
  }
  auto by_method = methods->find(request.method);
  if (by_method == methods->end()) {
    HttpResponse response = Error(405, "Method Not Allowed");
    std::string allow;
    for (const auto& [method, handler] : *methods) {
      allow += allow.empty() ? method : ", " + method;
    }
    response.headers.emplace_back("Allow", allow);
    writer->Respond(std::move(response));
    return;
  }
  by_method->second(std::move(request), std::move(writer));
}

}  // namespace llmserve::frontend::http
