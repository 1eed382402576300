#include "worker/model_loader.h"

#include <cstring>

#include "common/gguf/model_path.h"
#include "kernels/cpu/embedding.h"
#include "worker/gguf_model_loader.h"
#include "worker/load_progress.h"

namespace llmserve::worker {

using kernels::cpu::LinearWeight;
using kernels::cpu::WeightDType;

size_t ModelWeights::matmul_bytes() const {
  size_t n = lm_head.bytes();
  for (const auto& l : layers) n += l.qkv.bytes() + l.o.bytes() + l.gate_up.bytes() + l.down.bytes() + l.moe.bytes();
  return n;
}

StatusOr<ShardDims> ComputeShardDims(const ModelConfig& c, size_t tp_rank, size_t tp_size) {
  if (tp_size == 0 || tp_rank >= tp_size) {
    return Status::InvalidArgument("tp_rank " + std::to_string(tp_rank) + " out of range for tp_size " +
                                   std::to_string(tp_size));
  }
  auto need = [&](size_t v, const char* what) -> Status {
    if (v % tp_size != 0) {
      return Status::InvalidArgument(std::string(what) + " (" + std::to_string(v) +
                                     ") is not divisible by the tensor-parallel size " +
                                     std::to_string(tp_size));
    }
    return Status::Ok();
  };
  LLMSERVE_RETURN_IF_ERROR(need(c.num_heads, "num_attention_heads"));
  LLMSERVE_RETURN_IF_ERROR(need(c.num_kv_heads, "num_key_value_heads"));
  LLMSERVE_RETURN_IF_ERROR(need(c.intermediate_size, "intermediate_size"));
  if (c.has_moe()) LLMSERVE_RETURN_IF_ERROR(need(c.moe.intermediate_size, "moe_intermediate_size"));
  ShardDims d;
  d.tp_rank = tp_rank;
  d.tp_size = tp_size;
  d.num_heads = c.num_heads / tp_size;
  d.num_kv_heads = c.num_kv_heads / tp_size;
  d.intermediate_size = c.intermediate_size / tp_size;
  d.moe_intermediate_size = c.moe.intermediate_size / tp_size;
  d.vocab_per_rank = (c.vocab_size + tp_size - 1) / tp_size;
  d.vocab_begin = std::min(c.vocab_size, tp_rank * d.vocab_per_rank);
  d.vocab_end = std::min(c.vocab_size, d.vocab_begin + d.vocab_per_rank);
  return d;
}

namespace {

class Loader {
 public:
  Loader(const Checkpoint& ckpt, const ModelConfig& c, const ShardDims& d, const LoadOptions& o)
      : ckpt_(ckpt), c_(c), d_(d), o_(o) {}

  StatusOr<std::vector<float>> Vector(const std::string& name, size_t n, size_t begin = 0, size_t count = 0) {
    LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(name, {n}));
    if (count == 0) count = n;
    std::vector<float> out(count);
    kernels::cpu::ConvertToF32(static_cast<const uint8_t*>(t.data) + begin * t.element_size(), t.dtype,
                               count, out.data());
    return out;
  }

  // Rows [begin, begin + count) of several [rows_i × cols] tensors, stacked and packed.
  StatusOr<LinearWeight> ColumnParallel(const std::vector<std::string>& names,
                                        const std::vector<size_t>& full_rows,
                                        const std::vector<size_t>& begin, const std::vector<size_t>& count,
                                        size_t cols) {
    std::vector<TensorView> views;
    size_t total = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(names[i], {full_rows[i], cols}));
      if (!views.empty() && t.dtype != views[0].dtype) {
        return Status::Unimplemented(t.file + ": tensor " + t.name + " has a different dtype from " +
                                     views[0].name + " (mixed dtypes in one fused matmul)");
      }
      views.push_back(t);
      total += count[i];
    }
    const size_t es = views[0].element_size();
    if (views.size() == 1) {
      return LinearWeight::Pack(static_cast<const uint8_t*>(views[0].data) + begin[0] * cols * es,
                                views[0].dtype, count[0], cols, cols, o_.precision);
    }
    std::vector<uint8_t> stacked(total * cols * es);
    size_t row = 0;
    for (size_t i = 0; i < views.size(); ++i) {
      std::memcpy(&stacked[row * cols * es],
                  static_cast<const uint8_t*>(views[i].data) + begin[i] * cols * es, count[i] * cols * es);
      row += count[i];
    }
    return LinearWeight::Pack(stacked.data(), views[0].dtype, total, cols, cols, o_.precision);
  }

  // Columns [begin, begin + count) of a [rows × full_cols] tensor.
  StatusOr<LinearWeight> RowParallel(const std::string& name, size_t rows, size_t full_cols,
                                     size_t begin, size_t count) {
    LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(name, {rows, full_cols}));
    return LinearWeight::Pack(static_cast<const uint8_t*>(t.data) + begin * t.element_size(), t.dtype,
                              rows, count, full_cols, o_.precision);
  }

  StatusOr<LayerWeights> Layer(size_t i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const size_t h = c_.hidden_size, hd = c_.head_dim;
    LayerWeights l;
    LLMSERVE_ASSIGN_OR_RETURN(l.input_norm, Vector(p + "input_layernorm.weight", h));
    LLMSERVE_ASSIGN_OR_RETURN(l.post_attention_norm, Vector(p + "post_attention_layernorm.weight", h));
    if (c_.qk_norm) {
      LLMSERVE_ASSIGN_OR_RETURN(l.q_norm, Vector(p + "self_attn.q_norm.weight", hd));
      LLMSERVE_ASSIGN_OR_RETURN(l.k_norm, Vector(p + "self_attn.k_norm.weight", hd));
    }
    const size_t q_rows = c_.num_heads * hd, kv_rows = c_.num_kv_heads * hd;
    const size_t q_begin = d_.tp_rank * d_.num_heads * hd, q_count = d_.num_heads * hd;
    const size_t kv_begin = d_.tp_rank * d_.num_kv_heads * hd, kv_count = d_.num_kv_heads * hd;
    auto qkv = ColumnParallel({p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
                               p + "self_attn.v_proj.weight"},
                              {q_rows, kv_rows, kv_rows}, {q_begin, kv_begin, kv_begin},
                              {q_count, kv_count, kv_count}, h);
    LLMSERVE_ASSIGN_OR_RETURN(l.qkv, std::move(qkv));
    if (c_.qkv_bias) {
      LLMSERVE_ASSIGN_OR_RETURN(auto qb, Vector(p + "self_attn.q_proj.bias", q_rows, q_begin, q_count));
      LLMSERVE_ASSIGN_OR_RETURN(auto kb, Vector(p + "self_attn.k_proj.bias", kv_rows, kv_begin, kv_count));
      LLMSERVE_ASSIGN_OR_RETURN(auto vb, Vector(p + "self_attn.v_proj.bias", kv_rows, kv_begin, kv_count));
      l.qkv_bias = qb;
      l.qkv_bias.insert(l.qkv_bias.end(), kb.begin(), kb.end());
      l.qkv_bias.insert(l.qkv_bias.end(), vb.begin(), vb.end());
    }
    LLMSERVE_ASSIGN_OR_RETURN(l.o, RowParallel(p + "self_attn.o_proj.weight", h, q_rows, q_begin, q_count));
    if (c_.o_bias) {
      LLMSERVE_ASSIGN_OR_RETURN(l.o_bias, Vector(p + "self_attn.o_proj.bias", h));
    }
    if (c_.IsMoeLayer(i)) {
      LLMSERVE_ASSIGN_OR_RETURN(l.moe, Moe(i));
      return l;
    }
    const size_t ff = c_.intermediate_size, ff_begin = d_.tp_rank * d_.intermediate_size;
    auto gate_up = ColumnParallel({p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}, {ff, ff},
                                  {ff_begin, ff_begin}, {d_.intermediate_size, d_.intermediate_size}, h);
    LLMSERVE_ASSIGN_OR_RETURN(l.gate_up, std::move(gate_up));
    auto down = RowParallel(p + "mlp.down_proj.weight", h, ff, ff_begin, d_.intermediate_size);
    LLMSERVE_ASSIGN_OR_RETURN(l.down, std::move(down));
    return l;
  }

  // Layer i's router (whole) and experts (this rank's rows of gate and up,
  // columns of down), under Qwen3-MoE's or Mixtral's tensor names.
  StatusOr<MoeWeights> Moe(size_t i) {
    const bool mixtral = c_.architecture == Architecture::kMixtral;
    const std::string p = "model.layers." + std::to_string(i) + (mixtral ? ".block_sparse_moe." : ".mlp.");
    const size_t h = c_.hidden_size, ff = c_.moe.intermediate_size;
    const size_t count = d_.moe_intermediate_size, begin = d_.tp_rank * count;
    MoeWeights m;
    LLMSERVE_ASSIGN_OR_RETURN(TensorView router, ckpt_.Get(p + "gate.weight", {c_.moe.num_experts, h}));
    m.router = LinearWeight::Pack(router.data, router.dtype, c_.moe.num_experts, h, h,
                                  kernels::cpu::MatmulPrecision::kF32);
    for (size_t e = 0; e < c_.moe.num_experts; ++e) {
      const std::string x = p + "experts." + std::to_string(e) + ".";
      const std::string gate = x + (mixtral ? "w1" : "gate_proj") + ".weight";
      const std::string up = x + (mixtral ? "w3" : "up_proj") + ".weight";
      const std::string down = x + (mixtral ? "w2" : "down_proj") + ".weight";
      ExpertWeights ew;
      LLMSERVE_ASSIGN_OR_RETURN(ew.gate_up, ColumnParallel({gate, up}, {ff, ff}, {begin, begin}, {count, count}, h));
      LLMSERVE_ASSIGN_OR_RETURN(ew.down, RowParallel(down, h, ff, begin, count));
      m.experts.push_back(std::move(ew));
    }
    return m;
  }

 private:
  const Checkpoint& ckpt_;
  const ModelConfig& c_;
  const ShardDims& d_;
  const LoadOptions& o_;
};

}  // namespace

StatusOr<ModelWeights> LoadModelWeights(const std::string& dir, const ModelConfig& config,
                                        const LoadOptions& options) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string gguf, common::gguf::GgufModelFile(dir));
  if (!gguf.empty()) return LoadGgufModelWeights(gguf, config, options);
  LLMSERVE_ASSIGN_OR_RETURN(ShardDims dims, ComputeShardDims(config, options.tp_rank, options.tp_size));
  ModelWeights w;
  LLMSERVE_ASSIGN_OR_RETURN(w.checkpoint, Checkpoint::Open(dir));
  Loader loader(*w.checkpoint, config, dims, options);
  LoadProgress progress("loading " + dir, config.num_layers + 2, options.show_progress);
  auto embedding = w.checkpoint->Get("model.embed_tokens.weight", {config.vocab_size, config.hidden_size});
  LLMSERVE_ASSIGN_OR_RETURN(w.embedding, std::move(embedding));
  progress.Step();
  for (size_t i = 0; i < config.num_layers; ++i) {
    LLMSERVE_ASSIGN_OR_RETURN(LayerWeights layer, loader.Layer(i));
    w.layers.push_back(std::move(layer));
    progress.Step();
  }
  LLMSERVE_ASSIGN_OR_RETURN(w.final_norm, loader.Vector("model.norm.weight", config.hidden_size));
  const bool has_lm_head = w.checkpoint->Has("lm_head.weight");
  if (!config.tie_word_embeddings && !has_lm_head) {
    return Status::NotFound(dir + ": tensor lm_head.weight is missing from the checkpoint "
                            "(tie_word_embeddings is false)");
  }
  const std::string head = config.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight";
  auto lm_head = loader.ColumnParallel({head}, {config.vocab_size}, {dims.vocab_begin},
                                       {dims.vocab_end - dims.vocab_begin}, config.hidden_size);
  LLMSERVE_ASSIGN_OR_RETURN(w.lm_head, std::move(lm_head));
  progress.Step();
  return w;
}

}  // namespace llmserve::worker
