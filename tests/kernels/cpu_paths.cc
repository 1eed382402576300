// cpu_paths: the CPU kernel paths this machine supports, as the kernels' own
// run-time dispatch sees them, for scripts/test_summary:
//   supported: scalar avx2 avx512     (GetCpuFeatures: what the hardware and OS allow)
//   active: avx512                    (ActiveIsa: after LLMSERVE_CPU_ISA's cap)
#include <cstdio>
#include <string>

#include "kernels/cpu/cpu_features.h"

int main() {
  using llmserve::kernels::cpu::Isa;
  const Isa best = llmserve::kernels::cpu::GetCpuFeatures().best;
  std::string supported;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Bf16, Isa::kAmx}) {
    if (static_cast<int>(isa) > static_cast<int>(best)) break;
    if (!supported.empty()) supported += ' ';
    supported += llmserve::kernels::cpu::IsaName(isa);
  }
  std::printf("supported: %s\nactive: %s\n", supported.c_str(),
              std::string(llmserve::kernels::cpu::IsaName(llmserve::kernels::cpu::ActiveIsa())).c_str());
  return 0;
}
