// The CUDA forward pass against the GPU's own measured bounds, in one run:
//   bandwidth: a read-only kernel and a device-to-device copy over 4 GiB;
//   peak:      the bf16 matmul (the one the model uses) at 8192³;
//   prefill:   one --prefill-token prompt, FLOP/s as a share of the peak;
//   decode:    batch 1 and --batch requests at --context tokens, the weight
//              bytes a step reads per second as a share of the read bandwidth;
//              eager and through CUDA graphs, whose difference is the share
//              of an eager step spent launching (the step overhead); greedy
//              sampling on the device as the server does (only ids copied
//              back), or with --device_sampling=false every row's logits;
//   ablation:  decode batch 1 through graphs again without programmatic
//              dependent launch (in part or at all), with the logits
//              copied back and under other GEMV tunings (--ablate);
//   GEMVs:     each batch-1 GEMV of a layer alone, and the four in a row,
//              under each GEMV tuning (--gemv_sweep, cuda_gemv_sweep.h).
// Weights are random, made on the device: --shape 8b (Llama-3-8B) or 0.6b
// (Qwen3-0.6B). Prints one JSON object (the ablation and the sweep first, as
// others, when asked for).
//
//   build/bin/llmserve-cuda-bench --shape 8b
#include <cuda_runtime.h>
#include <gflags/gflags.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "bench/worker/cuda_gemv_sweep.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/gemm_bf16.h"
#include "kernels/cuda/gemv_bf16.h"
#include "kernels/cuda/programmatic_launch.h"
#include "kernels/cuda/read_sweep.h"
#include "worker/cuda/cuda_model.h"

DEFINE_string(shape, "8b", "Model shape: 8b (Llama-3-8B) or 0.6b (Qwen3-0.6B).");
DEFINE_int32(prefill_tokens, 2048, "Prompt length of the prefill measurement.");
DEFINE_int32(context, 512, "Context length of each request in the decode measurements.");
DEFINE_int32(decode_steps, 32, "Timed decode steps per measurement.");
DEFINE_int32(batch, 64, "Requests in the batched decode measurement.");
DEFINE_int32(layers, 0, "Override the shape's layer count (0: the shape's).");
DEFINE_int32(vocab, 0, "Override the shape's vocabulary size (0: the shape's; at least 1000).");
DEFINE_bool(fused_decode, true, "Decode GEMVs with the RMSNorm and SiLU-and-mul fused in (false: separate kernels).");
DEFINE_bool(batched_decode_only, false, "Measure only the --batch decode (a short run for profilers).");
DEFINE_bool(device_sampling, true, "Decode steps sample greedily on the device (false: copy every row's logits back).");
DEFINE_bool(ablate, false,
            "Also measure decode batch 1 (graphs) without programmatic dependent launch for the GEMVs, the attention "
            "kernels or both, with the logits copied back, and under other GEMV tunings.");
DEFINE_bool(gemv_sweep, false,
            "Also time each batch-1 GEMV of a layer (q/k/v, o, gate/up, down) alone and the four in a row, under each "
            "GEMV tuning, as a share of the read bandwidth.");

namespace llmserve {
namespace {

namespace kc = kernels::cuda;
using Clock = std::chrono::steady_clock;

#define CHECK_OK(expr)                                                \
  do {                                                                \
    const Status _s = (expr);                                         \
    if (!_s.ok()) {                                                   \
      std::fprintf(stderr, "%s: %s\n", #expr, _s.ToString().c_str()); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Bytes per second of a read-only sweep and of a copy (read + write counted).
std::pair<double, double> MeasureBandwidth() {
  const size_t bytes = size_t{4} << 30;
  kc::DeviceArray<uint4> a, b;
  CHECK_OK(a.Resize(bytes / sizeof(uint4)));
  CHECK_OK(b.Resize(bytes / sizeof(uint4)));
  kc::DeviceArray<unsigned> sink;
  CHECK_OK(sink.Resize(1));
  CHECK_OK(a.Zero());
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float ms = 0;
  CHECK_OK(kc::ReadSweep(a.data(), bytes, sink.data(), nullptr));
  cudaEventRecord(start);
  for (int i = 0; i < 10; ++i) CHECK_OK(kc::ReadSweep(a.data(), bytes, sink.data(), nullptr));
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  cudaEventElapsedTime(&ms, start, stop);
  const double read = 10.0 * bytes / (ms / 1e3);
  cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(start);
  for (int i = 0; i < 10; ++i) cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  cudaEventElapsedTime(&ms, start, stop);
  const double copy = 10.0 * 2 * bytes / (ms / 1e3);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  CHECK_OK(kc::CudaStatus(cudaGetLastError(), "bandwidth kernels"));
  return {read, copy};
}

// FLOP/s of the model's bf16 matmul at 8192³.
double MeasurePeak() {
  const size_t n = 8192;
  auto gemm = kc::Bf16Gemm::Create();
  CHECK_OK(gemm.status());
  kc::DeviceArray<kc::Bf16> x, w;
  kc::DeviceArray<float> y;
  CHECK_OK(x.Resize(n * n));
  CHECK_OK(w.Resize(n * n));
  CHECK_OK(y.Resize(n * n));
  CHECK_OK(x.Zero());
  CHECK_OK(w.Zero());
  CHECK_OK((*gemm)->Run(x.data(), w.data(), y.data(), n, n, n, false, nullptr));
  CHECK_OK(kc::CudaStatus(cudaDeviceSynchronize(), "warm-up"));
  const auto start = Clock::now();
  for (int i = 0; i < 10; ++i) CHECK_OK((*gemm)->Run(x.data(), w.data(), y.data(), n, n, n, false, nullptr));
  CHECK_OK(kc::CudaStatus(cudaDeviceSynchronize(), "peak matmuls"));
  return 10.0 * 2.0 * n * n * n / Seconds(start);
}

worker::ModelConfig Shape(const std::string& name) {
  worker::ModelConfig c;
  c.max_position_embeddings = 8192;
  c.rms_norm_eps = 1e-5;
  if (name == "0.6b") {
    c.architecture = worker::Architecture::kQwen3;
    c.hidden_size = 1024;
    c.num_layers = 28;
    c.num_heads = 16;
    c.num_kv_heads = 8;
    c.head_dim = 128;
    c.intermediate_size = 3072;
    c.vocab_size = 151936;
    c.tie_word_embeddings = true;
    c.qk_norm = true;
    c.rope_theta = 1000000;
  } else {
    c.architecture = worker::Architecture::kLlama;
    c.hidden_size = 4096;
    c.num_layers = 32;
    c.num_heads = 32;
    c.num_kv_heads = 8;
    c.head_dim = 128;
    c.intermediate_size = 14336;
    c.vocab_size = 128256;
    c.rope_theta = 500000;
  }
  if (FLAGS_layers > 0) c.num_layers = static_cast<size_t>(FLAGS_layers);
  if (FLAGS_vocab > 0) c.vocab_size = static_cast<size_t>(FLAGS_vocab);
  return c;
}

// `requests` requests of `tokens` new tokens each, request r's blocks from r * blocks_per_request.
worker::ForwardBatch Batch(size_t requests, size_t tokens, size_t start, size_t blocks_per_request, size_t bs) {
  worker::ForwardBatch b;
  for (size_t r = 0; r < requests; ++r) {
    std::vector<int32_t> ids(tokens);
    for (size_t i = 0; i < tokens; ++i) ids[i] = static_cast<int32_t>((r * 7919 + start + i) % 1000);
    std::vector<int32_t> blocks(blocks_per_request);
    for (size_t i = 0; i < blocks_per_request; ++i) blocks[i] = static_cast<int32_t>(r * blocks_per_request + i);
    b.AddRequest(ids, static_cast<int32_t>(start), blocks, bs, true);
  }
  b.FinishBlockTables();
  return b;
}

// One decode step; greedy on the device unless `copy_logits`.
void DecodeOnce(worker::cuda::CudaModel& model, const worker::ForwardBatch& batch, bool copy_logits) {
  std::vector<worker::DeviceSampling> greedy;
  if (!copy_logits) {
    greedy.resize(batch.logits_indices.size());
    for (auto& g : greedy) {
      g.on_device = true;
      g.temperature = 0.f;
    }
  }
  CHECK_OK(model.Forward(batch, greedy).status());
}

// Seconds per decode step of `requests` requests at `context` tokens.
double DecodeStep(worker::cuda::CudaModel& model, size_t requests, size_t context, size_t blocks_per_request,
                  size_t bs, bool copy_logits = !FLAGS_device_sampling) {
  // Fill the context in prefill chunks of at most 2048 tokens per step.
  for (size_t r0 = 0; r0 < requests;) {
    const size_t group = std::max<size_t>(1, std::min(requests - r0, 2048 / std::max<size_t>(context, 1)));
    worker::ForwardBatch b = Batch(group, context, 0, blocks_per_request, bs);
    for (auto& t : b.block_tables) t += static_cast<int32_t>(r0 * blocks_per_request);
    for (auto& s : b.slot_mapping) s += static_cast<int64_t>(r0 * blocks_per_request * bs);
    CHECK_OK(model.Forward(b).status());
    r0 += group;
  }
  DecodeOnce(model, Batch(requests, 1, context, blocks_per_request, bs), copy_logits);  // warm-up
  const auto start = Clock::now();
  for (int s = 0; s < FLAGS_decode_steps; ++s)
    DecodeOnce(model, Batch(requests, 1, context + 1 + s, blocks_per_request, bs), copy_logits);
  return Seconds(start) / FLAGS_decode_steps;
}

// Decode batch 1 through graphs with one setting changed at a time:
// programmatic dependent launch off for the GEMVs, the attention kernels or
// both, the logits copied back, and the GEMV tunings (gemv_bf16.h); the
// default first and last (the spread of those two is the noise).
void PrintAblation(worker::cuda::CudaModel& model, size_t context, size_t per_request, size_t bs,
                   double weight_bytes, double read_bw) {
  struct Variant {
    const char* name;
    bool gemv_programmatic = true, attention_programmatic = true, copy_logits = false;
    kc::GemvTuning tuning;
  };
  std::vector<Variant> variants(9);
  variants[0].name = "default";
  variants[1].name = "no_programmatic_launch";
  variants[1].gemv_programmatic = variants[1].attention_programmatic = false;
  variants[2].name = "programmatic_gemv_only";
  variants[2].attention_programmatic = false;
  variants[3].name = "programmatic_attention_only";
  variants[3].gemv_programmatic = false;
  variants[4].name = "logits_copied";
  variants[4].copy_logits = true;
  variants[5].name = "gemv_no_early_weight_loads";
  variants[5].tuning.early_weight_loads = false;
  variants[6].name = "gemv_1_warp_per_column";
  variants[6].tuning.warps_per_column = 1;
  variants[7].name = "gemv_4_warps_per_column";
  variants[7].tuning.warps_per_column = 4;
  variants[8].name = "default_again";
  std::printf("{\"ablation_decode_batch1\": [");
  const char* sep = "";
  for (const Variant& v : variants) {
    kc::SetProgrammaticLaunch(kc::LaunchGroup::kGemv, v.gemv_programmatic);
    kc::SetProgrammaticLaunch(kc::LaunchGroup::kAttention, v.attention_programmatic);
    CHECK_OK(kc::SetGemvTuning(v.tuning));
    model.SetCudaGraphSizes({1});  // drops the graphs captured with the last setting
    const double s = DecodeStep(model, 1, context, per_request, bs, v.copy_logits);
    std::printf("%s\n  {\"variant\": \"%s\", \"ms\": %.3f, \"share_of_read_bandwidth\": %.3f}", sep, v.name,
                s * 1e3, weight_bytes / s / read_bw);
    sep = ",";
  }
  std::printf("]}\n");
  kc::SetProgrammaticLaunch(kc::LaunchGroup::kGemv, true);
  kc::SetProgrammaticLaunch(kc::LaunchGroup::kAttention, true);
  CHECK_OK(kc::SetGemvTuning(kc::GemvTuning()));
}

int Main() {
  if (kc::CudaDeviceCount() == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const bool all = !FLAGS_batched_decode_only;
  const auto [read_bw, copy_bw] = all ? MeasureBandwidth() : std::pair<double, double>(NAN, NAN);
  const double peak = all ? MeasurePeak() : NAN;

  const worker::ModelConfig config = Shape(FLAGS_shape);
  auto weights = worker::cuda::RandomCudaWeights(config, 1);
  CHECK_OK(weights.status());
  const double weight_bytes = static_cast<double>(weights->matmul_bytes());
  const double matmul_params = weight_bytes / 2;  // bf16; a tied lm_head counted once
  const size_t bs = 16;
  const size_t context = static_cast<size_t>(FLAGS_context), steps = static_cast<size_t>(FLAGS_decode_steps);
  const size_t batch = static_cast<size_t>(FLAGS_batch), prefill = static_cast<size_t>(FLAGS_prefill_tokens);
  const size_t per_request = (std::max(context + steps + 2, prefill) + bs - 1) / bs;
  auto model = worker::cuda::CudaModel::Create(config, std::move(*weights), bs);
  CHECK_OK(model.status());
  (*model)->SetFusedDecode(FLAGS_fused_decode);
  CHECK_OK((*model)->AllocateKvCache(per_request * std::max<size_t>(batch, 1)));

  // Prefill: one prompt, logits for its last token.
  worker::ForwardBatch pb;
  {
    std::vector<int32_t> ids(prefill);
    for (size_t i = 0; i < prefill; ++i) ids[i] = static_cast<int32_t>((i * 7919) % 1000);
    std::vector<int32_t> blocks(per_request);
    for (size_t i = 0; i < per_request; ++i) blocks[i] = static_cast<int32_t>(i);
    pb.AddRequest(ids, 0, blocks, bs, true);
    pb.FinishBlockTables();
  }
  double prefill_s = NAN;
  if (all) {
    CHECK_OK((*model)->Forward(pb).status());
    const auto start = Clock::now();
    for (int i = 0; i < 3; ++i) CHECK_OK((*model)->Forward(pb).status());
    prefill_s = Seconds(start) / 3;
  }
  const double p = static_cast<double>(prefill);
  // Matmuls on every token (the lm_head on the last only), causal attention (QKᵀ and PV).
  const double lm_head = 2.0 * config.vocab_size * config.hidden_size;
  const double prefill_flops = (2.0 * matmul_params - lm_head) * p + lm_head +
                               4.0 * config.num_layers * config.num_heads * config.head_dim * p * (p + 1) / 2;

  // Decode eagerly, then through CUDA graphs (sizes 1 and --batch).
  const double eager1 = all ? DecodeStep(**model, 1, context, per_request, bs) : NAN;
  const double eager_b = DecodeStep(**model, batch, context, per_request, bs);
  (*model)->SetCudaGraphSizes({1, batch});
  const double decode1 = all ? DecodeStep(**model, 1, context, per_request, bs) : NAN;
  const double decode_b = DecodeStep(**model, batch, context, per_request, bs);
  if (FLAGS_ablate) PrintAblation(**model, context, per_request, bs, weight_bytes, read_bw);
  if (FLAGS_gemv_sweep) CHECK_OK(bench::PrintGemvSweep(config, read_bw));
  std::printf(
      "{\"device\": \"%s\", \"shape\": \"%s\", \"weight_bytes\": %.0f,\n"
      " \"read_bandwidth_GBps\": %.1f, \"copy_bandwidth_GBps\": %.1f, \"bf16_peak_TFLOPs\": %.1f,\n"
      " \"prefill_tokens\": %zu, \"prefill_ms\": %.2f, \"prefill_TFLOPs\": %.1f, \"prefill_share_of_peak\": %.3f,\n"
      " \"context\": %zu, \"decode_device_sampling\": %s,\n"
      " \"decode_batch1_ms\": %.3f, \"decode_batch1_weight_GBps\": %.1f,\n"
      " \"decode_batch1_share_of_read_bandwidth\": %.3f,\n"
      " \"batch\": %zu, \"decode_batch_ms\": %.3f, \"decode_batch_output_tok_s\": %.0f,\n"
      " \"eager_decode_batch1_ms\": %.3f, \"eager_decode_batch_ms\": %.3f,\n"
      " \"step_overhead_share_batch1\": %.3f, \"step_overhead_share_batch\": %.3f}\n",
      prop.name, FLAGS_shape.c_str(), weight_bytes, read_bw / 1e9, copy_bw / 1e9, peak / 1e12, prefill, prefill_s * 1e3,
      prefill_flops / prefill_s / 1e12, prefill_flops / prefill_s / peak, context,
      FLAGS_device_sampling ? "true" : "false", decode1 * 1e3,
      weight_bytes / decode1 / 1e9, weight_bytes / decode1 / read_bw, batch, decode_b * 1e3,
      static_cast<double>(batch) / decode_b, eager1 * 1e3, eager_b * 1e3, 1 - decode1 / eager1, 1 - decode_b / eager_b);
  return 0;
}

}  // namespace
}  // namespace llmserve

int main(int argc, char** argv) {
  gflags::SetUsageMessage("CUDA forward pass against the GPU's measured bandwidth and bf16 peak");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return llmserve::Main();
}
