#include "bench/worker/cuda_gemv_sweep.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/fill_random.h"
#include "kernels/cuda/gemv_bf16.h"

namespace llmserve::bench {

namespace {

namespace kc = kernels::cuda;
using Bf16 = __nv_bfloat16;

enum class GemvKind { kNormed, kNormedSiluMul, kPlain };

// One GEMV of the layer: y[n] from a k-row (n: columns; for gate/up, ff).
struct LayerGemv {
  std::string name;
  GemvKind kind;
  size_t n, k;
  size_t weight_elements() const { return (kind == GemvKind::kNormedSiluMul ? 2 : 1) * n * k; }
};

// Enough copies of a weight that cycling through them reads at least 256 MB
// between two reads of one copy: none is still in L2.
size_t CopiesPastL2(size_t bytes) { return std::max<size_t>(2, ((size_t{256} << 20) + bytes - 1) / bytes); }

struct Buffers {
  kc::DeviceArray<float> x, norm, y;
  kc::DeviceArray<Bf16> x_bf16, act;
};

Status Enqueue(const LayerGemv& g, const Bf16* w, Buffers& b, cudaStream_t stream) {
  switch (g.kind) {
    case GemvKind::kNormed:
      return kc::GemvRmsNorm(b.x.data(), nullptr, b.norm.data(), 1e-5f, w, b.y.data(), 1, g.n, g.k, false, stream);
    case GemvKind::kNormedSiluMul:
      return kc::GemvRmsNormSiluMul(b.x.data(), b.norm.data(), 1e-5f, w, b.act.data(), 1, g.n, g.k, stream);
    case GemvKind::kPlain:
      return kc::Gemv(b.x_bf16.data(), w, b.y.data(), 1, g.n, g.k, false, stream);
  }
  return Status::Internal("unknown GEMV kind");
}

// Microseconds per pass over `order` (indices into gemvs), timed over a CUDA
// graph of `passes` passes, each pass taking the next copy of every weight.
StatusOr<double> TimePasses(const std::vector<LayerGemv>& gemvs, const std::vector<size_t>& order,
                            const std::vector<std::vector<kc::DeviceArray<Bf16>>>& weights, Buffers& b,
                            size_t passes, cudaStream_t stream) {
  for (size_t i : order) LLMSERVE_RETURN_IF_ERROR(Enqueue(gemvs[i], weights[i][0].data(), b, stream));  // eager first
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  Status enqueued = Status::Ok();
  for (size_t p = 0; p < passes && enqueued.ok(); ++p) {
    for (size_t i : order) {
      enqueued = Enqueue(gemvs[i], weights[i][p % weights[i].size()].data(), b, stream);
      if (!enqueued.ok()) break;
    }
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  LLMSERVE_RETURN_IF_ERROR(enqueued);
  LLMSERVE_RETURN_IF_ERROR(kc::CudaStatus(ended, "cudaStreamEndCapture"));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  LLMSERVE_RETURN_IF_ERROR(kc::CudaStatus(instantiated, "cudaGraphInstantiate"));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  constexpr int kRepeats = 5;
  cudaGraphLaunch(exec, stream);  // warm-up
  cudaEventRecord(start, stream);
  for (int r = 0; r < kRepeats; ++r) cudaGraphLaunch(exec, stream);
  cudaEventRecord(stop, stream);
  const cudaError_t synced = cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  LLMSERVE_RETURN_IF_ERROR(kc::CudaStatus(synced, "GEMV sweep graphs"));
  return 1e3 * ms / (kRepeats * static_cast<double>(passes));
}

std::vector<kc::GemvTuning> Tunings() {
  std::vector<kc::GemvTuning> all;
  for (bool early : {false, true}) {
    for (int split : {1, 2, 4}) {
      kc::GemvTuning t;
      t.early_weight_loads = early;
      t.warps_per_column = split;
      all.push_back(t);
    }
  }
  return all;
}

}  // namespace

Status PrintGemvSweep(const worker::ModelConfig& config, double read_bw) {
  const size_t h = config.hidden_size, q = config.num_heads * config.head_dim;
  const size_t kv = config.num_kv_heads * config.head_dim, ff = config.intermediate_size;
  const std::vector<LayerGemv> gemvs = {{"qkv", GemvKind::kNormed, q + 2 * kv, h},
                                        {"o", GemvKind::kPlain, h, q},
                                        {"gate_up", GemvKind::kNormedSiluMul, ff, h},
                                        {"down", GemvKind::kPlain, h, ff}};
  std::vector<std::vector<kc::DeviceArray<Bf16>>> weights(gemvs.size());
  for (size_t i = 0; i < gemvs.size(); ++i) {
    const size_t elements = gemvs[i].weight_elements();
    weights[i].resize(CopiesPastL2(elements * sizeof(Bf16)));
    for (size_t c = 0; c < weights[i].size(); ++c) {
      LLMSERVE_RETURN_IF_ERROR(weights[i][c].Resize(elements));
      LLMSERVE_RETURN_IF_ERROR(kc::FillUniformBf16(weights[i][c].data(), elements, 100 * i + c, 0.02f, nullptr));
    }
  }
  const size_t widest = std::max({h, q, ff, q + 2 * kv});
  Buffers b;
  LLMSERVE_RETURN_IF_ERROR(b.x.Resize(widest));
  LLMSERVE_RETURN_IF_ERROR(b.norm.Resize(widest));
  LLMSERVE_RETURN_IF_ERROR(b.y.Resize(widest));
  LLMSERVE_RETURN_IF_ERROR(b.x_bf16.Resize(widest));
  LLMSERVE_RETURN_IF_ERROR(b.act.Resize(widest));
  LLMSERVE_RETURN_IF_ERROR(kc::FillConstantF32(b.x.data(), widest, 0.5f, nullptr));
  LLMSERVE_RETURN_IF_ERROR(kc::FillConstantF32(b.norm.data(), widest, 1.f, nullptr));
  LLMSERVE_RETURN_IF_ERROR(kc::FillUniformBf16(b.x_bf16.data(), widest, 7, 1.f, nullptr));
  LLMSERVE_RETURN_IF_ERROR(kc::FillUniformBf16(b.act.data(), widest, 8, 1.f, nullptr));
  cudaStream_t stream = nullptr;
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  constexpr size_t kPasses = 24;
  std::printf("{\"gemv_sweep_batch1\": [");
  const char* sep = "";
  Status status = Status::Ok();
  for (const kc::GemvTuning& t : Tunings()) {
    status = kc::SetGemvTuning(t);
    if (!status.ok()) break;
    std::vector<size_t> layer;
    for (size_t i = 0; i <= gemvs.size() && status.ok(); ++i) {
      // The GEMVs one at a time, then (i == gemvs.size()) the layer's four in a row.
      const std::vector<size_t> order = i < gemvs.size() ? std::vector<size_t>{i} : layer;
      if (i < gemvs.size()) layer.push_back(i);
      double bytes = 0;
      for (size_t j : order) bytes += 2.0 * gemvs[j].weight_elements();
      auto us = TimePasses(gemvs, order, weights, b, kPasses, stream);
      if (!us.ok()) {
        status = us.status();
        break;
      }
      std::printf("%s\n  {\"early_weight_loads\": %s, \"warps_per_column\": %d, \"gemv\": \"%s\", \"us\": %.2f, "
                  "\"share_of_read_bandwidth\": %.3f}",
                  sep, t.early_weight_loads ? "true" : "false", t.warps_per_column, i < gemvs.size() ? gemvs[i].name.c_str() : "layer", *us,
                  bytes / (*us * 1e-6) / read_bw);
      sep = ",";
    }
  }
  std::printf("]}\n");
  cudaStreamDestroy(stream);
  LLMSERVE_RETURN_IF_ERROR(kc::SetGemvTuning(kc::GemvTuning()));
  return status;
}

}  // namespace llmserve::bench
