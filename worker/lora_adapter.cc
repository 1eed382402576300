#include "worker/lora_adapter.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "kernels/cpu/embedding.h"
#include "worker/safetensors.h"

namespace llmserve::worker {

namespace {

constexpr const char* kTargetNames[kNumLoraTargets] = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                                       "gate_proj", "up_proj", "down_proj"};
constexpr const char* kSupported =
    "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, and the fused qkv_proj, gate_up_proj";

bool IsMlp(LoraTarget t) { return t == LoraTarget::kGate || t == LoraTarget::kUp || t == LoraTarget::kDown; }

// A module an adapter may name: one projection, or a fused one (vLLM's
// packed modules) whose lora_A all parts share and whose lora_B stacks the
// parts' outputs in order.
struct Module {
  const char* name;
  std::vector<LoraTarget> parts;
};

const std::vector<Module>& Modules() {
  static const std::vector<Module> modules = [] {
    std::vector<Module> m;
    for (size_t i = 0; i < kNumLoraTargets; ++i) m.push_back({kTargetNames[i], {static_cast<LoraTarget>(i)}});
    m.push_back({"qkv_proj", {LoraTarget::kQ, LoraTarget::kK, LoraTarget::kV}});
    m.push_back({"gate_up_proj", {LoraTarget::kGate, LoraTarget::kUp}});
    return m;
  }();
  return modules;
}

bool ParseModule(const std::string& s, size_t* out) {
  for (size_t i = 0; i < Modules().size(); ++i) {
    if (s == Modules()[i].name) {
      *out = i;
      return true;
    }
  }
  return false;
}

// What adapter_config.json says.
struct AdapterConfig {
  size_t rank = 0;
  float scale = 1.f;
};

StatusOr<AdapterConfig> ReadAdapterConfig(const std::string& path, const LoraLimits& limits) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot be read (a PEFT adapter directory holds adapter_config.json)");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return Status::InvalidArgument(path + ": not a JSON object");
  auto bad = [&](const std::string& what) { return Status::InvalidArgument(path + ": " + what); };
  if (!j.contains("r") || !j["r"].is_number_unsigned() || j["r"].get<size_t>() == 0) {
    return bad("\"r\" (the rank) must be a positive integer");
  }
  AdapterConfig c;
  c.rank = j["r"].get<size_t>();
  if (c.rank > limits.max_rank) {
    return bad("LoRA rank " + std::to_string(c.rank) + " is greater than max_lora_rank " +
               std::to_string(limits.max_rank) + " (raise --max-lora-rank)");
  }
  if (c.rank > kernels::cpu::kMaxLoraRank) {
    return bad("LoRA rank " + std::to_string(c.rank) + " is above the largest supported, " +
               std::to_string(kernels::cpu::kMaxLoraRank));
  }
  // PEFT's default alpha is 8; it writes the field in every config it saves.
  double alpha = 8;
  if (j.contains("lora_alpha")) {
    if (!j["lora_alpha"].is_number()) return bad("\"lora_alpha\" must be a number");
    alpha = j["lora_alpha"].get<double>();
  }
  bool rslora = false;
  if (j.contains("use_rslora") && !j["use_rslora"].is_null()) {
    if (!j["use_rslora"].is_boolean()) return bad("\"use_rslora\" must be true or false");
    rslora = j["use_rslora"].get<bool>();
  }
  const double r = static_cast<double>(c.rank);
  c.scale = static_cast<float>(rslora ? alpha / std::sqrt(r) : alpha / r);
  if (!std::isfinite(c.scale)) {
    return bad("\"lora_alpha\" " + j["lora_alpha"].dump() + " gives a scale outside the float range");
  }
  if (j.contains("target_modules")) {
    const auto& tm = j["target_modules"];
    std::vector<std::string> names;
    if (tm.is_string()) {
      names.push_back(tm.get<std::string>());
    } else if (tm.is_array()) {
      for (const auto& m : tm) {
        if (!m.is_string()) return bad("\"target_modules\" must be a list of names");
        names.push_back(m.get<std::string>());
      }
    } else {
      return bad("\"target_modules\" must be a list of names");
    }
    for (const auto& n : names) {
      size_t m;
      if (!ParseModule(n, &m)) return bad("unknown target module '" + n + "' (supported: " + kSupported + ")");
    }
  }
  if (j.contains("bias") && j["bias"].is_string() && j["bias"].get<std::string>() != "none") {
    return Status::Unimplemented(path + ": LoRA bias \"" + j["bias"].get<std::string>() +
                                 "\" is not supported (only \"none\")");
  }
  if (j.contains("modules_to_save") && !j["modules_to_save"].is_null() && !j["modules_to_save"].empty()) {
    return Status::Unimplemented(path + ": modules_to_save (fully trained extra modules) is not supported");
  }
  for (const char* pattern : {"rank_pattern", "alpha_pattern"}) {
    if (j.contains(pattern) && !j[pattern].is_null() && !j[pattern].empty()) {
      return Status::Unimplemented(path + ": per-module \"" + std::string(pattern) + "\" is not supported");
    }
  }
  return c;
}

// A tensor name's layer, module (index into Modules()) and factor:
// "base_model.model.model.layers.{i}.{self_attn|mlp}.{module}.lora_{A|B}.weight".
struct TensorKey {
  size_t layer = 0;
  size_t module = 0;
  bool is_a = false;
};

bool ParseTensorName(const std::string& name, TensorKey* key) {
  static const std::string kPrefix = "base_model.model.model.layers.";
  if (name.rfind(kPrefix, 0) != 0) return false;
  std::string rest = name.substr(kPrefix.size());
  size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string::npos) return false;
  const std::string layer = rest.substr(0, dot);
  if (layer.find_first_not_of("0123456789") != std::string::npos || layer.size() > 6) return false;
  key->layer = std::stoul(layer);
  rest = rest.substr(dot + 1);
  dot = rest.find('.');
  if (dot == std::string::npos) return false;
  const std::string block = rest.substr(0, dot);
  rest = rest.substr(dot + 1);
  dot = rest.find('.');
  if (dot == std::string::npos || !ParseModule(rest.substr(0, dot), &key->module)) return false;
  if (block != (IsMlp(Modules()[key->module].parts[0]) ? "mlp" : "self_attn")) return false;
  const std::string factor = rest.substr(dot + 1);
  if (factor != "lora_A.weight" && factor != "lora_B.weight") return false;
  key->is_a = factor == "lora_A.weight";
  return true;
}

// Rows [begin, begin + count) of a projection's full output or input, for this shard.
struct Range {
  size_t full = 0, begin = 0, count = 0;
};

// The full and this shard's input and output ranges of `t`.
std::pair<Range, Range> ShardRanges(LoraTarget t, const ModelConfig& c, const ShardDims& d) {
  const size_t h = c.hidden_size, hd = c.head_dim;
  const Range hidden{h, 0, h};
  const Range q{c.num_heads * hd, d.tp_rank * d.num_heads * hd, d.num_heads * hd};
  const Range kv{c.num_kv_heads * hd, d.tp_rank * d.num_kv_heads * hd, d.num_kv_heads * hd};
  const Range ff{c.intermediate_size, d.tp_rank * d.intermediate_size, d.intermediate_size};
  switch (t) {
    case LoraTarget::kQ: return {hidden, q};
    case LoraTarget::kK:
    case LoraTarget::kV: return {hidden, kv};
    case LoraTarget::kO: return {q, hidden};
    case LoraTarget::kGate:
    case LoraTarget::kUp: return {hidden, ff};
    case LoraTarget::kDown: return {ff, hidden};
  }
  return {};
}

std::vector<float> ToF32(const TensorView& t) {
  std::vector<float> v(t.num_elements());
  kernels::cpu::ConvertToF32(t.data, t.dtype, v.size(), v.data());
  return v;
}

// The bf16 bits of a value read from bf16 (so exact).
uint16_t Bf16Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

// This shard's transposed factors from A [rank × in] and B [out × rank]
// (fp32 copies of the tensors); out.begin counts rows of B. `bf16`: both
// tensors were bf16, kept so.
LoraProjection Shard(const std::vector<float>& a, const std::vector<float>& b, size_t rank, const Range& in,
                     const Range& out, bool bf16) {
  std::vector<float> a_t(in.count * rank), b_t(rank * out.count);
  for (size_t k = 0; k < in.count; ++k) {
    for (size_t i = 0; i < rank; ++i) a_t[k * rank + i] = a[i * in.full + in.begin + k];
  }
  for (size_t i = 0; i < rank; ++i) {
    for (size_t j = 0; j < out.count; ++j) b_t[i * out.count + j] = b[(out.begin + j) * rank + i];
  }
  LoraProjection p;
  p.in = in.count;
  p.out = out.count;
  if (bf16) {
    p.a_t16.resize(a_t.size());
    p.b_t16.resize(b_t.size());
    for (size_t e = 0; e < a_t.size(); ++e) p.a_t16[e] = Bf16Bits(a_t[e]);
    for (size_t e = 0; e < b_t.size(); ++e) p.b_t16[e] = Bf16Bits(b_t[e]);
  } else {
    p.a_t = std::move(a_t);
    p.b_t = std::move(b_t);
  }
  return p;
}

}  // namespace

const char* LoraTargetName(LoraTarget target) { return kTargetNames[static_cast<size_t>(target)]; }

kernels::cpu::LoraFactors LoraAdapter::Factors(size_t layer, LoraTarget target) const {
  kernels::cpu::LoraFactors f;
  const LoraProjection& p = layers[layer][static_cast<size_t>(target)];
  if (p.empty()) return f;
  if (p.bf16()) {
    f.a_t = p.a_t16.data();
    f.b_t = p.b_t16.data();
    f.dtype = kernels::cpu::LoraDType::kBF16;
  } else {
    f.a_t = p.a_t.data();
    f.b_t = p.b_t.data();
  }
  f.rank = rank;
  f.in = p.in;
  f.out = p.out;
  f.scale = scale;
  return f;
}

StatusOr<std::shared_ptr<const LoraAdapter>> LoadLoraAdapter(const std::string& name, const std::string& dir,
                                                             const ModelConfig& config, const ShardDims& shard,
                                                             const LoraLimits& limits) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) return Status::NotFound("LoRA adapter '" + name + "': " + dir + " is not a directory");
  LLMSERVE_ASSIGN_OR_RETURN(AdapterConfig ac, ReadAdapterConfig((fs::path(dir) / "adapter_config.json").string(),
                                                                limits));
  const std::string weights = (fs::path(dir) / "adapter_model.safetensors").string();
  if (!fs::exists(weights)) {
    return Status::NotFound(weights + ": no such file (the adapter's weights; .bin files are not read)");
  }
  LLMSERVE_ASSIGN_OR_RETURN(auto file, SafetensorsFile::Open(weights));
  // Pair every A with its B, checking names and shapes.
  std::map<std::pair<size_t, size_t>, std::pair<const TensorView*, const TensorView*>> pairs;
  for (const auto& [tname, view] : file->tensors()) {
    TensorKey key;
    if (!ParseTensorName(tname, &key)) {
      return Status::InvalidArgument(weights + ": tensor " + tname +
                                     " is not a LoRA factor of a supported target module (" + kSupported + ")");
    }
    if (key.layer >= config.num_layers) {
      return Status::InvalidArgument(weights + ": tensor " + tname + " names layer " + std::to_string(key.layer) +
                                     " but the model has " + std::to_string(config.num_layers));
    }
    const Module& module = Modules()[key.module];
    if (IsMlp(module.parts[0]) && config.IsMoeLayer(key.layer)) {
      return Status::Unimplemented(weights + ": tensor " + tname +
                                   " targets the MLP of a mixture-of-experts layer (not supported)");
    }
    const Range in = ShardRanges(module.parts[0], config, shard).first;
    size_t out_full = 0;  // a fused B stacks its parts' full outputs
    for (LoraTarget part : module.parts) out_full += ShardRanges(part, config, shard).second.full;
    const std::vector<size_t> want = key.is_a ? std::vector<size_t>{ac.rank, in.full}
                                              : std::vector<size_t>{out_full, ac.rank};
    if (view.shape != want) {
      TensorView expected;
      expected.shape = want;
      return Status::InvalidArgument(weights + ": tensor " + tname + " has shape " + view.ShapeString() +
                                     ", expected " + expected.ShapeString() + " (rank " + std::to_string(ac.rank) +
                                     " for this base model)");
    }
    auto& slot = pairs[{key.layer, key.module}];
    (key.is_a ? slot.first : slot.second) = &view;
  }
  if (pairs.empty()) return Status::InvalidArgument(weights + ": holds no LoRA weights");
  auto adapter = std::make_shared<LoraAdapter>();
  adapter->name = name;
  adapter->path = dir;
  adapter->rank = ac.rank;
  adapter->scale = ac.scale;
  adapter->layers.resize(config.num_layers);
  for (const auto& [where, ab] : pairs) {
    const Module& module = Modules()[where.second];
    const std::string what = "layer " + std::to_string(where.first) + " " + module.name;
    if (ab.first == nullptr || ab.second == nullptr) {
      return Status::InvalidArgument(weights + ": " + what + " has lora_" + (ab.first ? "A" : "B") +
                                     " but no lora_" + (ab.first ? "B" : "A"));
    }
    const std::vector<float> a = ToF32(*ab.first), b = ToF32(*ab.second);
    const bool bf16 = ab.first->dtype == kernels::cpu::WeightDType::kBF16 &&
                      ab.second->dtype == kernels::cpu::WeightDType::kBF16;
    size_t offset = 0;  // the part's first row in a fused B
    for (LoraTarget part : module.parts) {
      auto [in, out] = ShardRanges(part, config, shard);
      LoraProjection& p = adapter->layers[where.first][static_cast<size_t>(part)];
      if (!p.empty()) {
        return Status::InvalidArgument(weights + ": " + what + " and " + LoraTargetName(part) +
                                       " both adapt layer " + std::to_string(where.first) + "'s " +
                                       LoraTargetName(part));
      }
      const size_t full = out.full;
      out.begin += offset;
      p = Shard(a, b, ac.rank, in, out, bf16);
      offset += full;
    }
  }
  return std::shared_ptr<const LoraAdapter>(std::move(adapter));
}

}  // namespace llmserve::worker
