#!/usr/bin/env python3
"""Independent numpy reference forward pass for Hugging Face decoder checkpoints:
LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, the
mixtures of experts Qwen3MoeForCausalLM and MixtralForCausalLM, and DeepSeek V2 / V3
(multi-head latent attention and their experts: ref_deepseek.py).

Written from the Hugging Face modeling equations (not from llmserve's C++):
  h = embed[tokens]
  per layer:  x = rmsnorm(h) * w_in
              q = x Wq^T (+bq), k = x Wk^T (+bk), v = x Wv^T (+bv)       (bias: Qwen2)
              q, k = rmsnorm_per_head(q) * q_norm, ... * k_norm            (Qwen3)
              q, k = rope(q), rope(k)   rotate_half layout, inv_freq from rope_theta and
                                        rope_scaling (linear, llama3, yarn; yarn scales cos/sin)
              a = softmax(q k^T / sqrt(head_dim) + causal[/sliding window] mask) v   (GQA)
              h = h + a Wo^T
              x = rmsnorm(h) * w_post;  h = h + (silu(x Wg^T) * (x Wu^T)) Wd^T
  logits = rmsnorm(h) * w_final  @ lm_head^T   (lm_head = embed when tied)
Mixture-of-experts layers (Qwen3-MoE: (l + 1) % decoder_sparse_step == 0 and l not
in mlp_only_layers; Mixtral: every layer) replace the MLP with, per token,
              sum_j w_j * down_e(silu(gate_e x) * up_e x) over its chosen experts e_j:
  Qwen3-MoE:  p = softmax(x Wr^T); the top num_experts_per_tok p (ties: lower id), divided
              by their sum only when norm_topk_prob;
  Mixtral:    the top-k router logits, then a softmax over those k alone.
Every expert is run on every token here and the chosen rows picked out.
Qwen3-MoE attention is Qwen3's (q/k norm); Mixtral's is Mistral's (sliding window).
Math in float32 on the 16-bit weights widened to float32 (float64 for the norms'
mean of squares, rope angles and softmax).

A GGUF model (MODEL a .gguf file, or a directory without config.json holding
one) is read with gguf_reference.py's dequantiser: every tensor widened to
float32, llama.cpp's tensor names mapped back to Hugging Face's, and the q/k
row permutation llama.cpp's converter applies for the "llama" architecture
undone (each head's rows [head_dim/2, 2] back to [2, head_dim/2]).

With --q8-activations, the activations entering a GGUF Q8_0 (or Q4_0 / Q5_0) weight are first
quantized as llama.cpp quantizes them for its Q8_0 dot products (per row and
block of 32: d = max|x| / 127 kept as float16, q = x * (1/d) rounded half away
from zero), which is what llmserve's int8 kernels compute with.
A GPTQ or AWQ 4-bit checkpoint's weights are unpacked and dequantized in float32 as
dequantize_gptq / dequantize_awq say (GPTQ's g_idx honoured), and count as int8 weights for
--q8-activations, since llmserve runs them on its int8 kernels.
An FP8 checkpoint's (vLLM's "fp8" method) weights are decoded and scaled to float32
by ref_fp8.py; they are float weights from then on, as in llmserve.
A compressed-tensors W8A8 int8 checkpoint's int8 weights are multiplied by
their NAME_scale (per output row, or per tensor) to float32; --q8-activations
then quantizes the activations entering them the same way as for Q8_0, which is
what llmserve's int8 kernels compute with. --quantize-int8 first turns a float
checkpoint's linear weights into such per-channel int8 values, as llmserve's
--quantization int8 does at load. --bf16-head rounds the activations entering
the output layer to bfloat16, as llmserve's bf16 matmuls do when the output
layer stays in bfloat16 beside int8 ones.
With --kquant-activations, the activations entering a GGUF K-quant weight
(Q4_K, Q5_K or Q6_K) are quantized as llama.cpp's Q8_K for its K-quant dot
products (per row and block of 256: xmax the first element of largest |x|,
iscale = -127 / xmax, q = min(127, x * iscale rounded half to even), d = 1 /
iscale kept as float32), which is what llmserve's K-quant kernels compute with.

With --lora DIR, a PEFT LoRA adapter (adapter_config.json, adapter_model.safetensors)
is merged into the weights before the forward pass: W + s * B @ A for every
"base_model.model.<W's name minus .weight>.lora_A/lora_B.weight" pair, with
s = lora_alpha / r, or lora_alpha / sqrt(r) when use_rslora (float32).

Usage: ref_forward.py MODEL --tokens 1,2,3 --out LOGITS.f32 [--q8-activations] [--kquant-activations]
                      [--quantize-int8] [--bf16-head] [--lora ADAPTER_DIR]
Writes logits [len(tokens) x vocab] as raw little-endian float32.
With --beam-width N (and --max-tokens, --eos-token-id, --length-penalty,
--ignore-eos) it runs vLLM's beam search from the prompt --tokens instead and
prints the N best beams as JSON lines {"token_ids", "cum_logprob",
"finish_reason"}, best first: each step every live beam's 2N most likely next
tokens (raw logprobs of the last position) extend it, an EOS ends it, the N
best by cumulative logprob live on; at the end beams are ranked by
cum_logprob / (len(prompt + output) - [last is EOS]) ** length_penalty.
Ties: candidates by beam then rank, final beams ended first (stable sorts).
Run it with /usr/bin/python3 (Debian's numpy).
"""
import argparse
import json
import math
import os
import struct

import numpy as np

import ref_deepseek
import ref_fp8
from ref_gguf import gguf_path, load_gguf
from ref_moe import is_moe_layer, moe_mlp


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = np.asarray(mm[8 + n + a: 8 + n + b])
        dt = info["dtype"]
        if dt == "BF16":
            arr = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dt == "F16":
            arr = raw.view(np.float16).astype(np.float32)
        elif dt == "F32":
            arr = raw.view(np.float32).copy()
        elif dt == "I8":
            arr = raw.view(np.int8).copy()
        elif dt == "I32":
            arr = raw.view("<i4").copy()
        elif dt == "F8_E4M3":
            arr = ref_fp8.decode_e4m3(raw)
        else:
            raise SystemExit(f"{path}: unsupported dtype {dt} for {name}")
        out[name] = arr.reshape(info["shape"])
    return out


def load(model_dir):
    gguf = gguf_path(model_dir)
    if gguf:
        return load_gguf(gguf)
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    index = os.path.join(model_dir, "model.safetensors.index.json")
    W = {}
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
        for fn in files:
            W.update(read_safetensors(os.path.join(model_dir, fn)))
    else:
        W.update(read_safetensors(os.path.join(model_dir, "model.safetensors")))
    ref_fp8.scale_fp8_weights(cfg, W)
    qc = cfg.get("quantization_config") or {}
    int4, act_order = (dequantize_awq(cfg, W), {}) if qc.get("quant_method") == "awq" \
        else dequantize_pack_quantized(cfg, W) if qc.get("format") == "pack-quantized" else dequantize_gptq(cfg, W)
    return cfg, W, {"Q8_0": dequantize_int8(cfg, W) | int4, "K": set(), "act_order": act_order}


def dequantize_awq(cfg, W):
    """AWQ 4-bit, GEMM layout: PREFIX.qweight int32 [in, out/8] and PREFIX.qzeros
    int32 [groups, out/8] hold 8 output columns per word, column j of a word in
    nibble [0, 4, 1, 5, 2, 6, 3, 7][j]; PREFIX.scales f16 [groups, out].
    w[i, o] = scales[i // group, o] * (q[i, o] - zeros[i // group, o]); each
    PREFIX.weight becomes that, transposed to [out, in] in float32. Returns the
    names of those weights."""
    qc = cfg["quantization_config"]
    if qc.get("bits", qc.get("w_bit")) != 4:
        raise SystemExit("AWQ with other than 4 bits")
    group = qc.get("group_size", qc.get("q_group_size"))
    shifts = 4 * np.array([0, 4, 1, 5, 2, 6, 3, 7], dtype=np.uint32)

    def unpack(words):  # [r, out/8] -> [r, out]
        return ((words.view(np.uint32)[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(words.shape[0], -1)

    names = set()
    for p in [n[: -len(".qweight")] for n in W if n.endswith(".qweight")]:
        q = unpack(W.pop(p + ".qweight")).astype(np.float32)
        z = unpack(W.pop(p + ".qzeros")).astype(np.float32)
        scales = W.pop(p + ".scales").astype(np.float32)
        g = np.arange(q.shape[0]) // group
        W[p + ".weight"] = np.ascontiguousarray((scales[g] * (q - z[g])).T)
        names.add(p + ".weight")
    return names


def dequantize_gptq(cfg, W):
    """GPTQ 4-bit (AutoGPTQ's layout): PREFIX.qweight int32 [in/8, out] holds 8
    quants per word along in, PREFIX.qzeros int32 [groups, out/8] 8 zero points
    per word along out (both lowest nibble first), PREFIX.scales f16 [groups,
    out], PREFIX.g_idx the group of each input column (else i // group_size).
    w[i, o] = scales[g, o] * (q[i, o] - (zeros[g, o] + 1)), the +1 dropped for
    checkpoint_format gptq_v2. Each PREFIX.weight becomes that, transposed to
    [out, in] in float32. Returns the names of those weights, and for the ones
    whose g_idx is not i // group (act-order) the input columns sorted by group
    (stable): the order llmserve's int8 kernels take their activations in."""
    qc = cfg.get("quantization_config") or {}
    prefixes = [n[: -len(".qweight")] for n in W if n.endswith(".qweight")]
    if not prefixes:
        return set(), {}
    if qc.get("quant_method") != "gptq" or qc.get("bits") != 4:
        raise SystemExit("qweight tensors without a 4-bit gptq quantization_config")
    offset = 0 if qc.get("checkpoint_format") == "gptq_v2" else 1
    shifts = (4 * np.arange(8, dtype=np.uint32))
    names, act_order = set(), {}
    for p in prefixes:
        qweight = W.pop(p + ".qweight").view(np.uint32)
        qzeros = W.pop(p + ".qzeros").view(np.uint32)
        scales = W.pop(p + ".scales").astype(np.float32)
        n_in, n_out = qweight.shape[0] * 8, qweight.shape[1]
        q = ((qweight[:, None, :] >> shifts[None, :, None]) & 0xF).reshape(n_in, n_out).astype(np.float32)
        z = ((qzeros[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(qzeros.shape[0], n_out)
        z = z.astype(np.float32) + offset
        group = qc["group_size"] if qc["group_size"] != -1 else n_in
        g = W.pop(p + ".g_idx").astype(np.int64) if p + ".g_idx" in W else np.arange(n_in) // group
        w = scales[g] * (q - z[g])
        W[p + ".weight"] = np.ascontiguousarray(w.T)
        names.add(p + ".weight")
        if np.any(g != np.arange(n_in) // group):
            act_order[p + ".weight"] = np.argsort(g, kind="stable")
    return names, act_order


def dequantize_pack_quantized(cfg, W):
    """compressed-tensors W4A16 ("pack-quantized"): PREFIX.weight_packed int32
    [out, in/8] holds 8 quants per word along in (lowest nibble first),
    PREFIX.weight_zero_point int32 [out/8, groups] 8 zero points per word along
    out (asymmetric only), both stored as the signed value + 8;
    PREFIX.weight_scale [out, groups]; PREFIX.weight_g_idx the group of each
    input column (else i // group_size). w[o, i] = scale[o, g] * (q - z).
    Returns the names of the weights and the act-order ones' column orders,
    as dequantize_gptq does."""
    qc = cfg.get("quantization_config") or {}
    prefixes = [n[: -len(".weight_packed")] for n in W if n.endswith(".weight_packed")]
    if not prefixes:
        return set(), {}
    if qc.get("format") != "pack-quantized":
        raise SystemExit("weight_packed tensors without a pack-quantized quantization_config")
    shifts = (4 * np.arange(8, dtype=np.uint32))
    names, act_order = set(), {}
    for p in prefixes:
        packed = W.pop(p + ".weight_packed").view(np.uint32)
        W.pop(p + ".weight_shape", None)
        n_out, n_in = packed.shape[0], packed.shape[1] * 8
        q = ((packed[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(n_out, n_in).astype(np.float32) - 8
        scale = W.pop(p + ".weight_scale").astype(np.float32)
        group = n_in // scale.shape[1]
        if p + ".weight_zero_point" in W:
            zp = W.pop(p + ".weight_zero_point").view(np.uint32)
            z = ((zp[:, None, :] >> shifts[None, :, None]) & 0xF).reshape(n_out, scale.shape[1]).astype(np.float32) - 8
        else:
            z = np.zeros_like(scale)
        g = W.pop(p + ".weight_g_idx").astype(np.int64) if p + ".weight_g_idx" in W else np.arange(n_in) // group
        W[p + ".weight"] = np.ascontiguousarray(scale[:, g] * (q - z[:, g]))
        names.add(p + ".weight")
        if np.any(g != np.arange(n_in) // group):
            act_order[p + ".weight"] = np.argsort(g, kind="stable")
    return names, act_order


def dequantize_int8(cfg, W):
    """compressed-tensors W8A8 int8: each int8 weight NAME becomes NAME_scale * q
    (one scale per output row, or one for the tensor) in float32. Returns the
    names of those weights."""
    qc = cfg.get("quantization_config")
    int8 = {n for n, a in W.items() if a.dtype == np.int8}
    if not int8:
        return set()
    if not qc or qc.get("quant_method") != "compressed-tensors" or qc.get("format") != "int-quantized":
        raise SystemExit("int8 tensors without a compressed-tensors int-quantized quantization_config")
    for n in int8:
        scale = W.pop(n + "_scale").astype(np.float32)
        scale = scale.reshape(-1, 1) if scale.size > 1 else scale.reshape(1, 1)
        W[n] = W[n].astype(np.float32) * scale
    return int8


def quantize_int8(W):
    """--quantize-int8: what llmserve's --quantization int8 does at load: every
    2-D weight inside model.layers except MoE routers, per output row
    scale = max|w| / 127, q = round-half-even(w / scale), w = q * scale.
    Returns the names of those weights."""
    names = set()
    for n, w in W.items():
        if (w.ndim != 2 or not n.startswith("model.layers.") or not n.endswith(".weight")
                or n.endswith(".mlp.gate.weight") or n.endswith(".block_sparse_moe.gate.weight")):
            continue
        w = w.astype(np.float32)
        scale = (np.abs(w).max(axis=1, keepdims=True) / np.float32(127)).astype(np.float32)
        safe = np.where(scale != 0, scale, np.float32(1))
        q = np.where(scale != 0, np.clip(np.rint(w / safe), -127, 127), 0).astype(np.float32)
        W[n] = q * scale
        names.add(n)
    return names


def merge_lora(W, adapter_dir):
    """W[name] += s * B @ A for each of the adapter's factor pairs."""
    with open(os.path.join(adapter_dir, "adapter_config.json")) as f:
        acfg = json.load(f)
    r = acfg["r"]
    alpha = acfg.get("lora_alpha", 8)
    s = alpha / math.sqrt(r) if acfg.get("use_rslora") else alpha / r
    factors = read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors"))
    prefix = "base_model.model."
    for name, a in factors.items():
        if not name.endswith(".lora_A.weight"):
            continue
        module = name[len(prefix):-len(".lora_A.weight")]
        b = factors[prefix + module + ".lora_B.weight"]
        target = module + ".weight"
        W[target] = (W[target] + np.float32(s) * (b @ a)).astype(np.float32)


def inv_freq_and_scale(cfg, dim):
    base = float(cfg.get("rope_theta", 10000.0))
    inv = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim))
    inv = inv.astype(np.float64)
    rs = cfg.get("rope_scaling")
    if not rs:
        return inv, 1.0
    kind = rs.get("rope_type", rs.get("type", "default"))
    factor = float(rs.get("factor", 1.0))
    if kind == "default":
        return inv, 1.0
    if kind == "linear":
        return inv / factor, 1.0
    if kind == "llama3":
        lf, hf = float(rs["low_freq_factor"]), float(rs["high_freq_factor"])
        old = float(rs["original_max_position_embeddings"])
        low_wl, high_wl = old / lf, old / hf
        wl = 2 * math.pi / inv
        out = np.where(wl > low_wl, inv / factor, inv)
        smooth = (old / wl - lf) / (hf - lf)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wl < high_wl) & ~(wl > low_wl)
        return np.where(medium, smoothed, out), 1.0
    if kind == "yarn":
        orig = float(rs.get("original_max_position_embeddings") or cfg["max_position_embeddings"])
        beta_fast = float(rs.get("beta_fast") or 32)
        beta_slow = float(rs.get("beta_slow") or 1)

        def get_mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        att = rs.get("attention_factor")
        if att is None:
            if rs.get("mscale") and rs.get("mscale_all_dim"):
                att = get_mscale(factor, rs["mscale"]) / get_mscale(factor, rs["mscale_all_dim"])
            else:
                att = get_mscale(factor)

        def corr_dim(rot):
            return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))

        low, high = corr_dim(beta_fast), corr_dim(beta_slow)
        if rs.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        extra = 1 - ramp
        return (inv / factor) * (1 - extra) + inv * extra, float(att)
    raise SystemExit(f"unsupported rope_scaling {kind}")


def rms(x, w, eps):
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)).astype(np.float32) * w


def quantize_q8(x):
    """x [T, K] as llama.cpp's Q8_0 activations, dequantized again (float32)."""
    b = x.astype(np.float32).reshape(x.shape[0], -1, 32)
    d = np.abs(b).max(axis=-1, keepdims=True) / np.float32(127)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, np.float32(1)), np.float32(0)).astype(np.float32)
    v = b * inv
    q = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))
    return (q * d.astype(np.float16).astype(np.float32)).reshape(x.shape)


def round_bf16(x):
    """x rounded to bfloat16 (to nearest, ties to even) and widened again."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).reshape(x.shape)


def quantize_q8k(x):
    """x [T, K] as llama.cpp's Q8_K activations, dequantized again (float32)."""
    b = x.astype(np.float32).reshape(x.shape[0], -1, 256)
    first = np.abs(b).argmax(axis=-1)[..., None]
    xmax = np.take_along_axis(b, first, axis=-1)
    nonzero = xmax != 0
    iscale = np.where(nonzero, np.float32(-127) / np.where(nonzero, xmax, np.float32(1)), np.float32(0))
    iscale = iscale.astype(np.float32)
    q = np.minimum(np.rint(b * iscale), np.float32(127))
    d = np.where(nonzero, np.float32(1) / np.where(nonzero, iscale, np.float32(1)), np.float32(0))
    return (q * d.astype(np.float32)).reshape(x.shape)


def round_fp8(x, fmt):
    """x rounded to the nearest value of an fp8 format, ties to even, saturated
    at its largest finite value (what an fp8 KV cache holds)."""
    mantissa_bits, min_exp, largest = {"fp8_e4m3": (3, -6, 448.0), "fp8_e5m2": (2, -14, 57344.0)}[fmt]
    a = np.abs(x.astype(np.float64))
    _, e = np.frexp(a)  # a in [2^(e-1), 2^e)
    step = np.exp2(np.maximum(e - 1, min_exp) - mantissa_bits)  # spacing at a; subnormals share 2^min_exp's
    r = np.minimum(np.rint(a / step) * step, largest)  # np.rint rounds ties to even
    return (np.sign(x) * r).astype(np.float32)


def swiglu(x, prefix, mm):
    gt = mm(x, prefix + "gate_proj.weight")
    up = mm(x, prefix + "up_proj.weight")
    return mm((gt / (1 + np.exp(-gt))) * up, prefix + "down_proj.weight")


def mlp_block(cfg, arch, W, x, p, mm, l):
    """Layer l's MLP (dense or experts) of the normed input x."""
    if not is_moe_layer(cfg, arch, l):
        return swiglu(x, p + "mlp.", mm)
    if arch in ref_deepseek.ARCHES:
        return ref_deepseek.moe_mlp(cfg, arch, W, x, p, mm, lambda y, prefix: swiglu(y, prefix, mm))
    return moe_mlp(cfg, arch, x, p, mm)


def forward(cfg, W, toks, quantizers=None, kv_cache_dtype=None, final_hidden=False):
    """quantizers: weight name -> the function its activations pass through first.
    final_hidden: return every position's final-normed hidden state instead of its logits.
    kv_cache_dtype fp8_e4m3 / fp8_e5m2: K and V pass through an fp8 cache (divided by the
    layer's self_attn.k_scale / v_scale, 1 where absent, rounded, multiplied back)."""
    quantizers = quantizers or {}
    arch = cfg["architectures"][0]
    H, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim") or H // nh
    if arch in ref_deepseek.ARCHES:  # the rotary part of each head
        hd = cfg["qk_rope_head_dim"]
    eps = float(cfg.get("rms_norm_eps", 1e-6))
    window = cfg.get("sliding_window") if arch in ("MistralForCausalLM", "MixtralForCausalLM") else None
    T = len(toks)
    inv, att_scale = inv_freq_and_scale(cfg, hd)
    ang = np.arange(T, dtype=np.float64)[:, None] * inv[None, :]
    cos = (np.cos(ang) * att_scale).astype(np.float32)[:, None, :]
    sin = (np.sin(ang) * att_scale).astype(np.float32)[:, None, :]

    def rope(x):  # [T, heads, hd]
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    i = np.arange(T)
    mask = i[None, :] <= i[:, None]
    if window:
        mask &= (i[:, None] - i[None, :]) < window
    def mm(x, name):
        return (quantizers[name](x) if name in quantizers else x) @ W[name].T

    h = W["model.embed_tokens.weight"][toks].astype(np.float32)
    for l in range(L):
        p = f"model.layers.{l}."
        x = rms(h, W[p + "input_layernorm.weight"], eps)
        if arch in ref_deepseek.ARCHES:
            h = h + ref_deepseek.mla_attention(cfg, W, x, p, mm, rope, rms, mask)
            h = h + mlp_block(cfg, arch, W, rms(h, W[p + "post_attention_layernorm.weight"], eps), p, mm, l)
            continue
        q = mm(x, p + "self_attn.q_proj.weight")
        k = mm(x, p + "self_attn.k_proj.weight")
        v = mm(x, p + "self_attn.v_proj.weight")
        if p + "self_attn.q_proj.bias" in W:
            q = q + W[p + "self_attn.q_proj.bias"]
            k = k + W[p + "self_attn.k_proj.bias"]
            v = v + W[p + "self_attn.v_proj.bias"]
        q, k, v = q.reshape(T, nh, hd), k.reshape(T, nkv, hd), v.reshape(T, nkv, hd)
        if arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM"):
            q = rms(q, W[p + "self_attn.q_norm.weight"], eps)
            k = rms(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k = rope(q), rope(k)
        if kv_cache_dtype:
            ks = np.float32(W.get(p + "self_attn.k_scale", np.float32(1)).reshape(-1)[0])
            vs = np.float32(W.get(p + "self_attn.v_scale", np.float32(1)).reshape(-1)[0])
            k = round_fp8((k / ks).astype(np.float32), kv_cache_dtype) * ks
            v = round_fp8((v / vs).astype(np.float32), kv_cache_dtype) * vs
        g = nh // nkv
        out = np.empty((T, nh, hd), np.float32)
        for hh in range(nh):
            s = (q[:, hh, :].astype(np.float64) @ k[:, hh // g, :].T.astype(np.float64)) / math.sqrt(hd)
            s = np.where(mask, s, -np.inf)
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            s /= s.sum(axis=-1, keepdims=True)
            out[:, hh, :] = (s @ v[:, hh // g, :].astype(np.float64)).astype(np.float32)
        o = mm(out.reshape(T, nh * hd), p + "self_attn.o_proj.weight")
        if p + "self_attn.o_proj.bias" in W:
            o = o + W[p + "self_attn.o_proj.bias"]
        h = h + o
        h = h + mlp_block(cfg, arch, W, rms(h, W[p + "post_attention_layernorm.weight"], eps), p, mm, l)
    x = rms(h, W["model.norm.weight"], eps)
    if final_hidden:
        return x.astype(np.float32)
    head = "lm_head.weight"
    if head not in W or cfg.get("tie_word_embeddings", False):
        head = "model.embed_tokens.weight"
    return mm(x, head).astype(np.float32)


def beam_search(cfg, W, prompt, width, max_tokens, eos, length_penalty, ignore_eos, quantizers):
    live, ended = [(list(prompt), 0.0)], []
    for _ in range(max_tokens):
        cands = []
        for b, (toks, cum) in enumerate(live):
            z = forward(cfg, W, toks, quantizers)[-1].astype(np.float64)
            lp = (z - z.max() - np.log(np.exp(z - z.max()).sum())).astype(np.float32)
            for t in np.argsort(-lp, kind="stable")[:2 * width]:
                c = cum + float(lp[t])
                if eos is not None and t == eos and not ignore_eos:
                    ended.append((toks, c, "stop"))
                else:
                    cands.append((c, int(t), b))
        cands.sort(key=lambda x: -x[0])
        live = [(live[b][0] + [t], c) for c, t, b in cands[:width]]
        if not live:
            break
    def score(beam):
        n = len(beam[0]) - (1 if eos is not None and beam[0][-1] == eos else 0)
        return beam[1] / max(n, 1) ** length_penalty
    beams = sorted(ended + [(t, c, "length") for t, c in live], key=lambda x: -score(x))[:width]
    return [{"token_ids": t[len(prompt):], "cum_logprob": c, "finish_reason": f} for t, c, f in beams]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--out", help="where the logits go (required without --beam-width)")
    ap.add_argument("--beam-width", type=int, help="run vLLM's beam search instead; print the beams")
    ap.add_argument("--max-tokens", type=int, default=16, help="beam search steps")
    ap.add_argument("--eos-token-id", type=int, help="the token that ends a beam")
    ap.add_argument("--length-penalty", type=float, default=1.0)
    ap.add_argument("--ignore-eos", action="store_true")
    ap.add_argument("--q8-activations", action="store_true",
                    help="quantize the activations entering Q8_0 weights as llmserve's int8 kernels do")
    ap.add_argument("--bf16-head", action="store_true",
                    help="round the activations entering the output layer to bfloat16, as llmserve's bf16 "
                         "matmuls do when that layer is not quantized")
    ap.add_argument("--quantize-int8", action="store_true",
                    help="first quantize the linear weights to per-channel int8 as --quantization int8 does")
    ap.add_argument("--kquant-activations", action="store_true",
                    help="quantize the activations entering Q4_K, Q5_K and Q6_K weights as llmserve's K-quant "
                         "kernels do (Q8_K)")
    ap.add_argument("--lora", metavar="ADAPTER_DIR", help="merge this PEFT LoRA adapter into the weights first")
    ap.add_argument("--kv-cache-dtype", choices=["fp8_e4m3", "fp8_e5m2"],
                    help="pass K and V through an fp8 KV cache of this type, as --kv-cache-dtype does")
    args = ap.parse_args()
    cfg, W, quant_names = load(args.model_dir)
    if args.lora:
        merge_lora(W, args.lora)
    if args.quantize_int8:
        quant_names["Q8_0"] |= quantize_int8(W)
    toks = [int(t) for t in args.tokens.split(",")]
    quantizers = {}
    if args.q8_activations:
        quantizers.update({name: quantize_q8 for name in quant_names["Q8_0"]})
        for name, order in quant_names["act_order"].items():  # blocks of 32 in the kernels' column order
            quantizers[name] = lambda x, order=order: quantize_q8(x[:, order])[:, np.argsort(order)]
    if args.kquant_activations:
        quantizers.update({name: quantize_q8k for name in quant_names["K"]})
    if args.bf16_head:
        head = "lm_head.weight"
        if head not in W or cfg.get("tie_word_embeddings", False):
            head = "model.embed_tokens.weight"
        quantizers[head] = round_bf16
    if args.beam_width:
        for beam in beam_search(cfg, W, toks, args.beam_width, args.max_tokens, args.eos_token_id,
                                args.length_penalty, args.ignore_eos, quantizers):
            print(json.dumps(beam))
        return
    if not args.out:
        ap.error("--out is required without --beam-width")
    logits = forward(cfg, W, toks, quantizers, args.kv_cache_dtype)
    logits.astype("<f4").tofile(args.out)


if __name__ == "__main__":
    main()
