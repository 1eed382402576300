#pragma once
// EngineCoreClient: one frontend's connection to every engine core (vLLM's
// MPClient / DPLBAsyncMPClient). It binds a ROUTER for requests and a PULL for
// outputs; engines connect to both. One I/O thread owns the sockets: other
// threads hand it commands through a queue and an eventfd wake-up, and it
// delivers each request's outputs to that request's sink.

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "frontend/engine_client.h"
#include "proto/handshake.pb.h"
#include "proto/messages.h"
#include "proto/status_or.h"

namespace llmserve::frontend {

// What the client knows about one engine rank.
struct EngineState {
  uint32_t rank = 0;
  bool ready = false;          // sent its ReadyResponse
  bool dead = false;           // sent ENGINE_CORE_DEAD
  uint32_t max_model_len = 0;  // from its ReadyResponse
  uint64_t num_kv_blocks = 0;
  int32_t in_flight = 0;       // this client's unfinished requests on it
  std::optional<proto::SchedulerStats> last_stats;
};

class EngineCoreClient final : public EngineClient {
 public:
  struct Options {
    int32_t client_index = 0;            // this frontend's index among API servers
    std::string input_bind = "tcp://127.0.0.1:*";   // ROUTER: requests to engines
    std::string output_bind = "tcp://127.0.0.1:*";  // PULL: outputs from engines
    std::vector<uint32_t> engine_ranks;  // ranks this client routes to
  };

  static StatusOr<std::unique_ptr<EngineCoreClient>> Start(zmq::context_t& context, Options options);
  ~EngineCoreClient() override;
  EngineCoreClient(const EngineCoreClient&) = delete;
  EngineCoreClient& operator=(const EngineCoreClient&) = delete;

  // The bound addresses engines connect to.
  const std::string& input_address() const { return input_address_; }
  const std::string& output_address() const { return output_address_; }

  // Sends `request` to an engine (its data_parallel_rank if set, else the
  // least-loaded ready one). Outputs go to `sink` until the request finishes.
  // Unavailable when no engine is ready or the pinned one is not.
  Status Submit(proto::EngineCoreRequest request, std::shared_ptr<OutputSink> sink) override;

  // Aborts requests (routed to the engines that own them); unknown ids are
  // ignored. Their sinks receive nothing more once this returns.
  void Abort(const std::vector<std::string>& request_ids) override;

  // Calls a utility method on every ready engine and returns their results in
  // rank order, or the first failure.
  StatusOr<std::vector<std::string>> CallUtility(const std::string& method, std::vector<std::string> args,
                                                 std::chrono::milliseconds timeout);

  // Waits until every expected engine sent its ReadyResponse, or `timeout`.
  Status WaitUntilReady(std::chrono::milliseconds timeout);

  // A snapshot of every engine's state.
  std::vector<EngineState> Engines() const;
  // min(max_model_len) over ready engines; 0 before any is ready.
  int32_t max_model_len() const override;
  // Every expected engine sent its ReadyResponse.
  bool IsReady() const override;
  // Some engine reported its death (or could not be reached).
  bool IsDead() const override;

  // Stops the I/O thread; pending sinks get an Unavailable error.
  void Stop();

  // Receives every SchedulerStats an engine sends this client, on the I/O
  // thread, before that message's outputs are delivered; each report is seen
  // once. Must be quick and must not call the client.
  using StatsListener = std::function<void(uint32_t engine_rank, const proto::SchedulerStats& stats)>;
  // Installs (or, with nullptr, removes) the listener; reports before the call are not replayed.
  void SetStatsListener(StatsListener listener);

 private:
  struct Command {
    enum Kind { kAdd, kAbort, kUtility } kind;
    uint32_t rank = 0;
    proto::RequestType type = proto::RequestType::kAdd;
    std::string body;
  };
  struct Pending {
    uint32_t rank;
    std::shared_ptr<OutputSink> sink;
  };
  struct UtilityWait {
    std::vector<std::optional<proto::UtilityOutput>> results;  // per engine asked
    std::vector<uint32_t> ranks;
    std::condition_variable cv;
  };

  EngineCoreClient(zmq::context_t& context, Options options);
  void Run();
  void Post(Command command);
  void HandleInput();   // ReadyResponses on the ROUTER
  void HandleOutput();  // EngineCoreOutputs on the PULL
  void MarkDead(uint32_t rank, const std::string& why);
  std::optional<uint32_t> PickEngine(const proto::EngineCoreRequest& request);  // needs mu_

  Options options_;
  zmq::socket_t input_;   // ROUTER
  zmq::socket_t output_;  // PULL
  std::string input_address_;
  std::string output_address_;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};

  mutable std::mutex mu_;
  std::condition_variable ready_cv_;
  std::deque<Command> commands_;
  std::map<uint32_t, EngineState> engines_;
  std::unordered_map<std::string, Pending> pending_;
  int64_t next_call_id_ = 1;
  std::unordered_map<int64_t, std::shared_ptr<UtilityWait>> utility_waits_;
  std::shared_ptr<const StatsListener> stats_listener_;  // guarded by mu_
};

}  // namespace llmserve::frontend
