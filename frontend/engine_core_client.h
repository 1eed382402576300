#pragma once
// EngineCoreClient: one frontend's connection to every engine core (vLLM's
// MPClient / DPLBAsyncMPClient). It binds a ROUTER for requests and a PULL for
// outputs; engines connect to both. One I/O thread owns the sockets: other
// threads hand it commands through a queue and an eventfd wake-up, and it
// delivers each request's outputs to that request's sink.
//
// Routing (DpLoadBalancer): a pinned rank (X-data-parallel-rank) wins;
// otherwise the balancer's token-aware score over the DP coordinator's load
// snapshots (the I/O thread XSUBscribes to the coordinator when one is given)
// plus this frontend's optimistic increments, or over its own accounting when
// there is no coordinator. Requests carry the DP wave the coordinator last
// published; the first request while the engines are idle also tells the
// coordinator (FirstRequest) so it can start the wave on every rank.
//
// Elastic scaling: a coordinator snapshot may carry the membership (the ranks
// to route to). Requests go only to ranks that are ready (ReadyResponse) and
// active; a rank that appears later (scale-up) is added when it is named or
// sends its ReadyResponse, a removed one keeps its in-flight requests but gets
// no new ones. A request an engine refuses because it is shutting down
// (scale-down or SIGTERM) and that has not streamed yet moves to another rank.
//
// Implemented in engine_core_client.cc (the API and state queries),
// engine_core_client_io.cc (the I/O thread) and engine_core_client_ranks.cc
// (membership, elastic scaling, dead ranks and rerouting).

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

#include "frontend/dp_load_balancer.h"
#include "frontend/engine_client.h"
#include "proto/coordinator.pb.h"
#include "proto/handshake.pb.h"
#include "proto/messages.h"
#include "base/status_or.h"

namespace llmserve::frontend {

// What the client knows about one engine rank.
struct EngineState {
  uint32_t rank = 0;
  bool ready = false;          // sent its ReadyResponse
  bool dead = false;           // sent ENGINE_CORE_DEAD
  bool active = true;          // in the membership (routed to)
  bool draining = false;       // refused a request because it is shutting down
  bool joined = false;         // added after startup (elastic scale-up)
  uint32_t max_model_len = 0;  // from its ReadyResponse
  uint64_t num_kv_blocks = 0;
  proto::CacheConfig cache;    // the cache configuration it runs with
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
    std::string coordinator_address = "";  // DP coordinator's frontend XPUB ("" = none)
    int32_t client_count = 1;              // API servers sharing the engines
    DpLoadBalancerConfig lb = {};          // routing policy (client index/count are filled in)
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
  // Every active engine the client started with sent its ReadyResponse.
  bool IsReady() const override;
  // Every active engine is dead (reported its death or could not be reached).
  bool IsDead() const override;
  // The coordinator's last membership said a scale is in progress.
  bool scaling() const;

  // Stops the I/O thread; pending sinks get an Unavailable error.
  void Stop();

  // Receives every SchedulerStats an engine sends this client, on the I/O
  // thread, before that message's outputs are delivered; each report is seen
  // once. Must be quick and must not call the client.
  using StatsListener = std::function<void(uint32_t engine_rank, const proto::SchedulerStats& stats)>;
  // Installs (or, with nullptr, removes) the listener; reports before the call are not replayed.
  void SetStatsListener(StatsListener listener);
  // Called on the I/O thread (with the client's lock held) each time a rank
  // sends its ReadyResponse, at start and when it comes back or joins, with
  // that message. Must be quick and must not call the client.
  using ReadyListener = std::function<void(uint32_t engine_rank, const proto::ReadyResponse& ready)>;
  void SetReadyListener(ReadyListener listener);
  // The load the balancer sees for each routed rank now (rank order).
  std::vector<RankLoad> EffectiveLoads() const;
  // Coordinator snapshots received so far.
  uint64_t snapshots_received() const;

 private:
  struct Command {
    enum Kind { kAdd, kAbort, kUtility, kCoordinatorNotice } kind;
    uint32_t rank = 0;
    proto::RequestType type = proto::RequestType::kAdd;
    std::string body;
  };
  struct Pending {
    uint32_t rank;
    std::shared_ptr<OutputSink> sink;
    int64_t prompt_tokens = 0;
    bool started = false;  // produced a token
    bool pinned = false;   // X-data-parallel-rank: never moved to another rank
    std::string body;      // the encoded request, to send it again elsewhere
    std::vector<int32_t> routing_prefix;  // leading prompt tokens prefix routing hashes
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
  // An ENGINE_CORE_DEAD frame; `extra` holds the frames after it (the rank's identity).
  void HandleDeadFrame(const std::vector<zmq::message_t>& extra);
  // Hands one message's outputs to their sinks, its stats to the listener and
  // its utility result to the waiting caller; moves refused requests elsewhere.
  void Deliver(const proto::EngineCoreOutputs& outs);
  void HandleCoordinator();  // LoadSnapshots on the XSUB
  // Applies a coordinator snapshot (needs mu_); collects the ready ranks it
  // reports without a live process.
  void ApplySnapshot(const proto::LoadSnapshot& snapshot, std::vector<uint32_t>* reported_down);
  size_t IndexOf(uint32_t rank) const;  // rank -> balancer index
  void MarkDead(uint32_t rank, const std::string& why);
  // Adds `rank` to the known engines and the balancer (needs mu_).
  EngineState& AddRank(uint32_t rank);
  // Applies a snapshot's membership (needs mu_).
  void ApplyMembership(const proto::Membership& membership);
  // Moves an unstarted, unpinned pending request off its rank; false when no
  // other rank can take it (needs mu_; queues the send).
  bool Reroute(Pending& pending);
  // Sends a no-op utility call to every rank with requests in flight, so a
  // rank whose process vanished (no ENGINE_CORE_DEAD) fails the send and is
  // marked dead within one probe interval. I/O thread only.
  void ProbeBusyRanks();
  // Asks every active rank without a ReadyResponse to send it (again): a
  // restarted frontend learns of engines that announced themselves to its
  // predecessor. A rank not connected yet is skipped. I/O thread only.
  void AskUnreadyRanksToAnnounce();
  // Sends the no-op utility call to `ranks`; a failed send marks the rank dead.
  // I/O thread only.
  void ProbeRanks(const std::vector<uint32_t>& ranks);
  // Sends utility `method` to `ranks` without awaiting answers; returns the
  // ranks it could not be sent to (not connected). I/O thread only.
  std::vector<uint32_t> SendUtilityNotice(const std::vector<uint32_t>& ranks, const char* method);
  std::optional<uint32_t> PickEngine(const proto::EngineCoreRequest& request);  // needs mu_

  Options options_;
  zmq::socket_t input_;   // ROUTER
  zmq::socket_t output_;  // PULL
  std::optional<zmq::socket_t> coordinator_;  // XSUB, when a coordinator exists
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
  ReadyListener ready_listener_;                         // guarded by mu_
  std::vector<uint32_t> rank_order_;  // routed ranks, ascending (balancer indices)
  DpLoadBalancer balancer_;
  uint64_t current_wave_ = 0;      // from the coordinator
  bool engines_running_ = false;   // from the coordinator, or set by our first request
  uint64_t snapshots_ = 0;
  uint64_t membership_epoch_ = 0;  // 0: no membership yet (the starting ranks are active, no others)
  std::vector<uint32_t> active_ranks_;  // from the latest membership
  bool scaling_ = false;
};

}  // namespace llmserve::frontend
