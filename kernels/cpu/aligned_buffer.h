#pragma once
// AlignedAllocator: a std::allocator that returns cache-line (64-byte) aligned
// memory, so packed weights stream whole cache lines and AMX tiles never
// straddle one. Large blocks are also 2 MiB aligned and advised for huge pages.

#include <cstddef>
#include <new>

namespace llmserve::kernels::cpu {

// Allocates `bytes` aligned to 64 (2 MiB for blocks of 4 MiB or more); throws
// std::bad_alloc on failure.
void* AlignedAllocate(size_t bytes);
// Frees memory from AlignedAllocate.
void AlignedFree(void* p) noexcept;

template <typename T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) {}  // NOLINT: allocator rebind
  // Memory for n objects of T.
  T* allocate(size_t n) { return static_cast<T*>(AlignedAllocate(n * sizeof(T))); }
  // Returns memory from allocate.
  void deallocate(T* p, size_t) noexcept { AlignedFree(p); }
  template <typename U>
  bool operator==(const AlignedAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const AlignedAllocator<U>&) const { return false; }
};

}  // namespace llmserve::kernels::cpu
