#include "engine_core/engine_process.h"

#include <glog/logging.h>

#include <functional>

#include "engine_core/engine_factory.h"
#include "engine_core/startup_handshake.h"

namespace llmserve::engine_core {

void EngineProcess::RequestShutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutdown_requested_ = true;
  if (proc_) proc_->RequestShutdown();
}

Status EngineProcess::Run(zmq::context_t& context) {
  const uint32_t rank = options_.rank;
  auto fail = [rank](Status s) {
    LOG(ERROR) << "engine " << rank << ": " << s.message();
    return s;
  };
  auto handshake = StartupHandshake::Connect(context, options_.handshake_address, rank, options_.local,
                                             options_.headless, options_.ready_timeout);
  if (!handshake.ok()) return fail(handshake.status());
  const proto::EngineConfig& config = (*handshake)->reply().config();
  LOG(INFO) << "engine " << rank << ": loading " << config.model().model_dir();
  auto built = BuildEngineCore(config, static_cast<int32_t>(rank));
  if (!built.ok()) return fail(built.status());
  EngineProcOptions proc_options;
  proc_options.rank = rank;
  proc_options.local = options_.local;
  proc_options.headless = options_.headless;
  proc_options.shutdown_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(config.shutdown_timeout_s() * 1000));
  proc_options.cache = config.cache();
  proc_options.cache.set_block_size(built->block_size);  // 0 in the config means the default
  EngineCoreProc proc(context, proc_options, (*handshake)->reply().addresses(), std::move(built->core),
                      built->max_model_len);
  if (Status s = proc.Start(); !s.ok()) return fail(s);
  {
    std::lock_guard<std::mutex> lock(mu_);
    proc_ = &proc;
    if (shutdown_requested_) proc.RequestShutdown();
  }
  (void)proc.WaitUntilAnnounced();  // READY only after the ReadyResponses went out
  Status result = (*handshake)->SendReady(std::hash<std::string>()(config.SerializeAsString()));
  if (!result.ok()) result = fail(result);
  else result = proc.Run();  // logs its own failure
  std::lock_guard<std::mutex> lock(mu_);
  proc_ = nullptr;
  return result;
}

}  // namespace llmserve::engine_core
