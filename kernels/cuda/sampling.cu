#include <math_constants.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sampling.h"
#include "kernels/cuda/warp_sum.cuh"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kThreads = 1024;
constexpr int kBisectionSteps = 32;

// Floats as unsigned keys in the same order (NaNs excluded by the callers).
__device__ unsigned OrderedKey(float f) {
  const unsigned bits = __float_as_uint(f);
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

template <typename T>
__device__ T BlockSum(T v, T* shared) {
  v = WarpSum(v);
  __syncthreads();  // `shared` may still be read by the previous call
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  T total = 0;
  for (int w = 0; w < kThreads / 32; ++w) total += shared[w];
  return total;
}

struct RowView {
  const float* l;
  size_t vocab;
  float mx, temperature, floor_logit, min_p;
  // The row's p relative to the best token: temperature, the e^-30 floor and min_p.
  __device__ float P(size_t i) const {
    const float x = l[i];
    if (!(x >= floor_logit)) return 0.f;  // also NaN
    const float p = __expf((x - mx) / temperature);
    return p < min_p ? 0.f : p;
  }
};

// The row's first maximum (as a key packing (logit, ~id): the larger logit,
// then the lower id) and its NaN count, both known to every thread.
__device__ int32_t FirstArgMax(const float* l, size_t vocab, int* nans_out) {
  __shared__ int shared_i[kThreads / 32];
  __shared__ unsigned long long shared_best[kThreads / 32];
  unsigned long long best = 0;
  int nans = 0;
  for (size_t i = threadIdx.x; i < vocab; i += kThreads) {
    const float x = l[i];
    if (x != x) {
      ++nans;
      continue;
    }
    const unsigned long long key = (static_cast<unsigned long long>(OrderedKey(x)) << 32) | (0xffffffffu - i);
    best = key > best ? key : best;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, best, offset);
    best = other > best ? other : best;
  }
  if (threadIdx.x % 32 == 0) shared_best[threadIdx.x / 32] = best;
  *nans_out = BlockSum(nans, shared_i);
  best = 0;
  for (int w = 0; w < kThreads / 32; ++w) best = shared_best[w] > best ? shared_best[w] : best;
  return static_cast<int32_t>(0xffffffffu - static_cast<unsigned>(best & 0xffffffffu));
}

// The least key top_k keeps: the largest key with at least k tokens at or
// above it (starting from `cut`, the floor's key).
__device__ unsigned TopKCut(const RowView& view, int top_k, unsigned cut) {
  __shared__ int shared_i[kThreads / 32];
  const float* l = view.l;
  unsigned lo = cut, hi = OrderedKey(view.mx);
  for (int step = 0; step < kBisectionSteps && lo < hi; ++step) {
    const unsigned mid = lo + (hi - lo + 1) / 2;
    int count = 0;
    for (size_t i = threadIdx.x; i < view.vocab; i += kThreads) count += l[i] == l[i] && OrderedKey(l[i]) >= mid;
    if (BlockSum(count, shared_i) >= top_k) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Sum of p over the tokens with keys at or above `least`.
__device__ float KeptSum(const RowView& view, unsigned least) {
  __shared__ float shared_f[kThreads / 32];
  float sum = 0.f;
  for (size_t i = threadIdx.x; i < view.vocab; i += kThreads) {
    if (view.l[i] == view.l[i] && OrderedKey(view.l[i]) >= least) sum += view.P(i);
  }
  return BlockSum(sum, shared_f);
}

// The least key top_p keeps: the largest key whose tokens' p reach top_p of
// what `cut` keeps.
__device__ unsigned TopPCut(const RowView& view, float top_p, unsigned cut) {
  const float want = top_p * KeptSum(view, cut);
  unsigned lo = cut, hi = OrderedKey(view.mx);
  for (int step = 0; step < kBisectionSteps && lo < hi; ++step) {
    const unsigned mid = lo + (hi - lo + 1) / 2;
    if (KeptSum(view, mid) >= want) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The draw over the kept tokens in id order: thread j sums its contiguous
// chunk (and notes its last kept token); thread 0 finds the chunk holding
// u · total and walks it. Returns the token on thread 0 (-1 elsewhere).
__device__ int32_t DrawInIdOrder(const RowView& view, unsigned cut, float uniform, int32_t fallback) {
  __shared__ float chunk_sums[kThreads];
  __shared__ int32_t chunk_last[kThreads];
  const float* l = view.l;
  const size_t vocab = view.vocab, chunk = (vocab + kThreads - 1) / kThreads;
  const size_t begin = threadIdx.x * chunk, end = begin + chunk < vocab ? begin + chunk : vocab;
  float mine = 0.f;
  int32_t last = -1;
  for (size_t i = begin; i < end; ++i) {
    if (!(l[i] == l[i] && OrderedKey(l[i]) >= cut)) continue;
    const float p = view.P(i);
    if (p > 0.f) {
      mine += p;
      last = static_cast<int32_t>(i);
    }
  }
  chunk_sums[threadIdx.x] = mine;
  chunk_last[threadIdx.x] = last;
  __syncthreads();
  if (threadIdx.x != 0) return -1;
  float total = 0.f;
  for (int j = 0; j < kThreads; ++j) total += chunk_sums[j];
  const float target = uniform * total;
  float acc = 0.f;
  int32_t token = fallback;  // no kept token
  for (int j = 0; j < kThreads; ++j) {
    if (chunk_last[j] < 0) continue;
    token = chunk_last[j];  // a target rounding past the total takes the last kept token
    if (target >= acc + chunk_sums[j]) {
      acc += chunk_sums[j];
      continue;
    }
    const size_t stop = min(vocab, (j + 1) * chunk);
    for (size_t i = j * chunk; i < stop; ++i) {
      if (!(l[i] == l[i] && OrderedKey(l[i]) >= cut)) continue;
      acc += view.P(i);
      if (target < acc) return static_cast<int32_t>(i);
    }
    return token;
  }
  return token;
}

// Grid: one block per row.
__global__ void __launch_bounds__(kThreads)
    SampleKernel(const float* logits, size_t vocab, const SamplingRow* rows, int32_t* tokens, int32_t* nan_counts) {
  const SamplingRow row = rows[blockIdx.x];
  const float* l = logits + static_cast<size_t>(row.logits_row) * vocab;
  int nans = 0;
  const int32_t argmax = FirstArgMax(l, vocab, &nans);
  const float mx = l[argmax];
  if (threadIdx.x == 0) nan_counts[blockIdx.x] = nans;
  if (row.temperature <= 1e-5f || !(mx > -CUDART_INF_F)) {  // greedy, or no finite logit
    if (threadIdx.x == 0) tokens[blockIdx.x] = argmax;
    return;
  }
  const RowView view{l, vocab, mx, row.temperature, mx - 30.f * row.temperature, row.min_p > 0 ? row.min_p : 0.f};
  // Cuts as the least kept key: the floor, then top_k, then top_p.
  unsigned cut = OrderedKey(view.floor_logit);
  if (row.top_k > 0 && static_cast<size_t>(row.top_k) < vocab) cut = TopKCut(view, row.top_k, cut);
  if (row.top_p < 1.f) cut = TopPCut(view, row.top_p, cut);
  const int32_t token = DrawInIdOrder(view, cut, row.uniform, argmax);
  if (threadIdx.x == 0) tokens[blockIdx.x] = token;
}

}  // namespace

Status SampleRows(const float* logits, size_t vocab, const SamplingRow* rows, size_t num_rows, int32_t* tokens,
                  int32_t* nan_counts, cudaStream_t stream) {
  if (num_rows == 0) return Status::Ok();
  SampleKernel<<<static_cast<unsigned>(num_rows), kThreads, 0, stream>>>(logits, vocab, rows, tokens, nan_counts);
  return CudaStatus(cudaGetLastError(), "SampleKernel launch");
}

}  // namespace llmserve::kernels::cuda
