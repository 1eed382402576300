#pragma once
// The engine's side of the startup handshake with the frontend that launched
// the deployment (vLLM V1 §1.3):
//   DEALER(identity = rank, 2 bytes LE) connects to the handshake ROUTER,
//   sends HELLO, receives addresses + configuration; after loading the model
//   and sending ReadyResponse on its input sockets the engine sends READY.

#include <zmq.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "proto/handshake.pb.h"
#include "base/status_or.h"

namespace llmserve::engine_core {

// The ZMQ identity of DP rank `rank`: 2 bytes, little-endian (as vLLM).
std::string EngineIdentity(uint32_t rank);

class StartupHandshake {
 public:
  // Connects to `address` and exchanges HELLO for the reply, waiting at most
  // `timeout` (a clear Unavailable error names the address on expiry).
  static StatusOr<std::unique_ptr<StartupHandshake>> Connect(
      zmq::context_t& context, const std::string& address, uint32_t rank, bool local,
      bool headless, std::chrono::milliseconds timeout);

  // Addresses and configuration the frontend sent.
  const proto::HandshakeReply& reply() const { return reply_; }

  // Tells the frontend this engine is ready (after its ReadyResponses went out).
  Status SendReady(uint64_t config_hash);

 private:
  StartupHandshake(zmq::socket_t socket, uint32_t rank, bool local, bool headless)
      : socket_(std::move(socket)), rank_(rank), local_(local), headless_(headless) {}

  zmq::socket_t socket_;
  uint32_t rank_;
  bool local_;
  bool headless_;
  proto::HandshakeReply reply_;
};

}  // namespace llmserve::engine_core
