"""The GGUF side of ref_forward.py: a .gguf file read with gguf_reference.py's
dequantiser into a Hugging Face config and weights (llama.cpp's tensor names
mapped back, the llama q/k row permutation undone, stacked expert tensors split
per expert), plus which weights were Q8_0-like or K-quant (for the activation
quantizers)."""
import os

GGUF_ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
             "qwen3moe": "Qwen3MoeForCausalLM"}
# Types whose values are scale × int8 per block of 32: llmserve runs them on its int8 kernels.
INT8_BLOCK_TYPES = ("Q8_0", "Q4_0", "Q5_0")
# llama.cpp's stacked experts [experts, rows, cols] -> each expert's Hugging Face weight.
GGUF_EXPERT_NAMES = {"ffn_gate_exps.weight": ("gate_proj", "w1"), "ffn_up_exps.weight": ("up_proj", "w3"),
                     "ffn_down_exps.weight": ("down_proj", "w2")}
GGUF_LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias", "attn_output.bias": "self_attn.o_proj.bias",
    "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}


def gguf_path(model):
    if os.path.isfile(model):
        return model
    if os.path.exists(os.path.join(model, "config.json")):
        return None
    found = [f for f in os.listdir(model) if f.endswith(".gguf")]
    return os.path.join(model, found[0]) if len(found) == 1 else None


def unpermute(w, n_head):
    """llama.cpp stores each head's rows as [half, 2]; Hugging Face as [2, half]."""
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def load_gguf(path):
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gguf_reference
    header, data = gguf_reference.parse(path)
    meta = {e["key"]: e["value"] for e in header["metadata"]}
    a = meta["general.architecture"]
    nh = meta[a + ".attention.head_count"]
    nkv = meta.get(a + ".attention.head_count_kv", nh)
    cfg = {"architectures": [GGUF_ARCH[a]], "hidden_size": meta[a + ".embedding_length"],
           "num_hidden_layers": meta[a + ".block_count"], "num_attention_heads": nh,
           "num_key_value_heads": nkv, "head_dim": meta.get(a + ".attention.key_length"),
           "rms_norm_eps": meta[a + ".attention.layer_norm_rms_epsilon"],
           "rope_theta": meta.get(a + ".rope.freq_base", 10000.0)}
    experts = meta.get(a + ".expert_count", 0)
    mixtral = a == "llama" and experts > 0
    if experts:  # llama.cpp renormalises the chosen experts' weights
        cfg.update({"num_experts": experts, "num_local_experts": experts,
                    "num_experts_per_tok": meta[a + ".expert_used_count"], "norm_topk_prob": True})
        if mixtral:
            cfg["architectures"] = ["MixtralForCausalLM"]
    moe = "block_sparse_moe." if mixtral else "mlp."
    kind = meta.get(a + ".rope.scaling.type", "none")
    if kind != "none":
        cfg["rope_scaling"] = {"rope_type": "default" if kind == "none" else kind,
                               "factor": meta[a + ".rope.scaling.factor"],
                               "original_max_position_embeddings":
                                   meta.get(a + ".rope.scaling.original_context_length")}
    W = {}
    quant_names = {"Q8_0": set(), "K": set(), "act_order": {}}
    for t in header["tensors"]:
        w = gguf_reference.dequantize(header, data, t).reshape(list(reversed(t["dims"])))
        name = t["name"]
        if name.startswith("blk.") and name.split(".", 2)[2] in GGUF_EXPERT_NAMES:
            _, layer, rest = name.split(".", 2)
            hf = GGUF_EXPERT_NAMES[rest][1 if mixtral else 0]
            for e in range(w.shape[0]):
                expert = f"model.layers.{layer}.{moe}experts.{e}.{hf}.weight"
                W[expert] = w[e]
                if t["type"] in INT8_BLOCK_TYPES:
                    quant_names["Q8_0"].add(expert)
                if t["type"] in ("Q4_K", "Q5_K", "Q6_K"):
                    quant_names["K"].add(expert)
            continue
        if name.startswith("blk.") and name.endswith("ffn_gate_inp.weight"):
            W[f"model.layers.{name.split('.')[1]}.{moe}gate.weight"] = w
            continue
        if name.startswith("blk."):
            _, layer, rest = name.split(".", 2)
            if a == "llama" and rest in ("attn_q.weight", "attn_q.bias"):
                w = unpermute(w, nh)
            if a == "llama" and rest in ("attn_k.weight", "attn_k.bias"):
                w = unpermute(w, nkv)
            name = f"model.layers.{layer}." + GGUF_LAYER_NAMES[rest]
        else:
            name = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
                    "output.weight": "lm_head.weight"}[name]
        W[name] = w
        if t["type"] in INT8_BLOCK_TYPES:
            quant_names["Q8_0"].add(name)
        if t["type"] in ("Q4_K", "Q5_K", "Q6_K"):
            quant_names["K"].add(name)
    return cfg, W, quant_names
