#!/usr/bin/env bash
# `llmserve bench latency` and `llmserve bench throughput` on the tiny model
# with small configurations: their JSON has vLLM's keys and figures that agree
# with each other; bad input is a clear error. When the prefix_cache_bench
# binary was built, a short run of it checks its hit counts.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/llmserve" make-model --preset tiny --arch qwen3 --out "$tmp/model" --seed 4 >/dev/null
engine=(--dtype float32 --block-size 16 --kv-cache-memory 16M --max-model-len 512)

"$bin/llmserve" bench latency --model "$tmp/model" --input-len 24 --output-len 6 --batch-size 3 \
  --num-iters-warmup 1 --num-iters 4 --output-json "$tmp/latency.json" "${engine[@]}" > "$tmp/latency.txt" 2> "$tmp/latency.log"
grep -q "Avg latency" "$tmp/latency.txt"

# Random prompts; max-num-batched-tokens fits every prompt in one step, so
# prefill and decode steps are cleanly apart.
"$bin/llmserve" bench throughput "$tmp/model" --input-len 40 --output-len 5 --num-prompts 12 \
  --output-json "$tmp/random.json" "${engine[@]}" --max-num-batched-tokens 1024 > "$tmp/random.txt" 2> "$tmp/random.log"
grep -q "Throughput:" "$tmp/random.txt"

# Our JSON lines (token ids; lengths per line) and a ShareGPT file (text).
printf '%s\n' '{"prompt_token_ids": [11, 12, 13, 14, 15], "output_len": 3}' \
              '{"prompt_token_ids": [21, 22, 23], "max_tokens": 4}' > "$tmp/prompts.jsonl"
"$bin/llmserve" bench throughput --model "$tmp/model" --dataset-path "$tmp/prompts.jsonl" --num-prompts 2 \
  --output-json "$tmp/jsonl.json" "${engine[@]}" > /dev/null 2> "$tmp/jsonl.log"
cat > "$tmp/sharegpt.json" <<'JSON'
[{"conversations": [{"from": "human", "value": "Write two sentences about rivers and the sea."},
                    {"from": "gpt", "value": "Rivers carry water down from the hills. The sea receives them all."}]}]
JSON
"$bin/llmserve" bench throughput --model "$tmp/model" --dataset-path "$tmp/sharegpt.json" --num-prompts 2 \
  --output-len 4 --output-json "$tmp/sharegpt.json.out" "${engine[@]}" > /dev/null 2> "$tmp/sharegpt.log"

# vLLM spelling: --dataset-name random ignores the path and samples random prompts.
"$bin/llmserve" bench throughput --model "$tmp/model" --dataset-name random --dataset-path "$tmp/prompts.jsonl" \
  --input-len 10 --output-len 2 --num-prompts 3 --output-json "$tmp/named.json" "${engine[@]}" > /dev/null 2> "$tmp/named.log"

/usr/bin/python3 - "$tmp" <<'PY'
import json, math, sys
d = sys.argv[1]
lat = json.load(open(f"{d}/latency.json"))
for k in ["avg_latency", "std_latency", "latencies", "percentiles", "prefill_tokens_per_second", "decode_tokens_per_second"]:
    assert k in lat, k
ls = lat["latencies"]
assert len(ls) == 4 and all(x > 0 for x in ls), ls
assert abs(lat["avg_latency"] - sum(ls) / 4) < 1e-9
assert list(lat["percentiles"]) == ["10", "25", "50", "75", "90", "99"], lat["percentiles"]
p = list(lat["percentiles"].values())
assert all(a <= b for a, b in zip(p, p[1:])) and min(ls) <= p[0] and p[-1] <= max(ls), p
# 4 iterations x 3 prompts x 24 tokens prefilled; 4 x 3 x (6 - 1) decode tokens.
assert lat["prefill_tokens"] == 4 * 3 * 24, lat["prefill_tokens"]
assert lat["decode_tokens"] == 4 * 3 * 5, lat["decode_tokens"]
for kind in ["prefill", "decode"]:
    assert math.isclose(lat[f"{kind}_tokens_per_second"] * lat[f"{kind}_time"], lat[f"{kind}_tokens"], rel_tol=1e-9)
assert lat["prefill_time"] + lat["decode_time"] <= sum(ls) + 1e-9

def check_throughput(t, requests, prompt_tokens, output_tokens):
    for k in ["elapsed_time", "num_requests", "total_num_tokens", "requests_per_second", "tokens_per_second"]:
        assert k in t, k
    assert t["num_requests"] == requests, t
    assert t["total_prompt_tokens"] == prompt_tokens and t["total_output_tokens"] == output_tokens, t
    assert t["total_num_tokens"] == prompt_tokens + output_tokens, t
    assert math.isclose(t["tokens_per_second"] * t["elapsed_time"], t["total_num_tokens"], rel_tol=1e-9)
    assert math.isclose(t["requests_per_second"] * t["elapsed_time"], requests, rel_tol=1e-9)
    assert t["prefill_time"] + t["decode_time"] <= t["elapsed_time"] + 1e-9

r = json.load(open(f"{d}/random.json"))
check_throughput(r, 12, 12 * 40, 12 * 5)
assert r["prefill_tokens"] == 12 * 40 - r["cached_prompt_tokens"] and r["decode_tokens"] == 12 * 4, r
assert r["num_steps"] == 5 and r["prefill_tokens_per_second"] > 0 and r["decode_tokens_per_second"] > 0, r
check_throughput(json.load(open(f"{d}/jsonl.json")), 2, 8, 7)
s = json.load(open(f"{d}/sharegpt.json.out"))
assert s["num_requests"] == 2 and s["total_output_tokens"] == 8 and s["total_prompt_tokens"] >= 16, s
n = json.load(open(f"{d}/named.json"))
assert n["total_prompt_tokens"] == 30 and n["total_output_tokens"] == 6, n
print("bench latency and throughput: JSON keys present, figures consistent")
PY

# Bad input: exit code 2 and a message naming the problem.
expect_error() {
  local pattern=$1; shift
  set +e
  "$@" > /dev/null 2> "$tmp/err.log"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc: $*"; cat "$tmp/err.log"; exit 1; }
  grep -q -- "$pattern" "$tmp/err.log" || { echo "no '$pattern' in:"; cat "$tmp/err.log"; exit 1; }
}
expect_error "input-len is required" "$bin/llmserve" bench throughput --model "$tmp/model" "${engine[@]}"
expect_error "cannot read --dataset-path" "$bin/llmserve" bench throughput --model "$tmp/model" --dataset-path "$tmp/nope.json" "${engine[@]}"
expect_error "exceed max_model_len" "$bin/llmserve" bench latency --model "$tmp/model" --input-len 500 --output-len 100 "${engine[@]}"
expect_error "num-iters must be an integer" "$bin/llmserve" bench latency --model "$tmp/model" --num-iters many "${engine[@]}"
expect_error "a model is required" "$bin/llmserve" bench latency "${engine[@]}"
expect_error "dataset-name must be" "$bin/llmserve" bench throughput --model "$tmp/model" --dataset-name sonnet --input-len 8 "${engine[@]}"
echo "bad input: clear errors"

if [ -x "$bin/prefix_cache_bench" ]; then
  "$bin/prefix_cache_bench" --model "$tmp/model" --num-prompts 4 --prompt-len 64 --output-len 4 --repeats 2 \
    --ttft-prompt-len 200 --ttft-repeats 2 --block-size 16 --dtype float32 --output-json "$tmp/prefix.json" \
    > /dev/null 2> "$tmp/prefix.log"
  /usr/bin/python3 - "$tmp/prefix.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["overhead"]["prefix_cache_hit_tokens"] == 0, j["overhead"]      # unique prompts: no hits
assert len(j["overhead"]["tokens_per_second_on"]) == 2
# 180 of 200 tokens shared: 11 full 16-token blocks come from the cache.
assert j["ttft"]["shared_tokens"] == 180 and j["ttft"]["cached_tokens_per_shared_request"] == 176, j["ttft"]
assert j["ttft"]["ratio_unique_shared"]["median"] > 0
print("prefix_cache_bench: 0 hits on unique prompts, 176 cached tokens of a 180-token shared prefix")
PY
fi
