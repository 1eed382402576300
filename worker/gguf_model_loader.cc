#include "worker/gguf_model_loader.h"

#include <utility>

#include "common/gguf/gguf_file.h"
#include "common/gguf/block_layouts.h"
#include "common/gguf/int8_blocks.h"
#include "worker/load_progress.h"

namespace llmserve::worker {

using common::gguf::GgmlType;
using common::gguf::GgufFile;
using common::gguf::GgufTensorInfo;
using kernels::cpu::LinearWeight;
using kernels::cpu::WeightDType;

size_t LlamaGgufRow(size_t r, size_t head_dim) {
  const size_t half = head_dim / 2, within = r % head_dim;
  return r - within + 2 * (within % half) + within / half;
}

namespace {

std::string Dims(std::initializer_list<size_t> dims) {
  std::string s = "[";
  for (size_t d : dims) s += (s.size() > 1 ? ", " : "") + std::to_string(d);
  return s + "]";
}

class GgufLoader {
 public:
  GgufLoader(const GgufFile& f, const ModelConfig& c, const ShardDims& d, const LoadOptions& o)
      : f_(f), c_(c), d_(d), o_(o) {}

  // The tensor `name` with GGUF dims {cols, rows} (or {cols} when rows is
  // 0), or, with `experts`, the stacked experts' {cols, rows / experts,
  // experts}, read as rows × cols.
  StatusOr<const GgufTensorInfo*> Tensor(const std::string& name, size_t rows, size_t cols, size_t experts = 0) const {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (t == nullptr) return Status::NotFound(f_.name() + ": tensor " + name + " is missing");
    bool ok = rows == 0 ? t->dims.size() == 1 && t->dims[0] == cols
                        : t->dims.size() == 2 && t->dims[0] == cols && t->dims[1] == rows;
    if (experts > 0) {
      ok = t->dims.size() == 3 && t->dims[0] == cols && t->dims[1] * experts == rows && t->dims[2] == experts;
    }
    if (!ok) {
      const std::string want = experts > 0 ? Dims({cols, rows / experts, experts})
                               : rows == 0 ? Dims({cols})
                                           : Dims({cols, rows});
      return Status::InvalidArgument(f_.name() + ": tensor " + name + " has shape " + t->ShapeString() +
                                     ", expected " + want);
    }
    return t;
  }

  // Elements [begin, begin + count) of a vector of n (count 0: all); with
  // `permuted`, element i comes from LlamaGgufRow(i).
  StatusOr<std::vector<float>> Vector(const std::string& name, size_t n, size_t begin = 0, size_t count = 0,
                                      bool permuted = false) const {
    LLMSERVE_ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, 0, n));
    std::vector<float> all(n);
    LLMSERVE_RETURN_IF_ERROR(common::gguf::DequantizeRows(*t, 0, 1, all.data()));
    if (count == 0) count = n;
    std::vector<float> out(count);
    for (size_t i = 0; i < count; ++i) out[i] = all[permuted ? LlamaGgufRow(begin + i, c_.head_dim) : begin + i];
    return out;
  }

  // Rows [begin, begin + count) of a [rows × cols] weight, dequantised and
  // appended to `out`; with `permuted`, llama.cpp's q/k row order is undone.
  Status AppendRows(const std::string& name, size_t rows, size_t cols, size_t begin, size_t count,
                    bool permuted, std::vector<float>* out, size_t experts = 0) const {
    LLMSERVE_ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, rows, cols, experts));
    const size_t at = out->size();
    out->resize(at + count * cols);
    float* dst = out->data() + at;
    if (!permuted) return common::gguf::DequantizeRows(*t, begin, count, dst);
    for (size_t r = 0; r < count; ++r) {
      LLMSERVE_RETURN_IF_ERROR(
          common::gguf::DequantizeRows(*t, LlamaGgufRow(begin + r, c_.head_dim), 1, dst + r * cols));
    }
    return Status::Ok();
  }

  // Rows [begin, begin + count) of one weight of `rows` rows, in a stack.
  struct Part {
    std::string name;
    size_t rows, begin, count;
    bool permuted;
    size_t experts = 0;  // > 0: a stacked-experts tensor (Tensor's `experts`)
  };

  // How the named weights (stacked in this order, `counts` rows of each)
  // reach the integer kernels: as Q8_0 (gemm_q8.h) when all are Q8_0; as
  // K-quants (gemm_q4k.h, gemm_q6k.h; Q4_K, Q5_K and Q6_K mixed, as in a
  // Q4_K_M file) when all are K-quants and every part but the last is whole
  // groups of 8 rows; as int8 blocks (common/gguf/int8_blocks.h) for the
  // same kernels when all are Q8_0, Q4_0 or Q5_0; else dequantized, and
  // always in the f32 reference mode (which multiplies the exactly
  // dequantized weights).
  enum class Kept { kDequantized, kQ8_0, kKQuants, kInt8 };
  Kept KeptAs(const std::vector<std::string>& names, const std::vector<size_t>& counts) const {
    if (o_.precision == kernels::cpu::MatmulPrecision::kF32) return Kept::kDequantized;
    bool all_q8 = true, all_k = true, all_int8 = true;
    for (size_t i = 0; i < names.size(); ++i) {
      const GgufTensorInfo* t = f_.FindTensor(names[i]);
      if (t == nullptr) return Kept::kDequantized;
      all_q8 = all_q8 && t->type == GgmlType::kQ8_0;
      all_k = all_k && IsKQuant(t->type) && (i + 1 == names.size() || counts[i] % 8 == 0);
      all_int8 = all_int8 && common::gguf::HasInt8Blocks(t->type);
    }
    return all_q8 ? Kept::kQ8_0 : all_k ? Kept::kKQuants : all_int8 ? Kept::kInt8 : Kept::kDequantized;
  }

  // Rows [begin, begin + count) of a Q8_0 / Q4_0 / Q5_0 [rows × cols]
  // weight, columns [first_col, first_col + cols_out), appended as int8
  // values and block scales.
  Status AppendInt8Rows(const Part& p, size_t cols, size_t first_col, size_t cols_out, std::vector<int8_t>* q,
                        std::vector<float>* scales) const {
    LLMSERVE_ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(p.name, p.rows, cols, p.experts));
    std::vector<int8_t> row_q(cols);
    std::vector<float> row_scales(cols / common::gguf::kQK);
    for (size_t r = 0; r < p.count; ++r) {
      const size_t from = p.permuted ? LlamaGgufRow(p.begin + r, c_.head_dim) : p.begin + r;
      LLMSERVE_RETURN_IF_ERROR(
          common::gguf::ToInt8Blocks(t->type, t->data + from * t->row_bytes(), cols, row_q.data(), row_scales.data()));
      q->insert(q->end(), row_q.begin() + first_col, row_q.begin() + first_col + cols_out);
      scales->insert(scales->end(), row_scales.begin() + first_col / common::gguf::kQK,
                     row_scales.begin() + (first_col + cols_out) / common::gguf::kQK);
    }
    return Status::Ok();
  }

  static bool IsKQuant(GgmlType t) { return t == GgmlType::kQ4_K || t == GgmlType::kQ5_K || t == GgmlType::kQ6_K; }
  static kernels::cpu::KQuantType KQuantTypeOf(GgmlType t) {
    if (t == GgmlType::kQ5_K) return kernels::cpu::KQuantType::kQ5_K;
    return t == GgmlType::kQ6_K ? kernels::cpu::KQuantType::kQ6_K : kernels::cpu::KQuantType::kQ4_K;
  }

  // Rows [begin, begin + count) of a quantized [rows × cols] weight as
  // stored, appended to `out`; with `permuted`, llama.cpp's q/k row order is
  // undone.
  Status AppendRawRows(const std::string& name, size_t rows, size_t cols, size_t begin, size_t count,
                       bool permuted, std::vector<uint8_t>* out, size_t experts = 0) const {
    LLMSERVE_ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, rows, cols, experts));
    const auto& info = common::gguf::TypeInfo(t->type);
    const size_t row_bytes = cols / info.block_size * info.block_bytes;
    for (size_t r = 0; r < count; ++r) {
      const size_t from = permuted ? LlamaGgufRow(begin + r, c_.head_dim) : begin + r;
      out->insert(out->end(), t->data + from * row_bytes, t->data + (from + 1) * row_bytes);
    }
    return Status::Ok();
  }

  // Rows of the named [rows_i × cols] weights stacked: kept quantized when
  // KeptAs says so, else dequantized and packed for o_.precision.
  StatusOr<LinearWeight> Stacked(const std::vector<Part>& parts, size_t cols) const {
    size_t total = 0;
    std::vector<std::string> names;
    std::vector<size_t> counts;
    for (const Part& p : parts) {
      total += p.count;
      names.push_back(p.name);
      counts.push_back(p.count);
    }
    const Kept kept = KeptAs(names, counts);
    if (kept == Kept::kQ8_0) {
      std::vector<uint8_t> raw;
      for (const Part& p : parts)
        LLMSERVE_RETURN_IF_ERROR(AppendRawRows(p.name, p.rows, cols, p.begin, p.count, p.permuted, &raw, p.experts));
      return LinearWeight::PackQ8_0(raw.data(), total, cols, cols);
    }
    if (kept == Kept::kInt8) {
      std::vector<int8_t> q;
      std::vector<float> scales;
      for (const Part& p : parts) LLMSERVE_RETURN_IF_ERROR(AppendInt8Rows(p, cols, 0, cols, &q, &scales));
      return LinearWeight::PackInt8(q.data(), scales.data(), total, cols, cols);
    }
    if (kept == Kept::kKQuants) {
      std::vector<std::vector<uint8_t>> raw(parts.size());
      std::vector<kernels::cpu::KQuantRows> rows;
      for (size_t i = 0; i < parts.size(); ++i) {
        const Part& p = parts[i];
        LLMSERVE_RETURN_IF_ERROR(
            AppendRawRows(p.name, p.rows, cols, p.begin, p.count, p.permuted, &raw[i], p.experts));
        rows.push_back({KQuantTypeOf(f_.FindTensor(p.name)->type), raw[i].data(), p.count, cols});
      }
      return LinearWeight::PackKQuants(rows, cols);
    }
    std::vector<float> w;
    for (const Part& p : parts)
      LLMSERVE_RETURN_IF_ERROR(AppendRows(p.name, p.rows, cols, p.begin, p.count, p.permuted, &w, p.experts));
    return Pack(w, total, cols, cols);
  }

  LinearWeight Pack(const std::vector<float>& w, size_t rows, size_t cols, size_t stride,
                    size_t first_col = 0) const {
    return LinearWeight::Pack(w.data() + first_col, WeightDType::kF32, rows, cols, stride, o_.precision);
  }

  // Columns [begin, begin + count) of a [rows × full_cols] weight; the split
  // must fall on the stored type's block boundary (quantized blocks do not
  // split across ranks). With `experts`, expert `expert`'s rows of a
  // stacked-experts tensor of experts × rows rows.
  StatusOr<LinearWeight> RowParallel(const std::string& name, size_t rows, size_t full_cols, size_t begin,
                                     size_t count, size_t experts = 0, size_t expert = 0) const {
    const size_t all_rows = experts > 0 ? experts * rows : rows;
    LLMSERVE_ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, all_rows, full_cols, experts));
    const uint32_t block = common::gguf::TypeInfo(t->type).block_size;
    if (begin % block != 0 || count % block != 0) {
      return Status::InvalidArgument(f_.name() + ": tensor " + name + " (" + common::gguf::GgmlTypeName(t->type) +
                                     ", blocks of " + std::to_string(block) + ") cannot be split at column " +
                                     std::to_string(begin) + " for tensor parallelism: not a block boundary");
    }
    const uint8_t* first = t->data + expert * rows * t->row_bytes() +
                           begin / block * common::gguf::TypeInfo(t->type).block_bytes;
    switch (KeptAs({name}, {rows})) {
      case Kept::kQ8_0: return LinearWeight::PackQ8_0(first, rows, count, full_cols);
      case Kept::kKQuants: return LinearWeight::PackKQuants({{KQuantTypeOf(t->type), first, rows, full_cols}}, count);
      case Kept::kInt8: {
        std::vector<int8_t> q;
        std::vector<float> scales;
        const Part part{name, all_rows, expert * rows, rows, false, experts};
        LLMSERVE_RETURN_IF_ERROR(AppendInt8Rows(part, full_cols, begin, count, &q, &scales));
        return LinearWeight::PackInt8(q.data(), scales.data(), rows, count, count);
      }
      case Kept::kDequantized: break;
    }
    std::vector<float> w;
    LLMSERVE_RETURN_IF_ERROR(AppendRows(name, all_rows, full_cols, expert * rows, rows, false, &w, experts));
    return Pack(w, rows, count, full_cols, begin);
  }

  StatusOr<LayerWeights> Layer(size_t i) const;
  // Layer i's router (fp32 products, as the safetensors loader packs it) and
  // the experts this rank holds, sliced out of llama.cpp's stacked
  // ffn_{gate,up,down}_exps tensors.
  StatusOr<MoeWeights> Moe(size_t i) const;

 private:
  const GgufFile& f_;
  const ModelConfig& c_;
  const ShardDims& d_;
  const LoadOptions& o_;
};

StatusOr<LayerWeights> GgufLoader::Layer(size_t i) const {
  const std::string p = "blk." + std::to_string(i) + ".";
  const size_t h = c_.hidden_size, hd = c_.head_dim;
  const bool permuted = c_.architecture == Architecture::kLlama || c_.architecture == Architecture::kMistral;
  LayerWeights l;
  LLMSERVE_ASSIGN_OR_RETURN(l.input_norm, Vector(p + "attn_norm.weight", h));
  LLMSERVE_ASSIGN_OR_RETURN(l.post_attention_norm, Vector(p + "ffn_norm.weight", h));
  if (c_.qk_norm) {
    LLMSERVE_ASSIGN_OR_RETURN(l.q_norm, Vector(p + "attn_q_norm.weight", hd));
    LLMSERVE_ASSIGN_OR_RETURN(l.k_norm, Vector(p + "attn_k_norm.weight", hd));
  }
  const size_t q_rows = c_.num_heads * hd, kv_rows = c_.num_kv_heads * hd;
  const size_t q_begin = d_.tp_rank * d_.num_heads * hd, q_count = d_.num_heads * hd;
  const size_t kv_begin = d_.tp_rank * d_.num_kv_heads * hd, kv_count = d_.num_kv_heads * hd;
  LLMSERVE_ASSIGN_OR_RETURN(l.qkv, Stacked({{p + "attn_q.weight", q_rows, q_begin, q_count, permuted},
                                             {p + "attn_k.weight", kv_rows, kv_begin, kv_count, permuted},
                                             {p + "attn_v.weight", kv_rows, kv_begin, kv_count, false}},
                                            h));
  if (c_.qkv_bias) {
    LLMSERVE_ASSIGN_OR_RETURN(l.qkv_bias, Vector(p + "attn_q.bias", q_rows, q_begin, q_count, permuted));
    LLMSERVE_ASSIGN_OR_RETURN(auto kb, Vector(p + "attn_k.bias", kv_rows, kv_begin, kv_count, permuted));
    LLMSERVE_ASSIGN_OR_RETURN(auto vb, Vector(p + "attn_v.bias", kv_rows, kv_begin, kv_count));
    l.qkv_bias.insert(l.qkv_bias.end(), kb.begin(), kb.end());
    l.qkv_bias.insert(l.qkv_bias.end(), vb.begin(), vb.end());
  }
  LLMSERVE_ASSIGN_OR_RETURN(l.o, RowParallel(p + "attn_output.weight", h, q_rows, q_begin, q_count));
  if (c_.o_bias) {
    LLMSERVE_ASSIGN_OR_RETURN(l.o_bias, Vector(p + "attn_output.bias", h));
  }
  if (c_.IsMoeLayer(i)) {
    LLMSERVE_ASSIGN_OR_RETURN(l.moe, Moe(i));
    return l;
  }
  const size_t ff = c_.intermediate_size, ff_begin = d_.tp_rank * d_.intermediate_size, ff_count = d_.intermediate_size;
  LLMSERVE_ASSIGN_OR_RETURN(l.gate_up, Stacked({{p + "ffn_gate.weight", ff, ff_begin, ff_count, false},
                                                 {p + "ffn_up.weight", ff, ff_begin, ff_count, false}},
                                                h));
  LLMSERVE_ASSIGN_OR_RETURN(l.down, RowParallel(p + "ffn_down.weight", h, ff, ff_begin, ff_count));
  return l;
}

StatusOr<MoeWeights> GgufLoader::Moe(size_t i) const {
  const std::string p = "blk." + std::to_string(i) + ".";
  const size_t h = c_.hidden_size, ne = c_.moe.num_experts, ff = c_.moe.intermediate_size;
  const bool ep = !d_.local_experts.empty();
  const size_t ff_count = d_.moe_intermediate_size, ff_begin = ep ? 0 : d_.tp_rank * ff_count;
  MoeWeights m;
  std::vector<float> router;
  LLMSERVE_RETURN_IF_ERROR(AppendRows(p + "ffn_gate_inp.weight", ne, h, 0, ne, false, &router));
  m.router = LinearWeight::Pack(router.data(), WeightDType::kF32, ne, h, h, kernels::cpu::MatmulPrecision::kF32);
  m.experts.resize(ne);
  for (size_t e = 0; e < ne; ++e) {
    if (ep && !d_.local_experts[e]) continue;
    auto gate_up = Stacked({{p + "ffn_gate_exps.weight", ne * ff, e * ff + ff_begin, ff_count, false, ne},
                            {p + "ffn_up_exps.weight", ne * ff, e * ff + ff_begin, ff_count, false, ne}},
                           h);
    LLMSERVE_ASSIGN_OR_RETURN(m.experts[e].gate_up, std::move(gate_up));
    auto down = RowParallel(p + "ffn_down_exps.weight", h, ff, ff_begin, ff_count, ne, e);
    LLMSERVE_ASSIGN_OR_RETURN(m.experts[e].down, std::move(down));
  }
  return m;
}

}  // namespace

StatusOr<ModelWeights> LoadGgufModelWeights(const std::string& path, const ModelConfig& config,
                                            const LoadOptions& options) {
  auto shard = ComputeShardDims(config, options.tp_rank, options.tp_size, options.expert_parallel,
                                options.expert_placement);
  LLMSERVE_ASSIGN_OR_RETURN(ShardDims dims, std::move(shard));
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(path));
  GgufLoader loader(*file, config, dims, options);
  LoadProgress progress("loading " + path, config.num_layers + 2, options.show_progress);
  ModelWeights w;
  const size_t vocab = config.vocab_size, h = config.hidden_size;
  LLMSERVE_ASSIGN_OR_RETURN(w.gguf_embedding, loader.Tensor("token_embd.weight", vocab, h));
  std::vector<float> probe(h);  // fails here, not mid-request, for a type we cannot dequantize
  LLMSERVE_RETURN_IF_ERROR(common::gguf::DequantizeRows(*w.gguf_embedding, 0, 1, probe.data()));
  progress.Step();
  for (size_t i = 0; i < config.num_layers; ++i) {
    LLMSERVE_ASSIGN_OR_RETURN(LayerWeights layer, loader.Layer(i));
    w.layers.push_back(std::move(layer));
    progress.Step();
  }
  LLMSERVE_ASSIGN_OR_RETURN(w.final_norm, loader.Vector("output_norm.weight", h));
  const bool has_output = file->FindTensor("output.weight") != nullptr;
  if (!config.tie_word_embeddings && !has_output) {
    return Status::NotFound(path + ": tensor output.weight is missing (embeddings are not tied)");
  }
  const std::string head = has_output ? "output.weight" : "token_embd.weight";
  const size_t count = dims.vocab_end - dims.vocab_begin;
  LLMSERVE_ASSIGN_OR_RETURN(w.lm_head, loader.Stacked({{head, vocab, dims.vocab_begin, count, false}}, h));
  progress.Step();
  // The matrices are packed copies now: only embedding rows are read from
  // the file from here on, so its pages need not stay resident.
  file->DropResidentPages();
  w.gguf = std::move(file);
  return w;
}

}  // namespace llmserve::worker
