#include "worker/quantized_export.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/float16.h"
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
    case WeightDType::kI32: return "I32";
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

// The quantized tensors standing for one float weight.
using QuantizeWeight = std::function<Status(const std::string& name, const std::vector<float>& w, size_t rows,
                                            size_t cols, std::vector<TensorToWrite>* out)>;

// The skeleton both exports share: `quantize` writes each quantized linear
// weight's tensors, `quantization_config` goes into config.json.
Status ExportQuantized(const std::string& hf_dir, const std::string& out_dir, const nlohmann::json& quantization_config,
                       const QuantizeWeight& quantize) {
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
    if (!IsQuantizedLinearWeight(name, t.shape.size())) {
      const size_t bytes = t.num_elements() * t.element_size();
      tensors.push_back({name, t.shape, SafetensorsDType(t.dtype),
                         [t, bytes](uint8_t* out) { std::memcpy(out, t.data, bytes); }});
      continue;
    }
    std::vector<float> f(t.num_elements());
    kernels::cpu::ConvertToF32(t.data, t.dtype, f.size(), f.data());
    LLMSERVE_RETURN_IF_ERROR(quantize(name, f, t.shape[0], t.shape[1], &tensors));
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::Internal(out_dir + ": " + ec.message());
  LLMSERVE_RETURN_IF_ERROR(WriteSafetensors(out_dir, tensors, 1));
  config["quantization_config"] = quantization_config;
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

// A tensor of `bytes` filled from `data`, which it keeps alive.
template <typename T>
TensorToWrite Owned(std::string name, std::vector<size_t> shape, const char* dtype, std::vector<T> data) {
  auto held = std::make_shared<std::vector<T>>(std::move(data));
  return {std::move(name), std::move(shape), dtype,
          [held](uint8_t* out) { std::memcpy(out, held->data(), held->size() * sizeof(T)); }};
}

// GPTQ's asymmetric 4-bit rounding of one group: its f16 scale and zero point.
std::pair<uint16_t, int> GptqGroupParams(const float* w, size_t n) {
  float lo = 0.f, hi = 0.f;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, w[i]);
    hi = std::max(hi, w[i]);
  }
  uint16_t half = base::FloatToHalf((hi - lo) / 15.f);
  if (base::HalfToFloat(half) == 0.f) half = base::FloatToHalf(1.f);
  const int zero = static_cast<int>(std::nearbyint(-lo / base::HalfToFloat(half)));
  return {half, std::clamp(zero, 1, 15)};  // 0 is not storable in the original format
}

}  // namespace

bool IsQuantizedLinearWeight(const std::string& name, size_t dims) {
  return dims == 2 && name.rfind("model.layers.", 0) == 0 && EndsWith(name, ".weight") &&
         !EndsWith(name, ".mlp.gate.weight") && !EndsWith(name, ".block_sparse_moe.gate.weight");
}

Status ExportCompressedTensorsInt8(const std::string& hf_dir, const std::string& out_dir) {
  return ExportQuantized(hf_dir, out_dir, W8A8QuantizationConfig(),
                         [](const std::string& name, const std::vector<float>& w, size_t rows, size_t cols,
                            std::vector<TensorToWrite>* out) {
                           std::vector<int8_t> q(rows * cols);
                           std::vector<float> scales(rows);
                           QuantizeRowsInt8(w.data(), rows, cols, q.data(), scales.data());
                           out->push_back(Owned(name, {rows, cols}, "I8", std::move(q)));
                           out->push_back(Owned(name + "_scale", {rows, 1}, "F32", std::move(scales)));
                           return Status::Ok();
                         });
}

Status ExportGptq(const std::string& hf_dir, size_t group_size, const std::string& out_dir) {
  const nlohmann::json config = {{"quant_method", "gptq"}, {"bits", 4},       {"group_size", group_size},
                                 {"desc_act", false},      {"sym", false},    {"checkpoint_format", "gptq"},
                                 {"damp_percent", 0.01},   {"static_groups", false}, {"true_sequential", true}};
  return ExportQuantized(hf_dir, out_dir, config,
                         [group_size](const std::string& name, const std::vector<float>& w, size_t rows, size_t cols,
                                      std::vector<TensorToWrite>* out) -> Status {
    if (group_size == 0 || group_size % 32 != 0 || cols % group_size != 0 || rows % 8 != 0) {
      return Status::InvalidArgument(name + ": " + std::to_string(rows) + " × " + std::to_string(cols) +
                                     " does not split into GPTQ groups of " + std::to_string(group_size));
    }
    const size_t groups = cols / group_size;
    std::vector<uint32_t> qweight(cols / 8 * rows, 0), qzeros(groups * rows / 8, 0);
    std::vector<uint16_t> scales(groups * rows);
    std::vector<int32_t> g_idx(cols);
    for (size_t i = 0; i < cols; ++i) g_idx[i] = static_cast<int32_t>(i / group_size);
    for (size_t o = 0; o < rows; ++o) {
      for (size_t g = 0; g < groups; ++g) {
        const float* group = w.data() + o * cols + g * group_size;
        const auto [half, zero] = GptqGroupParams(group, group_size);
        scales[g * rows + o] = half;
        qzeros[g * (rows / 8) + o / 8] |= static_cast<uint32_t>(zero - 1) << (4 * (o % 8));
        for (size_t c = 0; c < group_size; ++c) {
          const size_t i = g * group_size + c;
          const int q = std::clamp(static_cast<int>(std::nearbyint(group[c] / base::HalfToFloat(half))) + zero, 0, 15);
          qweight[(i / 8) * rows + o] |= static_cast<uint32_t>(q) << (4 * (i % 8));
        }
      }
    }
    const std::string prefix = name.substr(0, name.size() - std::string(".weight").size());
    out->push_back(Owned(prefix + ".qweight", {cols / 8, rows}, "I32", std::move(qweight)));
    out->push_back(Owned(prefix + ".qzeros", {groups, rows / 8}, "I32", std::move(qzeros)));
    out->push_back(Owned(prefix + ".scales", {groups, rows}, "F16", std::move(scales)));
    out->push_back(Owned(prefix + ".g_idx", {cols}, "I32", std::move(g_idx)));
    return Status::Ok();
  });
}

}  // namespace llmserve::worker
