#!/usr/bin/env python3
"""Reference embeddings: each prompt's final-normed hidden states from
ref_forward.py's numpy forward, pooled as vLLM's LAST / MEAN / CLS poolers
pool them (MEAN in float64), written as little-endian float32 rows, one per
prompt, hidden_size values each. Normalization and truncation are the
frontend's and are not applied here.

  ref_embed.py MODEL_DIR --pool mean --prompts 1,2,3 4,5 --out FILE
"""
import argparse

import numpy as np

import ref_forward


def pool(hidden, kind):
    if kind == "last":
        return hidden[-1]
    if kind == "cls":
        return hidden[0]
    return (hidden.astype(np.float64).sum(axis=0) / hidden.shape[0]).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--pool", choices=["last", "mean", "cls"], required=True)
    ap.add_argument("--prompts", nargs="+", required=True, help="comma-separated token ids, one argument a prompt")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cfg, W, _ = ref_forward.load(args.model_dir)
    rows = []
    for prompt in args.prompts:
        toks = [int(t) for t in prompt.split(",")]
        rows.append(pool(ref_forward.forward(cfg, W, toks, final_hidden=True), args.pool))
    np.stack(rows).astype("<f4").tofile(args.out)


if __name__ == "__main__":
    main()
