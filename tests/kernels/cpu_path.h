#pragma once
// The CPU kernel paths (scalar / AVX2 / AVX-512 / AVX512-BF16 / AMX) a test
// exercises, made visible to scripts/test_summary, which ends every test run
// with the paths exercised and fails when a path this CPU supports was skipped.
//
// A test that runs one path's kernels starts with
//   LLMSERVE_REQUIRE_CPU_PATH(Isa::kAvx512Bf16);
// which, on a CPU with that path, prints the marker line "[ CPU PATH ] avx512bf16"
// and goes on, and otherwise skips the test with the reason
// "cpu path avx512bf16: not on this CPU". A test that loops over paths asks
// EnterCpuPath(isa) for each (true: marked, run it) and, when none ran, skips
// with CpuPathSkipReason(first path it wanted).
//
// Support is the hardware's (GetCpuFeatures), not LLMSERVE_CPU_ISA's cap:
// tests force each path with SetMaxIsa whatever the environment says.

#include <cstdio>
#include <string>

#include "kernels/cpu/cpu_features.h"

namespace llmserve::kernels::cpu::test_paths {

// True when this CPU runs `isa`'s kernels.
inline bool CpuPathSupported(Isa isa) {
  return static_cast<int>(isa) <= static_cast<int>(GetCpuFeatures().best);
}

// Marks the running test as exercising `isa` when this CPU supports it;
// returns whether it does.
inline bool EnterCpuPath(Isa isa) {
  if (!CpuPathSupported(isa)) return false;
  std::printf("[ CPU PATH ] %s\n", std::string(IsaName(isa)).c_str());
  std::fflush(stdout);
  return true;
}

// The skip reason scripts/test_summary reads: "cpu path NAME: not on this CPU".
inline std::string CpuPathSkipReason(Isa isa) {
  return "cpu path " + std::string(IsaName(isa)) + ": not on this CPU";
}

}  // namespace llmserve::kernels::cpu::test_paths

// Marks the test as exercising `isa`, or skips it (with the reason above).
#define LLMSERVE_REQUIRE_CPU_PATH(isa)                                    \
  switch (0)                                                              \
  case 0:                                                                 \
  default:                                                                \
    if (::llmserve::kernels::cpu::test_paths::EnterCpuPath(isa)) {        \
    } else                                                                \
      GTEST_SKIP() << ::llmserve::kernels::cpu::test_paths::CpuPathSkipReason(isa)
