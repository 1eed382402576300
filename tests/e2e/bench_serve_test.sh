#!/usr/bin/env bash
# `llmserve bench serve` and `llmserve bench sweep` against a running
# `llmserve serve` (tiny random-weight Qwen3 on 127.0.0.1): the result JSON has
# vLLM's fields, counts add up (completed + failed = sent), TTFT <= E2E for
# every request, and the token counts are those the server's usage reported
# (ignore_eos: exactly max_tokens out; prompt tokens as the dataset sampled).
# Also: the chat backend, a dead server (all requests failed, still counted),
# and a two-rate sweep that draws a PNG.
set -euo pipefail
bin=$1
. "$(dirname "$0")/../common/wait_until.sh"
. "$(dirname "$0")/../common/free_port.sh"
tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait_until 10 gone "$server_pid" || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bin/llmserve" make-model --preset tiny --arch qwen3 --out "$tmp/tiny" --seed 7 >/dev/null
port=$(free_port)
"$bin/llmserve" serve "$tmp/tiny" --host 127.0.0.1 --port "$port" --served-model-name tiny --max-model-len 512 \
  --kv-cache-memory 64M --max-num-seqs 64 --dtype float32 > "$tmp/server.log" 2>&1 &
server_pid=$!
url="http://127.0.0.1:$port"
healthy_or_gone() { http_ok "$url/health" || gone "$server_pid"; }
wait_until 90 healthy_or_gone || { cat "$tmp/server.log"; echo "server not healthy in 90 s"; exit 1; }
if gone "$server_pid"; then cat "$tmp/server.log"; echo "server exited early"; exit 1; fi

# 1. Completions, random dataset, Poisson arrivals, bounded concurrency, goodput.
"$bin/llmserve" bench serve --base-url "$url" --model tiny --tokenizer "$tmp/tiny" --dataset-name random \
  --random-input-len 32 --random-output-len 8 --num-prompts 20 --request-rate 40 --max-concurrency 8 \
  --goodput e2el:600000 ttft:600000 --metric-percentiles 50,99 --save-result --save-detailed \
  --result-filename "$tmp/serve.json" --seed 1 --request-timeout 120 | tee "$tmp/serve.txt"
grep -q "Serving Benchmark Result" "$tmp/serve.txt"
grep -q "Request goodput (req/s):" "$tmp/serve.txt"

# 2. Chat completions, prefix-repetition dataset, model and tokenizer found via /v1/models,
#    vLLM's ready check and warm-up flags.
"$bin/llmserve" bench serve --backend openai-chat --base-url "$url" --dataset-name prefix-repetition \
  --prefix-repetition-prefix-len 16 --prefix-repetition-suffix-len 8 --prefix-repetition-num-prefixes 2 \
  --prefix-repetition-output-len 4 --ignore-eos --num-prompts 6 --save-result --save-detailed \
  --result-filename "$tmp/chat.json" --num-warmups 2 --ready-check-timeout-sec 30 --request-id-prefix chat- \
  --trust-remote-code > "$tmp/chat.txt"
grep -q "Initial test run completed." "$tmp/chat.txt"
grep -q "Warming up with 2 requests" "$tmp/chat.txt"

# 3. Nobody listening: every request fails, and is counted.
dead=$(free_port)
set +e
"$bin/llmserve" bench serve --base-url "http://127.0.0.1:$dead" --model tiny --tokenizer "$tmp/tiny" \
  --random-input-len 8 --random-output-len 2 --num-prompts 3 --save-result --result-filename "$tmp/dead.json" \
  --request-timeout 10 > "$tmp/dead.txt"
dead_rc=$?
set -e
[ "$dead_rc" -eq 1 ] || { echo "bench serve against a dead server should exit 1, got $dead_rc"; exit 1; }

# 4. Bad flags are a clear error (exit 2), an unknown benchmark lists the known ones.
if "$bin/llmserve" bench serve --num-prompts lots 2> "$tmp/bad.txt"; then echo "bad flag accepted"; exit 1; fi
grep -q "num-prompts" "$tmp/bad.txt"
if "$bin/llmserve" bench nosuch 2> "$tmp/unknown.txt"; then echo "unknown benchmark accepted"; exit 1; fi
grep -q "available: serve, sweep" "$tmp/unknown.txt"

# 5. Sweep at two rates (tokenizer found through /v1/models root): JSON per run, summary, PNG.
"$bin/llmserve" bench sweep --base-url "$url" --model tiny --random-input-len 16 \
  --random-output-len 4 --num-prompts 6 --request-rates 8,inf --output-dir "$tmp/sweep" --disable-tqdm

/usr/bin/python3 - "$tmp" <<'PY'
import json, math, os, sys
tmp = sys.argv[1]
j = json.load(open(f"{tmp}/serve.json"))
keys = ["completed", "failed", "duration", "total_input_tokens", "total_output_tokens", "request_throughput",
        "output_throughput", "total_token_throughput", "request_goodput", "input_lens", "output_lens", "ttfts",
        "itls", "latencies", "errors", "output_tokens_source", "max_concurrency", "request_rate"]
for m in ("ttft", "tpot", "itl", "e2el"):
    keys += [f"mean_{m}_ms", f"median_{m}_ms", f"std_{m}_ms", f"p99_{m}_ms", f"p50_{m}_ms"]
missing = [k for k in keys if k not in j]
assert not missing, f"missing keys {missing}"
n = 20
assert j["completed"] + j["failed"] == n, (j["completed"], j["failed"])
assert j["failed"] == 0, j["errors"]
assert j["max_concurrency"] == 8 and j["request_rate"] == 40
assert j["output_tokens_source"] == "usage", j["output_tokens_source"]
for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies"):
    assert len(j[k]) == n, (k, len(j[k]))
for i in range(n):
    assert 0 < j["ttfts"][i] <= j["latencies"][i], (i, j["ttfts"][i], j["latencies"][i])
    assert abs(j["ttfts"][i] + sum(j["itls"][i]) - j["latencies"][i]) < 1e-6, i
    assert len(j["itls"][i]) <= j["output_lens"][i] - 1, i
# The server's usage: ignore_eos gives exactly max_tokens; prompt tokens agree with the dataset's count.
assert j["output_lens"] == [8] * n, j["output_lens"]
assert j["input_lens"] == [32] * n, j["input_lens"]
assert j["total_output_tokens"] == sum(j["output_lens"]) == 160
assert j["total_input_tokens"] == sum(j["input_lens"]) == 640
assert math.isclose(j["request_throughput"], j["completed"] / j["duration"], rel_tol=1e-9)
assert math.isclose(j["output_throughput"], 160 / j["duration"], rel_tol=1e-9)
assert math.isclose(j["request_goodput"], j["request_throughput"], rel_tol=1e-9)  # generous SLOs: all good
assert j["p50_ttft_ms"] <= j["p99_ttft_ms"] and j["median_e2el_ms"] == j["p50_e2el_ms"]
tpots = sorted((j["latencies"][i] - j["ttfts"][i]) / 7 for i in range(n))
assert math.isclose(j["mean_tpot_ms"], 1000 * sum(tpots) / n, rel_tol=1e-9)

c = json.load(open(f"{tmp}/chat.json"))
assert c["backend"] == "openai-chat" and c["model_id"] == "tiny"
assert c["completed"] == 6 and c["failed"] == 0, c["errors"]
assert c["output_lens"] == [4] * 6, c["output_lens"]
assert all(0 < t <= e for t, e in zip(c["ttfts"], c["latencies"]))

d = json.load(open(f"{tmp}/dead.json"))
assert d["completed"] == 0 and d["failed"] == 3, d

s = json.load(open(f"{tmp}/sweep/sweep.json"))
assert [p["request_rate"] for p in s] == [8, "inf"], s
assert all(p["completed"] == 6 and p["failed"] == 0 for p in s), s
png = f"{tmp}/sweep/sweep.png"
with open(png, "rb") as f:
    head = f.read(8)
assert head == b"\x89PNG\r\n\x1a\n", head
assert os.path.getsize(png) > 1000
print("bench serve / sweep e2e: all checks passed")
PY
