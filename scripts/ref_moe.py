"""The mixture-of-experts MLP of ref_forward.py (Qwen3-MoE, Mixtral; DeepSeek's
is in ref_deepseek.py), from the Hugging Face modeling equations."""
import numpy as np

import ref_deepseek

def is_moe_layer(cfg, arch, l):
    if arch in ref_deepseek.ARCHES:
        return ref_deepseek.is_moe_layer(cfg, l)
    if arch == "MixtralForCausalLM":
        return True
    if arch != "Qwen3MoeForCausalLM" or not cfg.get("num_experts"):
        return False
    return (l + 1) % cfg.get("decoder_sparse_step", 1) == 0 and l not in (cfg.get("mlp_only_layers") or [])


def route(cfg, arch, logits):
    """Chosen experts [T, k] and their weights [T, k] (float32) from router logits [T, E]."""
    k = cfg["num_experts_per_tok"]
    z = logits.astype(np.float64)
    order = np.argsort(-z, axis=-1, kind="stable")[:, :k]  # same order as by softmax probability
    top = np.take_along_axis(z, order, axis=-1)
    if arch == "MixtralForCausalLM":
        w = np.exp(top - top.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
    else:
        p = np.exp(z - z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        w = np.take_along_axis(p, order, axis=-1)
        if cfg.get("norm_topk_prob", False):
            w /= w.sum(axis=-1, keepdims=True)
    return order, w.astype(np.float32)


def moe_mlp(cfg, arch, x, p, mm):
    mixtral = arch == "MixtralForCausalLM"
    m = p + ("block_sparse_moe." if mixtral else "mlp.")
    n = cfg["num_local_experts"] if mixtral else cfg["num_experts"]
    names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
    chosen, w = route(cfg, arch, mm(x, m + "gate.weight"))
    out = np.zeros_like(x)
    for e in range(n):
        sel = (chosen == e)  # [T, k]: at most one slot per token
        if not sel.any():
            continue
        pre = m + f"experts.{e}."
        gt = mm(x, pre + names[0] + ".weight")
        up = mm(x, pre + names[1] + ".weight")
        y = mm((gt / (1 + np.exp(-gt))) * up, pre + names[2] + ".weight")
        weight = (w * sel).sum(axis=-1)
        out += weight[:, None] * y
    return out
