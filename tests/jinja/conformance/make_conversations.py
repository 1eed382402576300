#!/usr/bin/python3
"""Writes conversations.json: the chat-template conformance inputs.

Deterministic (no randomness, no clock): run it again and the file is
byte-identical. Each conversation is rendered with every model's template by
reference_render.py (jinja2, as Hugging Face does) and by llmserve's C++
renderer; the outputs (or the fact that both raise) must match.
"""
import json
import os

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 10},
                "precision": {"type": "number", "default": 0.5},
            },
            "required": ["location"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Suche im Netz — returns résumé snippets 📄",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}, "safe": {"type": "boolean"}},
            "required": ["query"],
        },
    },
}


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def system(text):
    return {"role": "system", "content": text}


def tool_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_result(call_id, text):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def conv(cid, messages, add_generation_prompt=True, tools=None, kwargs=None):
    return {"id": cid, "messages": messages, "add_generation_prompt": add_generation_prompt,
            "tools": tools, "kwargs": kwargs or {}}


def build():
    c = []
    c.append(conv("single_user", [user("Hello!")]))
    c.append(conv("single_user_no_generation_prompt", [user("Hello!")], add_generation_prompt=False))
    c.append(conv("system_user", [system("You are a helpful assistant."), user("What is 2+2?")]))
    c.append(conv("system_user_assistant",
                  [system("You are terse."), user("Capital of France?"), assistant("Paris.")],
                  add_generation_prompt=False))
    c.append(conv("multi_turn", [user("Hi"), assistant("Hello! How can I help?"), user("Tell me a joke."),
                                 assistant("Why did the chicken cross the road?"), user("Why?")]))
    c.append(conv("multi_turn_system", [system("Be nice."), user("one"), assistant("two"), user("three"),
                                        assistant("four"), user("five")], add_generation_prompt=False))
    c.append(conv("empty_user_content", [user("")]))
    c.append(conv("empty_assistant_content", [user("a"), assistant(""), user("b")]))
    c.append(conv("unicode", [system("Réponds en français. 日本語も大丈夫。"),
                              user("Ünïcödé: 你好，世界! 🎉🚀 مرحبا שלום e\u0301 \u00a0nbsp"),
                              assistant("Très bien — 👍"), user("Ἀθῆναι, Zürich, Ærøskøbing")]))
    c.append(conv("whitespace", [user("   leading and trailing spaces   "), assistant("\n\nnewlines around\n\n"),
                                 user("\ttabs\tinside\t")]))
    c.append(conv("template_like_text", [user("Render {{ this }} and {% if x %}that{% endif %} {# not #} "
                                              "\\n backslash \"quotes\" 'single' <s></s> <|im_end|>")]))
    c.append(conv("json_content", [user('{"key": [1, 2.5, null, true], "nested": {"a": "b"}}')]))
    c.append(conv("long_content", [user(" ".join("word%d" % i for i in range(400)))]))
    c.append(conv("roles_not_alternating", [user("first"), user("second")]))
    c.append(conv("assistant_first", [assistant("I speak first."), user("ok")]))
    c.append(conv("system_only", [system("Only a system prompt.")]))
    c.append(conv("two_system_messages", [system("Rule one."), system("Rule two."), user("Go")]))
    c.append(conv("tools_defined", [system("Use tools when needed."), user("Weather in Paris?")],
                  tools=[WEATHER_TOOL, SEARCH_TOOL]))
    c.append(conv("tools_no_system", [user("Search for cats")], tools=[SEARCH_TOOL]))
    c.append(conv("tool_call_dict_arguments",
                  [user("Weather in Paris?"),
                   {"role": "assistant", "content": "",
                    "tool_calls": [tool_call("call_1", "get_current_weather",
                                             {"location": "Paris, France", "unit": "celsius"})]},
                   tool_result("call_1", '{"temperature": 22, "condition": "sunny"}')],
                  tools=[WEATHER_TOOL]))
    c.append(conv("tool_call_string_arguments",
                  [user("Weather in Paris?"),
                   {"role": "assistant", "content": None,
                    "tool_calls": [tool_call("call_1", "get_current_weather",
                                             '{"location": "Paris, France"}')]},
                   tool_result("call_1", "22 degrees and sunny")],
                  tools=[WEATHER_TOOL]))
    c.append(conv("multiple_tool_calls",
                  [system("You can call tools."), user("Weather in Paris and Rome?"),
                   {"role": "assistant", "content": None,
                    "tool_calls": [tool_call("a", "get_current_weather", '{"location": "Paris"}'),
                                   tool_call("b", "get_current_weather", '{"location": "Rome"}')]},
                   tool_result("a", "sunny"), tool_result("b", "rainy")],
                  tools=[WEATHER_TOOL]))
    c.append(conv("tool_call_with_text",
                  [user("Check the weather"),
                   {"role": "assistant", "content": "Let me check that for you.",
                    "tool_calls": [tool_call("c1", "get_current_weather", {"location": "Oslo", "days": 3})]},
                   tool_result("c1", "snow"), assistant("It is snowing in Oslo."), user("Thanks!")],
                  tools=[WEATHER_TOOL]))
    c.append(conv("multi_step_tools",
                  [user("Plan a trip"),
                   {"role": "assistant", "content": "",
                    "tool_calls": [tool_call("s1", "web_search", {"query": "flights", "top_k": 3})]},
                   tool_result("s1", "flight results"),
                   {"role": "assistant", "content": "",
                    "tool_calls": [tool_call("s2", "web_search", {"query": "hotels", "safe": True})]},
                   tool_result("s2", "hotel results")],
                  tools=[SEARCH_TOOL]))
    c.append(conv("thinking_enabled", [user("Solve 17*23")], kwargs={"enable_thinking": True}))
    c.append(conv("thinking_disabled", [user("Solve 17*23")], kwargs={"enable_thinking": False}))
    c.append(conv("thinking_disabled_history",
                  [user("Hi"), assistant("Hello"), user("Count to three")], kwargs={"enable_thinking": False}))
    c.append(conv("reasoning_content_field",
                  [user("What is 6*7?"),
                   {"role": "assistant", "content": "42", "reasoning_content": "6 times 7 is 42."},
                   user("And 6*8?")]))
    c.append(conv("think_tags_in_content",
                  [user("Why is the sky blue?"),
                   assistant("<think>\nRayleigh scattering.\n</think>\n\nBecause of Rayleigh scattering.")],
                  add_generation_prompt=False))
    c.append(conv("think_tags_then_user",
                  [user("Q1"), assistant("<think>\nhmm\n</think>\n\nA1"), user("Q2")]))
    c.append(conv("tool_response_like_user",
                  [user("<tool_response>\nsample\n</tool_response>")]))
    c.append(conv("list_content",
                  [{"role": "user", "content": [{"type": "text", "text": "Describe this."},
                                                {"type": "image"}, {"type": "text", "text": " Briefly. "}]}]))
    c.append(conv("system_list_content",
                  [{"role": "system", "content": [{"type": "text", "text": "You see images."}]},
                   {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]))
    c.append(conv("extra_message_fields",
                  [{"role": "user", "content": "Hi", "name": "bob"}, {"role": "assistant", "content": "Hey bob"},
                   {"role": "user", "content": "bye", "name": "bob"}]))
    turns = []
    for i in range(12):
        turns.append(user("question %d?" % i) if i % 2 == 0 else assistant("answer %d." % i))
    c.append(conv("many_turns", turns, add_generation_prompt=False))
    c.append(conv("empty_messages", []))
    c.append(conv("null_user_content", [user(None)]))
    c.append(conv("special_tokens_in_text", [user("<s>[INST] sample [/INST]</s><|begin_of_text|><bos>")]))
    c.append(conv("custom_kwargs", [user("Hi")], kwargs={"custom_flag": True, "date_string": "26 Jul 2024"}))
    return c


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conversations.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"conversations": build()}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
