#include "worker/safetensors.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace llmserve::worker {

using kernels::cpu::WeightDType;

size_t TensorView::num_elements() const {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

std::string TensorView::ShapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {
std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// `v` as a list of sizes (a shape, data_offsets); false unless it is an array
// of non-negative integers (a float such as 1e30 has no size_t value, and
// converting it anyway is undefined behaviour).
bool ToSizes(const nlohmann::json& v, std::vector<size_t>* out) {
  if (!v.is_array()) return false;
  out->clear();
  for (const auto& x : v) {
    if (!x.is_number_unsigned()) return false;
    out->push_back(x.get<size_t>());
  }
  return true;
}
}  // namespace

StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  LLMSERVE_ASSIGN_OR_RETURN(auto mapped, common::MappedFile::Open(path));
  const std::string fname = BaseName(path);
  if (mapped->size() < 8) return Status::DataLoss(fname + ": too short for a safetensors header");
  uint64_t header_len;
  std::memcpy(&header_len, mapped->data(), 8);
  if (header_len > mapped->size() - 8) {
    return Status::DataLoss(fname + ": header length " + std::to_string(header_len) +
                            " exceeds the file size");
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(mapped->data() + 8, mapped->data() + 8 + header_len);
  } catch (const std::exception& e) {
    return Status::DataLoss(fname + ": bad safetensors header JSON: " + e.what());
  }
  if (!header.is_object()) return Status::DataLoss(fname + ": safetensors header is not an object");
  auto file = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  const size_t data_start = 8 + header_len;
  const size_t data_size = mapped->size() - data_start;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& info = it.value();
    TensorView t;
    t.name = it.key();
    t.file = fname;
    try {
      const std::string dtype = info.at("dtype").get<std::string>();
      if (dtype == "BF16") {
        t.dtype = WeightDType::kBF16;
      } else if (dtype == "F16") {
        t.dtype = WeightDType::kF16;
      } else if (dtype == "F32") {
        t.dtype = WeightDType::kF32;
      } else if (dtype == "I8") {
        t.dtype = WeightDType::kI8;
      } else if (dtype == "I32") {
        t.dtype = WeightDType::kI32;
      } else if (dtype == "F8_E4M3") {
        t.dtype = WeightDType::kF8E4M3;
      } else {
        return Status::Unimplemented(fname + ": tensor " + t.name + " has dtype " + dtype +
                                     "; supported: BF16, F16, F32, and I8, I32, F8_E4M3 (quantized weights)");
      }
      std::vector<size_t> offsets;
      if (!ToSizes(info.at("shape"), &t.shape) || !ToSizes(info.at("data_offsets"), &offsets)) {
        return Status::DataLoss(fname + ": tensor " + t.name +
                                ": shape and data_offsets must be lists of non-negative integers");
      }
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size) {
        return Status::DataLoss(fname + ": tensor " + t.name + " has data_offsets outside the file");
      }
      // shape x dtype in bytes, refusing a product past 2^64 (which would
      // wrap to a small byte count and let a huge shape through).
      size_t bytes = t.element_size();
      for (size_t d : t.shape) {
        if (__builtin_mul_overflow(bytes, d, &bytes)) {
          return Status::DataLoss(fname + ": tensor " + t.name + " has shape " + t.ShapeString() +
                                  " too large for any file");
        }
      }
      if (offsets[1] - offsets[0] != bytes) {
        return Status::DataLoss(fname + ": tensor " + t.name + " byte range does not match shape " +
                                t.ShapeString() + " × " + dtype);
      }
      t.data = mapped->data() + data_start + offsets[0];
    } catch (const nlohmann::json::exception& e) {
      return Status::DataLoss(fname + ": tensor " + t.name + ": bad header entry: " + e.what());
    }
    file->tensors_.emplace(t.name, std::move(t));
  }
  file->file_ = std::move(mapped);
  return file;
}

const TensorView* SafetensorsFile::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(const std::string& dir) {
  namespace fs = std::filesystem;
  auto ckpt = std::unique_ptr<Checkpoint>(new Checkpoint());
  ckpt->dir_ = dir;
  std::vector<std::string> names;
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  const fs::path single = fs::path(dir) / "model.safetensors";
  if (fs::exists(index)) {
    std::ifstream in(index);
    nlohmann::json j;
    try {
      in >> j;
      std::set<std::string> unique;
      for (auto it = j.at("weight_map").begin(); it != j.at("weight_map").end(); ++it) {
        unique.insert(it.value().get<std::string>());
      }
      names.assign(unique.begin(), unique.end());
    } catch (const std::exception& e) {
      return Status::DataLoss(index.string() + ": bad index: " + e.what());
    }
  } else if (fs::exists(single)) {
    names.push_back("model.safetensors");
  } else {
    return Status::NotFound(dir + ": no model.safetensors or model.safetensors.index.json");
  }
  for (const auto& n : names) {
    if (n.find('/') != std::string::npos) return Status::InvalidArgument(dir + ": shard name " + n + " has a path");
    LLMSERVE_ASSIGN_OR_RETURN(auto f, SafetensorsFile::Open((fs::path(dir) / n).string()));
    for (const auto& [name, view] : f->tensors()) ckpt->by_name_[name] = f.get();
    ckpt->total_bytes_ += fs::file_size(fs::path(dir) / n);
    ckpt->files_.push_back(std::move(f));
  }
  return ckpt;
}

bool Checkpoint::Has(const std::string& name) const { return by_name_.count(name) > 0; }

const TensorView* Checkpoint::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second->Find(name);
}

std::vector<std::string> Checkpoint::TensorNames() const {
  std::vector<std::string> names;
  for (const auto& [name, file] : by_name_) names.push_back(name);
  return names;
}

StatusOr<TensorView> Checkpoint::Get(const std::string& name, const std::vector<size_t>& shape) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return Status::NotFound(dir_ + ": tensor " + name + " is missing from the checkpoint");
  }
  const TensorView* t = it->second->Find(name);
  if (t->shape != shape) {
    TensorView want;
    want.shape = shape;
    return Status::InvalidArgument(t->file + ": tensor " + name + " has shape " + t->ShapeString() +
                                   ", expected " + want.ShapeString());
  }
  return *t;
}

}  // namespace llmserve::worker
