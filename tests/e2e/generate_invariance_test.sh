#!/usr/bin/env bash
# 200 prompts of varied length through `llmserve generate` with a KV budget
# small enough to force preemption and chunked prefill give exactly the same
# greedy tokens as each prompt run alone (--max-num-seqs 1, ample KV).
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/llmserve" make-model --preset tiny --arch qwen3 --out "$tmp/model" --seed 3 >/dev/null
/usr/bin/python3 - "$tmp/prompts.jsonl" <<'PY'
import json, random, sys
rng = random.Random(20261122)
with open(sys.argv[1], "w") as f:
    for i in range(200):
        n = rng.choice([1, 2, 5, 17, 40, 90, 160, 300]) + rng.randrange(8)
        f.write(json.dumps({"prompt_token_ids": [rng.randrange(1000, 150000) for _ in range(n)]}) + "\n")
PY
common=(--max-tokens 12 --temperature 0 --ignore-eos --dtype float32 --block-size 16 --max-model-len 512)
"$bin/llmserve" generate "$tmp/model" --prompts "$tmp/prompts.jsonl" "${common[@]}" \
  --kv-cache-memory 1M --max-num-seqs 64 --max-num-batched-tokens 256 --output "$tmp/batched.jsonl" 2> "$tmp/batched.log"
"$bin/llmserve" generate "$tmp/model" --prompts "$tmp/prompts.jsonl" "${common[@]}" \
  --kv-cache-memory 64M --max-num-seqs 1 --max-num-batched-tokens 512 --output "$tmp/alone.jsonl" 2> "$tmp/alone.log"
preemptions=$(grep -o '[0-9]* preemptions' "$tmp/batched.log" | grep -o '^[0-9]*')
echo "batched run: $preemptions preemptions"
/usr/bin/python3 - "$tmp/batched.jsonl" "$tmp/alone.jsonl" "$preemptions" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 200, (len(a), len(b))
bad = [i for i in range(200) if a[i]["token_ids"] != b[i]["token_ids"]]
assert all(len(x["token_ids"]) == 12 for x in a), "every prompt must produce 12 tokens"
assert not bad, f"{len(bad)} prompts differ, first {bad[:5]}"
assert int(sys.argv[3]) > 0, "the KV budget was meant to force preemption"
print("200 prompts: batched with preemption and chunking == each alone")
PY
