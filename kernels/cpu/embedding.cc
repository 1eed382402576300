#include "kernels/cpu/embedding.h"

#include <glog/logging.h>

#include <cstring>

#include "base/float8.h"

namespace llmserve::kernels::cpu {

void ConvertToF32(const void* src, WeightDType dtype, size_t n, float* out) {
  switch (dtype) {
    case WeightDType::kF32:
      std::memcpy(out, src, n * sizeof(float));
      return;
    case WeightDType::kBF16: {
      const auto* s = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, s + 2 * i, 2);
        out[i] = Bf16ToF32(b);
      }
      return;
    }
    case WeightDType::kF16: {
      const auto* s = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, s + 2 * i, 2);
        out[i] = F16ToF32(b);
      }
      return;
    }
    case WeightDType::kI8: {
      const auto* s = static_cast<const int8_t*>(src);
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(s[i]);
      return;
    }
    case WeightDType::kI32: {
      const auto* s = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, s + 4 * i, 4);
        out[i] = static_cast<float>(v);
      }
      return;
    }
    case WeightDType::kF8E4M3: {
      const auto* s = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) out[i] = base::Fp8E4M3ToFloat(s[i]);
      return;
    }
  }
}

void EmbeddingLookup(const void* table, WeightDType dtype, size_t vocab, size_t dim,
                     const int32_t* ids, size_t n, float* out, ThreadPool& pool) {
  const size_t es = dtype == WeightDType::kF32 ? 4 : 2;
  const auto* base = static_cast<const uint8_t*>(table);
  pool.ParallelFor(n, 8, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      CHECK(ids[i] >= 0 && static_cast<size_t>(ids[i]) < vocab) << "token id " << ids[i];
      ConvertToF32(base + static_cast<size_t>(ids[i]) * dim * es, dtype, dim, out + i * dim);
    }
  });
}

}  // namespace llmserve::kernels::cpu
