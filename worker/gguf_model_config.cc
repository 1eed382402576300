#include "worker/gguf_model_config.h"

namespace llmserve::worker {

using common::gguf::GgufFile;
using common::gguf::GgufMetadata;

StatusOr<Architecture> GgufArchitecture(const std::string& name, const std::string& source) {
  if (name == "llama") return Architecture::kLlama;
  if (name == "qwen2") return Architecture::kQwen2;
  if (name == "qwen3") return Architecture::kQwen3;
  if (name == "qwen3moe") return Architecture::kQwen3Moe;
  if (name == "qwen2moe" || name == "deepseek2") {
    return Status::Unimplemented(source + ": general.architecture '" + name +
                                 "': this mixture-of-experts GGUF architecture is not supported yet "
                                 "(serve the Hugging Face safetensors checkpoint instead)");
  }
  return Status::Unimplemented(source + ": general.architecture '" + name +
                               "' is not supported (supported: llama, qwen2, qwen3, qwen3moe)");
}

const char* GgufArchitectureName(Architecture arch) {
  switch (arch) {
    case Architecture::kLlama:
    case Architecture::kMistral: return "llama";
    case Architecture::kQwen2: return "qwen2";
    case Architecture::kQwen3: return "qwen3";
    case Architecture::kQwen3Moe: return "qwen3moe";
    case Architecture::kMixtral: return "llama";  // llama.cpp's converter writes Mixtral as llama + experts
    case Architecture::kDeepseekV2:
    case Architecture::kDeepseekV3: return "deepseek2";
  }
  return "?";
}

namespace {

// A positive integer key; errors name the file and the key.
StatusOr<size_t> Positive(const GgufMetadata& m, const std::string& key, const std::string& source) {
  if (!m.Has(key)) return Status::NotFound(source + ": metadata key " + key + " is missing");
  LLMSERVE_ASSIGN_OR_RETURN(int64_t v, m.GetInteger(key));
  if (v <= 0) return Status::InvalidArgument(source + ": metadata key " + key + " must be positive");
  return static_cast<size_t>(v);
}

Status ParseGgufRopeScaling(const GgufMetadata& m, const std::string& a, const std::string& source,
                            ModelConfig* c) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string type, m.GetOr<std::string>(a + ".rope.scaling.type", "none"));
  auto& s = c->rope_scaling;
  LLMSERVE_ASSIGN_OR_RETURN(float factor, m.GetOr<float>(a + ".rope.scaling.factor", 1.0f));
  s.factor = factor;
  if (type == "none") {
    s.type = kernels::cpu::RopeScaling::Type::kNone;
  } else if (type == "linear") {
    s.type = kernels::cpu::RopeScaling::Type::kLinear;
  } else if (type == "yarn") {
    s.type = kernels::cpu::RopeScaling::Type::kYarn;
    const std::string key = a + ".rope.scaling.original_context_length";
    LLMSERVE_ASSIGN_OR_RETURN(size_t original, Positive(m, key, source));
    s.original_max_position = static_cast<double>(original);
  } else {
    return Status::Unimplemented(source + ": " + a + ".rope.scaling.type '" + type +
                                 "' is not supported (supported: none, linear, yarn)");
  }
  if (s.factor <= 0) return Status::InvalidArgument(source + ": " + a + ".rope.scaling.factor must be positive");
  return Status::Ok();
}

// The experts of a qwen3moe file, or of a llama file with expert_count > 0
// (llama.cpp's conversion of Mixtral): every layer sparse, and, as llama.cpp
// computes them, the chosen experts' softmax weights renormalised.
Status ParseGgufExperts(const GgufMetadata& m, const std::string& a, const std::string& source, ModelConfig* c) {
  int64_t experts = 0;
  if (m.Has(a + ".expert_count")) {
    LLMSERVE_ASSIGN_OR_RETURN(experts, m.GetInteger(a + ".expert_count"));
  }
  if (experts <= 0) {
    if (c->architecture == Architecture::kQwen3Moe) {
      return Status::NotFound(source + ": metadata key qwen3moe.expert_count is missing");
    }
    return Status::Ok();
  }
  if (c->architecture == Architecture::kLlama) c->architecture = Architecture::kMixtral;
  MoeConfig& moe = c->moe;
  moe.num_experts = static_cast<size_t>(experts);
  LLMSERVE_ASSIGN_OR_RETURN(moe.num_experts_per_tok, Positive(m, a + ".expert_used_count", source));
  moe.intermediate_size = c->intermediate_size;
  if (m.Has(a + ".expert_feed_forward_length")) {
    LLMSERVE_ASSIGN_OR_RETURN(moe.intermediate_size, Positive(m, a + ".expert_feed_forward_length", source));
  }
  moe.norm_topk_prob = true;
  if (moe.num_experts_per_tok > moe.num_experts) {
    return Status::InvalidArgument(source + ": " + a + ".expert_used_count exceeds expert_count");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ModelConfig> GgufModelConfig(const GgufFile& file) {
  const std::string& source = file.name();
  const GgufMetadata& m = file.metadata();
  if (!m.Has("general.architecture")) return Status::NotFound(source + ": metadata key general.architecture is missing");
  LLMSERVE_ASSIGN_OR_RETURN(std::string a, m.Get<std::string>("general.architecture"));
  ModelConfig c;
  LLMSERVE_ASSIGN_OR_RETURN(c.architecture, GgufArchitecture(a, source));
  LLMSERVE_ASSIGN_OR_RETURN(c.num_layers, Positive(m, a + ".block_count", source));
  LLMSERVE_ASSIGN_OR_RETURN(c.max_position_embeddings, Positive(m, a + ".context_length", source));
  LLMSERVE_ASSIGN_OR_RETURN(c.hidden_size, Positive(m, a + ".embedding_length", source));
  LLMSERVE_ASSIGN_OR_RETURN(c.intermediate_size, Positive(m, a + ".feed_forward_length", source));
  LLMSERVE_ASSIGN_OR_RETURN(c.num_heads, Positive(m, a + ".attention.head_count", source));
  c.num_kv_heads = c.num_heads;
  if (m.Has(a + ".attention.head_count_kv")) {
    LLMSERVE_ASSIGN_OR_RETURN(c.num_kv_heads, Positive(m, a + ".attention.head_count_kv", source));
  }
  c.head_dim = c.hidden_size / c.num_heads;
  if (m.Has(a + ".attention.key_length")) {
    LLMSERVE_ASSIGN_OR_RETURN(c.head_dim, Positive(m, a + ".attention.key_length", source));
  }
  const std::string eps_key = a + ".attention.layer_norm_rms_epsilon";
  if (!m.Has(eps_key)) return Status::NotFound(source + ": metadata key " + eps_key + " is missing");
  LLMSERVE_ASSIGN_OR_RETURN(float eps, m.Get<float>(eps_key));
  c.rms_norm_eps = eps;
  LLMSERVE_ASSIGN_OR_RETURN(float theta, m.GetOr<float>(a + ".rope.freq_base", 10000.0f));
  c.rope_theta = theta;
  LLMSERVE_RETURN_IF_ERROR(ParseGgufRopeScaling(m, a, source, &c));
  const auto* embd = file.FindTensor("token_embd.weight");
  if (embd == nullptr) return Status::NotFound(source + ": tensor token_embd.weight is missing");
  if (embd->dims.size() != 2 || embd->dims[0] != c.hidden_size) {
    return Status::InvalidArgument(source + ": tensor token_embd.weight has shape " + embd->ShapeString() +
                                   ", expected [" + std::to_string(c.hidden_size) + ", vocab]");
  }
  c.vocab_size = embd->dims[1];
  c.tie_word_embeddings = file.FindTensor("output.weight") == nullptr;
  c.qkv_bias = file.FindTensor("blk.0.attn_q.bias") != nullptr;
  c.o_bias = file.FindTensor("blk.0.attn_output.bias") != nullptr;
  c.qk_norm = c.architecture == Architecture::kQwen3 || c.architecture == Architecture::kQwen3Moe;
  LLMSERVE_RETURN_IF_ERROR(ParseGgufExperts(m, a, source, &c));
  c.torch_dtype = "gguf";
  if (c.num_heads % c.num_kv_heads != 0) {
    return Status::InvalidArgument(source + ": attention.head_count must be a multiple of head_count_kv");
  }
  if (c.head_dim % 2 != 0) return Status::InvalidArgument(source + ": attention.key_length must be even");
  return c;
}

}  // namespace llmserve::worker
