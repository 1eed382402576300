#include "frontend/http/router.h"

namespace llmserve::frontend::http {

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
