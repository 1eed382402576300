#!/usr/bin/python3
"""Writes the golden bytes of every data-plane message with python3-msgpack.

The C++ codecs in proto/ must produce exactly these bytes and decode them back
(tests/proto/golden_bytes_test.cc). This script shares no code with them: it
restates the wire contract from the field tables below and msgspec's rules,
and lets Debian's msgpack write the bytes.

  * An array-like struct is a msgpack array of its fields in declaration
    order. With omit_defaults (msgspec), trailing fields equal to their
    default are dropped; a field without a default (REQUIRED) always counts.
  * A map-like struct is a map from field name to value, in declaration
    order, holding only the fields that differ from their default.
  * Data maps (C++ std::map) are written in ascending key order.
  * Floats are float64 except logprobs (F32 below), which are float32.

Usage:
  /usr/bin/python3 scripts/make_wire_fixtures.py            # rewrite tests/proto/fixtures
  /usr/bin/python3 scripts/make_wire_fixtures.py --out DIR  # write elsewhere
  /usr/bin/python3 scripts/make_wire_fixtures.py --check    # fail if the fixtures are stale
"""

import argparse
import difflib
import pathlib
import struct
import sys
import tempfile

import msgpack

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "proto" / "fixtures"
REQUIRED = object()  # a field without a default: always written
HEX_PER_LINE = 64    # 32 bytes per line keeps fixture diffs readable


class F32(float):
    """A float that travels as msgpack float32."""


_PACKER = msgpack.Packer(use_bin_type=True)
_PACKER_F32 = msgpack.Packer(use_bin_type=True, use_single_float=True)


def encode(value):
    """The msgpack bytes of `value` (lists, dicts, scalars, F32)."""
    if isinstance(value, F32):
        return _PACKER_F32.pack(float(value))
    if isinstance(value, list):
        return _PACKER.pack_array_header(len(value)) + b"".join(encode(v) for v in value)
    if isinstance(value, dict):
        parts = [encode(k) + encode(v) for k, v in value.items()]
        return _PACKER.pack_map_header(len(value)) + b"".join(parts)
    return _PACKER.pack(value)


def _values(schema, given):
    unknown = set(given) - {name for name, _ in schema}
    if unknown:
        raise KeyError(f"unknown fields {sorted(unknown)}")
    values = []
    for name, default in schema:
        if name not in given and default is REQUIRED:
            raise KeyError(f"field {name} has no default")
        value = given.get(name, default)
        if isinstance(default, float) and not isinstance(value, F32):
            value = float(value)  # a float field stays a float on the wire
        values.append(value)
    return values


def _is_default(value, default):
    return default is not REQUIRED and type(value) is type(default) and value == default


def array_like(schema, given, omit_defaults):
    """An array-like struct: the field values in order, trailing defaults dropped if asked."""
    values = _values(schema, given)
    used = len(values)
    if omit_defaults:
        while used > 0 and _is_default(values[used - 1], schema[used - 1][1]):
            used -= 1
    return values[:used]


def map_like(schema, given):
    """A map-like struct: the fields that differ from their default, in field order."""
    values = _values(schema, given)
    return {name: v for (name, d), v in zip(schema, values) if not _is_default(v, d)}


def ordered(mapping):
    """A data map as the C++ std::map writes it: ascending keys."""
    return dict(sorted(mapping.items()))


# ---- field tables: (wire name, default) -------------------------------------------

SAMPLING_PARAMS = [  # map, vLLM SamplingParams names
    ("n", 1), ("presence_penalty", 0.0), ("frequency_penalty", 0.0),
    ("repetition_penalty", 1.0), ("temperature", 1.0), ("top_p", 1.0), ("top_k", 0),
    ("min_p", 0.0), ("seed", None), ("stop", []), ("stop_token_ids", []),
    ("ignore_eos", False), ("max_tokens", 16), ("min_tokens", 0), ("logprobs", None),
    ("prompt_logprobs", None), ("detokenize", True), ("skip_special_tokens", True),
    ("spaces_between_special_tokens", True), ("include_stop_str_in_output", False),
    ("output_kind", 0), ("structured_outputs", None), ("logit_bias", {}),
    ("allowed_token_ids", []), ("_all_stop_token_ids", []), ("extra_args", None),
]
STRUCTURED_OUTPUTS_PARAMS = [  # map, vLLM StructuredOutputsParams names
    ("json", None), ("regex", None), ("choice", None), ("grammar", None),
    ("json_object", False), ("disable_any_whitespace", False),
    ("disable_additional_properties", False), ("whitespace_pattern", None),
]
ENGINE_CORE_REQUEST = [  # array, omit_defaults, vLLM EngineCoreRequest order
    ("request_id", REQUIRED), ("prompt_token_ids", REQUIRED), ("mm_features", REQUIRED),
    ("sampling_params", REQUIRED), ("pooling_params", REQUIRED), ("arrival_time", REQUIRED),
    ("lora_request", None), ("cache_salt", None), ("data_parallel_rank", None),
    ("prompt_embeds", None), ("prompt_is_token_ids", False), ("client_index", 0),
    ("current_wave", 0), ("priority", 0), ("trace_headers", None), ("resumable", None),
    ("external_req_id", None), ("reasoning_ended", None), ("reasoning_parser_kwargs", None),
    ("abort_immediately", None),  # vLLM's fields past priority: we never set them
]
UTILITY_REQUEST = [("client_index", 0), ("call_id", 0), ("method_name", ""), ("args", [])]
START_DP_WAVE = [("wave", 0), ("exclude_engine_index", -1)]
LOGPROBS = [("logprob_token_ids", []), ("logprobs", []), ("sampled_token_ranks", [])]
ENGINE_CORE_EVENT = [("type", 0), ("timestamp", 0.0)]  # map
PREFILL_STATS = [("num_cached_tokens", 0)]  # map
ENGINE_CORE_OUTPUT = [  # array, omit_defaults, vLLM EngineCoreOutput order
    ("request_id", REQUIRED), ("new_token_ids", REQUIRED), ("new_logprobs", None),
    ("new_prompt_logprobs_tensors", None), ("pooling_output", None),
    ("finish_reason", None), ("stop_reason", None),
    ("events", []),  # vLLM's default is None; ours writes an empty list (both decode)
    ("kv_transfer_params", None), ("trace_headers", None), ("prefill_stats", None),
    ("routed_experts", None), ("num_nans_in_logits", 0), ("error_code", None),
    ("error_message", None),
]
SCHEDULER_STATS = [  # map
    ("num_running_reqs", 0), ("num_waiting_reqs", 0), ("num_waiting_tokens", 0),
    ("kv_cache_usage", 0.0), ("prefix_cache_queries", 0), ("prefix_cache_hits", 0),
    ("num_preemptions", 0), ("step_counter", 0), ("current_wave", 0),
    ("iteration_tokens", []), ("spec_decoding_stats", None),
]
SPEC_DECODING_STATS = [  # map, every field (vLLM's dataclass)
    ("num_spec_tokens", 0), ("num_drafts", 0), ("num_draft_tokens", 0),
    ("num_accepted_tokens", 0), ("num_accepted_tokens_per_pos", []),
]
UTILITY_OUTPUT = [("call_id", 0), ("failure_message", None), ("result", None)]
ENGINE_CORE_OUTPUTS = [  # array, omit_defaults
    ("engine_index", 0), ("outputs", []), ("scheduler_stats", None), ("timestamp", 0.0),
    ("utility_output", None), ("finished_requests", None), ("wave_complete", None),
    ("start_wave", None),
]
POOLING_PARAMS = [  # array, omit_defaults, vLLM 0.11 PoolingParams order
    ("truncate_prompt_tokens", None), ("dimensions", None), ("normalize", None), ("activation", None),
    ("softmax", None), ("step_tag_id", None), ("returned_token_ids", None), ("task", "embed"),
]
NEW_REQUEST_DATA = [
    ("req_id", ""), ("prompt_token_ids", []), ("sampling_params", {}), ("block_ids", []),
    ("num_computed_tokens", 0), ("lora_request", None),
    ("pooling_params", None),  # PoolingParams (an array) of a pooling request
]
CACHED_REQUEST_DATA = [
    ("req_ids", []), ("resumed_req_ids", []), ("new_token_ids", []), ("all_token_ids", {}),
    ("new_block_ids", []), ("num_computed_tokens", []), ("num_output_tokens", []),
]
SCHEDULER_OUTPUT = [
    ("scheduled_new_reqs", []), ("scheduled_cached_reqs", REQUIRED),
    ("num_scheduled_tokens", {}), ("total_num_scheduled_tokens", 0),
    ("scheduled_spec_decode_tokens", {}), ("num_common_prefix_blocks", []),
    ("finished_req_ids", []), ("preempted_req_ids", []),
    ("structured_output_request_ids", {}),
    ("grammar_bitmask", None),  # bin: the int32 words, little-endian
    ("kv_connector_metadata", None),  # the connector's own msgpack value
]
MODEL_RUNNER_OUTPUT = [
    ("req_ids", []), ("sampled_token_ids", []), ("logprobs", []),
    ("num_nans_in_logits", 0), ("error", None),
    ("prompt_logprobs_dict", {}),  # request id -> LogprobsLists of the whole prompt
    ("pooler_output", {}),  # request id -> pooled hidden state (float32 list)
    ("kv_connector_output", None),
]
KV_CONNECTOR_OUTPUT = [  # vLLM 0.11 order; the stats are not carried
    ("finished_sending", []), ("finished_recving", []), ("kv_connector_stats", None),
    ("invalid_block_ids", []),
]

# Enum values on the wire: FinishReason, StatusCode (our extension), RequestOutputKind.
STOP, LENGTH, ABORT = 0, 1, 2
RESOURCE_EXHAUSTED = 3
DELTA = 1


def sampling_params(**kw): return map_like(SAMPLING_PARAMS, kw)
def structured_outputs(**kw): return map_like(STRUCTURED_OUTPUTS_PARAMS, kw)
def logprobs(**kw): return array_like(LOGPROBS, kw, omit_defaults=False)
def event(**kw): return map_like(ENGINE_CORE_EVENT, kw)
def scheduler_stats(**kw): return map_like(SCHEDULER_STATS, kw)
def spec_decoding_stats(**kw): return dict(zip([n for n, _ in SPEC_DECODING_STATS], _values(SPEC_DECODING_STATS, kw)))
def utility_output(**kw): return array_like(UTILITY_OUTPUT, kw, omit_defaults=False)
def pooling_params(**kw): return array_like(POOLING_PARAMS, kw, omit_defaults=True)
def new_request_data(**kw): return array_like(NEW_REQUEST_DATA, kw, omit_defaults=False)
def cached_request_data(**kw): return array_like(CACHED_REQUEST_DATA, kw, omit_defaults=False)


def engine_core_request(**kw):
    placeholders = {"mm_features": None, "pooling_params": None}
    return array_like(ENGINE_CORE_REQUEST, placeholders | kw, omit_defaults=True)


def engine_core_output(**kw):
    return array_like(ENGINE_CORE_OUTPUT, kw, omit_defaults=True)


def engine_core_outputs(**kw):
    return array_like(ENGINE_CORE_OUTPUTS, kw, omit_defaults=True)


# ---- the instances: one per message, plus the cases the omit rules make distinct ----
# tests/proto/golden_bytes_test.cc builds the same instances in C++.

def _logprobs_two_rows():
    return logprobs(logprob_token_ids=[[1, 5, 6], [2, 7, 8]],
                    logprobs=[[F32(-0.5), F32(-2.0), F32(-3.75)],
                              [F32(-0.125), F32(-1.0), F32(-4.5)]],
                    sampled_token_ranks=[1, 2])


def _output_with_tokens():
    return engine_core_output(request_id="r1", new_token_ids=[1, 2],
                              new_logprobs=_logprobs_two_rows(),
                              events=[event(type=1, timestamp=10.5), event(type=2, timestamp=10.75)],
                              prefill_stats=map_like(PREFILL_STATS, {"num_cached_tokens": 32}))


def _output_stop_token():
    return engine_core_output(request_id="r2", new_token_ids=[151645], finish_reason=STOP,
                              stop_reason=151645)


def _prompt_logprobs_two_rows():
    # Prompt tokens 4 (rank 1) and 6 (rank 2), each with its top 2.
    return logprobs(logprob_token_ids=[[4, 4, 8], [6, 2, 6]],
                    logprobs=[[F32(-1.25), F32(-1.25), F32(-2.5)],
                              [F32(-0.75), F32(-0.5), F32(-0.75)]],
                    sampled_token_ranks=[1, 2])


def _scheduler_stats():
    return scheduler_stats(num_running_reqs=3, num_waiting_reqs=4, num_waiting_tokens=500,
                           kv_cache_usage=0.25, prefix_cache_queries=100, prefix_cache_hits=64,
                           num_preemptions=1, step_counter=77, current_wave=2,
                           iteration_tokens=[256, 17])


def _kv_transfer_params():
    return {"do_remote_decode": False, "do_remote_prefill": True, "remote_block_ids": [4, 5]}


def _new_request_data():
    return new_request_data(req_id="new", prompt_token_ids=[5, 6, 7],
                            sampling_params=sampling_params(temperature=0.0),
                            block_ids=[[3, 4]], num_computed_tokens=16)


def _cached_request_data():
    return cached_request_data(req_ids=["old", "back"], resumed_req_ids=["back"],
                               all_token_ids=ordered({"back": [1, 2, 3, 4]}),
                               new_block_ids=[None, [[9]]], num_computed_tokens=[40, 0],
                               num_output_tokens=[3, 1])


def instances():
    """Fixture name -> the msgpack value of that message."""
    return {
        "sampling_params_default": sampling_params(),
        "sampling_params_full": sampling_params(
            n=3, presence_penalty=0.5, frequency_penalty=-0.25, repetition_penalty=1.1,
            temperature=0.7, top_p=0.9, top_k=40, min_p=0.05, seed=-12345,
            stop=["\n\n", "END", "ünïcode"], stop_token_ids=[151645, 2], ignore_eos=True,
            max_tokens=None, min_tokens=4, logprobs=5, prompt_logprobs=1, detokenize=False,
            skip_special_tokens=False, include_stop_str_in_output=True, output_kind=DELTA,
            logit_bias=ordered({42: 2.5, 10: -100.0}), allowed_token_ids=[1, 2, 3],
            _all_stop_token_ids=[151645]),
        "sampling_params_json_schema": sampling_params(structured_outputs=structured_outputs(
            json='{"type":"object"}', disable_any_whitespace=True)),
        "sampling_params_kv_transfer": sampling_params(
            extra_args={"kv_transfer_params": _kv_transfer_params()}),
        "sampling_params_choice": sampling_params(
            temperature=0.0, structured_outputs=structured_outputs(choice=["yes", "no"])),
        "engine_core_request_minimal": engine_core_request(
            request_id="x", prompt_token_ids=[1], sampling_params=sampling_params(),
            arrival_time=1.0),
        "engine_core_request_cache_salt": engine_core_request(
            request_id="y", prompt_token_ids=[1, 2], sampling_params=sampling_params(top_k=5),
            arrival_time=2.5, cache_salt="tenant-7"),
        "engine_core_request_pooling": engine_core_request(
            request_id="embd-1-0", prompt_token_ids=[3, 4, 5], sampling_params=sampling_params(max_tokens=1),
            pooling_params=pooling_params(dimensions=8, normalize=False), arrival_time=3.5),
        "engine_core_request_full": engine_core_request(
            request_id="cmpl-abc-0", prompt_token_ids=[785, 6722, 315, 9625, 374],
            sampling_params=sampling_params(temperature=0.0, max_tokens=64, stop=["END"]),
            arrival_time=1763769600.25, lora_request="adapter", cache_salt="tenant-7",
            data_parallel_rank=3, prompt_is_token_ids=True, client_index=2, current_wave=9,
            priority=-1, reasoning_ended=False),
        "utility_request": array_like(UTILITY_REQUEST, {
            "client_index": 1, "call_id": 8589934592, "method_name": "reset_prefix_cache",
            "args": ["a", "b"]}, omit_defaults=False),
        "start_dp_wave": array_like(START_DP_WAVE, {"wave": 12}, omit_defaults=False),
        "abort_request_ids": ["r1", "cmpl-0123456789abcdef0123456789abcdef"],
        "logprobs": _logprobs_two_rows(),
        "engine_core_event": event(type=2, timestamp=10.75),
        "engine_core_output_tokens": _output_with_tokens(),
        "engine_core_output_stop_token": _output_stop_token(),
        "engine_core_output_stop_string": engine_core_output(
            request_id="r3", new_token_ids=[], finish_reason=STOP, stop_reason="END"),
        "engine_core_output_prompt_logprobs": engine_core_output(
            request_id="r5", new_token_ids=[9],
            new_prompt_logprobs_tensors=_prompt_logprobs_two_rows()),
        "engine_core_output_pooling": engine_core_output(
            request_id="embd-1-0", new_token_ids=[], pooling_output=[F32(0.5), F32(-1.25), F32(3.0)],
            finish_reason=STOP),
        "engine_core_output_error": engine_core_output(
            request_id="r4", new_token_ids=[], finish_reason=ABORT,
            error_code=RESOURCE_EXHAUSTED, error_message="waiting queue is full (256 requests)"),
        "engine_core_output_kv_transfer_params": engine_core_output(
            request_id="p1", new_token_ids=[8], finish_reason=LENGTH,
            kv_transfer_params=_kv_transfer_params()),
        "scheduler_stats": _scheduler_stats(),
        "scheduler_stats_spec_decoding": scheduler_stats(
            num_running_reqs=1, step_counter=9, spec_decoding_stats=spec_decoding_stats(
                num_spec_tokens=4, num_drafts=3, num_draft_tokens=10, num_accepted_tokens=6,
                num_accepted_tokens_per_pos=[3, 2, 1])),
        "utility_output": utility_output(call_id=9, result='{"ok":true}'),
        "engine_core_outputs_empty": engine_core_outputs(),
        "engine_core_outputs_wave_complete": engine_core_outputs(wave_complete=4),
        "engine_core_outputs_full": engine_core_outputs(
            engine_index=2, outputs=[_output_with_tokens(), _output_stop_token()],
            scheduler_stats=_scheduler_stats(), timestamp=12345.5,
            utility_output=utility_output(call_id=9, result='{"ok":true}'),
            finished_requests=["r2", "r3"], wave_complete=4, start_wave=5),
        "new_request_data": _new_request_data(),
        "cached_request_data": _cached_request_data(),
        "scheduler_output": array_like(SCHEDULER_OUTPUT, {
            "scheduled_new_reqs": [_new_request_data()],
            "scheduled_cached_reqs": _cached_request_data(),
            "num_scheduled_tokens": ordered({"new": 3, "old": 1, "back": 4}),
            "total_num_scheduled_tokens": 8,
            "scheduled_spec_decode_tokens": ordered({"old": [17]}),
            "num_common_prefix_blocks": [0], "finished_req_ids": ["done"],
            "preempted_req_ids": ["victim"],
            "structured_output_request_ids": ordered({"new": 0}),
            "grammar_bitmask": struct.pack("<2i", -1, 5),
            "kv_connector_metadata": {"requests": [["new", True]]}}, omit_defaults=False),
        "model_runner_output": array_like(MODEL_RUNNER_OUTPUT, {
            "req_ids": ["a", "b"], "sampled_token_ids": [[11], []],
            "logprobs": [logprobs(logprob_token_ids=[[11, 3]],
                                  logprobs=[[F32(-0.5), F32(-1.5)]], sampled_token_ranks=[1]),
                         None],
            "prompt_logprobs_dict": ordered({"a": _prompt_logprobs_two_rows()})},
            omit_defaults=False),
        "model_runner_output_kv_connector": array_like(MODEL_RUNNER_OUTPUT, {
            "req_ids": ["a"], "sampled_token_ids": [[11]], "logprobs": [None],
            "kv_connector_output": array_like(KV_CONNECTOR_OUTPUT, {
                "finished_sending": ["done"], "invalid_block_ids": [3, 4]}, omit_defaults=False)},
            omit_defaults=False),
        "model_runner_output_error": array_like(
            MODEL_RUNNER_OUTPUT, {"error": "worker 1: out of memory"}, omit_defaults=False),
    }


def to_hex(data):
    text = data.hex()
    lines = [text[i:i + HEX_PER_LINE] for i in range(0, len(text), HEX_PER_LINE)]
    return "\n".join(lines) + "\n"


def write_all(out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.hex"):
        stale.unlink()
    for name, value in instances().items():
        (out_dir / f"{name}.hex").write_text(to_hex(encode(value)))


def check(fixture_dir):
    """0 when `fixture_dir` holds exactly what write_all writes now."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = pathlib.Path(tmp)
        write_all(fresh)
        want = {p.name: p.read_text() for p in fresh.glob("*.hex")}
    have = {p.name: p.read_text() for p in fixture_dir.glob("*.hex")}
    stale = 0
    for name in sorted(want.keys() | have.keys()):
        if want.get(name) == have.get(name):
            continue
        stale += 1
        if name not in want:
            print(f"{name}: no longer written by the script")
            continue
        if name not in have:
            print(f"{name}: missing from {fixture_dir}")
            continue
        diff = difflib.unified_diff(have[name].splitlines(True), want[name].splitlines(True),
                                    f"committed/{name}", f"regenerated/{name}")
        sys.stdout.writelines(diff)
    if stale:
        print(f"{stale} wire fixture(s) are stale: run /usr/bin/python3 {sys.argv[0]}")
        return 1
    print(f"{len(want)} wire fixtures are current")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=FIXTURES, help="fixture directory")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    if args.check:
        return check(args.out)
    write_all(args.out)
    print(f"wrote {len(instances())} fixtures to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
