#pragma once
// The head node's side of the engine startup handshake (vLLM V1 §1.3), run
// by the launcher (`llmserve serve`): binds the handshake ROUTER and walks
// every expected engine rank through NEW -(HELLO)-> CONNECTED -(READY)->
// READY, answering each HELLO with the frontends' addresses and the
// configuration for that rank. Runs on one thread.

#include <zmq.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/ipc/curve_auth.h"
#include "proto/handshake.pb.h"
#include "base/status.h"

namespace llmserve::deploy {

class HandshakeServer {
 public:
  // `reply_template` is sent to every engine with its rank filled in.
  HandshakeServer(zmq::context_t& context, proto::HandshakeReply reply_template);

  // Binds `address` (tcp://host:port, tcp://host:* or ipc://path).
  Status Bind(const std::string& address);
  // The bound address, with the port resolved.
  const std::string& address() const { return address_; }

  // Expects these ranks; `local` says whether each must report itself local.
  // A held HELLO for `rank` that fits is answered now.
  void Expect(uint32_t rank, bool local);

  // Stops expecting `rank` (removed by an elastic scale-down); a later HELLO
  // from it is held again.
  void Forget(uint32_t rank);

  // Whether a HELLO from unexpected rank `rank` (a remote engine) is held.
  bool HasHeldHello(uint32_t rank) const { return held_.count(rank) > 0; }

  // Serves handshakes until every expected rank is READY or `timeout` passes.
  // Every `progress_interval` it calls `progress` with a line naming the ranks
  // still missing and what they are waiting for (the head node logs it).
  Status WaitForEngines(std::chrono::milliseconds timeout,
                        std::chrono::milliseconds progress_interval,
                        const std::function<void(const std::string&)>& progress);

  // Handles whatever arrived within `timeout` (for engines joining later, e.g.
  // an elastic scale-up or a restarted rank). Returns the ranks that became READY.
  std::vector<uint32_t> PollOnce(std::chrono::milliseconds timeout);

  // Ranks that are READY now.
  std::vector<uint32_t> ReadyRanks() const;

  // A description of the ranks not READY yet ("rank 2: no HELLO; rank 3: loading").
  std::string MissingDescription() const;

 private:
  enum class State { kNew, kConnected, kReady };
  struct Engine {
    bool local = true;
    State state = State::kNew;
  };

  // A HELLO held for a rank not expected yet.
  struct HeldHello {
    std::string identity;
    proto::Hello hello;
  };

  // Handles one message; returns an error for protocol violations (logged by the caller).
  Status Handle(const std::string& identity, const zmq::message_t& body, std::vector<uint32_t>* became_ready);
  // Checks `hello` against what `engine` must be and sends the reply.
  Status Welcome(uint32_t rank, const std::string& identity, const proto::Hello& hello, Engine& engine);

  zmq::context_t& context_;
  zmq::socket_t socket_;
  // Logs peers refused by CURVE (with --cluster-key-dir); closed before socket_.
  std::unique_ptr<common::ipc::HandshakeFailureLog> refusals_;
  proto::HandshakeReply reply_template_;
  std::string address_;
  std::map<uint32_t, Engine> engines_;
  std::map<uint32_t, HeldHello> held_;  // HELLOs from ranks not expected (yet)
};

}  // namespace llmserve::deploy
