#!/usr/bin/python3
"""Renders every (model, conversation) pair, and every snippet of snippets.json, with jinja2 the way Hugging Face's
`apply_chat_template` does, and writes the results as JSON for the C++
conformance test to compare against.

HF's setup reproduced here: ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True, extensions=[loopcontrols, a {% generation %} tag]); a `tojson` filter calling
json.dumps(ensure_ascii=False, ...); globals raise_exception and strftime_now;
variables messages, tools (None when absent), documents=None,
add_generation_prompt, the special tokens the config sets, and the
conversation's kwargs. strftime_now is pinned to 2024-07-26 09:30:00 (the C++
test pins the same time).

usage: reference_render.py REPO_ROOT OUT_JSON
Output: {"available": bool, "reason": str, "cases": {"model/conversation": {"ok": bool, "text"|"error": str}}}
"""
import datetime
import json
import os
import sys

FIXED_NOW = datetime.datetime(2024, 7, 26, 9, 30, 0)
SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


def make_env():
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return FIXED_NOW.strftime(fmt)

    class GenerationTag(Extension):
        """HF's {% generation %}...{% endgeneration %} (AssistantTracker): renders its body."""
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols, GenerationTag])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def special_tokens(config):
    out = {}
    for key in SPECIAL_TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if value is not None:
            out[key] = value
    return out


def main():
    root, out_path = sys.argv[1], sys.argv[2]
    here = os.path.join(root, "tests", "jinja", "conformance")
    with open(os.path.join(here, "models.json"), encoding="utf-8") as f:
        models = json.load(f)["models"]
    with open(os.path.join(here, "conversations.json"), encoding="utf-8") as f:
        conversations = json.load(f)["conversations"]
    result = {"available": True, "reason": "", "cases": {}}
    try:
        env = make_env()
    except ImportError as e:
        result = {"available": False, "reason": "python3-jinja2 is not installed: %s" % e, "cases": {}}
    for model in models if result["available"] else []:
        config_path = os.path.join(root, model["config"])
        if not os.path.exists(config_path):
            continue
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
        if "template_file" in model:
            with open(os.path.join(root, model["template_file"]), encoding="utf-8", newline="") as f:
                source = f.read()
        else:
            source = config["chat_template"]
        template = env.from_string(source)
        tokens = special_tokens(config)
        for conv in conversations:
            variables = dict(tokens)
            variables.update(conv["kwargs"])
            try:
                text = template.render(messages=conv["messages"], tools=conv["tools"], documents=None,
                                       add_generation_prompt=conv["add_generation_prompt"], **variables)
                case = {"ok": True, "text": text}
            except Exception as e:  # any template error: the C++ side must fail too
                case = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
            result["cases"][model["name"] + "/" + conv["id"]] = case
    if result["available"]:
        with open(os.path.join(here, "snippets.json"), encoding="utf-8") as f:
            snippets = json.load(f)
        for snippet in snippets["snippets"]:
            try:
                text = env.from_string(snippet["template"]).render(**snippets["vars"])
                case = {"ok": True, "text": text}
            except Exception as e:
                case = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
            result["cases"]["snippet/" + snippet["id"]] = case
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
