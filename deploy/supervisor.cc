#include "deploy/supervisor.h"

#include <glog/logging.h>

#include <thread>

#include "deploy/exit_policy.h"

namespace llmserve::deploy {

namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

milliseconds Seconds(double s) { return milliseconds(static_cast<int64_t>(s * 1000)); }
}  // namespace

Supervisor::Supervisor(zmq::context_t& context, LaunchPlan plan, const std::atomic<bool>* stop)
    : context_(context),
      plan_(std::move(plan)),
      stop_(stop),
      grace_(Seconds(plan_.config().shutdown_timeout_s()) + milliseconds(5000)) {}

int Supervisor::Run() {
  int exit_code = 0;
  if (Status s = Spawn(); !s.ok()) {
    LOG(ERROR) << s.message();
    exit_code = 1;
  } else if (!WaitUntilReady()) {
    exit_code = 1;
  } else if (Status e = StartElasticScaling(); !e.ok()) {
    LOG(ERROR) << e.message();
    exit_code = 1;
  } else {
    exit_code = Supervise();
  }
  for (const auto& e : children_.TerminateAll(grace_)) LOG(INFO) << e.id.Name() << " " << e.exit.Describe();
  return exit_code;
}

Status Supervisor::Spawn() {
  const ServePlan& plan = plan_.plan();
  if (!plan.headless) {
    handshake_ = std::make_unique<HandshakeServer>(context_, plan_.HandshakeReply());
    LLMSERVE_RETURN_IF_ERROR(handshake_->Bind(plan.handshake_bind));
    for (int r = 0; r < plan.data_parallel_size; ++r)
      handshake_->Expect(static_cast<uint32_t>(r), plan_.IsLocal(static_cast<uint32_t>(r)));
  }
  for (const ChildId& id : plan_.Children())
    LLMSERVE_RETURN_IF_ERROR(children_.Spawn(id, plan_.Argv(id, plan.data_parallel_size)));
  return Status::Ok();
}

bool Supervisor::WaitUntilReady() {
  if (!handshake_) return true;  // a headless node's engines report to the head node
  const int size = plan_.plan().data_parallel_size;
  const double timeout_s = plan_.options().engine_ready_timeout_s;
  const auto deadline = Clock::now() + Seconds(timeout_s);
  auto next_progress = Clock::now() + std::chrono::seconds(10);
  while (handshake_->ReadyRanks().size() < static_cast<size_t>(size)) {
    if (stop_->load()) return true;
    if (auto exit = children_.WaitAny(milliseconds(0))) {
      LOG(ERROR) << exit->id.Name() << " " << exit->exit.Describe() << " during startup; stopping";
      return false;
    }
    if (Clock::now() >= deadline) {
      LOG(ERROR) << "engines not ready after " << timeout_s << " s: " << handshake_->MissingDescription();
      return false;
    }
    if (Clock::now() >= next_progress) {
      LOG(INFO) << "waiting for engines: " << handshake_->MissingDescription();
      next_progress += std::chrono::seconds(10);
    }
    handshake_->PollOnce(milliseconds(100));
  }
  if (!stop_->load())
    LOG(INFO) << "all " << size << " engine(s) ready; serving on http://" << plan_.options().host << ":"
              << plan_.options().port;
  return true;
}

Status Supervisor::StartElasticScaling() {
  const ServePlan& plan = plan_.plan();
  if (plan.run_coordinator) {
    coordinator_link_ = std::make_unique<CoordinatorLink>(context_);
    LLMSERVE_RETURN_IF_ERROR(coordinator_link_->Connect(plan.coordinator_frontend_address));
  }
  if (plan.control_address.empty()) return Status::Ok();
  control_ = std::make_unique<ControlSocket>(context_);
  LLMSERVE_RETURN_IF_ERROR(control_->Bind(plan.control_address));
  ElasticScalerContext ctx;
  ctx.children = &children_;
  ctx.handshake = handshake_.get();
  ctx.coordinator = coordinator_link_.get();
  ctx.spawn_local_engine = [this](uint32_t rank) {
    return children_.Spawn(ChildId::Engine(rank), plan_.Argv(ChildId::Engine(rank), data_parallel_size()));
  };
  ctx.tick = [this](milliseconds timeout) {
    handshake_->PollOnce(timeout);  // restarted ranks re-handshake meanwhile
    std::string from;
    while (auto busy = control_->Receive(milliseconds(0), &from))
      control_->Reply(from, MakeScaleResponse(409, "Another scale is in progress; retry when "
                                                   "/is_scaling_elastic_ep answers false.", 0));
    while (auto e = children_.WaitAny(milliseconds(0))) exits_.push_back(*e);
  };
  ctx.exits = &exits_;
  ctx.should_stop = [this] {
    for (const auto& e : exits_)
      if (e.id.role != ChildRole::kEngine) return true;  // a frontend or the coordinator died
    return stop_->load();
  };
  ctx.engine_ready_timeout = Seconds(plan_.options().engine_ready_timeout_s);
  ctx.engine_stop_grace = grace_;
  scaler_ = std::make_unique<ElasticScaler>(std::move(ctx), static_cast<uint32_t>(plan.data_parallel_size));
  LOG(INFO) << "elastic scaling enabled: POST /scale_elastic_ep with the admin API key";
  return Status::Ok();
}

int Supervisor::Supervise() {
  while (!stop_->load() && !finished_) {
    Tick();
    while (!exits_.empty()) {
      const SupervisedExit exit = exits_.front();
      exits_.pop_front();
      if (HandleExit(exit)) continue;
      // Give frontends a moment to answer 503 to clients before stopping.
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return 1;
    }
  }
  return 0;
}

void Supervisor::Tick() {
  if (handshake_) {
    handshake_->PollOnce(milliseconds(control_ ? 50 : 100));  // restarted ranks re-handshake
  } else if (auto e = children_.WaitAny(milliseconds(100))) {
    exits_.push_back(*e);
  }
  if (coordinator_link_) coordinator_link_->Poll(milliseconds(0));
  if (control_) {
    std::string from;
    if (auto request = control_->Receive(milliseconds(50), &from)) control_->Reply(from, scaler_->Scale(*request));
  }
  while (auto e = children_.WaitAny(milliseconds(0))) exits_.push_back(*e);
}

bool Supervisor::HandleExit(const SupervisedExit& exit) {
  const std::string name = exit.id.Name();
  ExitContext context;
  context.expected_by_scaler = scaler_ && scaler_->ExpectedExit(exit.id);
  context.headless = plan_.plan().headless;
  context.restart_policy = plan_.options().restart_policy;
  const ExitAction action = DecideExit(exit.id, exit.exit, context);
  if (action == ExitAction::kScaledDown) {
    LOG(INFO) << name << " (removed by a scale-down) " << exit.exit.Describe();
    return true;
  }
  if (action == ExitAction::kLeft) {
    LOG(INFO) << name << " left the deployment (scaled down)";
    if (children_.running() == 0 && !finished_) {
      LOG(INFO) << "every engine on this node left; exiting";
      finished_ = true;
    }
    return true;
  }
  LOG(ERROR) << name << " " << exit.exit.Describe();
  if (exit.id.role == ChildRole::kEngine && coordinator_link_)
    coordinator_link_->SendRankDown(exit.id.index);  // it must not hold DP waves
  return action == ExitAction::kRestart && Restart(exit.id);
}

bool Supervisor::Restart(const ChildId& id) {
  if (id.role == ChildRole::kEngine) {
    LOG(INFO) << "restarting engine rank " << id.index;
    if (handshake_) handshake_->Expect(id.index, true);
  } else {
    // Engines stay connected; they announce themselves to the new frontend
    // when it asks, and it aborts what its predecessor left running.
    LOG(INFO) << "restarting " << id.Name();
  }
  Status s = children_.Spawn(id, plan_.Argv(id, data_parallel_size()));
  if (!s.ok()) LOG(ERROR) << s.message();
  return s.ok();
}

int Supervisor::data_parallel_size() const {
  return scaler_ ? static_cast<int>(scaler_->size()) : plan_.plan().data_parallel_size;
}

}  // namespace llmserve::deploy
