#include "kernels/cpu/lora.h"

#include <glog/logging.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/lora_blocks.h"

namespace llmserve::kernels::cpu {

namespace {

float Widen(float v) { return v; }
float Widen(uint16_t bf16) {
  const uint32_t bits = static_cast<uint32_t>(bf16) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

template <typename T>
void Row(const LoraFactors& f, const float* x, float* y) {
  DCHECK_LE(f.rank, kMaxLoraRank);
  float t[kMaxLoraRank];
  for (size_t i = 0; i < f.rank; ++i) t[i] = 0.f;
  // Shrink: t = A·x, each t[i] one fma chain over k in index order.
  for (size_t k = 0; k < f.in; ++k) {
    const float xk = x[k];
    const T* a = static_cast<const T*>(f.a_t) + k * f.rank;
    for (size_t i = 0; i < f.rank; ++i) t[i] = std::fma(Widen(a[i]), xk, t[i]);
  }
  for (size_t i = 0; i < f.rank; ++i) t[i] *= f.scale;
  // Expand: y += B·t, one rank term at a time in index order.
  for (size_t i = 0; i < f.rank; ++i) {
    const float ti = t[i];
    const T* b = static_cast<const T*>(f.b_t) + i * f.out;
    for (size_t j = 0; j < f.out; ++j) y[j] = std::fma(Widen(b[j]), ti, y[j]);
  }
}

}  // namespace

void LoraShrinkExpandRow(const LoraFactors& f, const float* x, float* y) {
  if (f.dtype == LoraDType::kBF16) {
    Row<uint16_t>(f, x, y);
  } else {
    Row<float>(f, x, y);
  }
}

namespace lora {

void BlockScalar(const LoraFactors& f, const float* const* x, float* const* y, size_t m) {
  for (size_t r = 0; r < m; ++r) LoraShrinkExpandRow(f, x[r], y[r]);
}

}  // namespace lora

namespace {

using BlockFn = void (*)(const LoraFactors&, const float* const*, float* const*, size_t);

BlockFn ChooseBlock() {
  const Isa isa = ActiveIsa();
  if (static_cast<int>(isa) >= static_cast<int>(Isa::kAvx512)) return lora::BlockAvx512;
  if (static_cast<int>(isa) >= static_cast<int>(Isa::kAvx2)) return lora::BlockAvx2;
  return lora::BlockScalar;
}

// A block of up to kLoraBlockRows consecutive rows of one group.
struct Item {
  size_t group;
  size_t first;  // index into the group's rows
  size_t count;
};

}  // namespace

void LoraApplyGroups(const LoraGroup* groups, size_t num_groups, const float* x, size_t x_stride, float* y,
                     size_t y_stride, ThreadPool& pool) {
  constexpr size_t kRows = lora::kLoraBlockRows;
  std::vector<Item> items;
  for (size_t g = 0; g < num_groups; ++g) {
    CHECK_LE(groups[g].f.rank, kMaxLoraRank);
    if (groups[g].f.rank == 0) continue;
    for (size_t first = 0; first < groups[g].n; first += kRows) {
      items.push_back({g, first, std::min(kRows, groups[g].n - first)});
    }
  }
  if (items.empty()) return;
  const BlockFn block = ChooseBlock();
  // One item per range: blocks differ in cost little, and late threads
  // leave their share to the others.
  pool.ParallelForChunks(items.size(), 1, [&](size_t begin, size_t end, size_t) {
    const float* xr[kRows];
    float* yr[kRows];
    for (size_t it = begin; it < end; ++it) {
      const Item& item = items[it];
      const LoraGroup& g = groups[item.group];
      for (size_t r = 0; r < item.count; ++r) {
        const size_t row = static_cast<size_t>(g.rows[item.first + r]);
        xr[r] = x + row * x_stride;
        yr[r] = y + row * y_stride;
      }
      block(g.f, xr, yr, item.count);
    }
  });
}

void LoraShrinkExpand(const LoraFactors& f, const float* x, size_t x_stride, const int32_t* rows, size_t n,
                      float* y, size_t y_stride, ThreadPool& pool) {
  const LoraGroup g{f, rows, n};
  LoraApplyGroups(&g, 1, x, x_stride, y, y_stride, pool);
}

}  // namespace llmserve::kernels::cpu
