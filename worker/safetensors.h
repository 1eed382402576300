#pragma once
// Reading Hugging Face safetensors checkpoints, memory-mapped: one
// model.safetensors, or shards listed by model.safetensors.index.json.
// Tensor data is never copied here; views point into the mapping.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/linear.h"
#include "base/status_or.h"
#include "common/mapped_file.h"

namespace llmserve::worker {

// One tensor inside a mapped file.
struct TensorView {
  std::string name;
  std::string file;                  // file name, for error messages
  kernels::cpu::WeightDType dtype = kernels::cpu::WeightDType::kF32;
  std::vector<size_t> shape;
  const void* data = nullptr;        // first element, in the mapping
  size_t num_elements() const;
  size_t element_size() const {
    using kernels::cpu::WeightDType;
    return dtype == WeightDType::kF32 || dtype == WeightDType::kI32                    ? 4
           : dtype == WeightDType::kI8 || dtype == WeightDType::kF8E4M3 ? 1
                                                                        : 2;
  }
  // Human-readable shape, e.g. "[64, 128]".
  std::string ShapeString() const;
};

// One mapped .safetensors file and its header.
class SafetensorsFile {
 public:
  // Maps `path` and validates the header (dtype, shape × dtype = byte range,
  // ranges inside the file). Unsupported dtypes are an error naming the tensor.
  static StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);

  // The tensor called `name`, or nullptr.
  const TensorView* Find(const std::string& name) const;
  // Every tensor, by name.
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::string& path() const { return file_->path(); }
  // The whole file as mapped (the tensors' data points into it).
  const common::MappedFile& mapped() const { return *file_; }

 private:
  std::unique_ptr<common::MappedFile> file_;
  std::map<std::string, TensorView> tensors_;
};

// All safetensors files of a model directory.
class Checkpoint {
 public:
  // Opens DIR/model.safetensors, or the shards named by
  // DIR/model.safetensors.index.json.
  static StatusOr<std::unique_ptr<Checkpoint>> Open(const std::string& dir);

  // The tensor `name` with exactly `shape`, or an error naming the file and the tensor.
  StatusOr<TensorView> Get(const std::string& name, const std::vector<size_t>& shape) const;
  // True when the checkpoint has a tensor `name`.
  bool Has(const std::string& name) const;
  // The tensor `name` whatever its shape, or nullptr.
  const TensorView* Find(const std::string& name) const;
  // Every tensor's name, sorted.
  std::vector<std::string> TensorNames() const;
  // Number of files mapped.
  size_t num_files() const { return files_.size(); }
  // Bytes of all mapped files.
  size_t total_bytes() const { return total_bytes_; }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> by_name_;
  size_t total_bytes_ = 0;
};

}  // namespace llmserve::worker
