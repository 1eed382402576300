#include "deploy/serve_command.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"

DEFINE_int32(data_parallel_size, 1, "Number of data-parallel engine ranks in the deployment.");
DEFINE_int32(api_server_count, 1, "Number of frontend (API server) processes.");
DEFINE_bool(headless, false, "Run only engines and workers on this node; no frontend.");

namespace llmserve::deploy {

int RunServeCommand(int argc, char** argv) {
  common::InitProcess(&argc, &argv,
      "llmserve serve [MODEL_DIR] [--flags]\n"
      "Serves MODEL_DIR (a Hugging Face model directory) over an OpenAI-compatible API.");
  if (FLAGS_data_parallel_size < 1) {
    LOG(ERROR) << "--data-parallel-size must be at least 1";
    return 2;
  }
  LOG(ERROR) << "llmserve serve: serving is not built yet in this version (the engine, worker "
                "and HTTP frontend land with the serving work)";
  return 1;
}

}  // namespace llmserve::deploy
