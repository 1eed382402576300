"""FP8 checkpoints for ref_forward.py, written from the formats' definitions:
F8_E4M3 bytes decoded (1 sign, 4 exponent bits with bias 7, 3 mantissa bits,
subnormals m * 2^-9, S.1111.111 NaN), and vLLM's "fp8" method weights
multiplied by their scales: NAME_scale_inv per block of weight_block_size, or
NAME_scale for the whole tensor, in float32 as the C++ loader does."""

import numpy as np


def _e4m3_values():
    v = np.arange(256)
    exponent, mantissa = (v >> 3) & 0xF, v & 0x7
    magnitude = np.where(exponent == 0, mantissa * 2.0 ** -9, (8 + mantissa) * 2.0 ** (exponent - 10))
    magnitude = np.where((exponent == 0xF) & (mantissa == 7), np.nan, magnitude)
    return (np.where(v & 0x80, -1.0, 1.0) * magnitude).astype(np.float32)


E4M3 = _e4m3_values()


def decode_e4m3(raw):
    """uint8 codes -> float32 values."""
    return E4M3[raw]


def scale_fp8_weights(cfg, W):
    """Multiplies each FP8 weight of W (already decoded) by its scales, in place:
    vLLM's fp8 method (block scales NAME_scale_inv, or one NAME_scale), or
    compressed-tensors float-quantized (NAME_scale: one per output row, or one)."""
    qc = cfg.get("quantization_config") or {}
    compressed = qc.get("quant_method") == "compressed-tensors" and qc.get("format") == "float-quantized"
    if qc.get("quant_method") != "fp8" and not compressed:
        return
    block = None if compressed else qc.get("weight_block_size")
    suffix = "_scale_inv" if block else "_scale"
    for name in [n for n in W if n + suffix in W]:
        w, s = W[name], W.pop(name + suffix).astype(np.float32)
        if block:
            s = np.repeat(np.repeat(s, block[0], axis=0), block[1], axis=1)[: w.shape[0], : w.shape[1]]
        elif s.size > 1:
            s = s.reshape(-1, 1)  # one per output row
        else:
            s = s.reshape(-1)[0]
        W[name] = (w * s).astype(np.float32)
