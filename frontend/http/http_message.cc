#include "frontend/http/http_message.h"

#include <strings.h>

namespace llmserve::frontend::http {

const std::string* FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return &value;
    }
  }
  return nullptr;
}

void SplitTarget(std::string_view target, std::string* path, std::string* query) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) {
    path->assign(target);
    query->clear();
  } else {
    path->assign(target.substr(0, q));
    query->assign(target.substr(q + 1));
  }
}

}  // namespace llmserve::frontend::http
