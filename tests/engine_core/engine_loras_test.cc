// EngineLoras: the worker key of each load (the name, then name#N after an
// unload), and an unloaded adapter kept on the workers while requests use it.
#include <gtest/gtest.h>

#include <set>

#include "engine_core/engine_loras.h"

namespace llmserve::engine_core::engine_loras_test {
namespace {

// Records what the workers hold; a path "bad" fails to load.
class FakeExecutor final : public Executor {
 public:
  StatusOr<int32_t> Initialize(const KVCacheConfig&) override { return 1; }
  StatusOr<proto::ModelRunnerOutput> ExecuteModel(const proto::SchedulerOutput&) override {
    return proto::ModelRunnerOutput{};
  }
  Status CheckHealth() override { return Status::Ok(); }
  void Shutdown() override {}
  Status AddLora(const std::string& name, const std::string& dir) override {
    if (dir == "bad") return Status::InvalidArgument("bad adapter");
    held.insert(name);
    return Status::Ok();
  }
  Status RemoveLora(const std::string& name) override {
    return held.erase(name) ? Status::Ok() : Status::NotFound(name);
  }
  std::set<std::string> held;
};

TEST(EngineLoras, EachLoadHasItsOwnKeyAndUnloadedOnesWaitForTheirRequests) {
  FakeExecutor workers;
  EngineLoras loras;
  loras.AddStartup({"sql", "/a/sql", ""});
  workers.held.insert("sql");
  EXPECT_EQ(*loras.KeyFor("sql"), "sql");
  EXPECT_EQ(loras.Add({"sql", "/a/other", ""}, workers).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loras.Add({"chat", "bad", ""}, workers).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loras.KeyFor("chat").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(loras.Add({"chat", "/a/chat", "tiny"}, workers).ok());
  EXPECT_EQ(*loras.KeyFor("chat"), "chat");
  ASSERT_EQ(loras.List().size(), 2u);
  EXPECT_EQ(loras.List()[1].base_model_name, "tiny");

  ASSERT_TRUE(loras.Remove("sql").ok());
  EXPECT_EQ(loras.Remove("sql").code(), StatusCode::kNotFound);
  EXPECT_EQ(loras.KeyFor("sql").status().message(), "The model `sql` does not exist.");
  bool running = true;
  loras.ReleaseUnused([&](const std::string& key) { return running && key == "sql"; }, workers);
  EXPECT_EQ(workers.held.count("sql"), 1u);  // a request still runs with it
  ASSERT_TRUE(loras.Add({"sql", "/a/new", ""}, workers).ok());
  EXPECT_EQ(*loras.KeyFor("sql"), "sql#1");  // the old copy is still on the workers
  EXPECT_EQ(workers.held, (std::set<std::string>{"sql", "sql#1", "chat"}));
  running = false;
  loras.ReleaseUnused([&](const std::string& key) { return running && key == "sql"; }, workers);
  EXPECT_EQ(workers.held, (std::set<std::string>{"sql#1", "chat"}));
  EXPECT_FALSE(loras.has_unreleased());
}

TEST(EngineLoras, ReloadKeysAvoidOtherAdaptersNames) {
  FakeExecutor workers;
  EngineLoras loras;
  ASSERT_TRUE(loras.Add({"a", "/x", ""}, workers).ok());
  ASSERT_TRUE(loras.Add({"a#1", "/y", ""}, workers).ok());
  ASSERT_TRUE(loras.Remove("a").ok());
  loras.ReleaseUnused([](const std::string&) { return false; }, workers);
  ASSERT_TRUE(loras.Add({"a", "/z", ""}, workers).ok());
  EXPECT_EQ(*loras.KeyFor("a"), "a#2");
  EXPECT_EQ(*loras.KeyFor("a#1"), "a#1");
}

}  // namespace
}  // namespace llmserve::engine_core::engine_loras_test
