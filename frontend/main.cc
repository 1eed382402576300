// llmserve-frontend: the OpenAI-compatible HTTP server.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"

DEFINE_string(host, "0.0.0.0", "Address the HTTP server listens on.");
DEFINE_int32(port, 8000, "Port the HTTP server listens on.");
DEFINE_string(api_key, "", "If set, /v1/* requests must send 'Authorization: Bearer KEY'.");
DEFINE_string(served_model_name, "", "Model name clients use; defaults to the model directory.");
DEFINE_int32(client_index, 0, "Index of this frontend among the API servers (--api-server-count).");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-frontend: OpenAI-compatible HTTP server in front of the engine cores.\n"
      "usage: llmserve-frontend [--host H] [--port P] [--api-key KEY] ...");
  if (FLAGS_port <= 0 || FLAGS_port > 65535) {
    LOG(ERROR) << "--port must be in 1..65535, got " << FLAGS_port;
    return 2;
  }
  LOG(ERROR) << "llmserve-frontend cannot serve in this build: the HTTP server is not built yet";
  return 1;
}
