#pragma once
// Incremental parser for a text/event-stream body: bytes go in as they arrive
// (split anywhere), complete events' data come out. Lines starting with ':'
// are comments (keep-alive pings) and are skipped; fields other than "data"
// are ignored; an event's several data lines are joined with '\n'; "\r\n" and
// "\n" both end a line.

#include <string>
#include <string_view>
#include <vector>

namespace llmserve::deploy::bench {

class SseParser {
 public:
  // Consumes `bytes`; returns the data of every event completed by them.
  std::vector<std::string> Feed(std::string_view bytes);
  // Data of an event still open when the stream ended (servers that omit the
  // final blank line); empty when none.
  std::string Finish();

 private:
  void Line(std::string_view line, std::vector<std::string>* events);

  std::string line_;  // bytes of the current, unfinished line
  std::string data_;  // data lines of the current event
  bool has_data_ = false;  // whether the current event has a data field
};

}  // namespace llmserve::deploy::bench
