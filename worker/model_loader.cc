#include "worker/model_loader.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "common/gguf/model_path.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/gemm_q8.h"
#include "worker/fp8_weights.h"
#include "worker/int4_weights.h"
#include "worker/int8_weights.h"
#include "worker/gguf_model_loader.h"
#include "worker/load_progress.h"

namespace llmserve::worker {

using kernels::cpu::LinearWeight;
using kernels::cpu::WeightDType;

namespace {

// Packed matmul bytes of `w` with each held expert counted `expert_share` times.
double MatmulBytes(const ModelWeights& w, double expert_share) {
  double bytes = static_cast<double>(w.lm_head.bytes());
  for (const auto& l : w.layers) {
    bytes += static_cast<double>(l.qkv.bytes() + l.o.bytes() + l.mla.bytes() + l.gate_up.bytes() + l.down.bytes());
    if (l.moe.empty()) continue;
    bytes += static_cast<double>(l.moe.router.bytes() + l.moe.shared.gate_up.bytes() + l.moe.shared.down.bytes());
    for (const auto& e : l.moe.experts) bytes += expert_share * static_cast<double>(e.gate_up.bytes() + e.down.bytes());
  }
  return bytes;
}

}  // namespace

size_t ModelWeights::matmul_bytes() const { return static_cast<size_t>(MatmulBytes(*this, 1.0)); }

double ExpectedStepBytes(const ModelWeights& w, const MoeConfig& moe, size_t tokens) {
  const double miss = moe.num_experts == 0 ? 1.0
                                           : 1.0 - static_cast<double>(moe.num_experts_per_tok) /
                                                       static_cast<double>(moe.num_experts);
  return MatmulBytes(w, 1.0 - std::pow(miss, static_cast<double>(tokens)));
}

StatusOr<ShardDims> ComputeShardDims(const ModelConfig& c, size_t tp_rank, size_t tp_size, bool expert_parallel,
                                     ExpertPlacement placement) {
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
  const bool ep = expert_parallel && c.has_moe() && tp_size > 1;
  if (ep && c.moe.num_experts < tp_size) {
    return Status::InvalidArgument("--enable-expert-parallel: " + std::to_string(c.moe.num_experts) +
                                   " experts cannot be spread over " + std::to_string(tp_size) + " ranks");
  }
  if (c.has_moe() && !ep) LLMSERVE_RETURN_IF_ERROR(need(c.moe.intermediate_size, "moe_intermediate_size"));
  if (c.moe.shared_intermediate_size > 0) {
    LLMSERVE_RETURN_IF_ERROR(need(c.moe.shared_intermediate_size, "n_shared_experts × moe_intermediate_size"));
  }
  ShardDims d;
  d.tp_rank = tp_rank;
  d.tp_size = tp_size;
  d.num_heads = c.num_heads / tp_size;
  d.num_kv_heads = c.num_kv_heads / tp_size;
  d.intermediate_size = c.intermediate_size / tp_size;
  d.moe_intermediate_size = ep ? c.moe.intermediate_size : c.moe.intermediate_size / tp_size;
  if (ep) d.local_experts = LocalExperts(c.moe.num_experts, tp_rank, tp_size, placement);
  d.shared_intermediate_size = c.moe.shared_intermediate_size / tp_size;
  d.vocab_per_rank = (c.vocab_size + tp_size - 1) / tp_size;
  d.vocab_begin = std::min(c.vocab_size, tp_rank * d.vocab_per_rank);
  d.vocab_end = std::min(c.vocab_size, d.vocab_begin + d.vocab_per_rank);
  return d;
}

namespace {

class Loader {
 public:
  Loader(const Checkpoint& ckpt, const ModelConfig& c, const ShardDims& d, const LoadOptions& o, bool quantize_int8)
      : ckpt_(ckpt), c_(c), d_(d), o_(o), quantize_int8_(quantize_int8) {}

  StatusOr<std::vector<float>> Vector(const std::string& name, size_t n, size_t begin = 0, size_t count = 0) {
    LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(name, {n}));
    if (IsInteger(t.dtype)) return NotAMatrix(t);
    if (count == 0) count = n;
    std::vector<float> out(count);
    kernels::cpu::ConvertToF32(static_cast<const uint8_t*>(t.data) + begin * t.element_size(), t.dtype,
                               count, out.data());
    return out;
  }

  // A KV cache scale: one positive finite float (shape [] or [1]).
  StatusOr<float> KvScale(const std::string& name) {
    const TensorView* t = ckpt_.Find(name);
    if (t == nullptr) return Status::InvalidArgument("checkpoint has one of k_scale / v_scale but not " + name);
    if (t->num_elements() != 1 || IsInteger(t->dtype))
      return Status::InvalidArgument(name + " must be one float, got " + t->ShapeString() + " in " + t->file);
    float v = 0;
    kernels::cpu::ConvertToF32(t->data, t->dtype, 1, &v);
    if (!(v > 0) || !std::isfinite(v))
      return Status::InvalidArgument(name + " must be a positive finite scale, got " + std::to_string(v));
    return v;
  }

  // Rows [begin, begin + count) of several [rows_i × cols] tensors, stacked
  // and packed. `quantizable`: --quantization int8 applies to it.
  StatusOr<LinearWeight> ColumnParallel(const std::vector<std::string>& names,
                                        const std::vector<size_t>& full_rows,
                                        const std::vector<size_t>& begin, const std::vector<size_t>& count,
                                        size_t cols, bool quantizable = true) {
    std::vector<Slice> slices;
    for (size_t i = 0; i < names.size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(Slice s, Matrix(names[i], full_rows[i], cols));
      s.begin = begin[i];
      s.count = count[i];
      slices.push_back(std::move(s));
    }
    return PackStacked(slices, quantizable);
  }

  // Columns [begin, begin + count) of a [rows × full_cols] tensor.
  StatusOr<LinearWeight> RowParallel(const std::string& name, size_t rows, size_t full_cols,
                                     size_t begin, size_t count) {
    LLMSERVE_ASSIGN_OR_RETURN(Slice s, Matrix(name, rows, full_cols));
    s.col_begin = begin;
    s.cols = count;
    return PackStacked({s}, true);
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
    if (c_.has_mla()) {
      LLMSERVE_RETURN_IF_ERROR(MlaAttention(i, &l));
    } else {
      LLMSERVE_RETURN_IF_ERROR(Attention(i, &l));
    }
    if (c_.IsMoeLayer(i)) {
      LLMSERVE_ASSIGN_OR_RETURN(l.moe, Moe(i));
      return l;
    }
    auto mlp = SwigluMlp(p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight", p + "mlp.down_proj.weight",
                         c_.intermediate_size, d_.tp_rank * d_.intermediate_size, d_.intermediate_size);
    LLMSERVE_ASSIGN_OR_RETURN(ExpertWeights dense, std::move(mlp));
    l.gate_up = std::move(dense.gate_up);
    l.down = std::move(dense.down);
    return l;
  }

  // Layer i's q/k/v/o projections (this rank's heads), biases and KV cache scales.
  Status Attention(size_t i, LayerWeights* out) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const size_t h = c_.hidden_size, hd = c_.head_dim;
    LayerWeights& l = *out;
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
    if (ckpt_.Has(p + "self_attn.k_scale") || ckpt_.Has(p + "self_attn.v_scale")) {
      LLMSERVE_ASSIGN_OR_RETURN(l.k_scale, KvScale(p + "self_attn.k_scale"));
      LLMSERVE_ASSIGN_OR_RETURN(l.v_scale, KvScale(p + "self_attn.v_scale"));
      l.has_kv_scales = true;
    }
    if (c_.o_bias) {
      LLMSERVE_ASSIGN_OR_RETURN(l.o_bias, Vector(p + "self_attn.o_proj.bias", h));
    }
    return Status::Ok();
  }

  // Layer i's DeepSeek MLA weights: the fused first matmul (q_a_proj or this
  // rank's q_proj rows, then kv_a_proj_with_mqa), the norms, q_b_proj's and
  // kv_b_proj's rows of this rank's heads, and o_proj's columns.
  Status MlaAttention(size_t i, LayerWeights* l) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    const MlaConfig& a = c_.mla;
    const size_t h = c_.hidden_size, nh = c_.num_heads, local = d_.num_heads, first_head = d_.tp_rank * local;
    const size_t qk = a.qk_head_dim(), lat = a.latent_dim(), rank = a.kv_lora_rank;
    if (a.q_lora_rank > 0) {
      auto first = ColumnParallel({p + "q_a_proj.weight", p + "kv_a_proj_with_mqa.weight"}, {a.q_lora_rank, lat},
                                  {0, 0}, {a.q_lora_rank, lat}, h);
      LLMSERVE_ASSIGN_OR_RETURN(l->qkv, std::move(first));
      LLMSERVE_ASSIGN_OR_RETURN(l->mla.q_a_norm, Vector(p + "q_a_layernorm.weight", a.q_lora_rank));
      auto q_b = ColumnParallel({p + "q_b_proj.weight"}, {nh * qk}, {first_head * qk}, {local * qk}, a.q_lora_rank);
      LLMSERVE_ASSIGN_OR_RETURN(l->mla.q_b, std::move(q_b));
    } else {
      auto first = ColumnParallel({p + "q_proj.weight", p + "kv_a_proj_with_mqa.weight"}, {nh * qk, lat},
                                  {first_head * qk, 0}, {local * qk, lat}, h);
      LLMSERVE_ASSIGN_OR_RETURN(l->qkv, std::move(first));
    }
    LLMSERVE_ASSIGN_OR_RETURN(l->mla.kv_a_norm, Vector(p + "kv_a_layernorm.weight", rank));
    const size_t per_head = a.qk_nope_head_dim + a.v_head_dim;
    LLMSERVE_ASSIGN_OR_RETURN(Slice kv_b, Matrix(p + "kv_b_proj.weight", nh * per_head, rank));
    if (kv_b.decoded != nullptr || IsInteger(kv_b.t.dtype)) {
      return Status::Unimplemented(kv_b.t.file + ": an integer-quantized " + kv_b.t.name +
                                   " (MLA's kv_b_proj) is not supported");
    }
    for (size_t head = first_head; head < first_head + local; ++head) {
      // W_UK: the head's K rows, transposed to [rank × nope], so that it maps
      // the head's q_nope into latent space.
      std::vector<float> k_rows(a.qk_nope_head_dim * rank), uk(rank * a.qk_nope_head_dim);
      for (size_t r = 0; r < a.qk_nope_head_dim; ++r) {
        kernels::cpu::ConvertToF32(kv_b.Row(head * per_head + r), kv_b.t.dtype, rank, &k_rows[r * rank]);
      }
      for (size_t r = 0; r < a.qk_nope_head_dim; ++r) {
        for (size_t col = 0; col < rank; ++col) uk[col * a.qk_nope_head_dim + r] = k_rows[r * rank + col];
      }
      l->mla.uk.push_back(LinearWeight::Pack(uk.data(), WeightDType::kF32, rank, a.qk_nope_head_dim,
                                             a.qk_nope_head_dim, o_.precision));
      Slice v_rows = kv_b;
      v_rows.begin = head * per_head + a.qk_nope_head_dim;
      v_rows.count = a.v_head_dim;
      LLMSERVE_ASSIGN_OR_RETURN(LinearWeight uv, PackStacked({v_rows}, true));
      l->mla.uv.push_back(std::move(uv));
    }
    const size_t v_cols = local * a.v_head_dim;
    auto o = RowParallel(p + "o_proj.weight", h, nh * a.v_head_dim, first_head * a.v_head_dim, v_cols);
    LLMSERVE_ASSIGN_OR_RETURN(l->o, std::move(o));
    return Status::Ok();
  }

  // A SwiGLU MLP ff wide: `count` rows of gate and up (stacked) from
  // `begin`, the same columns of down.
  StatusOr<ExpertWeights> SwigluMlp(const std::string& gate, const std::string& up, const std::string& down, size_t ff,
                                    size_t begin, size_t count) {
    const size_t h = c_.hidden_size;
    ExpertWeights w;
    LLMSERVE_ASSIGN_OR_RETURN(w.gate_up, ColumnParallel({gate, up}, {ff, ff}, {begin, begin}, {count, count}, h));
    LLMSERVE_ASSIGN_OR_RETURN(w.down, RowParallel(down, h, ff, begin, count));
    return w;
  }

  // Layer i's router (whole) and experts (this rank's rows of gate and up,
  // columns of down), under Qwen3-MoE's or Mixtral's tensor names.
  StatusOr<MoeWeights> Moe(size_t i) {
    const bool mixtral = c_.architecture == Architecture::kMixtral;
    const std::string p = "model.layers." + std::to_string(i) + (mixtral ? ".block_sparse_moe." : ".mlp.");
    const size_t h = c_.hidden_size, ff = c_.moe.intermediate_size, count = d_.moe_intermediate_size;
    MoeWeights m;
    LLMSERVE_ASSIGN_OR_RETURN(TensorView router, ckpt_.Get(p + "gate.weight", {c_.moe.num_experts, h}));
    if (IsInteger(router.dtype)) return NotAMatrix(router);
    m.router = LinearWeight::Pack(router.data, router.dtype, c_.moe.num_experts, h, h,
                                  kernels::cpu::MatmulPrecision::kF32);
    m.experts.resize(c_.moe.num_experts);
    for (size_t e = 0; e < c_.moe.num_experts; ++e) {
      if (!d_.local_experts.empty() && !d_.local_experts[e]) continue;  // another rank's (EP)
      const std::string x = p + "experts." + std::to_string(e) + ".";
      const std::string gate = x + (mixtral ? "w1" : "gate_proj") + ".weight";
      const std::string up = x + (mixtral ? "w3" : "up_proj") + ".weight";
      const size_t first = d_.local_experts.empty() ? d_.tp_rank * count : 0;
      auto expert = SwigluMlp(gate, up, x + (mixtral ? "w2" : "down_proj") + ".weight", ff, first, count);
      LLMSERVE_ASSIGN_OR_RETURN(m.experts[e], std::move(expert));
    }
    if (c_.moe.correction_bias) {
      LLMSERVE_ASSIGN_OR_RETURN(m.correction_bias, Vector(p + "gate.e_score_correction_bias", c_.moe.num_experts));
    }
    if (c_.moe.shared_intermediate_size > 0) {
      const std::string x = p + "shared_experts.";
      auto shared = SwigluMlp(x + "gate_proj.weight", x + "up_proj.weight", x + "down_proj.weight",
                              c_.moe.shared_intermediate_size, d_.tp_rank * d_.shared_intermediate_size,
                              d_.shared_intermediate_size);
      LLMSERVE_ASSIGN_OR_RETURN(m.shared, std::move(shared));
    }
    return m;
  }

 private:
  // Rows [begin, begin + count) and columns [col_begin, col_begin + cols) of
  // one checkpoint matrix: a tensor (float or int8), a 4-bit weight widened
  // to int8 groups, or an FP8 weight times its scales.
  struct Slice {
    TensorView t;
    std::shared_ptr<const Int8Groups> decoded;
    std::shared_ptr<const std::vector<float>> scaled;  // FP8: the whole matrix, f32
    size_t begin = 0, count = 0;
    size_t col_begin = 0, cols = 0;
    const uint8_t* Row(size_t r) const {
      if (scaled != nullptr) return reinterpret_cast<const uint8_t*>(&(*scaled)[(begin + r) * t.shape[1] + col_begin]);
      return static_cast<const uint8_t*>(t.data) + ((begin + r) * t.shape[1] + col_begin) * t.element_size();
    }
  };

  // Integers and FP8 are only for linear layers' weights (with their scales).
  static bool IsInteger(WeightDType d) {
    return d == WeightDType::kI8 || d == WeightDType::kI32 || d == WeightDType::kF8E4M3;
  }
  static Status NotAMatrix(const TensorView& t) {
    return Status::Unimplemented(t.file + ": tensor " + t.name +
                                 " holds quantized values; only linear layers' quantized weights may");
  }

  // The whole [rows × cols] matrix `name` (PREFIX.weight), as a slice.
  StatusOr<Slice> Matrix(const std::string& name, size_t rows, size_t cols) {
    Slice s;
    s.count = rows;
    s.cols = cols;
    const std::string prefix = name.substr(0, name.size() - std::string(".weight").size());
    const bool int4 = c_.quantization == Quantization::kGptq || c_.quantization == Quantization::kAwq ||
                      c_.quantization == Quantization::kCompressedTensorsWna16;
    const char* packed = c_.int4.packing == Int4Packing::kPackQuantized ? ".weight_packed" : ".qweight";
    if (int4 && !ckpt_.Has(name) && ckpt_.Has(prefix + packed)) {
      LLMSERVE_ASSIGN_OR_RETURN(Int8Groups g, DecodeInt4(ckpt_, prefix, rows, cols, c_.int4));
      s.decoded = std::make_shared<const Int8Groups>(std::move(g));
      return s;
    }
    LLMSERVE_ASSIGN_OR_RETURN(s.t, ckpt_.Get(name, {rows, cols}));
    if (s.t.dtype == WeightDType::kI32) return NotAMatrix(s.t);
    if (s.t.dtype == WeightDType::kF8E4M3) {
      if (c_.quantization != Quantization::kFp8 && c_.quantization != Quantization::kCompressedTensorsFp8) {
        return Status::InvalidArgument(s.t.file + ": tensor " + name +
                                       " is F8_E4M3 but config.json declares no FP8 quantization_config");
      }
      LLMSERVE_ASSIGN_OR_RETURN(std::vector<float> w, DequantizeFp8(ckpt_, s.t, c_.fp8));
      s.scaled = std::make_shared<const std::vector<float>>(std::move(w));
      s.t.dtype = WeightDType::kF32;  // what Row() points at from now on
    }
    return s;
  }

  // Slices stacked by rows, packed as one weight. Integer slices (int8 with
  // per-row scales, GPTQ's or AWQ's 4-bit groups) and, under --quantization int8,
  // float ones made int8 take the int8 kernels; the f32 reference mode (and
  // an in_features the int8 kernels cannot take) multiplies their exactly
  // dequantized values.
  StatusOr<LinearWeight> PackStacked(const std::vector<Slice>& slices, bool quantizable) {
    const WeightDType dtype = slices[0].t.dtype;
    const bool decoded = slices[0].decoded != nullptr;
    const size_t cols = slices[0].cols;
    size_t rows = 0;
    for (const Slice& s : slices) {
      if ((s.decoded != nullptr) != decoded || (!decoded && s.t.dtype != dtype)) {
        return Status::Unimplemented(s.t.file + ": tensor " + s.t.name + " has a different dtype from " +
                                     slices[0].t.name + " (mixed dtypes in one fused matmul)");
      }
      rows += s.count;
    }
    if (decoded && !OneInputOrder(slices)) {
      // Act-order slices that differ in column order, or a shard of one:
      // their exactly dequantized values, in the checkpoint's column order,
      // multiplied in f32 (4 bytes a weight: correct, not fast). Not bf16:
      // the model's other int8 weights do not take the bf16 kernels' tiled
      // activations, and a model's weights all take them or none does.
      std::vector<float> stacked;
      for (const Slice& s : slices) {
        const std::vector<float> full = Dequantize(*s.decoded);
        for (size_t r = 0; r < s.count; ++r) {
          const float* row = &full[(s.begin + r) * s.decoded->cols + s.col_begin];
          stacked.insert(stacked.end(), row, row + cols);
        }
      }
      return LinearWeight::Pack(stacked.data(), WeightDType::kF32, rows, cols, cols,
                                kernels::cpu::MatmulPrecision::kF32);
    }
    if (decoded || dtype == WeightDType::kI8 || (quantizable && quantize_int8_)) {
      LLMSERVE_ASSIGN_OR_RETURN(Int8Groups w, StackInt8(slices, rows));
      if (o_.precision == kernels::cpu::MatmulPrecision::kBF16 && cols % kernels::cpu::q8::kBlock == 0 &&
          w.group % kernels::cpu::q8::kBlock == 0) {
        LinearWeight packed = LinearWeight::PackInt8(w.q.data(), BlockScales(w).data(), rows, cols, cols);
        if (!w.input_order.empty()) packed.SetInputOrder(w.input_order);
        return packed;
      }
      return LinearWeight::Pack(Dequantize(w).data(), WeightDType::kF32, rows, cols, cols, o_.precision);
    }
    if (slices.size() == 1) {
      return LinearWeight::Pack(slices[0].Row(0), dtype, rows, cols, slices[0].t.shape[1], o_.precision);
    }
    const size_t es = slices[0].t.element_size();
    std::vector<uint8_t> stacked(rows * cols * es);
    size_t row = 0;
    for (const Slice& s : slices) {
      for (size_t r = 0; r < s.count; ++r) std::memcpy(&stacked[(row + r) * cols * es], s.Row(r), cols * es);
      row += s.count;
    }
    return LinearWeight::Pack(stacked.data(), dtype, rows, cols, cols, o_.precision);
  }

  // Whether decoded 4-bit slices can be one int8 matrix: all in the
  // checkpoint's column order, or all whole (unsharded) matrices in the same
  // act-order.
  static bool OneInputOrder(const std::vector<Slice>& slices) {
    const std::vector<uint32_t>& order = slices[0].decoded->input_order;
    if (order.empty()) {
      for (const Slice& s : slices) {
        if (!s.decoded->input_order.empty()) return false;
      }
      return true;
    }
    for (const Slice& s : slices) {
      if (s.decoded->input_order != order || s.col_begin != 0 || s.cols != s.decoded->cols) return false;
    }
    return true;
  }

  // The slices as one int8 matrix: 4-bit groups as decoded (a shard must not
  // split a group; act-order slices share OneInputOrder's order), int8
  // tensors with their per-row scales, float tensors quantized per row
  // (--quantization int8).
  StatusOr<Int8Groups> StackInt8(const std::vector<Slice>& slices, size_t rows) {
    Int8Groups w;
    w.rows = rows;
    w.cols = slices[0].cols;
    w.group = slices[0].decoded != nullptr ? slices[0].decoded->group : w.cols;
    if (slices[0].decoded != nullptr) w.input_order = slices[0].decoded->input_order;
    const size_t groups = w.groups();
    w.q.resize(rows * w.cols);
    w.scales.resize(rows * groups);
    size_t row = 0;
    for (const Slice& s : slices) {
      if (s.decoded != nullptr) {
        const Int8Groups& d = *s.decoded;
        if (s.col_begin % d.group != 0 || s.cols % d.group != 0) {
          return Status::InvalidArgument("a tensor-parallel shard of columns [" + std::to_string(s.col_begin) + ", " +
                                         std::to_string(s.col_begin + s.cols) + ") splits a 4-bit group of " +
                                         std::to_string(d.group) + " columns");
        }
        for (size_t r = 0; r < s.count; ++r) {
          std::memcpy(&w.q[(row + r) * w.cols], &d.q[(s.begin + r) * d.cols + s.col_begin], w.cols);
          std::memcpy(&w.scales[(row + r) * groups], &d.scales[(s.begin + r) * d.groups() + s.col_begin / d.group],
                      groups * sizeof(float));
        }
      } else if (s.t.dtype == WeightDType::kI8) {
        LLMSERVE_RETURN_IF_ERROR(RowScales(s.t, s.begin, s.count, &w.scales[row]));
        for (size_t r = 0; r < s.count; ++r) std::memcpy(&w.q[(row + r) * w.cols], s.Row(r), w.cols);
      } else {
        QuantizeSlice(s, &w.q[row * w.cols], &w.scales[row]);
      }
      row += s.count;
    }
    return w;
  }

  // A float slice quantized to int8 per row (--quantization int8). A row's
  // scale comes from the whole checkpoint row, so a tensor-parallel shard of
  // its columns has the scale the unsharded weight has.
  static void QuantizeSlice(const Slice& s, int8_t* q, float* scales) {
    std::vector<float> full(s.t.shape[1]);
    for (size_t r = 0; r < s.count; ++r) {
      kernels::cpu::ConvertToF32(s.Row(r) - s.col_begin * s.t.element_size(), s.t.dtype, full.size(), full.data());
      scales[r] = Int8RowScale(full.data(), full.size());
      QuantizeRowInt8(full.data() + s.col_begin, s.cols, scales[r], q + r * s.cols);
    }
  }

  // Scales of rows [begin, begin + count) of int8 tensor `t` from its
  // compressed-tensors companion NAME_scale: one per row ([rows, 1] or
  // [rows]) or one for the whole tensor ([1], [1, 1] or a scalar).
  Status RowScales(const TensorView& t, size_t begin, size_t count, float* out) const {
    const std::string name = t.name + "_scale";
    const TensorView* s = ckpt_.Find(name);
    if (s == nullptr) {
      return Status::NotFound(t.file + ": tensor " + t.name + " is int8 but its scales " + name + " are missing");
    }
    if (ckpt_.Has(t.name + "_zero_point")) {
      return Status::Unimplemented(t.file + ": tensor " + t.name +
                                   " has a zero point (asymmetric int8), which is not supported");
    }
    if (IsInteger(s->dtype)) return NotAMatrix(*s);
    const size_t rows = t.shape[0], n = s->num_elements();
    const bool per_row = n == rows && s->shape.size() >= 1 && s->shape[0] == rows &&
                         (s->shape.size() == 1 || (s->shape.size() == 2 && s->shape[1] == 1));
    if (!per_row && n != 1) {
      return Status::InvalidArgument(s->file + ": tensor " + name + " has shape " + s->ShapeString() + ", expected [" +
                                     std::to_string(rows) + ", 1] (per channel) or [1] (per tensor)");
    }
    std::vector<float> all(n);
    kernels::cpu::ConvertToF32(s->data, s->dtype, n, all.data());
    for (size_t r = 0; r < count; ++r) out[r] = per_row ? all[begin + r] : all[0];
    return Status::Ok();
  }

  const Checkpoint& ckpt_;
  const ModelConfig& c_;
  const ShardDims& d_;
  const LoadOptions& o_;
  const bool quantize_int8_;  // --quantization int8: float linear weights become int8 at load
};

}  // namespace

StatusOr<ModelWeights> LoadModelWeights(const std::string& dir, const ModelConfig& config,
                                        const LoadOptions& options) {
  LLMSERVE_ASSIGN_OR_RETURN(Quantization quantization, ResolveQuantization(options.quantization, config.quantization));
  LLMSERVE_ASSIGN_OR_RETURN(std::string gguf, common::gguf::GgufModelFile(dir));
  if (!gguf.empty()) return LoadGgufModelWeights(gguf, config, options);
  auto shard = ComputeShardDims(config, options.tp_rank, options.tp_size, options.expert_parallel,
                                options.expert_placement);
  LLMSERVE_ASSIGN_OR_RETURN(ShardDims dims, std::move(shard));
  ModelWeights w;
  LLMSERVE_ASSIGN_OR_RETURN(w.checkpoint, Checkpoint::Open(dir));
  Loader loader(*w.checkpoint, config, dims, options, quantization == Quantization::kInt8AtLoad);
  LoadProgress progress("loading " + dir, config.num_layers + 2, options.show_progress);
  auto embedding = w.checkpoint->Get("model.embed_tokens.weight", {config.vocab_size, config.hidden_size});
  LLMSERVE_ASSIGN_OR_RETURN(w.embedding, std::move(embedding));
  if (w.embedding.dtype == WeightDType::kI8 || w.embedding.dtype == WeightDType::kI32 ||
      w.embedding.dtype == WeightDType::kF8E4M3) {
    return Status::Unimplemented(w.embedding.file + ": the embedding table " + w.embedding.name +
                                 " holds quantized values, which is not supported");
  }
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
  // --quantization int8 leaves the output layer in its own type, as
  // compressed-tensors checkpoints do ("ignore": ["lm_head"]).
  auto lm_head = loader.ColumnParallel({head}, {config.vocab_size}, {dims.vocab_begin},
                                       {dims.vocab_end - dims.vocab_begin}, config.hidden_size,
                                       /*quantizable=*/false);
  LLMSERVE_ASSIGN_OR_RETURN(w.lm_head, std::move(lm_head));
  progress.Step();
  return w;
}

}  // namespace llmserve::worker
