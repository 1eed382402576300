// A real llmserve-engine process serving a tiny random-weight Qwen3 model,
// driven through the real handshake and the frontend's EngineCoreClient over
// ZMQ: greedy tokens equal the in-process engine's, aborts work, SIGTERM
// drains and exits cleanly.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "common/process/child_processes.h"
#include "engine_core/engine_factory.h"
#include "frontend/engine_core_client.h"
#include "frontend/handshake_server.h"
#include "worker/test_model.h"

namespace llmserve::frontend {
namespace {

using namespace std::chrono_literals;

class CollectingSink : public OutputSink {
 public:
  void OnOutput(const proto::EngineCoreOutput& o) override {
    std::lock_guard<std::mutex> lock(mu);
    tokens.insert(tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    if (o.finish_reason) finish = o.finish_reason;
    cv.notify_all();
  }
  void OnError(const Status& s) override {
    std::lock_guard<std::mutex> lock(mu);
    error = s;
    cv.notify_all();
  }
  bool WaitDone(std::chrono::milliseconds t) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, t, [&] { return finish.has_value() || !error.ok(); });
  }
  bool WaitTokens(size_t n, std::chrono::milliseconds t) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, t, [&] { return tokens.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> tokens;
  std::optional<proto::FinishReason> finish;
  Status error;
};

proto::EngineConfig TinyConfig(const std::string& dir) {
  proto::EngineConfig config;
  config.mutable_model()->set_model_dir(dir);
  config.mutable_model()->set_max_model_len(512);
  config.mutable_model()->set_dtype("float32");
  config.mutable_parallel()->set_tensor_parallel_size(1);
  config.mutable_parallel()->set_device("cpu");
  config.mutable_cache()->set_block_size(16);
  config.mutable_cache()->set_enable_prefix_caching(true);
  config.mutable_cache()->set_kv_cache_memory_bytes(8 << 20);
  config.mutable_scheduler()->set_max_num_seqs(16);
  config.mutable_scheduler()->set_max_num_batched_tokens(256);
  config.mutable_scheduler()->set_enable_chunked_prefill(true);
  config.set_shutdown_timeout_s(10);
  return config;
}

proto::EngineCoreRequest Greedy(const std::string& id, int max_tokens) {
  proto::EngineCoreRequest r;
  r.request_id = id;
  r.prompt_token_ids = {785, 6722, 315, 9625, 374};
  r.sampling_params.temperature = 0.0;
  r.sampling_params.max_tokens = max_tokens;
  r.sampling_params.ignore_eos = true;
  return r;
}

TEST(EngineProcess, ServesGreedyTokensLikeTheInProcessEngine) {
  const std::string dir = testing::TempDir() + "/engine_process_tiny";
  auto spec = worker::TestModelPreset("tiny", "qwen3");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Status written = worker::WriteTestModel(*spec, dir);
  if (!written.ok()) GTEST_SKIP() << "cannot build the tiny model: " << written.ToString();
  const proto::EngineConfig config = TinyConfig(dir);

  // Reference: the same engine in this process.
  auto built = engine_core::BuildEngineCore(config, 0);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_TRUE(built->core->AddRequest(Greedy("ref", 8)).ok());
  std::vector<int32_t> expected;
  while (built->core->HasRequests()) {
    auto step = built->core->Step();
    ASSERT_TRUE(step.ok());
    for (auto& c : *step)
      for (auto& o : c.outputs.outputs) expected.insert(expected.end(), o.new_token_ids.begin(), o.new_token_ids.end());
  }
  ASSERT_EQ(expected.size(), 8u);

  zmq::context_t ctx;
  auto client = EngineCoreClient::Start(ctx, {0, "tcp://127.0.0.1:*", "tcp://127.0.0.1:*", {0}});
  ASSERT_TRUE(client.ok());
  proto::HandshakeReply reply;
  reply.mutable_addresses()->add_inputs((*client)->input_address());
  reply.mutable_addresses()->add_outputs((*client)->output_address());
  *reply.mutable_config() = config;
  HandshakeServer handshake(ctx, reply);
  ASSERT_TRUE(handshake.Bind("tcp://127.0.0.1:*").ok());
  handshake.Expect(0, true);

  common::ChildProcesses children;
  const std::string engine_bin = common::ExecutableDirectory() + "/../bin/llmserve-engine";
  ASSERT_TRUE(children.Spawn("engine0", {engine_bin, "--handshake-address=" + handshake.address(),
                                         "--data-parallel-rank=0"}).ok());
  ASSERT_TRUE(handshake.WaitForEngines(60s, 10s, [](const std::string&) {}).ok());
  ASSERT_TRUE((*client)->WaitUntilReady(10s).ok());

  auto sink = std::make_shared<CollectingSink>();
  ASSERT_TRUE((*client)->Submit(Greedy("r1", 8), sink).ok());
  ASSERT_TRUE(sink->WaitDone(30s));
  ASSERT_TRUE(sink->error.ok()) << sink->error.ToString();
  EXPECT_EQ(sink->finish, proto::FinishReason::kLength);
  EXPECT_EQ(sink->tokens, expected);

  // Abort mid-generation: the engine frees the request; later requests run.
  auto long_sink = std::make_shared<CollectingSink>();
  ASSERT_TRUE((*client)->Submit(Greedy("long", 400), long_sink).ok());
  ASSERT_TRUE(long_sink->WaitTokens(2, 30s));
  (*client)->Abort({"long"});
  auto again = std::make_shared<CollectingSink>();
  ASSERT_TRUE((*client)->Submit(Greedy("r2", 8), again).ok());
  ASSERT_TRUE(again->WaitDone(30s));
  EXPECT_EQ(again->tokens, expected);
  auto stats = (*client)->CallUtility("stats", {}, 10s);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  proto::SchedulerStats s;
  ASSERT_TRUE(proto::Decode(stats->at(0), &s).ok());
  EXPECT_EQ(s.num_running_reqs, 0);  // the aborted request holds nothing
  EXPECT_EQ(s.num_waiting_reqs, 0);

  // SIGTERM drains and exits 0.
  children.SignalAll(SIGTERM);
  auto exit = children.WaitAny(30s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0) << exit->Describe();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmserve::frontend
