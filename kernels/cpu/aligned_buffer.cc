#include "kernels/cpu/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>

namespace llmserve::kernels::cpu {

void* AlignedAllocate(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t align = bytes >= 2 * kHuge ? kHuge : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (p == nullptr) throw std::bad_alloc();
  if (align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);  // advisory; failure is harmless
  return p;
}

void AlignedFree(void* p) noexcept { std::free(p); }

}  // namespace llmserve::kernels::cpu
