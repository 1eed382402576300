#include "deploy/bench/sse_parser.h"

namespace llmserve::deploy::bench {

void SseParser::Line(std::string_view line, std::vector<std::string>* events) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {  // blank line: the event is complete
    if (has_data_) events->push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return;
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

std::vector<std::string> SseParser::Feed(std::string_view bytes) {
  std::vector<std::string> events;
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      line_.append(bytes);
      break;
    }
    line_.append(bytes.substr(0, nl));
    Line(line_, &events);
    line_.clear();
    bytes.remove_prefix(nl + 1);
  }
  return events;
}

std::string SseParser::Finish() {
  std::vector<std::string> events;
  if (!line_.empty()) Line(line_, &events);
  line_.clear();
  Line("", &events);
  return events.empty() ? std::string() : events.front();
}

}  // namespace llmserve::deploy::bench
