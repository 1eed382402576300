#include "kernels/cpu/cpu_features.h"

#include <glog/logging.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace llmserve::kernels::cpu {
namespace {

#if defined(__x86_64__)
uint64_t Xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Asks Linux for the AMX tile-data state (process-wide); true when granted.
bool RequestAmxPermission() {
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

CpuFeatures Probe() {
  CpuFeatures f;
  const long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);  // glibc reads it from cpuid, for Intel and AMD
  f.l1d_bytes = l1d > 0 ? static_cast<size_t>(l1d) : 0;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28),
             f16c = c & (1u << 29);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = Xgetbv0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = ymm_state && (xcr0 & 0xe0) == 0xe0;
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool avx2 = b & (1u << 5);
  const bool avx512f = b & (1u << 16), avx512dq = b & (1u << 17), avx512bw = b & (1u << 30),
             avx512vl = b & (1u << 31);
  const bool amx_bf16 = d & (1u << 22), amx_tile = d & (1u << 24);
  const bool avx512_vnni = c & (1u << 11);
  unsigned a1 = 0, b1, c1, d1;
  __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
  f.avx2 = ymm_state && avx2 && fma && f16c;
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx512_bf16 = f.avx512 && (a1 & (1u << 5));
  f.avx512_vnni = f.avx512 && avx512_vnni;
  f.amx = f.avx512_bf16 && tile_state && amx_tile && amx_bf16 && RequestAmxPermission();
  f.best = f.amx           ? Isa::kAmx
           : f.avx512_bf16 ? Isa::kAvx512Bf16
           : f.avx512      ? Isa::kAvx512
           : f.avx2        ? Isa::kAvx2
                           : Isa::kScalar;
  return f;
}
#else
CpuFeatures Probe() { return CpuFeatures{}; }
#endif

Isa InitialCap() {
  const char* env = std::getenv("LLMSERVE_CPU_ISA");
  Isa isa = Isa::kAmx;
  if (env != nullptr && *env != '\0' && !ParseIsa(env, &isa)) {
    LOG(WARNING) << "ignoring LLMSERVE_CPU_ISA=" << env << " (want scalar|avx2|avx512|avx512bf16|amx)";
    isa = Isa::kAmx;
  }
  return isa;
}

std::atomic<int>& Cap() {
  static std::atomic<int> cap{static_cast<int>(InitialCap())};
  return cap;
}

}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Probe();
  return features;
}

Isa ActiveIsa() {
  const int best = static_cast<int>(GetCpuFeatures().best);
  const int cap = Cap().load(std::memory_order_relaxed);
  return static_cast<Isa>(best < cap ? best : cap);
}

void SetMaxIsa(Isa isa) { Cap().store(static_cast<int>(isa), std::memory_order_relaxed); }

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx512Bf16: return "avx512bf16";
    case Isa::kAmx: return "amx";
  }
  return "scalar";
}

bool ParseIsa(std::string_view name, Isa* isa) {
  for (Isa candidate : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Bf16, Isa::kAmx}) {
    if (name == IsaName(candidate)) {
      *isa = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace llmserve::kernels::cpu
