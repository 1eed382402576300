#include "worker/test_lora_adapter.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "worker/model_config.h"
#include "worker/random_weights.h"
#include "worker/safetensors_writer.h"

namespace llmserve::worker {

Status WriteTestLoraAdapter(const TestLoraSpec& spec, const std::string& model_dir, const std::string& out_dir) {
  namespace fs = std::filesystem;
  LLMSERVE_ASSIGN_OR_RETURN(ModelConfig c, LoadModelConfig(model_dir));
  std::string st_dtype;
  if (spec.dtype == "f32") {
    st_dtype = "F32";
  } else if (spec.dtype == "bf16") {
    st_dtype = "BF16";
  } else if (spec.dtype == "f16") {
    st_dtype = "F16";
  } else {
    return Status::InvalidArgument("unknown adapter dtype '" + spec.dtype + "' (bf16, f16, f32)");
  }
  if (spec.rank == 0) return Status::InvalidArgument("the LoRA rank must be positive");
  const size_t h = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  const size_t ff = c.intermediate_size;
  std::vector<TensorToWrite> tensors;
  for (size_t l = 0; l < c.num_layers; ++l) {
    for (const auto& t : spec.targets) {
      size_t in = 0, out = 0;
      std::string block = "self_attn";
      if (t == "q_proj") {
        in = h, out = q;
      } else if (t == "k_proj" || t == "v_proj") {
        in = h, out = kv;
      } else if (t == "qkv_proj") {  // fused: one A, B stacking q, k and v
        in = h, out = q + 2 * kv;
      } else if (t == "o_proj") {
        in = q, out = h;
      } else if (t == "gate_proj" || t == "up_proj" || t == "down_proj" || t == "gate_up_proj") {
        if (c.IsMoeLayer(l)) continue;
        block = "mlp";
        in = t == "down_proj" ? ff : h;
        out = t == "down_proj" ? h : t == "gate_up_proj" ? 2 * ff : ff;
      } else {
        return Status::InvalidArgument("unknown LoRA target module '" + t + "'");
      }
      const std::string p = "base_model.model.model.layers." + std::to_string(l) + "." + block + "." + t + ".";
      for (const auto& [name, shape] : {std::pair<std::string, std::vector<size_t>>{p + "lora_A.weight", {spec.rank, in}},
                                        {p + "lora_B.weight", {out, spec.rank}}}) {
        TensorToWrite w;
        w.name = name;
        w.shape = shape;
        w.dtype = st_dtype;
        const size_t n = shape[0] * shape[1];
        const uint64_t seed = spec.seed;
        const double std = spec.std;
        w.fill = [=, name = name](uint8_t* o) {
          std::vector<float> v(n);
          Normals(seed, name, 0.0, std, n, v.data());
          Encode(v, st_dtype, o);
        };
        tensors.push_back(std::move(w));
      }
    }
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::InvalidArgument(out_dir + ": " + ec.message());
  LLMSERVE_RETURN_IF_ERROR(WriteSafetensorsFile((fs::path(out_dir) / "adapter_model.safetensors").string(), tensors));
  nlohmann::json cfg = {{"peft_type", "LORA"},
                        {"task_type", "CAUSAL_LM"},
                        {"base_model_name_or_path", fs::absolute(model_dir).string()},
                        {"r", spec.rank},
                        {"lora_alpha", spec.lora_alpha},
                        {"lora_dropout", 0.0},
                        {"use_rslora", spec.use_rslora},
                        {"bias", "none"},
                        {"fan_in_fan_out", false},
                        {"modules_to_save", nullptr},
                        {"target_modules", spec.targets}};
  std::ofstream f(fs::path(out_dir) / "adapter_config.json");
  f << cfg.dump(2) << "\n";
  if (!f) return Status::InvalidArgument(out_dir + "/adapter_config.json: cannot be written");
  return Status::Ok();
}

}  // namespace llmserve::worker
