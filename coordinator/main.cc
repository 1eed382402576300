// llmserve-coordinator: collects engine load stats and DP waves, publishes them to frontends.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"

DEFINE_int32(data_parallel_size, 1, "Number of data-parallel engines the coordinator tracks.");
DEFINE_string(frontend_publish_address, "", "Address to bind for publishing load stats to frontends.");
DEFINE_string(engine_publish_address, "", "Address to bind for START_DP_WAVE and READY to engines.");
DEFINE_string(engine_stats_address, "", "Address to bind for stats pushed by engines.");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-coordinator: data-parallel coordinator; publishes per-engine load to frontends\n"
      "and tracks DP waves. Started by the launcher on the head node.\n"
      "usage: llmserve-coordinator --data-parallel-size N --frontend-publish-address ADDR ...");
  if (FLAGS_data_parallel_size < 1) {
    LOG(ERROR) << "--data-parallel-size must be at least 1";
    return 2;
  }
  LOG(ERROR) << "llmserve-coordinator cannot run in this build: the coordinator loop is not built yet";
  return 1;
}
