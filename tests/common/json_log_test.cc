// --log-format json: a glog record as one line of JSON with its fields, the
// message escaped (quotes, newlines) and its non-UTF-8 bytes replaced.
#include "common/json_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace llmserve::common::json_log_test {
namespace {

TEST(JsonLog, ARecordIsOneLineOfJsonWithItsFields) {
  const google::LogMessageTime time(1764216138, 1764216138.25);  // 2025-11-27 04:02:18.25 UTC
  const std::string message = "engine 0: \"ready\"\nnext line \xff end";
  const std::string line = JsonLogLine(google::GLOG_WARNING, "engine_core.cc", 23, time, message.data(),
                                       message.size(), "llmserve-engine", 4242);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  const auto record = nlohmann::json::parse(line);
  EXPECT_EQ(record["time"], "2025-11-27T04:02:18.250000Z");
  EXPECT_EQ(record["level"], "WARNING");
  EXPECT_EQ(record["process"], "llmserve-engine");
  EXPECT_EQ(record["pid"], 4242);
  EXPECT_EQ(record["file"], "engine_core.cc");
  EXPECT_EQ(record["line"], 23);
  EXPECT_EQ(record["message"], "engine 0: \"ready\"\nnext line \xEF\xBF\xBD end");
  // The fields come in this order, time first.
  EXPECT_EQ(line.rfind("{\"time\":", 0), 0u) << line;
}

}  // namespace
}  // namespace llmserve::common::json_log_test
