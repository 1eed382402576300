#pragma once
// LaunchPlan: the concrete children of one `llmserve serve` on this node and
// their command lines, from the node's ServePlan, the ServeOptions and the
// engine configuration; and what the head node's handshake tells engines.
// Pure: it starts nothing (the Supervisor does).

#include <string>
#include <vector>

#include "deploy/child_id.h"
#include "deploy/serve_options.h"
#include "deploy/serve_plan.h"
#include "proto/engine_config.pb.h"
#include "proto/handshake.pb.h"

namespace llmserve::deploy {

class LaunchPlan {
 public:
  LaunchPlan(ServeOptions options, ServePlan plan, proto::EngineConfig config)
      : options_(std::move(options)), plan_(std::move(plan)), config_(std::move(config)) {}

  // The children this node starts, in order: the coordinator (head node, DP > 1
  // or elastic), the frontends, then the local engines.
  std::vector<ChildId> Children() const;

  // The command line of child `id`. `data_parallel_size` is the number of
  // ranks in effect now: a frontend started after an elastic scale routes to
  // the current ranks (the coordinator's membership then rules).
  std::vector<std::string> Argv(const ChildId& id, int data_parallel_size) const;

  // The reply the head node's handshake sends every engine (its rank filled in
  // by the handshake server): the configuration and every frontend's and the
  // coordinator's addresses.
  proto::HandshakeReply HandshakeReply() const;

  // Whether DP rank `rank` runs on this node.
  bool IsLocal(uint32_t rank) const;

  const ServeOptions& options() const { return options_; }
  const ServePlan& plan() const { return plan_; }
  const proto::EngineConfig& config() const { return config_; }

 private:
  std::vector<std::string> EngineArgv(uint32_t rank) const;
  std::vector<std::string> FrontendArgv(uint32_t index, int data_parallel_size) const;
  std::vector<std::string> CoordinatorArgv() const;

  ServeOptions options_;
  ServePlan plan_;
  proto::EngineConfig config_;
};

}  // namespace llmserve::deploy
