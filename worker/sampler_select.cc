#include "worker/sampler_select.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__x86_64__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#endif

namespace llmserve::worker {
namespace {

constexpr size_t kChunk = 256;  // tokens per draw chunk
constexpr size_t kLanes = 8;    // partial sums per chunk (fixed: the order of the additions)
constexpr size_t kBuckets = 4096;

using Entry = std::pair<float, int32_t>;

// Whether a comes before b in the best-first order.
inline bool Before(const Entry& a, const Entry& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// Offers token t to the k-best binary heap (worst entry at index 0). A later
// token with an equal logit is never better, so only a higher logit enters.
inline void Offer(std::vector<Entry>& heap, size_t k, float l, int32_t t) {
  if (heap.size() < k) {  // sift up
    size_t i = heap.size();
    heap.emplace_back(l, t);
    while (i > 0 && Before(heap[(i - 1) / 2], heap[i])) {
      std::swap(heap[(i - 1) / 2], heap[i]);
      i = (i - 1) / 2;
    }
    return;
  }
  if (!(l > heap[0].first)) return;
  // Replace the worst and sift down.
  const Entry e{l, t};
  size_t i = 0;
  for (;;) {
    size_t worst = i;
    const size_t a = 2 * i + 1, b = a + 1;
    if (a < k && Before(worst == i ? e : heap[worst], heap[a])) worst = a;
    if (b < k && Before(worst == i ? e : heap[worst], heap[b])) worst = b;
    if (worst == i) break;
    heap[i] = heap[worst];
    i = worst;
  }
  heap[i] = e;
}

// The logit a token must beat to enter the heap.
inline float Threshold(const std::vector<Entry>& heap, size_t k) {
  return heap.size() < k ? -std::numeric_limits<float>::infinity() : heap.front().first;
}

#if defined(__x86_64__)
// TopK's scan, 16 logits per compare: almost every block has no logit above
// the threshold once the heap is full.
__attribute__((target("avx512f"))) void ScanAvx512(const float* l, size_t n, size_t k, std::vector<Entry>& heap) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __mmask16 m = _mm512_cmp_ps_mask(_mm512_loadu_ps(l + i), _mm512_set1_ps(Threshold(heap, k)), _CMP_GT_OQ);
    while (m != 0) {
      const size_t t = i + static_cast<size_t>(__builtin_ctz(m));
      m &= static_cast<__mmask16>(m - 1);
      if (l[t] > Threshold(heap, k)) Offer(heap, k, l[t], static_cast<int32_t>(t));
    }
  }
  for (; i < n; ++i) {
    if (l[i] > Threshold(heap, k)) Offer(heap, k, l[i], static_cast<int32_t>(i));
  }
}

// DropAfter, 8 tokens per step.
__attribute__((target("avx512f,avx512vl"))) size_t DropAfterAvx512(const float* l, size_t n, Cut cut, double* p) {
  const __m256 cl = _mm256_set1_ps(cut.logit);
  const __m256i ct = _mm256_set1_epi32(cut.token);
  const __m256i step = _mm256_set1_epi32(8);
  __m256i t = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  size_t i = 0;
  for (; i + 8 <= n; i += 8, t = _mm256_add_epi32(t, step)) {
    const __m256 v = _mm256_loadu_ps(l + i);
    const __mmask8 above = _mm256_cmp_ps_mask(v, cl, _CMP_GT_OQ);
    const __mmask8 tied = _mm256_cmp_ps_mask(v, cl, _CMP_EQ_OQ) & _mm256_cmp_epi32_mask(t, ct, _MM_CMPINT_LE);
    _mm512_storeu_pd(p + i, _mm512_maskz_loadu_pd(above | tied, p + i));
  }
  return i;
}

// Appends the tokens with p > 0, 8 per step.
__attribute__((target("avx512f,avx512vl"))) size_t KeptAvx512(const double* p, size_t n, int32_t* out, size_t* count) {
  const __m256i step = _mm256_set1_epi32(8);
  __m256i t = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  size_t i = 0;
  for (; i + 8 <= n; i += 8, t = _mm256_add_epi32(t, step)) {
    const __mmask8 m = _mm512_cmp_pd_mask(_mm512_loadu_pd(p + i), _mm512_setzero_pd(), _CMP_GT_OQ);
    if (m == 0) continue;
    _mm256_mask_compressstoreu_epi32(out + *count, m, t);
    *count += static_cast<size_t>(__builtin_popcount(m));
  }
  return i;
}

// ChunkSum's whole 8-token steps, one vector lane per partial sum.
__attribute__((target("avx512f"))) size_t LaneSumsAvx512(const double* p, size_t begin, size_t end, double* lane) {
  __m512d acc = _mm512_setzero_pd();
  size_t i = begin;
  for (; i + kLanes <= end; i += kLanes) acc = _mm512_add_pd(acc, _mm512_loadu_pd(p + i));
  _mm512_storeu_pd(lane, acc);
  return i;
}

bool HasAvx512Vl() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return has;
}
#endif

// Sum of p[begin, end) in kLanes interleaved partial sums (lane j adds
// p[begin + j], p[begin + j + 8], ... in order), combined pairwise.
double ChunkSum(const double* p, size_t begin, size_t end) {
  double lane[kLanes] = {};
  size_t i = begin;
#if defined(__x86_64__)
  if (HasAvx512Vl()) i = LaneSumsAvx512(p, begin, end, lane);
#endif
  for (; i + kLanes <= end; i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) lane[j] += p[i + j];
  }
  for (size_t j = 0; i < end; ++i, ++j) lane[j] += p[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

std::vector<Entry> TopK(const float* logits, size_t n, size_t k) {
  std::vector<Entry> heap;
  if (k == 0) return heap;
  heap.reserve(std::min(k, n));
#if defined(__x86_64__)
  if (HasAvx512Vl()) {
    ScanAvx512(logits, n, k, heap);
  } else
#endif
  {
    for (size_t i = 0; i < n; ++i) {
      if (logits[i] > Threshold(heap, k)) Offer(heap, k, logits[i], static_cast<int32_t>(i));
    }
  }
  std::sort(heap.begin(), heap.end(), Before);
  return heap;
}

void DropAfter(const float* logits, size_t n, Cut cut, double* p) {
  size_t t = 0;
#if defined(__x86_64__)
  if (HasAvx512Vl()) t = DropAfterAvx512(logits, n, cut, p);
#endif
  for (; t < n; ++t) {
    if (!AtOrBefore(logits[t], static_cast<int32_t>(t), cut)) p[t] = 0;
  }
}

Cut TopPCut(const float* logits, const double* p, size_t n, double want, float lo, float hi) {
  // The tokens with p > 0, in id order.
  thread_local std::vector<int32_t> kept;
  kept.resize(n);
  size_t count = 0, t = 0;
#if defined(__x86_64__)
  if (HasAvx512Vl()) t = KeptAvx512(p, n, kept.data(), &count);
#endif
  for (; t < n; ++t) {
    if (p[t] > 0) kept[count++] = static_cast<int32_t>(t);
  }
  // Their mass per logit bucket, best bucket first (a bucket never mixes
  // order: a higher logit never lands in a later bucket).
  const double scale = hi > lo ? static_cast<double>(kBuckets) / (static_cast<double>(hi) - lo) : 0.0;
  thread_local std::vector<uint16_t> bucket;
  bucket.resize(count);
  std::vector<double> mass(kBuckets, 0.0);
  for (size_t i = 0; i < count; ++i) {
    const double b = (static_cast<double>(hi) - logits[kept[i]]) * scale;
    bucket[i] = static_cast<uint16_t>(b < static_cast<double>(kBuckets - 1) ? b : kBuckets - 1);
    mass[bucket[i]] += p[kept[i]];
  }
  double before = 0;
  size_t edge = 0;
  while (edge < kBuckets && (mass[edge] == 0 || before + mass[edge] < want)) before += mass[edge++];
  Cut last{-std::numeric_limits<float>::infinity(), std::numeric_limits<int32_t>::max()};
  if (edge == kBuckets) return last;  // rounding left the row short of `want`: keep all
  // The edge bucket in best-first order, until the running sum reaches want.
  std::vector<Entry> in_edge;
  for (size_t i = 0; i < count; ++i) {
    if (bucket[i] == edge) in_edge.emplace_back(logits[kept[i]], kept[i]);
  }
  std::sort(in_edge.begin(), in_edge.end(), Before);
  double acc = before;
  for (const Entry& e : in_edge) {
    last = {e.first, e.second};
    acc += p[e.second];
    if (acc >= want) break;
  }
  return last;
}

Draw::Draw(const double* p, size_t n) : p_(p), n_(n), chunk_sums_((n + kChunk - 1) / kChunk) {
  for (size_t c = 0; c < chunk_sums_.size(); ++c) {
    chunk_sums_[c] = ChunkSum(p, c * kChunk, std::min(n, (c + 1) * kChunk));
    total_ += chunk_sums_[c];
  }
}

int32_t Draw::Pick(double u) const {
  const double target = u * total_;
  double acc = 0;
  for (size_t c = 0; c < chunk_sums_.size(); ++c) {
    if (!(target < acc + chunk_sums_[c])) {
      acc += chunk_sums_[c];
      continue;
    }
    // The chunk holds the target: walk it in token order. Its running sum
    // may round below acc + chunk sum; then the chunk's last kept token wins.
    int32_t last = -1;
    for (size_t t = c * kChunk; t < std::min(n_, (c + 1) * kChunk); ++t) {
      if (p_[t] <= 0) continue;
      last = static_cast<int32_t>(t);
      acc += p_[t];
      if (target < acc) return last;
    }
    return last;
  }
  // Only when u * total rounds up to total: the last kept token.
  for (size_t t = n_; t-- > 0;) {
    if (p_[t] > 0) return static_cast<int32_t>(t);
  }
  return 0;
}

}  // namespace llmserve::worker
