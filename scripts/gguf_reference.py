#!/usr/bin/env python3
"""Independent numpy reader and dequantiser for GGUF files (versions 2 and 3).

Written from the published format, not from llmserve's C++: the file layout
from ggml's docs/gguf.md, the block layouts from the block structs of
ggml-common.h, and the value of each quantized element as ggml defines it,
computed in float32 in the format's operation order (the sub-block scale d*s
first, then times the quant, then minus the min). Those products are exact in
float32 (a half's 11-bit significand times small integers), so the only
rounding is the final subtraction, and a correct implementation of the format
matches this one bit for bit.

Usage (run with /usr/bin/python3, Debian's numpy):
  gguf_reference.py FILE.gguf --dump-metadata
      header, metadata (typed) and tensor infos as JSON on stdout
  gguf_reference.py FILE.gguf --dump-tensor NAME --out X.f32
      one tensor dequantised, raw little-endian float32, ggml order (dims[0] fastest)
  gguf_reference.py FILE.gguf --dump-all DIR
      every tensor the script can dequantise as DIR/<index>.f32, where <index>
      is the tensor's position in --dump-metadata's "tensors"
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

GGUF_MAGIC = b"GGUF"

# gguf.md: gguf_metadata_value_type
VALUE_TYPES = {
    0: ("uint8", "<B", 1), 1: ("int8", "<b", 1), 2: ("uint16", "<H", 2), 3: ("int16", "<h", 2),
    4: ("uint32", "<I", 4), 5: ("int32", "<i", 4), 6: ("float32", "<f", 4), 7: ("bool", "<?", 1),
    8: ("string", None, None), 9: ("array", None, None), 10: ("uint64", "<Q", 8),
    11: ("int64", "<q", 8), 12: ("float64", "<d", 8),
}

# ggml type number -> (name, values per block, bytes per block)
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
}


class Reader:
    """Sequential little-endian reads over the file's bytes."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError(f"truncated at offset {self.pos}: need {n} bytes")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        return self.take(self.unpack("<Q")).decode("utf-8", errors="replace")

    def value(self, type_number):
        name, fmt, _ = VALUE_TYPES[type_number]
        if name == "string":
            return self.string()
        if name == "array":
            element_type = self.unpack("<I")
            count = self.unpack("<Q")
            return [self.value(element_type) for _ in range(count)], element_type
        return self.unpack(fmt)


def json_number(v, type_name):
    """Floats that JSON cannot carry (nan, inf) as strings."""
    if type_name in ("float32", "float64") and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def parse(path):
    with open(path, "rb") as f:
        data = f.read()
    r = Reader(data)
    if r.take(4) != GGUF_MAGIC:
        raise ValueError("not a GGUF file")
    version = r.unpack("<I")
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    n_tensors = r.unpack("<Q")
    n_kv = r.unpack("<Q")
    metadata = []
    for _ in range(n_kv):
        key = r.string()
        type_number = r.unpack("<I")
        v = r.value(type_number)
        entry = {"key": key, "type": VALUE_TYPES[type_number][0]}
        if type_number == 9:
            values, element_type = v
            element_name = VALUE_TYPES[element_type][0]
            entry["element_type"] = element_name
            entry["value"] = [json_number(x, element_name) for x in values]
        else:
            entry["value"] = json_number(v, entry["type"])
        metadata.append(entry)
    alignment = 32
    for entry in metadata:
        if entry["key"] == "general.alignment":
            alignment = entry["value"]
    tensors = []
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.unpack("<I")
        dims = [r.unpack("<Q") for _ in range(n_dims)]
        type_number = r.unpack("<I")
        offset = r.unpack("<Q")
        tensors.append({"name": name, "dims": dims, "type_number": type_number,
                        "type": GGML_TYPES[type_number][0], "offset": offset})
    data_offset = (r.pos + alignment - 1) // alignment * alignment
    header = {"version": version, "alignment": alignment, "data_offset": data_offset,
              "metadata": metadata, "tensors": tensors}
    return header, data


# ---- dequantisation, one function per type: raw uint8 blocks -> float32 -------------------

def f16(b):
    """Little-endian IEEE half bytes (..., 2) -> float32, exact."""
    return np.ascontiguousarray(b).view("<f2").astype(np.float32)


def nibbles_32(qs):
    """16 bytes per block -> 32 values: low nibbles are values 0-15, high 16-31."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int32)


def fifth_bits_32(qh_bytes):
    """4 bytes per block (a little-endian uint32) -> bit j for value j."""
    qh = np.ascontiguousarray(qh_bytes).view("<u4").astype(np.uint64)  # (nb, 1)
    return ((qh >> np.arange(32, dtype=np.uint64)) & 1).astype(np.int32)


def deq_q4_0(b):
    d = f16(b[:, 0:2])
    return (nibbles_32(b[:, 2:18]) - 8).astype(np.float32) * d


def deq_q4_1(b):
    d, m = f16(b[:, 0:2]), f16(b[:, 2:4])
    return nibbles_32(b[:, 4:20]).astype(np.float32) * d + m


def deq_q5_0(b):
    d = f16(b[:, 0:2])
    q = nibbles_32(b[:, 6:22]) | (fifth_bits_32(b[:, 2:6]) << 4)
    return (q - 16).astype(np.float32) * d


def deq_q5_1(b):
    d, m = f16(b[:, 0:2]), f16(b[:, 2:4])
    q = nibbles_32(b[:, 8:24]) | (fifth_bits_32(b[:, 4:8]) << 4)
    return q.astype(np.float32) * d + m


def deq_q8_0(b):
    d = f16(b[:, 0:2])
    return np.ascontiguousarray(b[:, 2:34]).view(np.int8).astype(np.float32) * d


def k_scales_mins(s):
    """The 12 packed bytes of Q4_K / Q5_K -> 6-bit scales and mins (nb, 8).
    Sub-blocks 0-3: low 6 bits of bytes 0-3 (scale) and 4-7 (min).
    Sub-blocks 4-7: low 4 bits in bytes 8-11 (scale: low nibble, min: high
    nibble), top 2 bits in the top bits of bytes 0-3 (scale) and 4-7 (min)."""
    s = s.astype(np.int32)
    scales = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 0x0F) | ((s[:, 0:4] >> 6) << 4)], axis=1)
    mins = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=1)
    return scales.astype(np.float32), mins.astype(np.float32)


def k_nibbles(qs):
    """128 bytes -> (nb, 8, 32): bytes 32c..32c+31 hold sub-block 2c in their
    low nibbles and sub-block 2c+1 in their high nibbles."""
    qs = qs.reshape(-1, 4, 1, 32)
    return np.concatenate([qs & 0x0F, qs >> 4], axis=2).reshape(-1, 8, 32).astype(np.int32)


def deq_q4_k(b):
    d, dmin = f16(b[:, 0:2]), f16(b[:, 2:4])                # (nb, 1)
    scales, mins = k_scales_mins(b[:, 4:16])                 # (nb, 8)
    sub_d = (d * scales)[:, :, None]                         # float32
    sub_m = (dmin * mins)[:, :, None]
    q = k_nibbles(b[:, 16:144]).astype(np.float32)
    return (sub_d * q - sub_m).reshape(-1, 256)


def deq_q5_k(b):
    d, dmin = f16(b[:, 0:2]), f16(b[:, 2:4])
    scales, mins = k_scales_mins(b[:, 4:16])
    qh = b[:, 16:48].astype(np.int32)                        # bit k of byte l: value l of sub-block k
    high = (qh[:, None, :] >> np.arange(8)[None, :, None]) & 1
    q = (k_nibbles(b[:, 48:176]) | (high << 4)).astype(np.float32)
    sub_d = (d * scales)[:, :, None]
    sub_m = (dmin * mins)[:, :, None]
    return (sub_d * q - sub_m).reshape(-1, 256)


def deq_q6_k(b):
    ql, qh = b[:, 0:128].astype(np.int32), b[:, 128:192].astype(np.int32)
    scales = np.ascontiguousarray(b[:, 192:208]).view(np.int8).astype(np.float32)  # (nb, 16)
    d = f16(b[:, 208:210])
    q = np.empty((b.shape[0], 256), dtype=np.int32)
    for half in range(2):                 # 128 values per half: ql 64 bytes, qh 32 bytes
        low = ql[:, 64 * half:64 * half + 64]
        high = qh[:, 32 * half:32 * half + 32]
        for g in range(4):                # values 32g .. 32g+31 of the half
            src = low[:, 32 * (g % 2):32 * (g % 2) + 32]
            nib = (src & 0x0F) if g < 2 else (src >> 4)
            q[:, 128 * half + 32 * g:128 * half + 32 * g + 32] = nib | (((high >> (2 * g)) & 3) << 4)
    sub_d = np.repeat(d * scales, 16, axis=1)                # every 16 values share a scale
    return sub_d * (q - 32).astype(np.float32)


def deq_plain(dtype):
    def f(raw):
        return np.ascontiguousarray(raw).view(dtype).astype(np.float32).reshape(-1)
    return f


def deq_bf16(raw):
    u = np.ascontiguousarray(raw).view("<u2").astype(np.uint32) << 16
    return u.view(np.float32).reshape(-1)


DEQUANTIZERS = {
    "F32": deq_plain("<f4"), "F16": deq_plain("<f2"), "BF16": deq_bf16,
    "Q4_0": deq_q4_0, "Q4_1": deq_q4_1, "Q5_0": deq_q5_0, "Q5_1": deq_q5_1, "Q8_0": deq_q8_0,
    "Q4_K": deq_q4_k, "Q5_K": deq_q5_k, "Q6_K": deq_q6_k,
}


def dequantize(header, data, tensor):
    name, block, block_bytes = GGML_TYPES[tensor["type_number"]]
    count = int(np.prod(tensor["dims"], dtype=np.uint64))
    if count % block:
        raise ValueError(f"{tensor['name']}: {count} values are not whole {name} blocks")
    nbytes = count // block * block_bytes
    start = header["data_offset"] + tensor["offset"]
    if start + nbytes > len(data):
        raise ValueError(f"{tensor['name']}: data past the end of the file")
    raw = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=start)
    if block > 1:
        raw = raw.reshape(-1, block_bytes)
    out = DEQUANTIZERS[name](raw).reshape(-1).astype("<f4", copy=False)
    assert out.size == count
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--dump-metadata", action="store_true")
    ap.add_argument("--dump-tensor")
    ap.add_argument("--out")
    ap.add_argument("--dump-all", metavar="DIR")
    args = ap.parse_args()
    header, data = parse(args.file)
    if args.dump_metadata:
        json.dump(header, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    if args.dump_tensor is not None:
        matches = [t for t in header["tensors"] if t["name"] == args.dump_tensor]
        if not matches or not args.out:
            sys.exit(f"no tensor {args.dump_tensor!r}" if not matches else "--dump-tensor needs --out")
        dequantize(header, data, matches[0]).tofile(args.out)
    if args.dump_all:
        os.makedirs(args.dump_all, exist_ok=True)
        for i, t in enumerate(header["tensors"]):
            if t["type"] in DEQUANTIZERS:
                dequantize(header, data, t).tofile(os.path.join(args.dump_all, f"{i}.f32"))


if __name__ == "__main__":
    main()
