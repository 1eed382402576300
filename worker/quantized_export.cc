#include "worker/quantized_export.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/float16.h"
#include "base/float8.h"
#include "kernels/cpu/embedding.h"
#include "worker/int4_weights.h"
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
    case WeightDType::kF8E4M3: return "F8_E4M3";
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

// A weight rounded to nearest 4-bit quants per output row and group:
// asymmetric, scale = (max - min) / 15 over the group with 0 included, kept
// as f16, zero point in [min_zero, 15]; or (symmetric) scale = max |w| / 7
// and zero point 8.
struct Int4Rounded {
  size_t rows, cols, group;
  std::vector<uint8_t> q;        // rows × cols, 0..15
  std::vector<uint8_t> zeros;    // rows × groups
  std::vector<uint16_t> scales;  // rows × groups, f16 bits
};

Int4Rounded RoundInt4(const std::vector<float>& w, size_t rows, size_t cols, size_t group, int min_zero,
                      bool symmetric = false) {
  const size_t groups = cols / group;
  Int4Rounded r{rows, cols, group, std::vector<uint8_t>(rows * cols), std::vector<uint8_t>(rows * groups),
                std::vector<uint16_t>(rows * groups)};
  for (size_t o = 0; o < rows; ++o) {
    for (size_t g = 0; g < groups; ++g) {
      const float* x = w.data() + o * cols + g * group;
      float lo = 0.f, hi = 0.f;
      for (size_t i = 0; i < group; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
      }
      uint16_t half = base::FloatToHalf(symmetric ? std::max(-lo, hi) / 7.f : (hi - lo) / 15.f);
      if (base::HalfToFloat(half) == 0.f) half = base::FloatToHalf(1.f);
      const float scale = base::HalfToFloat(half);
      const int zero = symmetric ? 8 : std::clamp(static_cast<int>(std::nearbyint(-lo / scale)), min_zero, 15);
      r.scales[o * groups + g] = half;
      r.zeros[o * groups + g] = static_cast<uint8_t>(zero);
      for (size_t i = 0; i < group; ++i)
        r.q[o * cols + g * group + i] =
            static_cast<uint8_t>(std::clamp(static_cast<int>(std::nearbyint(x[i] / scale)) + zero, 0, 15));
    }
  }
  return r;
}

Status CheckInt4Shape(const std::string& name, size_t rows, size_t cols, size_t group) {
  if (group == 0 || group % 32 != 0 || cols % group != 0 || rows % 8 != 0) {
    return Status::InvalidArgument(name + ": " + std::to_string(rows) + " × " + std::to_string(cols) +
                                   " does not split into 4-bit groups of " + std::to_string(group));
  }
  return Status::Ok();
}

std::string Prefix(const std::string& weight_name) {
  return weight_name.substr(0, weight_name.size() - std::string(".weight").size());
}

// scales as [groups, out] f16, the layout both formats share.
std::vector<uint16_t> GroupMajorScales(const Int4Rounded& r) {
  const size_t groups = r.cols / r.group;
  std::vector<uint16_t> out(groups * r.rows);
  for (size_t o = 0; o < r.rows; ++o)
    for (size_t g = 0; g < groups; ++g) out[g * r.rows + o] = r.scales[o * groups + g];
  return out;
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

namespace {

// The order act-order GPTQ visits a weight's input columns. GPTQ takes them
// by falling diagonal of the Hessian of the layer's input, which weights fed
// the same input share (q/k/v, gate/up); here a shuffle seeded by that input.
std::vector<uint32_t> ActivationOrder(const std::string& name, size_t cols) {
  std::string input = name;
  for (const char* shared : {"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj"}) {
    if (const size_t at = input.find(shared); at != std::string::npos) {
      input = input.substr(0, at) + (shared[0] == 'q' || shared[0] == 'k' || shared[0] == 'v' ? "qkv" : "gate_up");
      break;
    }
  }
  uint64_t seed = 1469598103934665603ull;  // FNV-1a of the input's name
  for (unsigned char c : input) seed = (seed ^ c) * 1099511628211ull;
  std::vector<uint32_t> order(cols);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// The columns act-order groups take (ActivationOrder's, or with `act_order`
// false the columns in order) and the weight with its columns in that order,
// to round group by group.
struct GroupOrder {
  std::vector<uint32_t> order;
  std::vector<float> ordered;
};

GroupOrder OrderForGroups(const std::string& name, const std::vector<float>& w, size_t rows, size_t cols,
                          bool act_order) {
  GroupOrder g;
  g.order.resize(cols);
  std::iota(g.order.begin(), g.order.end(), 0u);
  if (act_order) g.order = ActivationOrder(name, cols);
  g.ordered.resize(rows * cols);
  for (size_t o = 0; o < rows; ++o) {
    for (size_t j = 0; j < cols; ++j) g.ordered[o * cols + j] = w[o * cols + g.order[j]];
  }
  return g;
}

// Each column's group: column order[j] is in group j / group_size.
std::vector<int32_t> GroupIndex(const std::vector<uint32_t>& order, size_t group_size) {
  std::vector<int32_t> g_idx(order.size());
  for (size_t j = 0; j < order.size(); ++j) g_idx[order[j]] = static_cast<int32_t>(j / group_size);
  return g_idx;
}

}  // namespace

Status ExportGptq(const std::string& hf_dir, size_t group_size, const std::string& out_dir, bool desc_act) {
  const nlohmann::json config = {{"quant_method", "gptq"}, {"bits", 4},       {"group_size", group_size},
                                 {"desc_act", desc_act},   {"sym", false},    {"checkpoint_format", "gptq"},
                                 {"damp_percent", 0.01},   {"static_groups", false}, {"true_sequential", true}};
  return ExportQuantized(hf_dir, out_dir, config,
                         [group_size, desc_act](const std::string& name, const std::vector<float>& w, size_t rows,
                                                size_t cols, std::vector<TensorToWrite>* out) -> Status {
    LLMSERVE_RETURN_IF_ERROR(CheckInt4Shape(name, rows, cols, group_size));
    // desc_act: group g holds the columns order[g·group_size ...], not g·group_size ...
    const GroupOrder go = OrderForGroups(name, w, rows, cols, desc_act);
    const std::vector<uint32_t>& order = go.order;
    // Zero points are stored minus one, so 0 cannot be.
    const Int4Rounded r = RoundInt4(go.ordered, rows, cols, group_size, 1);
    const size_t groups = cols / group_size;
    std::vector<uint32_t> qweight(cols / 8 * rows, 0), qzeros(groups * rows / 8, 0);
    std::vector<int32_t> g_idx = GroupIndex(order, group_size);
    for (size_t o = 0; o < rows; ++o) {
      for (size_t g = 0; g < groups; ++g)
        qzeros[g * (rows / 8) + o / 8] |= static_cast<uint32_t>(r.zeros[o * groups + g] - 1) << (4 * (o % 8));
      for (size_t j = 0; j < cols; ++j) {
        const size_t i = order[j];
        qweight[(i / 8) * rows + o] |= uint32_t{r.q[o * cols + j]} << (4 * (i % 8));
      }
    }
    const std::string p = Prefix(name);
    out->push_back(Owned(p + ".qweight", {cols / 8, rows}, "I32", std::move(qweight)));
    out->push_back(Owned(p + ".qzeros", {groups, rows / 8}, "I32", std::move(qzeros)));
    out->push_back(Owned(p + ".scales", {groups, rows}, "F16", GroupMajorScales(r)));
    out->push_back(Owned(p + ".g_idx", {cols}, "I32", std::move(g_idx)));
    return Status::Ok();
  });
}

Status ExportCompressedTensorsW4A16(const std::string& hf_dir, size_t group_size, bool symmetric,
                                    const std::string& out_dir, bool act_order) {
  const nlohmann::json weights = {{"num_bits", 4},
                                  {"type", "int"},
                                  {"symmetric", symmetric},
                                  {"strategy", "group"},
                                  {"group_size", group_size},
                                  {"dynamic", false},
                                  {"actorder", act_order ? nlohmann::json("group") : nlohmann::json(nullptr)},
                                  {"observer", "minmax"}};
  const nlohmann::json config = {
      {"quant_method", "compressed-tensors"},
      {"format", "pack-quantized"},
      {"quantization_status", "compressed"},
      {"config_groups",
       {{"group_0", {{"targets", {"Linear"}}, {"weights", weights}, {"input_activations", nullptr},
                     {"output_activations", nullptr}}}}},
      {"ignore", {"lm_head", "re:.*mlp.gate$"}},
      {"kv_cache_scheme", nullptr}};
  return ExportQuantized(hf_dir, out_dir, config,
                         [group_size, symmetric, act_order](const std::string& name, const std::vector<float>& w,
                                                            size_t rows, size_t cols,
                                                            std::vector<TensorToWrite>* out) -> Status {
    LLMSERVE_RETURN_IF_ERROR(CheckInt4Shape(name, rows, cols, group_size));
    const GroupOrder go = OrderForGroups(name, w, rows, cols, act_order);
    const Int4Rounded r = RoundInt4(go.ordered, rows, cols, group_size, 0, symmetric);
    const size_t groups = cols / group_size;
    // Quants and zero points as signed values plus 8, which is what RoundInt4's are.
    std::vector<uint32_t> packed(rows * cols / 8, 0), zeros(rows / 8 * groups, 0);
    for (size_t o = 0; o < rows; ++o) {
      for (size_t j = 0; j < cols; ++j) {
        const size_t i = go.order[j];
        packed[o * (cols / 8) + i / 8] |= uint32_t{r.q[o * cols + j]} << (4 * (i % 8));
      }
      for (size_t g = 0; g < groups; ++g)
        zeros[(o / 8) * groups + g] |= uint32_t{r.zeros[o * groups + g]} << (4 * (o % 8));
    }
    const std::string p = Prefix(name);
    out->push_back(Owned(p + ".weight_packed", {rows, cols / 8}, "I32", std::move(packed)));
    out->push_back(Owned(p + ".weight_scale", {rows, groups}, "F16", r.scales));
    out->push_back(Owned(p + ".weight_shape", {2}, "I32", std::vector<int32_t>{static_cast<int32_t>(rows),
                                                                                  static_cast<int32_t>(cols)}));
    if (!symmetric) out->push_back(Owned(p + ".weight_zero_point", {rows / 8, groups}, "I32", std::move(zeros)));
    if (act_order) out->push_back(Owned(p + ".weight_g_idx", {cols}, "I32", GroupIndex(go.order, group_size)));
    return Status::Ok();
  });
}

Status ExportAwq(const std::string& hf_dir, size_t group_size, const std::string& out_dir) {
  const nlohmann::json config = {{"quant_method", "awq"}, {"bits", 4},          {"group_size", group_size},
                                 {"zero_point", true},    {"version", "gemm"}, {"modules_to_not_convert", nullptr}};
  return ExportQuantized(hf_dir, out_dir, config,
                         [group_size](const std::string& name, const std::vector<float>& w, size_t rows, size_t cols,
                                      std::vector<TensorToWrite>* out) -> Status {
    LLMSERVE_RETURN_IF_ERROR(CheckInt4Shape(name, rows, cols, group_size));
    const Int4Rounded r = RoundInt4(w, rows, cols, group_size, 0);
    const size_t groups = cols / group_size;
    std::vector<uint32_t> qweight(cols * rows / 8, 0), qzeros(groups * rows / 8, 0);
    for (size_t o = 0; o < rows; ++o) {
      const uint32_t shift = 4 * kAwqNibble[o % 8];
      for (size_t g = 0; g < groups; ++g)
        qzeros[g * (rows / 8) + o / 8] |= uint32_t{r.zeros[o * groups + g]} << shift;
      for (size_t i = 0; i < cols; ++i) qweight[i * (rows / 8) + o / 8] |= uint32_t{r.q[o * cols + i]} << shift;
    }
    const std::string p = Prefix(name);
    out->push_back(Owned(p + ".qweight", {cols, rows / 8}, "I32", std::move(qweight)));
    out->push_back(Owned(p + ".qzeros", {groups, rows / 8}, "I32", std::move(qzeros)));
    out->push_back(Owned(p + ".scales", {groups, rows}, "F16", GroupMajorScales(r)));
    return Status::Ok();
  });
}

// A weight as E4M3 codes with one f32 scale per block of br × bc (max|w| of
// the block maps to E4M3's largest value), row-major over the blocks.
struct Fp8Blocks {
  std::vector<uint8_t> q;
  std::vector<float> scales;
};

Fp8Blocks RoundFp8(const std::vector<float>& w, size_t rows, size_t cols, size_t br, size_t bc) {
  const size_t scols = (cols + bc - 1) / bc;
  Fp8Blocks b{std::vector<uint8_t>(rows * cols), std::vector<float>((rows + br - 1) / br * scols, 0.f)};
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      float& s = b.scales[r / br * scols + c / bc];
      s = std::max(s, std::fabs(w[r * cols + c]));
    }
  for (float& s : b.scales) s = s > 0.f ? s / 448.f : 1.f;
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      b.q[r * cols + c] = base::FloatToFp8E4M3(w[r * cols + c] / b.scales[r / br * scols + c / bc]);
  return b;
}

Status ExportFp8(const std::string& hf_dir, size_t block, const std::string& out_dir) {
  nlohmann::json config = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"fmt", "e4m3"},
                           {"weight_block_size", nullptr}};
  if (block != 0) config["weight_block_size"] = {block, block};
  return ExportQuantized(hf_dir, out_dir, config,
                         [block](const std::string& name, const std::vector<float>& w, size_t rows, size_t cols,
                                 std::vector<TensorToWrite>* out) -> Status {
    const size_t br = block != 0 ? block : rows, bc = block != 0 ? block : cols;
    Fp8Blocks b = RoundFp8(w, rows, cols, br, bc);
    out->push_back(Owned(name, {rows, cols}, "F8_E4M3", std::move(b.q)));
    if (block != 0) {
      out->push_back(Owned(name + "_scale_inv", {(rows + br - 1) / br, (cols + bc - 1) / bc}, "F32",
                           std::move(b.scales)));
    } else {
      out->push_back(Owned(name + "_scale", {1}, "F32", std::move(b.scales)));
    }
    return Status::Ok();
  });
}

Status ExportCompressedTensorsFp8(const std::string& hf_dir, const std::string& out_dir) {
  auto args = [](const char* strategy, bool dynamic) {
    return nlohmann::json{{"num_bits", 8},        {"type", "float"},    {"symmetric", true},
                          {"strategy", strategy}, {"dynamic", dynamic}, {"group_size", nullptr}};
  };
  const nlohmann::json config = {
      {"quant_method", "compressed-tensors"},
      {"format", "float-quantized"},
      {"quantization_status", "compressed"},
      {"config_groups",
       {{"group_0", {{"targets", {"Linear"}}, {"weights", args("channel", false)},
                     {"input_activations", args("token", true)}, {"output_activations", nullptr}}}}},
      {"ignore", {"lm_head", "re:.*mlp.gate$"}},
      {"kv_cache_scheme", nullptr}};
  return ExportQuantized(hf_dir, out_dir, config,
                         [](const std::string& name, const std::vector<float>& w, size_t rows, size_t cols,
                            std::vector<TensorToWrite>* out) -> Status {
    Fp8Blocks b = RoundFp8(w, rows, cols, 1, cols);
    out->push_back(Owned(name, {rows, cols}, "F8_E4M3", std::move(b.q)));
    out->push_back(Owned(name + "_scale", {rows, 1}, "F32", std::move(b.scales)));
    return Status::Ok();
  });
}

}  // namespace llmserve::worker
