// AMX kernels. Only reached after run-time dispatch (Isa::kAmx: cpuid, XCR0 and
// the arch_prctl permission). Tile instructions are written as inline assembly
// with memory clobbers so that the compiler orders them with ordinary loads
// and stores, and so no AMX target flag is needed to compile these files.
#include "kernels/cpu/gemm_amx.h"

#include "kernels/cpu/gemm_amx_blocks.h"

namespace llmserve::kernels::cpu::amx {

void Gemm(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
          size_t ldy, size_t panel_begin, size_t panel_end) {
  if (m == 0 || panel_begin >= panel_end) return;
  const size_t kb_count = kpad / 32;
  const size_t panel_bytes = kpad * 16 * 2;
  const auto* wb = reinterpret_cast<const uint8_t*>(w);
  const auto* ab = reinterpret_cast<const uint8_t*>(a);
  if (m <= internal::kWideMaxRows) {
    internal::GemmWide(ab, m, wb, panel_bytes, kb_count, n, y, ldy, panel_begin, panel_end);
    Release();
    return;
  }
  internal::GemmLarge(ab, m, wb, panel_bytes, kb_count, n, y, ldy, panel_begin, panel_end);
  Release();
}

}  // namespace llmserve::kernels::cpu::amx
