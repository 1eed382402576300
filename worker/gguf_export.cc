#include "worker/gguf_export.h"

#include <algorithm>
#include <cctype>

#include "common/gguf/gguf_writer.h"
#include "common/tokenizer/gguf_tokenizer_writer.h"
#include "kernels/cpu/embedding.h"
#include "worker/gguf_model_config.h"
#include "worker/gguf_model_loader.h"
#include "worker/model_config.h"
#include "worker/safetensors.h"

namespace llmserve::worker {

using common::gguf::GgmlType;
using common::gguf::GgufWriter;

StatusOr<GgmlType> ParseGgufWeightType(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  static constexpr GgmlType kTypes[] = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ8_0,
                                        GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                                        GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};
  for (GgmlType t : kTypes) {
    std::string n = common::gguf::GgmlTypeName(t);
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (n == lower) return t;
  }
  return Status::InvalidArgument("GGUF weight type '" + name +
                                 "' is not supported (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, "
                                 "q5_k, q6_k)");
}

StatusOr<GgufWeightTypes> ParseGgufWeightTypes(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (lower == "q4_k_m") return GgufWeightTypes(GgmlType::kQ4_K, GgmlType::kQ6_K);
  if (lower == "q5_k_m") return GgufWeightTypes(GgmlType::kQ5_K, GgmlType::kQ6_K);
  auto type = ParseGgufWeightType(name);
  if (!type.ok()) {
    return Status::InvalidArgument("GGUF weight type '" + name +
                                   "' is not supported (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, "
                                   "q5_k, q6_k, or the mixtures q4_k_m, q5_k_m)");
  }
  return GgufWeightTypes(*type);
}

std::string GgufWeightTypesName(const GgufWeightTypes& types) {
  const std::string base = common::gguf::GgmlTypeName(types.base);
  return types.more_bits == types.base ? base : base + "_M";
}

namespace {

// Whether layer i of n gets the mixture's extra bits, as llama.cpp chooses.
bool MoreBits(size_t i, size_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

class Exporter {
 public:
  Exporter(const Checkpoint& ckpt, const ModelConfig& c, const GgufWeightTypes& types, GgufWriter* w)
      : ckpt_(ckpt), c_(c), types_(types), w_(w) {}

  // HF tensor `from` ([rows × cols], or [cols] when rows is 0) as GGUF
  // tensor `to` (of the base type, or the mixture's other with `more_bits`);
  // `permute` applies llama.cpp's q/k row order.
  Status Copy(const std::string& from, const std::string& to, size_t rows, size_t cols, bool permute = false,
              bool more_bits = false) {
    LLMSERVE_ASSIGN_OR_RETURN(std::vector<float> hf, Read(from, rows, cols));
    std::vector<float> out(hf.size());
    const size_t n = rows == 0 ? cols : rows, row_len = rows == 0 ? 1 : cols;
    for (size_t r = 0; r < n; ++r) {
      const size_t dst = permute ? LlamaGgufRow(r, c_.head_dim) : r;
      std::copy_n(hf.begin() + static_cast<std::ptrdiff_t>(r * row_len), row_len,
                  out.begin() + static_cast<std::ptrdiff_t>(dst * row_len));
    }
    if (rows == 0) return w_->Add(to, {cols}, GgmlType::kF32, out);
    return w_->Add(to, {cols, rows}, more_bits ? types_.more_bits : types_.base, out);
  }

  // HF tensor `from` ([rows × cols], or [cols] when rows is 0) as f32 values.
  StatusOr<std::vector<float>> Read(const std::string& from, size_t rows, size_t cols) {
    std::vector<size_t> shape = rows == 0 ? std::vector<size_t>{cols} : std::vector<size_t>{rows, cols};
    LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(from, shape));
    std::vector<float> hf(t.num_elements());
    kernels::cpu::ConvertToF32(t.data, t.dtype, hf.size(), hf.data());
    return hf;
  }

  // Layer p's experts (HF `prefix`.experts.E.`name`, [rows × cols] each) as
  // one llama.cpp stacked-experts tensor {cols, rows, experts}.
  Status CopyExperts(const std::string& prefix, const std::string& name, const std::string& to, size_t rows,
                     size_t cols, bool more_bits) {
    std::vector<float> all;
    for (size_t e = 0; e < c_.moe.num_experts; ++e) {
      LLMSERVE_ASSIGN_OR_RETURN(std::vector<float> one, Read(prefix + std::to_string(e) + "." + name, rows, cols));
      all.insert(all.end(), one.begin(), one.end());
    }
    return w_->Add(to, {cols, rows, c_.moe.num_experts}, more_bits ? types_.more_bits : types_.base, all);
  }

  // Layer i's router (kept F32, as llama.cpp keeps ffn_gate_inp) and experts.
  Status Experts(size_t i, const std::string& g) {
    const bool mixtral = c_.architecture == Architecture::kMixtral;
    const std::string p = "model.layers." + std::to_string(i) + (mixtral ? ".block_sparse_moe." : ".mlp.");
    const size_t h = c_.hidden_size, ne = c_.moe.num_experts, ff = c_.moe.intermediate_size;
    LLMSERVE_ASSIGN_OR_RETURN(std::vector<float> router, Read(p + "gate.weight", ne, h));
    LLMSERVE_RETURN_IF_ERROR(w_->Add(g + "ffn_gate_inp.weight", {h, ne}, GgmlType::kF32, router));
    const std::string x = p + "experts.";
    const bool more = MoreBits(i, c_.num_layers);
    LLMSERVE_RETURN_IF_ERROR(
        CopyExperts(x, mixtral ? "w1.weight" : "gate_proj.weight", g + "ffn_gate_exps.weight", ff, h, false));
    LLMSERVE_RETURN_IF_ERROR(
        CopyExperts(x, mixtral ? "w3.weight" : "up_proj.weight", g + "ffn_up_exps.weight", ff, h, false));
    return CopyExperts(x, mixtral ? "w2.weight" : "down_proj.weight", g + "ffn_down_exps.weight", h, ff, more);
  }

  Status Layer(size_t i) {
    const std::string p = "model.layers." + std::to_string(i) + ".", g = "blk." + std::to_string(i) + ".";
    const size_t h = c_.hidden_size, hd = c_.head_dim, q = c_.num_heads * hd, kv = c_.num_kv_heads * hd;
    const bool perm = c_.architecture == Architecture::kLlama || c_.architecture == Architecture::kMistral;
    const bool more = MoreBits(i, c_.num_layers);
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "input_layernorm.weight", g + "attn_norm.weight", 0, h));
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.q_proj.weight", g + "attn_q.weight", q, h, perm));
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.k_proj.weight", g + "attn_k.weight", kv, h, perm));
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.v_proj.weight", g + "attn_v.weight", kv, h, false, more));
    if (c_.qkv_bias) {
      LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.q_proj.bias", g + "attn_q.bias", 0, q, perm));
      LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.k_proj.bias", g + "attn_k.bias", 0, kv, perm));
      LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.v_proj.bias", g + "attn_v.bias", 0, kv));
    }
    if (c_.qk_norm) {
      LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.q_norm.weight", g + "attn_q_norm.weight", 0, hd));
      LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.k_norm.weight", g + "attn_k_norm.weight", 0, hd));
    }
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.o_proj.weight", g + "attn_output.weight", h, q));
    if (c_.o_bias) LLMSERVE_RETURN_IF_ERROR(Copy(p + "self_attn.o_proj.bias", g + "attn_output.bias", 0, h));
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "post_attention_layernorm.weight", g + "ffn_norm.weight", 0, h));
    if (c_.IsMoeLayer(i)) return Experts(i, g);
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "mlp.gate_proj.weight", g + "ffn_gate.weight", c_.intermediate_size, h));
    LLMSERVE_RETURN_IF_ERROR(Copy(p + "mlp.up_proj.weight", g + "ffn_up.weight", c_.intermediate_size, h));
    return Copy(p + "mlp.down_proj.weight", g + "ffn_down.weight", h, c_.intermediate_size, false, more);
  }

 private:
  const Checkpoint& ckpt_;
  const ModelConfig& c_;
  GgufWeightTypes types_;
  GgufWriter* w_;
};

Status WriteArchitecture(const ModelConfig& c, GgufWriter* w) {
  if (c.has_mla()) return Status::Unimplemented("GGUF export: DeepSeek (multi-head latent attention) is not supported");
  if (c.has_moe() && (c.moe.decoder_sparse_step != 1 || !c.moe.mlp_only_layers.empty())) {
    return Status::Unimplemented("GGUF export: llama.cpp's MoE architectures have experts in every layer");
  }
  if (c.has_moe() && !c.moe.norm_topk_prob) {
    return Status::Unimplemented("GGUF export: llama.cpp renormalises the chosen experts' weights; this model has "
                                 "norm_topk_prob false");
  }
  const std::string a = GgufArchitectureName(c.architecture);
  auto u32 = [](size_t v) { return static_cast<uint32_t>(v); };
  w->Set("general.architecture", a);
  w->Set(a + ".block_count", u32(c.num_layers));
  w->Set(a + ".context_length", u32(c.max_position_embeddings));
  w->Set(a + ".embedding_length", u32(c.hidden_size));
  w->Set(a + ".feed_forward_length", u32(c.intermediate_size));
  w->Set(a + ".attention.head_count", u32(c.num_heads));
  w->Set(a + ".attention.head_count_kv", u32(c.num_kv_heads));
  w->Set(a + ".attention.key_length", u32(c.head_dim));
  w->Set(a + ".attention.value_length", u32(c.head_dim));
  w->Set(a + ".attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  w->Set(a + ".rope.freq_base", static_cast<float>(c.rope_theta));
  if (c.has_moe()) {
    w->Set(a + ".expert_count", u32(c.moe.num_experts));
    w->Set(a + ".expert_used_count", u32(c.moe.num_experts_per_tok));
    if (c.architecture == Architecture::kQwen3Moe) {
      w->Set(a + ".expert_feed_forward_length", u32(c.moe.intermediate_size));
    }
  }
  using Type = kernels::cpu::RopeScaling::Type;
  const auto& s = c.rope_scaling;
  if (s.type == Type::kLinear || s.type == Type::kYarn) {
    w->Set(a + ".rope.scaling.type", s.type == Type::kLinear ? "linear" : "yarn");
    w->Set(a + ".rope.scaling.factor", static_cast<float>(s.factor));
    if (s.type == Type::kYarn) w->Set(a + ".rope.scaling.original_context_length", u32(s.original_max_position));
  } else if (s.type != Type::kNone) {
    return Status::Unimplemented("GGUF export: this rope_scaling type is not supported");
  }
  if (c.sliding_window != 0) return Status::Unimplemented("GGUF export: sliding_window is not supported");
  return Status::Ok();
}

}  // namespace

Status ExportGguf(const std::string& hf_dir, const GgufWeightTypes& types, const std::string& out_path) {
  LLMSERVE_ASSIGN_OR_RETURN(ModelConfig c, LoadModelConfig(hf_dir));
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::Open(hf_dir));
  GgufWriter w;
  LLMSERVE_RETURN_IF_ERROR(WriteArchitecture(c, &w));
  // "qwen2" is llama.cpp's pre-tokenizer name for the Qwen tokenizer that
  // test models carry.
  LLMSERVE_RETURN_IF_ERROR(common::tokenizer::WriteTokenizerMetadata(hf_dir, "qwen2", &w));
  Exporter e(*ckpt, c, types, &w);
  LLMSERVE_RETURN_IF_ERROR(e.Copy("model.embed_tokens.weight", "token_embd.weight", c.vocab_size, c.hidden_size,
                                  false, c.tie_word_embeddings));
  for (size_t i = 0; i < c.num_layers; ++i) LLMSERVE_RETURN_IF_ERROR(e.Layer(i));
  LLMSERVE_RETURN_IF_ERROR(e.Copy("model.norm.weight", "output_norm.weight", 0, c.hidden_size));
  if (!c.tie_word_embeddings) {
    LLMSERVE_RETURN_IF_ERROR(e.Copy("lm_head.weight", "output.weight", c.vocab_size, c.hidden_size, false, true));
  }
  return w.WriteFile(out_path);
}

}  // namespace llmserve::worker
