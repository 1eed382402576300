#include "common/json_log.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace llmserve::common {

namespace {

// "2026-11-27T04:02:18.123456Z"
std::string Rfc3339Utc(const google::LogMessageTime& time) {
  std::tm utc{};
  const std::time_t seconds = time.timestamp();
  gmtime_r(&seconds, &utc);
  char text[96];  // room for any int fields, as the compiler checks
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(time.usec()));
  return text;
}

class JsonStderrSink final : public google::LogSink {
 public:
  explicit JsonStderrSink(std::string process) : process_(std::move(process)), pid_(static_cast<long>(getpid())) {}

  void send(google::LogSeverity severity, const char* /*full_filename*/, const char* base_filename, int line,
            const google::LogMessageTime& time, const char* message, size_t message_len) override {
    std::string out = JsonLogLine(severity, base_filename, line, time, message, message_len, process_, pid_);
    out += '\n';
    // One write per record: lines of concurrent threads and processes do not interleave.
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
  }

 private:
  std::string process_;
  long pid_;
};

}  // namespace

std::string JsonLogLine(google::LogSeverity severity, const char* file, int line, const google::LogMessageTime& time,
                        const char* message, size_t message_len, const std::string& process, long pid) {
  const nlohmann::ordered_json record = {
      {"time", Rfc3339Utc(time)},
      {"level", severity >= 0 && severity < google::NUM_SEVERITIES ? google::GetLogSeverityName(severity) : "UNKNOWN"},
      {"process", process},
      {"pid", pid},
      {"file", file ? file : ""},
      {"line", line},
      {"message", std::string(message, message_len)},
  };
  return record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void UseJsonLogs(const std::string& process) {
  static JsonStderrSink* sink = nullptr;  // lives as long as the process logs
  if (sink != nullptr) return;
  sink = new JsonStderrSink(process);
  FLAGS_logtostderr = false;
  FLAGS_alsologtostderr = false;
  FLAGS_stderrthreshold = google::NUM_SEVERITIES;  // glog's own text: nowhere
  for (int s = 0; s < google::NUM_SEVERITIES; ++s) google::SetLogDestination(s, "");
  google::AddLogSink(sink);
}

}  // namespace llmserve::common
