"""numpy reference for DeepSeek V2 / V3 (DeepseekV2ForCausalLM, DeepseekV3ForCausalLM),
used by ref_forward.py. Written from the Hugging Face modeling equations, in the
naive (not absorbed) form of multi-head latent attention:
  q       = x Wq^T, or rmsnorm(x Wqa^T) * w_qa Wqb^T (q LoRA); per head [q_nope, q_rope]
  c, k_pe = split(x Wkva^T, [kv_lora_rank, qk_rope_head_dim]); c = rmsnorm(c) * w_kva
  k_nope, v = split per head of c Wkvb^T, [qk_nope_head_dim, v_head_dim]
  q_rope, k_pe = rope(q_rope), rope(k_pe)   k_pe shared by every head; with rope_interleave
                                            (DeepSeek's checkpoints) each vector's pairs
                                            (2i, 2i+1) are first gathered to (i, i+d/2)
  a       = softmax([q_nope, q_rope] . [k_nope, k_pe] * scale + causal mask) v
  scale   = qk_head_dim^-0.5, times yarn mscale(factor, mscale_all_dim)^2 when rope_scaling
            has mscale_all_dim
  out     = a Wo^T
Experts in layers l >= first_k_dense_replace with l % moe_layer_freq == 0:
  p = softmax (V2) or sigmoid (V3, scoring_func) of the router logits; choice = p + the
  layer's e_score_correction_bias (V3); topk_method group_limited_greedy / noaux_tc keep
  only the topk_group best of n_group groups (group score: its best choice / its best two
  summed); the top num_experts_per_tok choices (ties: lower id) take weights p, divided
  by their sum when norm_topk_prob, then times routed_scaling_factor; plus the shared
  experts' MLP (n_shared_experts x moe_intermediate_size wide) on every token.
"""
import math

import numpy as np

ARCHES = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")


def is_moe_layer(cfg, l):
    if not cfg.get("n_routed_experts"):
        return False
    return l >= cfg.get("first_k_dense_replace", 0) and l % cfg.get("moe_layer_freq", 1) == 0


def softmax_scale(cfg):
    qk = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"]
    scale = qk ** -0.5
    rs = cfg.get("rope_scaling")
    if rs and rs.get("mscale_all_dim") and float(rs.get("factor", 1)) > 1:
        m = 0.1 * float(rs["mscale_all_dim"]) * math.log(float(rs["factor"])) + 1.0
        scale *= m * m
    return scale


def mla_attention(cfg, W, x, p, mm, rope, rms, mask):
    """Layer p's attention output [T, hidden] for the normed input x [T, hidden]."""
    T = x.shape[0]
    nh, eps = cfg["num_attention_heads"], float(cfg.get("rms_norm_eps", 1e-6))
    nope, rd, vd = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    rank = cfg["kv_lora_rank"]
    a = p + "self_attn."
    if cfg.get("q_lora_rank"):
        q = mm(rms(mm(x, a + "q_a_proj.weight"), W[a + "q_a_layernorm.weight"], eps), a + "q_b_proj.weight")
    else:
        q = mm(x, a + "q_proj.weight")
    q = q.reshape(T, nh, nope + rd)
    ckv = mm(x, a + "kv_a_proj_with_mqa.weight")
    c = rms(ckv[:, :rank], W[a + "kv_a_layernorm.weight"], eps)
    kvb = mm(c, a + "kv_b_proj.weight").reshape(T, nh, nope + vd)
    q_rope, k_rope = q[..., nope:], ckv[:, None, rank:]
    if cfg.get("rope_interleave", True):
        order = np.concatenate([np.arange(0, rd, 2), np.arange(1, rd, 2)])
        q_rope, k_rope = q_rope[..., order], k_rope[..., order]
    q_rope, k_rope = rope(q_rope), rope(k_rope)
    qf = np.concatenate([q[..., :nope], q_rope], axis=-1).astype(np.float64)
    kf = np.concatenate([kvb[..., :nope], np.broadcast_to(k_rope, (T, nh, rd))], axis=-1).astype(np.float64)
    v = kvb[..., nope:].astype(np.float64)
    scale = softmax_scale(cfg)
    out = np.empty((T, nh, vd), np.float32)
    for h in range(nh):
        s = (qf[:, h, :] @ kf[:, h, :].T) * scale
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        out[:, h, :] = (s @ v[:, h, :]).astype(np.float32)
    return mm(out.reshape(T, nh * vd), a + "o_proj.weight")


def route(cfg, arch, logits, bias):
    """Chosen experts [T, k] and their weights [T, k] from router logits [T, E]."""
    v3 = arch == "DeepseekV3ForCausalLM"
    k, E = cfg["num_experts_per_tok"], cfg["n_routed_experts"]
    z = logits.astype(np.float64)
    if cfg.get("scoring_func", "sigmoid" if v3 else "softmax") == "sigmoid":
        p = 1.0 / (1.0 + np.exp(-z))
    else:
        p = np.exp(z - z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
    choice = p + bias.astype(np.float64) if bias is not None else p.copy()
    method = cfg.get("topk_method", "noaux_tc" if v3 else "greedy")
    if method != "greedy":
        G, keep = cfg["n_group"], cfg["topk_group"]
        groups = choice.reshape(len(z), G, E // G)
        if method == "group_limited_greedy":
            gs = groups.max(axis=-1)
        else:
            gs = np.sort(groups, axis=-1)[..., -2:].sum(axis=-1)
        best = np.argsort(-gs, axis=-1, kind="stable")[:, :keep]
        allowed = np.zeros((len(z), G), bool)
        np.put_along_axis(allowed, best, True, axis=-1)
        choice = np.where(np.repeat(allowed, E // G, axis=-1), choice, -np.inf)
    order = np.argsort(-choice, axis=-1, kind="stable")[:, :k]
    w = np.take_along_axis(p, order, axis=-1)
    if cfg.get("norm_topk_prob", False):
        w = w / w.sum(axis=-1, keepdims=True)
    return order, (w * float(cfg.get("routed_scaling_factor", 1.0))).astype(np.float32)


def moe_mlp(cfg, arch, W, x, p, mm, mlp):
    """The experts (routed and shared) of layer p on the normed input x."""
    m = p + "mlp."
    bias = W.get(m + "gate.e_score_correction_bias")
    chosen, w = route(cfg, arch, mm(x, m + "gate.weight"), bias)
    out = np.zeros_like(x)
    for e in range(cfg["n_routed_experts"]):
        sel = chosen == e
        if sel.any():
            out += (w * sel).sum(axis=-1)[:, None] * mlp(x, m + f"experts.{e}.")
    if cfg.get("n_shared_experts"):
        out += mlp(x, m + "shared_experts.")
    return out
