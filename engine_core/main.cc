// llmserve-engine: the engine core of one data-parallel rank.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"

DEFINE_string(model, "", "Hugging Face model directory to serve.");
DEFINE_int32(data_parallel_rank, 0, "Global data-parallel rank of this engine.");
DEFINE_string(handshake_address, "",
              "ZMQ address of the frontend's handshake ROUTER, e.g. tcp://10.0.0.1:29550.");
DEFINE_int32(tensor_parallel_size, 1, "Number of worker processes (tensor-parallel ranks).");
DEFINE_int32(max_num_seqs, 256, "Maximum number of requests in one scheduler step.");
DEFINE_int32(max_num_batched_tokens, 2048, "Token budget of one scheduler step.");
DEFINE_int32(block_size, 16, "Tokens per KV-cache block.");
DEFINE_bool(enable_prefix_caching, true, "Reuse KV blocks of identical prompt prefixes.");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-engine: scheduler and KV cache manager of one data-parallel rank; spawns its\n"
      "workers and talks to frontends over ZeroMQ.\n"
      "usage: llmserve-engine --model DIR --handshake-address ADDR [--data-parallel-rank R]");
  if (FLAGS_handshake_address.empty()) {
    LOG(ERROR) << "--handshake-address is required";
    return 2;
  }
  LOG(ERROR) << "llmserve-engine cannot serve in this build: the engine loop is not built yet";
  return 1;
}
