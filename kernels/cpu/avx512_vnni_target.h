#pragma once
// The target attributes of the K-quant VNNI kernels (vpdpbusd on ymm, which
// needs AVX-512 VL and VNNI); they are reached only after run-time dispatch
// on CpuFeatures::avx512 and avx512_vnni.

#include <immintrin.h>

#define LLMSERVE_AVX512_VNNI __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#define LLMSERVE_AVX512_VNNI_INLINE LLMSERVE_AVX512_VNNI __attribute__((always_inline)) inline
