#pragma once
// Run-time CPU feature detection and the instruction-set level the CPU
// kernels dispatch to. Nothing in the library is compiled for a newer ISA than
// the build's default; kernels that need more carry per-function target
// attributes and are only called after this detection said yes.

#include <cstddef>
#include <string>
#include <string_view>

namespace llmserve::kernels::cpu {

// Kernel families, ordered: each level implies the ones below it.
enum class Isa {
  kScalar = 0,  // portable C++ (the fallback of last resort)
  kAvx2 = 1,    // AVX2 + FMA + F16C
  kAvx512 = 2,      // AVX-512 F/BW/VL/DQ
  kAvx512Bf16 = 3,  // AVX-512 + vdpbf16ps (e.g. AMD Zen 4)
  kAmx = 4,         // AVX-512 BF16 + AMX tile/bf16, with the OS permission granted
};

// What this CPU and OS support, probed once (cpuid, xgetbv, arch_prctl, sysconf).
struct CpuFeatures {
  bool avx2 = false;         // AVX2 + FMA + F16C with OS-enabled ymm state
  bool avx512 = false;       // AVX-512 F/BW/VL/DQ with OS-enabled zmm state
  bool avx512_bf16 = false;  // vdpbf16ps / vcvtneps2bf16
  bool avx512_vnni = false;  // vpdpbusd (int8 products); not a level of its own: Zen 4 and
                             // Ice Lake have it, Skylake-X does not
  bool amx = false;          // AMX tile + bf16, XTILEDATA permission granted
  Isa best = Isa::kScalar;   // highest level all of the above allow
  size_t l1d_bytes = 0;      // L1 data cache of one core (0: unknown)
};

// The probed features (cached after the first call; thread-safe).
const CpuFeatures& GetCpuFeatures();

// The level kernels use now: min(GetCpuFeatures().best, the cap). The cap
// starts from the LLMSERVE_CPU_ISA environment variable
// (scalar|avx2|avx512|avx512bf16|amx)
// when set, otherwise no cap.
Isa ActiveIsa();

// Caps the level used by LinearWeight::Pack from now on (tests force each
// path with it; a CLI flag may too). Weights already packed keep their path.
void SetMaxIsa(Isa isa);

// "scalar", "avx2", "avx512", "avx512bf16", "amx".
std::string_view IsaName(Isa isa);
// Parses IsaName's output; false for anything else.
bool ParseIsa(std::string_view name, Isa* isa);

}  // namespace llmserve::kernels::cpu
