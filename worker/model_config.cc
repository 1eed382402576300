#include "worker/model_config.h"

#include <nlohmann/json.hpp>

#include "common/gguf/gguf_file.h"
#include "common/gguf/model_path.h"
#include "worker/gguf_model_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>

namespace llmserve::worker {

const char* ArchitectureName(Architecture arch) {
  switch (arch) {
    case Architecture::kLlama: return "LlamaForCausalLM";
    case Architecture::kMistral: return "MistralForCausalLM";
    case Architecture::kQwen2: return "Qwen2ForCausalLM";
    case Architecture::kQwen3: return "Qwen3ForCausalLM";
    case Architecture::kQwen3Moe: return "Qwen3MoeForCausalLM";
    case Architecture::kMixtral: return "MixtralForCausalLM";
    case Architecture::kDeepseekV2: return "DeepseekV2ForCausalLM";
    case Architecture::kDeepseekV3: return "DeepseekV3ForCausalLM";
  }
  return "?";
}

namespace {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// j[key] as a T, or `fallback` when it is absent or null. An unsigned T takes
// only a non-negative integer: a float (1e30) or a negative number would
// convert to garbage (or, past the range, undefined behaviour); it throws the
// json type error the parser reports with the file's name.
template <typename T>
T Or(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
    if (!it->is_number_unsigned())
      throw nlohmann::json::type_error::create(302, std::string("'") + key + "' must be a non-negative integer, not " +
                                                        it->dump(), nullptr);
  }
  return it->get<T>();
}

Status ParseRopeScaling(const nlohmann::json& j, const std::string& source, ModelConfig* c) {
  auto it = j.find("rope_scaling");
  if (it == j.end() || it->is_null()) return Status::Ok();
  const auto& rs = *it;
  std::string type = Or<std::string>(rs, "rope_type", Or<std::string>(rs, "type", "default"));
  auto& s = c->rope_scaling;
  s.factor = Or<double>(rs, "factor", 1.0);
  if (type == "default") {
    s.type = kernels::cpu::RopeScaling::Type::kNone;
  } else if (type == "linear") {
    s.type = kernels::cpu::RopeScaling::Type::kLinear;
  } else if (type == "llama3") {
    s.type = kernels::cpu::RopeScaling::Type::kLlama3;
    s.low_freq_factor = Or<double>(rs, "low_freq_factor", 1.0);
    s.high_freq_factor = Or<double>(rs, "high_freq_factor", 4.0);
    s.original_max_position = Or<double>(rs, "original_max_position_embeddings", 8192.0);
    if (s.high_freq_factor == s.low_freq_factor) {
      return Status::InvalidArgument(source + ": rope_scaling llama3 needs high_freq_factor != low_freq_factor");
    }
  } else if (type == "yarn") {
    s.type = kernels::cpu::RopeScaling::Type::kYarn;
    s.original_max_position = Or<double>(rs, "original_max_position_embeddings",
                                         static_cast<double>(c->max_position_embeddings));
    s.beta_fast = Or<double>(rs, "beta_fast", 32.0);
    s.beta_slow = Or<double>(rs, "beta_slow", 1.0);
    s.mscale = Or<double>(rs, "mscale", 0.0);
    s.mscale_all_dim = Or<double>(rs, "mscale_all_dim", 0.0);
    s.attention_factor = Or<double>(rs, "attention_factor", 0.0);
    s.truncate = Or<bool>(rs, "truncate", true);
  } else {
    return Status::Unimplemented(source + ": rope_scaling type '" + type +
                                 "' is not supported (supported: default, linear, llama3, yarn)");
  }
  if (s.factor <= 0) return Status::InvalidArgument(source + ": rope_scaling factor must be positive");
  return Status::Ok();
}

// The sizes every MoE architecture must have.
Status CheckMoeSizes(const MoeConfig& m, const std::string& source) {
  if (m.num_experts == 0) return Status::InvalidArgument(source + ": a MoE model needs num_experts > 0");
  if (m.num_experts_per_tok == 0 || m.num_experts_per_tok > m.num_experts) {
    return Status::InvalidArgument(source + ": num_experts_per_tok must be in [1, num_experts]");
  }
  if (m.intermediate_size == 0) return Status::InvalidArgument(source + ": moe_intermediate_size must be positive");
  return Status::Ok();
}

// Qwen3-MoE's num_experts / moe_intermediate_size / norm_topk_prob /
// decoder_sparse_step / mlp_only_layers, or Mixtral's num_local_experts (every
// layer sparse, intermediate_size wide experts, weights always renormalised).
Status ParseMoe(const nlohmann::json& j, const std::string& source, ModelConfig* c) {
  MoeConfig& m = c->moe;
  if (c->architecture == Architecture::kMixtral) {
    m.num_experts = Or<size_t>(j, "num_local_experts", 0);
    m.intermediate_size = c->intermediate_size;
    m.norm_topk_prob = true;
  } else {
    m.num_experts = Or<size_t>(j, "num_experts", 0);
    m.intermediate_size = Or<size_t>(j, "moe_intermediate_size", 0);
    m.norm_topk_prob = Or<bool>(j, "norm_topk_prob", false);
    m.decoder_sparse_step = Or<size_t>(j, "decoder_sparse_step", 1);
    m.mlp_only_layers = Or<std::vector<size_t>>(j, "mlp_only_layers", {});
    if (Or<size_t>(j, "shared_expert_intermediate_size", 0) != 0) {
      return Status::Unimplemented(source + ": shared experts are not supported");
    }
  }
  m.num_experts_per_tok = Or<size_t>(j, "num_experts_per_tok", 0);
  LLMSERVE_RETURN_IF_ERROR(CheckMoeSizes(m, source));
  if (m.decoder_sparse_step == 0) return Status::InvalidArgument(source + ": decoder_sparse_step must be positive");
  return Status::Ok();
}

// DeepSeek V2 / V3's experts: n_routed_experts routed ones, chosen by
// topk_method / scoring_func, plus n_shared_experts always run.
Status ParseDeepseekMoe(const nlohmann::json& j, const std::string& source, ModelConfig* c) {
  MoeConfig& m = c->moe;
  const bool v3 = c->architecture == Architecture::kDeepseekV3;
  m.num_experts = Or<size_t>(j, "n_routed_experts", 0);
  m.num_experts_per_tok = Or<size_t>(j, "num_experts_per_tok", 0);
  m.intermediate_size = Or<size_t>(j, "moe_intermediate_size", 0);
  m.norm_topk_prob = Or<bool>(j, "norm_topk_prob", false);
  m.first_k_dense_replace = Or<size_t>(j, "first_k_dense_replace", 0);
  m.moe_layer_freq = Or<size_t>(j, "moe_layer_freq", 1);
  m.routed_scaling_factor = Or<double>(j, "routed_scaling_factor", 1.0);
  m.shared_intermediate_size = Or<size_t>(j, "n_shared_experts", 0) * m.intermediate_size;
  m.n_group = Or<size_t>(j, "n_group", 1);
  m.topk_group = Or<size_t>(j, "topk_group", 1);
  const std::string scoring = Or<std::string>(j, "scoring_func", v3 ? "sigmoid" : "softmax");
  const std::string method = Or<std::string>(j, "topk_method", v3 ? "noaux_tc" : "greedy");
  if (scoring == "softmax") {
    m.scoring = MoeScoring::kSoftmax;
  } else if (scoring == "sigmoid") {
    m.scoring = MoeScoring::kSigmoid;
  } else {
    return Status::Unimplemented(source + ": scoring_func '" + scoring + "' is not supported (softmax, sigmoid)");
  }
  if (method == "greedy") {
    m.group_score = MoeGroupScore::kNone;
  } else if (method == "group_limited_greedy") {
    m.group_score = MoeGroupScore::kMax;
  } else if (method == "noaux_tc") {
    m.group_score = MoeGroupScore::kTopTwoSum;
    m.correction_bias = true;
  } else {
    return Status::Unimplemented(source + ": topk_method '" + method +
                                 "' is not supported (greedy, group_limited_greedy, noaux_tc)");
  }
  LLMSERVE_RETURN_IF_ERROR(CheckMoeSizes(m, source));
  if (m.moe_layer_freq == 0) return Status::InvalidArgument(source + ": moe_layer_freq must be positive");
  if (!(m.routed_scaling_factor > 0) || !std::isfinite(m.routed_scaling_factor)) {
    return Status::InvalidArgument(source + ": routed_scaling_factor must be positive");
  }
  if (m.group_score != MoeGroupScore::kNone) {
    if (m.n_group == 0 || m.num_experts % m.n_group != 0 || m.topk_group == 0 || m.topk_group > m.n_group) {
      return Status::InvalidArgument(source +
                                     ": n_group must divide n_routed_experts and topk_group be in [1, n_group]");
    }
    const size_t per_group = m.num_experts / m.n_group;
    if (m.group_score == MoeGroupScore::kTopTwoSum && per_group < 2) {
      return Status::InvalidArgument(source + ": noaux_tc needs at least 2 experts per group");
    }
    if (m.num_experts_per_tok > m.topk_group * per_group) {
      return Status::InvalidArgument(source + ": num_experts_per_tok exceeds the experts of topk_group groups");
    }
  }
  return Status::Ok();
}

// DeepSeek's multi-head latent attention dimensions.
Status ParseMla(const nlohmann::json& j, const std::string& source, ModelConfig* c) {
  MlaConfig& a = c->mla;
  a.q_lora_rank = Or<size_t>(j, "q_lora_rank", 0);
  a.kv_lora_rank = Or<size_t>(j, "kv_lora_rank", 0);
  a.qk_nope_head_dim = Or<size_t>(j, "qk_nope_head_dim", 0);
  a.qk_rope_head_dim = Or<size_t>(j, "qk_rope_head_dim", 0);
  a.v_head_dim = Or<size_t>(j, "v_head_dim", 0);
  a.rope_interleave = Or<bool>(j, "rope_interleave", true);
  if (a.kv_lora_rank == 0 || a.qk_nope_head_dim == 0 || a.v_head_dim == 0 || a.qk_rope_head_dim == 0 ||
      a.qk_rope_head_dim % 2 != 0 || a.qk_rope_head_dim > kMaxMlaRopeDim) {
    return Status::InvalidArgument(source + ": kv_lora_rank, qk_nope_head_dim and v_head_dim must be positive and "
                                   "qk_rope_head_dim even, in [2, " + std::to_string(kMaxMlaRopeDim) + "]");
  }
  c->head_dim = a.qk_rope_head_dim;  // the rotary embedding's dimension
  c->num_kv_heads = c->num_heads;    // each head has its K and V (made from the shared latent)
  if (Or<bool>(j, "attention_bias", false)) {
    return Status::Unimplemented(source + ": DeepSeek attention_bias=true is not supported");
  }
  return Status::Ok();
}

}  // namespace

bool ModelConfig::IsMoeLayer(size_t layer) const {
  if (moe.num_experts == 0) return false;
  if (architecture == Architecture::kDeepseekV2 || architecture == Architecture::kDeepseekV3) {
    return layer >= moe.first_k_dense_replace && layer % moe.moe_layer_freq == 0;
  }
  if ((layer + 1) % moe.decoder_sparse_step != 0) return false;
  return std::find(moe.mlp_only_layers.begin(), moe.mlp_only_layers.end(), layer) == moe.mlp_only_layers.end();
}

StatusOr<ModelConfig> ParseModelConfig(const std::string& text, const std::string& source) {
  ModelConfig c;
  try {
    const auto j = nlohmann::json::parse(text);
    std::string arch;
    if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty()) {
      arch = j["architectures"][0].get<std::string>();
    }
    if (arch == "LlamaForCausalLM") {
      c.architecture = Architecture::kLlama;
    } else if (arch == "MistralForCausalLM") {
      c.architecture = Architecture::kMistral;
    } else if (arch == "Qwen2ForCausalLM") {
      c.architecture = Architecture::kQwen2;
    } else if (arch == "Qwen3ForCausalLM") {
      c.architecture = Architecture::kQwen3;
    } else if (arch == "Qwen3MoeForCausalLM") {
      c.architecture = Architecture::kQwen3Moe;
    } else if (arch == "MixtralForCausalLM") {
      c.architecture = Architecture::kMixtral;
    } else if (arch == "DeepseekV2ForCausalLM") {
      c.architecture = Architecture::kDeepseekV2;
    } else if (arch == "DeepseekV3ForCausalLM") {
      c.architecture = Architecture::kDeepseekV3;
    } else {
      return Status::Unimplemented(source + ": architecture '" + arch +
                                   "' is not supported (supported: LlamaForCausalLM, "
                                   "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
                                   "Qwen3MoeForCausalLM, MixtralForCausalLM, DeepseekV2ForCausalLM, "
                                   "DeepseekV3ForCausalLM)");
    }
    for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads",
                            "intermediate_size", "vocab_size"}) {
      if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() <= 0) {
        return Status::InvalidArgument(source + ": '" + key + "' must be a positive integer");
      }
    }
    c.hidden_size = j["hidden_size"].get<size_t>();
    c.num_layers = j["num_hidden_layers"].get<size_t>();
    c.num_heads = j["num_attention_heads"].get<size_t>();
    c.intermediate_size = j["intermediate_size"].get<size_t>();
    c.vocab_size = j["vocab_size"].get<size_t>();
    c.num_kv_heads = Or<size_t>(j, "num_key_value_heads", c.num_heads);
    c.head_dim = Or<size_t>(j, "head_dim", c.hidden_size / c.num_heads);
    c.max_position_embeddings = Or<size_t>(j, "max_position_embeddings", 4096);
    c.rms_norm_eps = Or<double>(j, "rms_norm_eps", 1e-6);
    c.rope_theta = Or<double>(j, "rope_theta", 10000.0);
    c.tie_word_embeddings = Or<bool>(j, "tie_word_embeddings", false);
    c.torch_dtype = Or<std::string>(j, "torch_dtype", "");
    if (j.contains("quantization_config")) {
      LLMSERVE_ASSIGN_OR_RETURN(CheckpointQuantization q, ParseQuantizationConfig(j["quantization_config"], source));
      c.quantization = q.method;
      c.int4 = q.int4;
      c.fp8 = q.fp8;
    }
    const bool attention_bias = Or<bool>(j, "attention_bias", false);
    switch (c.architecture) {
      case Architecture::kQwen2:
        c.qkv_bias = true;
        if (Or<bool>(j, "use_sliding_window", false)) {
          return Status::Unimplemented(source + ": Qwen2 use_sliding_window=true is not supported");
        }
        break;
      case Architecture::kQwen3:
      case Architecture::kQwen3Moe:
        c.qk_norm = true;
        c.qkv_bias = attention_bias;
        c.o_bias = attention_bias;
        if (Or<bool>(j, "use_sliding_window", false)) {
          return Status::Unimplemented(source + ": Qwen3 use_sliding_window=true is not supported");
        }
        break;
      case Architecture::kMistral:
      case Architecture::kMixtral:
        c.sliding_window = Or<size_t>(j, "sliding_window", 0);
        [[fallthrough]];
      case Architecture::kLlama:
        c.qkv_bias = attention_bias;
        c.o_bias = attention_bias;
        if (Or<bool>(j, "mlp_bias", false)) {
          return Status::Unimplemented(source + ": mlp_bias=true is not supported");
        }
        break;
      case Architecture::kDeepseekV2:
      case Architecture::kDeepseekV3:
        LLMSERVE_RETURN_IF_ERROR(ParseMla(j, source, &c));
        break;
    }
    const std::string act = Or<std::string>(j, "hidden_act", "silu");
    if (act != "silu") return Status::Unimplemented(source + ": hidden_act '" + act + "' is not supported (silu only)");
    if (c.num_kv_heads == 0 || c.num_heads % c.num_kv_heads != 0) {
      return Status::InvalidArgument(source + ": num_attention_heads must be a multiple of num_key_value_heads");
    }
    if (c.head_dim == 0 || c.head_dim % 2 != 0) {
      return Status::InvalidArgument(source + ": head_dim must be even and positive");
    }
    LLMSERVE_RETURN_IF_ERROR(ParseRopeScaling(j, source, &c));
    if (c.architecture == Architecture::kQwen3Moe || c.architecture == Architecture::kMixtral) {
      LLMSERVE_RETURN_IF_ERROR(ParseMoe(j, source, &c));
    }
    if (c.has_mla()) LLMSERVE_RETURN_IF_ERROR(ParseDeepseekMoe(j, source, &c));
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(source + ": " + e.what());
  }
  return c;
}

StatusOr<ModelConfig> LoadModelConfig(const std::string& dir) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string gguf, common::gguf::GgufModelFile(dir));
  if (!gguf.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(auto file, common::gguf::GgufFile::Open(gguf));
    LLMSERVE_ASSIGN_OR_RETURN(ModelConfig c, GgufModelConfig(*file));
    c.quantization = Quantization::kGguf;
    return c;
  }
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  LLMSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseModelConfig(text, path);
}

namespace {

// A GGUF model's stop and start tokens (tokenizer.ggml.eos/bos_token_id);
// sampling defaults stay the defaults.
StatusOr<GenerationConfig> GgufGenerationConfig(const std::string& path) {
  GenerationConfig g;
  LLMSERVE_ASSIGN_OR_RETURN(auto file, common::gguf::GgufFile::Open(path));
  const auto& m = file->metadata();
  if (m.Has("tokenizer.ggml.eos_token_id")) {
    LLMSERVE_ASSIGN_OR_RETURN(int64_t eos, m.GetInteger("tokenizer.ggml.eos_token_id"));
    g.eos_token_ids.push_back(static_cast<int32_t>(eos));
  }
  if (m.Has("tokenizer.ggml.bos_token_id")) {
    LLMSERVE_ASSIGN_OR_RETURN(int64_t bos, m.GetInteger("tokenizer.ggml.bos_token_id"));
    g.bos_token_id = static_cast<int32_t>(bos);
  }
  return g;
}

}  // namespace

StatusOr<GenerationConfig> LoadGenerationConfig(const std::string& dir) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string gguf, common::gguf::GgufModelFile(dir));
  if (!gguf.empty()) return GgufGenerationConfig(gguf);
  GenerationConfig g;
  auto ids = [](const nlohmann::json& v, std::vector<int32_t>* out) {
    if (v.is_number_integer()) out->push_back(v.get<int32_t>());
    if (v.is_array()) {
      for (const auto& e : v) {
        if (e.is_number_integer()) out->push_back(e.get<int32_t>());
      }
    }
  };
  for (const char* name : {"config.json", "generation_config.json"}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (!std::filesystem::exists(path)) continue;
    LLMSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    try {
      const auto j = nlohmann::json::parse(text);
      if (j.contains("eos_token_id")) {
        g.eos_token_ids.clear();
        ids(j["eos_token_id"], &g.eos_token_ids);
      }
      if (j.contains("bos_token_id") && j["bos_token_id"].is_number_integer()) {
        g.bos_token_id = j["bos_token_id"].get<int32_t>();
      }
      if (std::string(name) == "generation_config.json") {
        g.temperature = Or<double>(j, "temperature", g.temperature);
        g.top_p = Or<double>(j, "top_p", g.top_p);
        g.top_k = Or<int32_t>(j, "top_k", g.top_k);
        g.do_sample = Or<bool>(j, "do_sample", g.do_sample);
      }
    } catch (const nlohmann::json::exception& e) {
      return Status::InvalidArgument(path + ": " + e.what());
    }
  }
  return g;
}

}  // namespace llmserve::worker
