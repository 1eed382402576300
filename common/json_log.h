#pragma once
// JSON log lines (--log-format json): every glog record becomes one JSON
// object on one line of stderr, for log collectors that parse fields rather
// than text:
//   {"time": "2026-11-27T04:02:18.123456Z", "level": "INFO",
//    "process": "llmserve-engine", "pid": 4242, "file": "engine_core.cc",
//    "line": 23, "message": "engine 0: 24943 KV blocks ..."}
// Bytes of the message that are not UTF-8 become U+FFFD.

#include <glog/logging.h>

#include <cstddef>
#include <string>

namespace llmserve::common {

// The record's JSON line (no trailing newline). `time` is read as UTC.
std::string JsonLogLine(google::LogSeverity severity, const char* file, int line, const google::LogMessageTime& time,
                        const char* message, size_t message_len, const std::string& process, long pid);

// Sends every later glog record to stderr as JSON lines instead of glog's
// text (and never to log files). `process`: the executable's name.
void UseJsonLogs(const std::string& process);

}  // namespace llmserve::common
