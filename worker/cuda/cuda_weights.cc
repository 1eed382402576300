#include "worker/cuda/cuda_weights.h"

#include <cstring>

#include "kernels/cpu/embedding.h"
#include "kernels/cpu/linear.h"
#include "kernels/cuda/fill_random.h"
#include "worker/load_progress.h"
#include "worker/safetensors.h"

namespace llmserve::worker::cuda {

namespace {

using kernels::cpu::WeightDType;

size_t MatrixBytes(const CudaLayerWeights& l) {
  return l.qkv.bytes() + l.o.bytes() + l.gate_up.bytes() + l.down.bytes();
}

// Copies tensors into device arrays, rounding to bf16 on the host where the
// checkpoint holds another type, and takes a tensor-parallel rank's share:
// rows of column-parallel matrices (q/k/v, gate/up) and their biases,
// columns of row-parallel ones (o, down).
class Uploader {
 public:
  Uploader(const Checkpoint& ckpt, TpShard shard) : ckpt_(ckpt), shard_(shard) {}

  // The [rows × cols] tensors `names`, each cut to this rank's rows, stacked
  // by rows into one matrix (the whole tensors where not `by_rank`).
  StatusOr<DeviceArray<Bf16>> Matrix(const std::vector<std::string>& names, const std::vector<size_t>& rows,
                                     size_t cols, bool by_rank = true) {
    const size_t parts = by_rank ? shard_.size : 1, part = by_rank ? shard_.rank : 0;
    size_t total = 0;
    for (size_t r : rows) total += r / parts;
    DeviceArray<Bf16> out;
    LLMSERVE_RETURN_IF_ERROR(out.Resize(total * cols));
    size_t offset = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(names[i], {rows[i], cols}));
      const size_t local = rows[i] / parts;
      const auto* first = static_cast<const uint8_t*>(t.data) + part * local * cols * t.element_size();
      LLMSERVE_RETURN_IF_ERROR(UploadBf16(first, t, local * cols, out, offset));
      offset += local * cols;
    }
    return out;
  }

  // The [rows × cols] tensor `name`, cut to this rank's columns.
  StatusOr<DeviceArray<Bf16>> Columns(const std::string& name, size_t rows, size_t cols) {
    LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(name, {rows, cols}));
    const size_t local = cols / shard_.size, bytes = t.element_size();
    std::vector<uint8_t> host(rows * local * bytes);
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(host.data() + r * local * bytes,
                  static_cast<const uint8_t*>(t.data) + (r * cols + shard_.rank * local) * bytes, local * bytes);
    }
    DeviceArray<Bf16> out;
    LLMSERVE_RETURN_IF_ERROR(out.Resize(rows * local));
    LLMSERVE_RETURN_IF_ERROR(UploadBf16(host.data(), t, rows * local, out, 0));
    return out;
  }

  // The whole vector `name` (norms; o's bias, which rank 0 adds).
  StatusOr<DeviceArray<float>> Vector(const std::string& name, size_t n) {
    return StackedVectors({name}, {n}, /*by_rank=*/false);
  }

  // The q, k and v biases, each cut to this rank's rows, stacked.
  StatusOr<DeviceArray<float>> StackedVectors(const std::vector<std::string>& names, const std::vector<size_t>& sizes,
                                              bool by_rank = true) {
    const size_t parts = by_rank ? shard_.size : 1, part = by_rank ? shard_.rank : 0;
    std::vector<float> host;
    for (size_t i = 0; i < names.size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(TensorView t, ckpt_.Get(names[i], {sizes[i]}));
      const size_t local = sizes[i] / parts, at = host.size();
      host.resize(at + local);
      kernels::cpu::ConvertToF32(static_cast<const uint8_t*>(t.data) + part * local * t.element_size(), t.dtype,
                                 local, host.data() + at);
    }
    DeviceArray<float> out;
    LLMSERVE_RETURN_IF_ERROR(out.Resize(host.size()));
    LLMSERVE_RETURN_IF_ERROR(out.Upload(host.data(), host.size()));
    return out;
  }

 private:
  // n elements at `data` of tensor t's type, as bf16 into out[offset...].
  static Status UploadBf16(const void* data, const TensorView& t, size_t n, DeviceArray<Bf16>& out, size_t offset) {
    if (t.dtype == WeightDType::kBF16) return out.Upload(static_cast<const Bf16*>(data), n, offset);
    // Other types: convert a slab at a time to bound the host buffer.
    constexpr size_t kSlab = size_t{1} << 22;
    std::vector<float> f32(std::min(n, kSlab));
    std::vector<uint16_t> bf16(f32.size());
    for (size_t begin = 0; begin < n; begin += kSlab) {
      const size_t count = std::min(kSlab, n - begin);
      kernels::cpu::ConvertToF32(static_cast<const uint8_t*>(data) + begin * t.element_size(), t.dtype, count,
                                 f32.data());
      for (size_t i = 0; i < count; ++i) bf16[i] = kernels::cpu::F32ToBf16(f32[i]);
      LLMSERVE_RETURN_IF_ERROR(out.Upload(reinterpret_cast<const Bf16*>(bf16.data()), count, offset + begin));
    }
    return Status::Ok();
  }

  const Checkpoint& ckpt_;
  TpShard shard_;
};

// Layer i of the checkpoint (`c`: the whole model's config), this rank's share.
StatusOr<CudaLayerWeights> LoadLayer(Uploader& up, const ModelConfig& c, size_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const size_t h = c.hidden_size, hd = c.head_dim, q_rows = c.num_heads * hd, kv_rows = c.num_kv_heads * hd;
  const size_t ff = c.intermediate_size;
  CudaLayerWeights l;
  LLMSERVE_ASSIGN_OR_RETURN(l.input_norm, up.Vector(p + "input_layernorm.weight", h));
  LLMSERVE_ASSIGN_OR_RETURN(l.post_attention_norm, up.Vector(p + "post_attention_layernorm.weight", h));
  if (c.qk_norm) {
    LLMSERVE_ASSIGN_OR_RETURN(l.q_norm, up.Vector(p + "self_attn.q_norm.weight", hd));
    LLMSERVE_ASSIGN_OR_RETURN(l.k_norm, up.Vector(p + "self_attn.k_norm.weight", hd));
  }
  auto qkv = up.Matrix({p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight"},
                       {q_rows, kv_rows, kv_rows}, h);
  LLMSERVE_ASSIGN_OR_RETURN(l.qkv, std::move(qkv));
  if (c.qkv_bias) {
    auto bias =
        up.StackedVectors({p + "self_attn.q_proj.bias", p + "self_attn.k_proj.bias", p + "self_attn.v_proj.bias"},
                          {q_rows, kv_rows, kv_rows});
    LLMSERVE_ASSIGN_OR_RETURN(l.qkv_bias, std::move(bias));
  }
  LLMSERVE_ASSIGN_OR_RETURN(l.o, up.Columns(p + "self_attn.o_proj.weight", h, q_rows));
  if (c.o_bias) {
    LLMSERVE_ASSIGN_OR_RETURN(l.o_bias, up.Vector(p + "self_attn.o_proj.bias", h));
  }
  LLMSERVE_ASSIGN_OR_RETURN(l.gate_up, up.Matrix({p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}, {ff, ff}, h));
  LLMSERVE_ASSIGN_OR_RETURN(l.down, up.Columns(p + "mlp.down_proj.weight", h, ff));
  return l;
}

StatusOr<DeviceArray<Bf16>> RandomMatrix(size_t n, uint64_t seed) {
  DeviceArray<Bf16> m;
  LLMSERVE_RETURN_IF_ERROR(m.Resize(n));
  LLMSERVE_RETURN_IF_ERROR(kernels::cuda::FillUniformBf16(m.data(), n, seed, 0.02f, nullptr));
  return m;
}

StatusOr<DeviceArray<float>> Ones(size_t n) {
  DeviceArray<float> v;
  LLMSERVE_RETURN_IF_ERROR(v.Resize(n));
  LLMSERVE_RETURN_IF_ERROR(kernels::cuda::FillConstantF32(v.data(), n, 1.f, nullptr));
  return v;
}

}  // namespace

size_t CudaWeights::matmul_bytes() const {
  size_t n = lm_head.empty() ? embedding.bytes() : lm_head.bytes();
  for (const auto& l : layers) n += MatrixBytes(l);
  return n;
}

size_t CudaWeights::bytes() const {
  size_t n = embedding.bytes() + lm_head.bytes() + final_norm.bytes();
  for (const auto& l : layers) {
    n += MatrixBytes(l) + l.input_norm.bytes() + l.post_attention_norm.bytes() + l.q_norm.bytes() + l.k_norm.bytes() +
         l.qkv_bias.bytes() + l.o_bias.bytes();
  }
  return n;
}

StatusOr<ModelConfig> TpLocalConfig(const ModelConfig& c, size_t tp_size) {
  if (tp_size == 0 || c.num_heads % tp_size != 0 || c.num_kv_heads % tp_size != 0 ||
      c.intermediate_size % tp_size != 0) {
    return Status::InvalidArgument("--device cuda at tensor-parallel size " + std::to_string(tp_size) +
                                   " needs it to divide the model's " + std::to_string(c.num_heads) +
                                   " attention heads, " + std::to_string(c.num_kv_heads) + " KV heads and " +
                                   std::to_string(c.intermediate_size) + " MLP width");
  }
  ModelConfig local = c;
  local.num_heads /= tp_size;
  local.num_kv_heads /= tp_size;
  local.intermediate_size /= tp_size;
  return local;
}

StatusOr<CudaWeights> LoadCudaWeights(const std::string& dir, const ModelConfig& c, bool show_progress,
                                      TpShard shard) {
  LLMSERVE_RETURN_IF_ERROR(TpLocalConfig(c, shard.size).status());
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::Open(dir));
  Uploader up(*ckpt, shard);
  LoadProgress progress("loading " + dir + " onto the GPU", c.num_layers + 2, show_progress);
  CudaWeights w;
  // The embedding and lm_head are whole on every rank.
  LLMSERVE_ASSIGN_OR_RETURN(w.embedding,
                            up.Matrix({"model.embed_tokens.weight"}, {c.vocab_size}, c.hidden_size, false));
  progress.Step();
  for (size_t i = 0; i < c.num_layers; ++i) {
    LLMSERVE_ASSIGN_OR_RETURN(CudaLayerWeights layer, LoadLayer(up, c, i));
    w.layers.push_back(std::move(layer));
    progress.Step();
  }
  LLMSERVE_ASSIGN_OR_RETURN(w.final_norm, up.Vector("model.norm.weight", c.hidden_size));
  if (!c.tie_word_embeddings) {
    if (!ckpt->Has("lm_head.weight")) {
      return Status::NotFound(dir +
                              ": tensor lm_head.weight is missing from the checkpoint "
                              "(tie_word_embeddings is false)");
    }
    LLMSERVE_ASSIGN_OR_RETURN(w.lm_head, up.Matrix({"lm_head.weight"}, {c.vocab_size}, c.hidden_size, false));
  }
  progress.Step();
  return w;
}

StatusOr<CudaWeights> RandomCudaWeights(const ModelConfig& whole, uint64_t seed, TpShard shard) {
  LLMSERVE_ASSIGN_OR_RETURN(const ModelConfig c, TpLocalConfig(whole, shard.size));
  const size_t h = c.hidden_size, hd = c.head_dim, ff = c.intermediate_size;
  const size_t qkv_rows = (c.num_heads + 2 * c.num_kv_heads) * hd;
  CudaWeights w;
  // Every rank draws the same embedding and lm_head, its own shards.
  uint64_t tensor = seed * 1000003;
  LLMSERVE_ASSIGN_OR_RETURN(w.embedding, RandomMatrix(c.vocab_size * h, ++tensor));
  tensor += 1000 * shard.rank;
  for (size_t i = 0; i < c.num_layers; ++i) {
    CudaLayerWeights l;
    LLMSERVE_ASSIGN_OR_RETURN(l.input_norm, Ones(h));
    LLMSERVE_ASSIGN_OR_RETURN(l.post_attention_norm, Ones(h));
    if (c.qk_norm) {
      LLMSERVE_ASSIGN_OR_RETURN(l.q_norm, Ones(hd));
      LLMSERVE_ASSIGN_OR_RETURN(l.k_norm, Ones(hd));
    }
    LLMSERVE_ASSIGN_OR_RETURN(l.qkv, RandomMatrix(qkv_rows * h, ++tensor));
    LLMSERVE_ASSIGN_OR_RETURN(l.o, RandomMatrix(h * c.num_heads * hd, ++tensor));
    LLMSERVE_ASSIGN_OR_RETURN(l.gate_up, RandomMatrix(2 * ff * h, ++tensor));
    LLMSERVE_ASSIGN_OR_RETURN(l.down, RandomMatrix(h * ff, ++tensor));
    w.layers.push_back(std::move(l));
  }
  LLMSERVE_ASSIGN_OR_RETURN(w.final_norm, Ones(h));
  if (!c.tie_word_embeddings) {
    LLMSERVE_ASSIGN_OR_RETURN(w.lm_head, RandomMatrix(c.vocab_size * h, seed * 1000003 + 999));
  }
  LLMSERVE_RETURN_IF_ERROR(kernels::cuda::CudaStatus(cudaDeviceSynchronize(), "random weight fill"));
  return w;
}

}  // namespace llmserve::worker::cuda
