// RuntimeLoras, the frontend side of /v1/load_lora_adapter and
// /v1/unload_lora_adapter, against fake engine ranks that answer the
// add_lora / remove_lora / list_loras utility calls: vLLM's answers, and two
// API servers sharing the ranks each seeing the other's changes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "frontend/serving/lora_routes.h"
#include "frontend/serving/runtime_loras.h"
#include "tests/common/wait_until.h"

namespace llmserve::frontend::lora_runtime_test {
namespace {

using serving::RuntimeLoras;

// Engine ranks holding adapters by name; a path containing "missing" has no
// adapter, one containing "rank64" is refused as too large.
struct FakeRanks {
  std::vector<std::map<std::string, std::string>> ranks = std::vector<std::map<std::string, std::string>>(2);
  std::vector<std::string> calls;
  std::mutex mu;  // RuntimeLoras calls from its own thread too

  serving::UtilityCaller Caller() {
    return [this](const std::string& method, const std::vector<std::string>& args, std::chrono::milliseconds) {
      std::lock_guard<std::mutex> lock(mu);
      calls.push_back(method);
      std::vector<std::string> out;
      for (auto& held : ranks) out.push_back(Answer(held, method, args));
      return StatusOr<std::vector<std::string>>(out);
    };
  }
  static std::string Answer(std::map<std::string, std::string>& held, const std::string& method,
                            const std::vector<std::string>& args) {
    if (method == "list_loras") {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [name, path] : held) list.push_back({{"name", name}, {"path", path}, {"base_model_name", ""}});
      return list.dump();
    }
    if (method == "add_lora") {
      if (args[1].find("missing") != std::string::npos)
        return nlohmann::json{{"code", 404}, {"message", "No adapter found for " + args[1]}}.dump();
      if (args[1].find("rank64") != std::string::npos)
        return nlohmann::json{{"code", 400}, {"message", "LoRA rank 64 is greater than max_lora_rank 16"}}.dump();
      held[args[0]] = args[1];
      return R"({"ok": true})";
    }
    if (method == "remove_lora") {
      if (held.erase(args[0]) == 0) return nlohmann::json{{"code", 404}, {"message", "gone"}}.dump();
      return R"({"ok": true})";
    }
    return "";
  }
};

TEST(LoraRuntime, LoadAndUnloadAnswerAsVllm) {
  FakeRanks engines;
  RuntimeLoras loras({}, "tiny", engines.Caller());
  auto a = loras.Load("sql", "/a/sql");
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.text, "Success: LoRA adapter 'sql' added successfully.");
  EXPECT_TRUE(loras.Serves("sql"));
  ASSERT_EQ(loras.Cards().size(), 1u);
  EXPECT_EQ(loras.Cards()[0].parent, "tiny");
  EXPECT_EQ(loras.Cards()[0].path, "/a/sql");
  for (const auto& held : engines.ranks) EXPECT_EQ(held.count("sql"), 1u);

  a = loras.Load("sql", "/a/other");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->status, 400);
  EXPECT_EQ(a.error->type, "InvalidUserInput");
  EXPECT_EQ(a.error->message, "The lora adapter 'sql' has already been loaded.");
  a = loras.Load("x", "");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->message, "Both 'lora_name' and 'lora_path' must be provided.");
  a = loras.Load("ghost", "/missing");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->status, 404);
  EXPECT_EQ(a.error->type, "NotFoundError");
  a = loras.Load("big", "/a/rank64");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->status, 400);
  EXPECT_EQ(a.error->type, "BadRequestError");
  EXPECT_FALSE(loras.Serves("big"));

  a = loras.Unload("nope");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->status, 404);
  EXPECT_EQ(a.error->message, "The lora adapter 'nope' cannot be found.");
  a = loras.Unload("");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->message, "'lora_name' needs to be provided to unload a LoRA adapter.");
  a = loras.Unload("sql");
  ASSERT_FALSE(a.error);
  EXPECT_EQ(a.text, "Success: LoRA adapter 'sql' removed successfully.");
  EXPECT_FALSE(loras.Serves("sql"));
  for (const auto& held : engines.ranks) EXPECT_EQ(held.count("sql"), 0u);
}

TEST(LoraRuntime, ApiServersSeeEachOthersChangesThroughTheEngines) {
  FakeRanks engines;
  RuntimeLoras first({}, "tiny", engines.Caller()), second({}, "tiny", engines.Caller());
  ASSERT_FALSE(first.Load("sql", "/a/sql").error);
  EXPECT_TRUE(second.Serves("sql"));  // asked the engines on the miss
  ASSERT_EQ(second.Cards().size(), 1u);
  ASSERT_FALSE(second.Unload("sql").error);
  EXPECT_TRUE(first.Cards().empty());
  EXPECT_FALSE(first.Serves("sql"));
}

TEST(LoraRuntime, ARestartedRankGetsTheAdaptersTheOthersServe) {
  FakeRanks engines;
  RuntimeLoras loras({}, "tiny", engines.Caller());
  ASSERT_FALSE(loras.Load("sql", "/a/sql").error);
  {
    std::lock_guard<std::mutex> lock(engines.mu);
    engines.ranks[0].clear();  // rank 0 restarted: it knows none of them
  }
  EXPECT_TRUE(loras.Serves("sql"));  // listed while any rank serves it
  loras.OnRankReady();
  EXPECT_TRUE(test_util::WaitUntil(
      [&] {
        std::lock_guard<std::mutex> lock(engines.mu);
        return engines.ranks[0].count("sql") == 1;
      },
      std::chrono::seconds(5), std::chrono::milliseconds(5)));
  std::lock_guard<std::mutex> lock(engines.mu);
  EXPECT_EQ(engines.ranks[0].at("sql"), "/a/sql");
}

TEST(LoraRuntime, AdaptersAreFixedWithoutACaller) {
  RuntimeLoras loras({{"sql", "/a/sql", "tiny"}}, "tiny", nullptr);
  EXPECT_FALSE(loras.runtime_updating());
  EXPECT_TRUE(loras.Serves("sql"));
  EXPECT_FALSE(loras.Serves("chat"));
  EXPECT_EQ(loras.Cards().size(), 1u);
}

TEST(LoraRuntime, EnvironmentVariableReadAsVllm) {
  const char* const name = "VLLM_ALLOW_RUNTIME_LORA_UPDATING";
  for (const auto& [value, allowed] : std::vector<std::pair<const char*, bool>>{
           {"1", true}, {"true", true}, {" True ", true}, {"TRUE", true}, {"0", false}, {"yes", false}, {"", false}}) {
    setenv(name, value, 1);
    EXPECT_EQ(serving::RuntimeLoraUpdatingAllowed(), allowed) << "'" << value << "'";
  }
  unsetenv(name);
  EXPECT_FALSE(serving::RuntimeLoraUpdatingAllowed());
}

}  // namespace
}  // namespace llmserve::frontend::lora_runtime_test
