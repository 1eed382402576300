#pragma once
// Writes safetensors files (one file, or shards plus
// model.safetensors.index.json), tensor data streamed from callbacks.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace llmserve::worker {

// One tensor to write: its name, shape, safetensors dtype ("BF16", "F16",
// "F32", "I8", "I32") and a function that fills its bytes (num_elements × element size).
struct TensorToWrite {
  std::string name;
  std::vector<size_t> shape;
  std::string dtype;
  std::function<void(uint8_t* out)> fill;
  size_t num_bytes() const;
};

// Writes `tensors` into DIR as model.safetensors (num_shards 1) or as
// model-0000i-of-0000N.safetensors with an index (num_shards > 1; tensors are
// split in order by size).
Status WriteSafetensors(const std::string& dir, const std::vector<TensorToWrite>& tensors, size_t num_shards);
// Writes `tensors` as the one file `path` (e.g. adapter_model.safetensors).
Status WriteSafetensorsFile(const std::string& path, const std::vector<TensorToWrite>& tensors);

}  // namespace llmserve::worker
