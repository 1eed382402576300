// A real llmserve-engine process serving a tiny random-weight Qwen3 model,
// driven through the real handshake and the frontend's EngineCoreClient over
// ZMQ: greedy tokens equal the in-process engine's, aborts work, SIGTERM
// drains and exits cleanly.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <thread>

#include "common/kv_transfer/kv_transfer_config.h"
#include "common/process/child_processes.h"
#include "deploy/handshake_server.h"
#include "deploy/kv_events_config.h"
#include "engine_core/engine_factory.h"
#include "frontend/engine_core_client.h"
#include "proto/kv_events.h"
#include "tests/engine_core/kv_event_subscriber.h"
#include "worker/test_model.h"

namespace llmserve::deploy {
namespace {

using namespace std::chrono_literals;
using frontend::EngineCoreClient;
using frontend::OutputSink;

class CollectingSink : public OutputSink {
 public:
  void OnOutput(const proto::EngineCoreOutput& o) override {
    std::lock_guard<std::mutex> lock(mu);
    tokens.insert(tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    if (o.finish_reason) finish = o.finish_reason;
    num_cached_tokens = std::max(num_cached_tokens, o.num_cached_tokens);
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
  int32_t num_cached_tokens = 0;
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

// Pids of the processes whose parent is `parent`.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

// One engine process (with `tp` workers) behind a real handshake and client.
struct EngineUnderTest {
  EngineUnderTest(const proto::EngineConfig& config, std::chrono::seconds ready_timeout = 120s) {
    auto c = EngineCoreClient::Start(ctx, {0, "tcp://127.0.0.1:*", "tcp://127.0.0.1:*", {0}});
    EXPECT_TRUE(c.ok());
    client = std::move(c).value();
    proto::HandshakeReply reply;
    reply.mutable_addresses()->add_inputs(client->input_address());
    reply.mutable_addresses()->add_outputs(client->output_address());
    *reply.mutable_config() = config;
    handshake = std::make_unique<HandshakeServer>(ctx, reply);
    EXPECT_TRUE(handshake->Bind("tcp://127.0.0.1:*").ok());
    handshake->Expect(0, true);
    const std::string engine_bin = common::ExecutableDirectory() + "/../bin/llmserve-engine";
    auto pid = children.Spawn("engine0", {engine_bin, "--handshake-address=" + handshake->address(),
                                          "--data-parallel-rank=0"});
    EXPECT_TRUE(pid.ok());
    engine_pid = pid.ok() ? *pid : -1;
    ready = handshake->WaitForEngines(ready_timeout, 10s, [](const std::string&) {}).ok() &&
            client->WaitUntilReady(10s).ok();
  }
  std::vector<int32_t> Generate(const std::string& id, int max_tokens) {
    auto sink = std::make_shared<CollectingSink>();
    EXPECT_TRUE(client->Submit(Greedy(id, max_tokens), sink).ok());
    EXPECT_TRUE(sink->WaitDone(60s));
    EXPECT_TRUE(sink->error.ok()) << sink->error.ToString();
    return sink->tokens;
  }
  zmq::context_t ctx;
  std::unique_ptr<EngineCoreClient> client;
  std::unique_ptr<HandshakeServer> handshake;
  common::ChildProcesses children;
  pid_t engine_pid = -1;
  bool ready = false;
};

// Greedy tokens of the engine built in this process.
std::vector<int32_t> InProcessGreedy(const proto::EngineConfig& config, int max_tokens) {
  auto built = engine_core::BuildEngineCore(config, 0);
  EXPECT_TRUE(built.ok()) << built.status().ToString();
  if (!built.ok()) return {};
  EXPECT_TRUE(built->core->AddRequest(Greedy("ref", max_tokens)).ok());
  std::vector<int32_t> tokens;
  while (built->core->HasRequests()) {
    auto step = built->core->Step();
    EXPECT_TRUE(step.ok());
    if (!step.ok()) break;
    for (auto& c : *step)
      for (auto& o : c.outputs.outputs) tokens.insert(tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
  }
  return tokens;
}

std::string TinyModelDir(const std::string& name) {
  const std::string dir = testing::TempDir() + "/" + name;
  auto spec = worker::TestModelPreset("tiny", "qwen3");
  if (!spec.ok() || !worker::WriteTestModel(*spec, dir).ok()) return "";
  return dir;
}

TEST(EngineFactory, TheDefaultKvCacheIsWhatTheSchedulerCanUse) {
  const std::string dir = TinyModelDir("engine_factory_default_kv");
  ASSERT_FALSE(dir.empty());
  proto::EngineConfig config = TinyConfig(dir);
  config.mutable_cache()->clear_kv_cache_memory_bytes();  // no size given
  auto built = engine_core::BuildEngineCore(config, 0);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  // 16 requests of 512 tokens in blocks of 16, and the null block.
  EXPECT_EQ(built->core->num_gpu_blocks(), 16 * 32 + 1);
  EXPECT_NE(built->memory_share, nullptr);  // it counts in other engines' share of the host
  // A size given in bytes is taken as it is.
  config.mutable_cache()->set_kv_cache_memory_bytes(16 << 20);
  auto sized = engine_core::BuildEngineCore(config, 0);
  ASSERT_TRUE(sized.ok()) << sized.status().ToString();
  EXPECT_GT(sized->core->num_gpu_blocks(), 16 * 32 + 1);
}

TEST(EngineProcess, TensorParallelTwoEqualsOne) {
  const std::string dir = TinyModelDir("engine_process_tp");
  ASSERT_FALSE(dir.empty());
  proto::EngineConfig config = TinyConfig(dir);
  const std::vector<int32_t> expected = InProcessGreedy(config, 8);
  ASSERT_EQ(expected.size(), 8u);
  config.mutable_parallel()->set_tensor_parallel_size(2);
  EngineUnderTest engine(config);
  ASSERT_TRUE(engine.ready);
  EXPECT_EQ(engine.Generate("tp2", 8), expected);

  // kill -9 a worker: the engine fails the next step cleanly and reports its death.
  std::vector<pid_t> workers = ChildrenOf(engine.engine_pid);
  ASSERT_EQ(workers.size(), 2u);
  kill(workers[1], SIGKILL);
  auto sink = std::make_shared<CollectingSink>();
  ASSERT_TRUE(engine.client->Submit(Greedy("after-kill", 8), sink).ok());
  ASSERT_TRUE(sink->WaitDone(30s));
  EXPECT_EQ(sink->error.code(), StatusCode::kUnavailable) << sink->error.ToString();
  EXPECT_TRUE(engine.client->IsDead());
  auto exit = engine.children.WaitAny(30s);
  ASSERT_TRUE(exit);
  EXPECT_NE(exit->exit_code, 0);
  std::filesystem::remove_all(dir);
}

// --kv-transfer-config travels in the handshake's EngineConfig to the engine
// and its two workers: a producer's workers each store their KV heads (and
// their marker), and a consumer's workers load them, every worker's report
// merged by the executor, so the consumer computes only the prompt's last
// token and samples the producer's tokens.
TEST(EngineProcess, KVConnectorAcrossTensorParallelWorkers) {
  const std::string dir = TinyModelDir("engine_process_kv_connector");
  ASSERT_FALSE(dir.empty());
  proto::EngineConfig config = TinyConfig(dir);
  config.mutable_parallel()->set_tensor_parallel_size(2);
  config.mutable_cache()->set_block_size(4);
  auto with_role = [&](const std::string& role) {
    auto kv = common::ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": ")" + role +
                                            R"(", "kv_connector_extra_config": {"shared_storage_path": ")" + dir +
                                            "/kv\"}}");
    EXPECT_TRUE(kv.ok()) << kv.status().ToString();
    proto::EngineConfig c = config;
    c.set_kv_transfer_config(common::KVTransferConfigToJson(*kv));
    return c;
  };
  proto::EngineCoreRequest request = Greedy("p", 6);
  request.prompt_token_ids.resize(13);  // 12 tokens are stored: 3 blocks of 4
  std::iota(request.prompt_token_ids.begin() + 5, request.prompt_token_ids.end(), 1000);
  auto run = [&](const proto::EngineConfig& c, const std::string& id) {
    EngineUnderTest engine(c);
    EXPECT_TRUE(engine.ready);
    auto sink = std::make_shared<CollectingSink>();
    proto::EngineCoreRequest r = request;
    r.request_id = id;
    EXPECT_TRUE(engine.client->Submit(r, sink).ok());
    EXPECT_TRUE(sink->WaitDone(60s));
    EXPECT_TRUE(sink->error.ok()) << sink->error.ToString();
    return std::make_pair(sink->tokens, sink->num_cached_tokens);
  };
  const auto [produced, produced_cached] = run(with_role("kv_producer"), "produce");
  ASSERT_EQ(produced.size(), 6u);
  EXPECT_EQ(produced_cached, 0);
  std::vector<std::string> files;
  for (const auto& folder : std::filesystem::directory_iterator(dir + "/kv"))
    for (const auto& f : std::filesystem::directory_iterator(folder.path())) files.push_back(f.path().filename());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"model.layers.0.self_attn.attn.tp0.safetensors",
                                             "model.layers.0.self_attn.attn.tp1.safetensors",
                                             "model.layers.1.self_attn.attn.tp0.safetensors",
                                             "model.layers.1.self_attn.attn.tp1.safetensors", "rank0.complete",
                                             "rank1.complete"}));
  const auto [consumed, consumed_cached] = run(with_role("kv_consumer"), "consume");
  EXPECT_EQ(consumed, produced);
  EXPECT_EQ(consumed_cached, 12);
  std::filesystem::remove_all(dir);
}

// A free TCP port on 127.0.0.1 (bound, read, released).
int FreePort() {
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::router);
  s.set(zmq::sockopt::linger, 0);
  s.bind("tcp://127.0.0.1:*");
  const std::string endpoint = s.get(zmq::sockopt::last_endpoint);
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// --kv-events-config travels in the handshake's EngineConfig: the engine
// process's PUB connects to a subscriber that binds (no wildcard in the
// endpoint), its replay ROUTER binds, and the two BlockStored events of one
// request carry the tokens the engine computed, chained by their hashes.
TEST(EngineProcess, PublishesKVEventsWithReplay) {
  const std::string dir = TinyModelDir("engine_process_kv_events");
  ASSERT_FALSE(dir.empty());
  zmq::context_t sub_ctx;
  zmq::socket_t sub(sub_ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::linger, 0);
  sub.set(zmq::sockopt::subscribe, "kv");
  sub.bind("tcp://127.0.0.1:*");
  const std::string endpoint = sub.get(zmq::sockopt::last_endpoint);
  const std::string replay_endpoint = "tcp://127.0.0.1:" + std::to_string(FreePort());
  proto::EngineConfig config = TinyConfig(dir);
  ASSERT_TRUE(ParseKVEventsConfig(R"({"enable_kv_cache_events": true, "endpoint": ")" + endpoint +
                                      R"(", "replay_endpoint": ")" + replay_endpoint + R"(", "topic": "kv"})",
                                  config.mutable_kv_events())
                  .ok());
  EngineUnderTest engine(config);
  ASSERT_TRUE(engine.ready);

  // 5 prompt + 40 output tokens fill two 16-token blocks: two batches.
  std::vector<int32_t> sequence = Greedy("", 1).prompt_token_ids;
  for (int32_t t : engine.Generate("kv", 40)) sequence.push_back(t);
  ASSERT_EQ(sequence.size(), 45u);
  // The stream may have lost the first batches (a PUB drops what it sends
  // before the subscription reaches it); replay has them all.
  engine_core::kv_events_testing::KVEventSubscriber replay(endpoint, replay_endpoint, "kv");
  std::vector<engine_core::kv_events_testing::SeqPayload> batches;
  for (int attempt = 0; attempt < 50 && batches.size() < 2; ++attempt) {
    if (attempt > 0) (void)replay.Receive(100ms);  // a batch still on its way: wait for the stream
    batches = replay.Replay(0);
  }
  ASSERT_EQ(batches.size(), 2u);
  std::vector<proto::BlockStored> stored;
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i].seq, static_cast<int64_t>(i));
    auto batch = proto::DecodeKVEventBatch(batches[i].payload);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_EQ(batch->data_parallel_rank, std::optional<int32_t>(0));
    ASSERT_EQ(batch->events.size(), 1u);
    stored.push_back(std::get<proto::BlockStored>(batch->events[0]));
  }
  EXPECT_FALSE(stored[0].parent_block_hash.has_value());
  EXPECT_EQ(stored[0].token_ids, std::vector<int32_t>(sequence.begin(), sequence.begin() + 16));
  ASSERT_EQ(stored[0].block_hashes.size(), 1u);
  EXPECT_EQ(stored[1].parent_block_hash, std::optional<uint64_t>(stored[0].block_hashes[0]));
  EXPECT_EQ(stored[1].token_ids, std::vector<int32_t>(sequence.begin() + 16, sequence.begin() + 32));
  EXPECT_EQ(stored[1].block_size, 16);
  EXPECT_EQ(replay.malformed, 0);
  std::filesystem::remove_all(dir);
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
}  // namespace llmserve::deploy
