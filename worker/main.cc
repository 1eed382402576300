// llmserve-worker: one per tensor-parallel rank; runs the model for its engine.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"

DEFINE_string(model, "", "Hugging Face model directory (config.json, *.safetensors, tokenizer.json).");
DEFINE_int32(rank, 0, "This worker's tensor-parallel rank, 0 .. world_size-1.");
DEFINE_int32(world_size, 1, "Number of tensor-parallel workers of this engine.");
DEFINE_string(device, "cpu", "Device to run on: cpu or cuda.");
DEFINE_string(engine_handle, "",
              "Address of the engine's shared-memory ring and ZMQ sockets to attach to "
              "(given by the engine that spawns this worker).");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-worker: runs one tensor-parallel shard of the model for an engine core.\n"
      "Started by llmserve-engine; not meant to be run by hand.\n"
      "usage: llmserve-worker --model DIR --rank R --world-size N --engine-handle ADDR");
  if (FLAGS_engine_handle.empty()) {
    LOG(ERROR) << "--engine-handle is required (the engine passes it when it spawns workers)";
    return 2;
  }
  LOG(ERROR) << "llmserve-worker cannot attach to an engine in this build: the model runner "
                "and shared-memory ring are not built yet";
  return 1;
}
