// llmserve-frontend: the OpenAI-compatible HTTP server. Started by
// `llmserve serve` (one per --api-server-count); tokenizes and renders chat
// templates, routes requests to the engine cores over ZeroMQ, and streams
// detokenized text back (see frontend/frontend_server.h).
#include <glog/logging.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/flags.h"
#include "common/ipc/cluster_key.h"
#include "common/process/termination_signals.h"
#include "frontend/frontend_flags.h"
#include "frontend/frontend_server.h"

int main(int argc, char** argv) {
  using namespace llmserve;
  common::InitProcess(&argc, &argv,
      "llmserve-frontend: OpenAI-compatible HTTP server in front of the engine cores.\n"
      "Started by `llmserve serve`, which passes these flags.\n"
      "usage: llmserve-frontend --model DIR [--host H] [--port P] [--api-key KEY] ...");
  auto flags = frontend::FrontendFlagsFromCommandLine();
  if (!flags.ok()) {
    LOG(ERROR) << flags.status().message();
    return 2;
  }
  const sigset_t set = common::BlockTerminationSignals();  // main() waits for them at the end
  zmq::context_t zmq_context;
  auto authenticator = common::ipc::SecureProcess(flags->cluster_key_dir, zmq_context);
  if (!authenticator.ok()) {
    LOG(ERROR) << authenticator.status().message();
    return 2;
  }
  // API servers sharing a port (SO_REUSEPORT) listen once their engines are
  // ready, as vLLM's do: one still starting would take a share of the
  // connections and answer them 503 while a sibling's /health says ok.
  const bool shared_port = flags->server.api_server_count > 1;
  auto server = frontend::FrontendServer::Start(zmq_context, flags->server, /*serve_http=*/!shared_port);
  if (!server.ok()) {
    LOG(ERROR) << server.status().message();
    return 1;
  }
  const int index = flags->server.client_index;
  int sig = 0;
  if (shared_port) {
    const timespec no_wait{0, 0};
    while (!(*server)->engine().WaitUntilReady(std::chrono::milliseconds(200)).ok()) {
      sig = std::max(sigtimedwait(&set, nullptr, &no_wait), 0);  // -1: none pending
      if (sig != 0) break;
    }
    if (sig == 0) {
      if (Status s = (*server)->ServeHttp(); !s.ok()) {
        LOG(ERROR) << s.message();
        return 1;
      }
    }
  }
  if (sig == 0) {
    LOG(INFO) << "frontend " << index << " listening on " << flags->server.host << ":" << (*server)->port();
    sigwait(&set, &sig);
  }
  LOG(INFO) << "frontend " << index << ": " << strsignal(sig) << "; finishing in-flight requests";
  (*server)->Stop();
  return 0;
}
