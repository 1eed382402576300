#include "worker/int8_export.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/cpu/embedding.h"
#include "worker/int8_weights.h"
#include "worker/safetensors.h"
#include "worker/safetensors_writer.h"

namespace llmserve::worker {

namespace fs = std::filesystem;
using kernels::cpu::WeightDType;

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const char* SafetensorsDType(WeightDType t) {
  switch (t) {
    case WeightDType::kF32: return "F32";
    case WeightDType::kBF16: return "BF16";
    case WeightDType::kF16: return "F16";
    case WeightDType::kI8: return "I8";
  }
  return "F32";
}

nlohmann::json Int8Args(const char* strategy, bool dynamic) {
  return {{"num_bits", 8},         {"type", "int"},       {"symmetric", true},
          {"strategy", strategy},  {"dynamic", dynamic},  {"group_size", nullptr},
          {"actorder", nullptr},   {"block_structure", nullptr},
          {"observer", dynamic ? nlohmann::json(nullptr) : nlohmann::json("minmax")},
          {"observer_kwargs", nlohmann::json::object()}};
}

nlohmann::json W8A8QuantizationConfig() {
  nlohmann::json group = {{"targets", {"Linear"}},
                          {"weights", Int8Args("channel", false)},
                          {"input_activations", Int8Args("token", true)},
                          {"output_activations", nullptr}};
  return {{"quant_method", "compressed-tensors"},
          {"format", "int-quantized"},
          {"quantization_status", "compressed"},
          {"config_groups", {{"group_0", group}}},
          {"ignore", {"lm_head", "re:.*mlp.gate$"}},
          {"kv_cache_scheme", nullptr},
          {"global_compression_ratio", nullptr},
          {"sparsity_config", nlohmann::json::object()}};
}

}  // namespace

bool IsInt8ExportedWeight(const std::string& name, size_t dims) {
  return dims == 2 && name.rfind("model.layers.", 0) == 0 && EndsWith(name, ".weight") &&
         !EndsWith(name, ".mlp.gate.weight") && !EndsWith(name, ".block_sparse_moe.gate.weight");
}

Status ExportCompressedTensorsInt8(const std::string& hf_dir, const std::string& out_dir) {
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::Open(hf_dir));
  nlohmann::json config;
  {
    std::ifstream in(fs::path(hf_dir) / "config.json");
    config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) return Status::InvalidArgument(hf_dir + "/config.json is not a JSON object");
  }
  if (config.contains("quantization_config"))
    return Status::InvalidArgument(hf_dir + ": the model is quantized already");
  std::vector<TensorToWrite> tensors;
  for (const std::string& name : ckpt->TensorNames()) {
    const TensorView t = *ckpt->Find(name);
    if (!IsInt8ExportedWeight(name, t.shape.size())) {
      const size_t bytes = t.num_elements() * t.element_size();
      tensors.push_back({name, t.shape, SafetensorsDType(t.dtype),
                         [t, bytes](uint8_t* out) { std::memcpy(out, t.data, bytes); }});
      continue;
    }
    const size_t rows = t.shape[0], cols = t.shape[1];
    // Both tensors of a weight are filled from one quantization.
    auto q = std::make_shared<std::vector<int8_t>>(rows * cols);
    auto scales = std::make_shared<std::vector<float>>(rows);
    std::vector<float> f(rows * cols);
    kernels::cpu::ConvertToF32(t.data, t.dtype, rows * cols, f.data());
    QuantizeRowsInt8(f.data(), rows, cols, q->data(), scales->data());
    tensors.push_back({name, {rows, cols}, "I8", [q](uint8_t* out) { std::memcpy(out, q->data(), q->size()); }});
    tensors.push_back({name + "_scale", {rows, 1}, "F32",
                       [scales](uint8_t* out) { std::memcpy(out, scales->data(), scales->size() * 4); }});
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::Internal(out_dir + ": " + ec.message());
  LLMSERVE_RETURN_IF_ERROR(WriteSafetensors(out_dir, tensors, 1));
  config["quantization_config"] = W8A8QuantizationConfig();
  std::ofstream(fs::path(out_dir) / "config.json") << config.dump(2) << "\n";
  for (const auto& entry : fs::directory_iterator(hf_dir)) {
    const std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || file == "config.json" || EndsWith(file, ".safetensors") ||
        EndsWith(file, ".safetensors.index.json"))
      continue;
    fs::copy_file(entry.path(), fs::path(out_dir) / file, fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::Internal((fs::path(out_dir) / file).string() + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace llmserve::worker
