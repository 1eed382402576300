#!/usr/bin/env bash
# Speculative decoding's figures end to end: `llmserve serve` with the n-gram
# proposer (tiny random-weight Qwen3 on 127.0.0.1, greedy, whose outputs
# repeat themselves), `llmserve bench serve` printing and saving the
# acceptance figures it read from /metrics before and after the run, and the
# server's periodic "SpecDecoding metrics: ..." log line; then suffix decoding.
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
  --kv-cache-memory 64M --max-num-seqs 16 --dtype float32 --log-stats-interval 0.5 \
  --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 1,
                         "prompt_lookup_max": 3}' > "$tmp/server.log" 2>&1 &
server_pid=$!
url="http://127.0.0.1:$port"
healthy_or_gone() { http_ok "$url/health" || gone "$server_pid"; }
wait_until 90 healthy_or_gone || { cat "$tmp/server.log"; echo "server not healthy in 90 s"; exit 1; }
if gone "$server_pid"; then cat "$tmp/server.log"; echo "server exited early"; exit 1; fi

# A warm-up request first: its drafts happen before the run and must not count.
"$bin/llmserve" bench serve --base-url "$url" --model tiny --tokenizer "$tmp/tiny" --random-input-len 32 \
  --random-output-len 48 --num-prompts 6 --max-concurrency 2 --temperature 0 --num-warmups 1 --seed 3 \
  --save-result --result-filename "$tmp/spec.json" --request-timeout 120 | tee "$tmp/spec.txt"
for line in "Speculative Decoding" "Acceptance rate (%):" "Acceptance length:" "Drafts:" "Draft tokens:" \
            "Accepted tokens:" "Per-position acceptance (%):" "  Position 2:"; do
  grep -qF -- "$line" "$tmp/spec.txt" || { echo "bench output lacks '$line'"; exit 1; }
done
curl -sf "$url/metrics" > "$tmp/metrics.txt"
# The stats line comes within an interval of the run (0.5 s); wait for it rather than sleep.
spec_line() { grep -q "SpecDecoding metrics: Mean acceptance length: " "$tmp/server.log"; }
wait_until 20 spec_line || { tail -20 "$tmp/server.log"; echo "no SpecDecoding metrics line"; exit 1; }

/usr/bin/python3 - "$tmp" <<'PY'
import json, math, re, sys
tmp = sys.argv[1]
j = json.load(open(f"{tmp}/spec.json"))
assert j["completed"] == 6 and j["failed"] == 0, j
drafts, drafted, accepted = j["spec_decode_num_drafts"], j["spec_decode_draft_tokens"], j["spec_decode_accepted_tokens"]
assert 0 < drafts <= drafted <= 3 * drafts, (drafts, drafted)
assert 0 <= accepted <= drafted, (accepted, drafted)
assert math.isclose(j["spec_decode_acceptance_rate"], 100 * accepted / drafted, rel_tol=1e-9)
assert math.isclose(j["spec_decode_acceptance_length"], 1 + accepted / drafts, rel_tol=1e-9)
per_pos = j["spec_decode_per_position_acceptance_rates"]
assert len(per_pos) == 3 and all(0 <= r <= 1 for r in per_pos), per_pos
assert math.isclose(sum(per_pos) * drafts, accepted, rel_tol=1e-9), (per_pos, drafts, accepted)
# The run's counts are the server's totals less what the warm-up drafted before it.
total = 0.0
for line in open(f"{tmp}/metrics.txt"):
    m = re.match(r'vllm:spec_decode_num_draft_tokens_total\{[^}]*\} (\S+)', line)
    if m:
        total += float(m.group(1))
assert drafted < total, (drafted, total)
# Greedy outputs of this model loop: most drafts are accepted.
assert j["spec_decode_acceptance_length"] > 1.5, j["spec_decode_acceptance_length"]
print("spec decode bench e2e: all checks passed")
PY
grep -m1 "SpecDecoding metrics:" "$tmp/server.log"

# Suffix decoding served the same way: its drafts come from the request's own
# tokens and the other requests' outputs.
kill -TERM "$server_pid"
wait_until 10 gone "$server_pid" || { echo "the ngram server did not stop"; exit 1; }
port=$(free_port)
"$bin/llmserve" serve "$tmp/tiny" --host 127.0.0.1 --port "$port" --served-model-name tiny --max-model-len 512 \
  --kv-cache-memory 64M --max-num-seqs 16 --dtype float32 \
  --speculative-config '{"method": "suffix", "num_speculative_tokens": 6}' > "$tmp/suffix.log" 2>&1 &
server_pid=$!
url="http://127.0.0.1:$port"
wait_until 90 healthy_or_gone || { cat "$tmp/suffix.log"; echo "suffix server not healthy in 90 s"; exit 1; }
if gone "$server_pid"; then cat "$tmp/suffix.log"; echo "suffix server exited early"; exit 1; fi
"$bin/llmserve" bench serve --base-url "$url" --model tiny --tokenizer "$tmp/tiny" --random-input-len 32 \
  --random-output-len 48 --num-prompts 6 --max-concurrency 2 --temperature 0 --seed 3 \
  --save-result --result-filename "$tmp/suffix.json" --request-timeout 120 > "$tmp/suffix.txt"
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
j = json.load(open(f"{sys.argv[1]}/suffix.json"))
assert j["completed"] == 6 and j["failed"] == 0, j
assert j["spec_decode_num_drafts"] > 0, j
assert len(j["spec_decode_per_position_acceptance_rates"]) <= 6, j
assert j["spec_decode_acceptance_length"] > 1.5, j["spec_decode_acceptance_length"]
print("suffix decoding served: acceptance length %.2f" % j["spec_decode_acceptance_length"])
PY
