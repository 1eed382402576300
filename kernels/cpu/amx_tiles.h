#pragma once
// AMX tile plumbing shared by the AMX kernels (gemm_amx_*.cc,
// paged_attention_amx.cc): the tile configuration block and the tile
// instructions as inline assembly. The asm carries memory clobbers so the
// compiler orders it with ordinary loads and stores, and no AMX target flag
// is needed to compile the includer. Call only after run-time dispatch saw
// Isa::kAmx (cpuid, XCR0 and the arch_prctl permission).

#include <cstdint>

namespace llmserve::kernels::cpu::amx {

// The 64-byte operand of ldtilecfg (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// The 2 × 2 block shape: C tiles 0, 1 (rows0 × 16 fp32) and 2, 3 (rows1 ×
// 16 fp32), A tiles 4 (rows0 × 32 bf16) and 5 (rows1 × 32 bf16), B tiles 6
// and 7 (16 pairs × 16 columns). rows0: 1..16, rows1: 0..16 (0: tiles 2, 3
// and 5 unused).
inline TileConfig MakeConfig(int rows0, int rows1) {
  TileConfig c;
  auto set = [&c](int tile, int rows) {
    c.rows[tile] = static_cast<uint8_t>(rows);
    c.colsb[tile] = rows > 0 ? 64 : 0;
  };
  set(0, rows0);
  set(1, rows0);
  set(2, rows1);
  set(3, rows1);
  set(4, rows0);
  set(5, rows1);
  set(6, 16);
  set(7, 16);
  return c;
}

inline void LoadConfig(const TileConfig& c) { __asm__ volatile("ldtilecfg %0" ::"m"(c) : "memory"); }
inline void Release() { __asm__ volatile("tilerelease" ::: "memory"); }

}  // namespace llmserve::kernels::cpu::amx

#define LLMSERVE_TILE_ZERO(t) __asm__ volatile("tilezero %%tmm" #t ::: "memory")
#define LLMSERVE_TILE_LOAD(t, base, stride) \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(base), "r"(static_cast<long>(stride)) : "memory")
#define LLMSERVE_TILE_STORE(t, base, stride) \
  __asm__ volatile("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(base), "r"(static_cast<long>(stride)) : "memory")
// c += a · b
#define LLMSERVE_TILE_DP(c, a, b) __asm__ volatile("tdpbf16ps %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::: "memory")
