#!/usr/bin/python3
"""Writes snippets.json: small templates that pin one Jinja behaviour each
(whitespace control, operators, filters, tests, methods, scoping, error cases).
reference_render.py renders them with jinja2 and the C++ conformance test
compares. Deterministic: rerunning gives the same file.
"""
import json
import os

VARS = {
    "users": [{"name": "ann", "age": 31, "active": True, "nick": "a"},
              {"name": "bob", "age": 25, "active": False},
              {"name": "cy", "age": 40, "active": True}],
    "d": {"k": "v", "n": 1, "items": [1]},
    "data": {"name": "Zoë 😀", "n": [1, 2.5, 1e-07, 0.1, 100.0, -3], "ok": True, "none": None,
             "empty": {}, "list": [], "nested": {"b": 1, "a": {"c": "\"quoted\"\n"}}},
    "a": 0, "b": "", "c": "see",
    "nested": {"y": {"z": "deep"}},
}

S = [
    # whitespace control (trim_blocks, lstrip_blocks, -, +, comments, raw, newlines)
    ("ws_if_lines", "a\n  {% if true %}\n  b\n  {% endif %}\nc"),
    ("ws_for_lines", "{% for i in range(3) %}\n{{ i }}\n{% endfor %}"),
    ("ws_minus_var", "  {{- 'x' -}}  \n y"),
    ("ws_minus_block", "{%- if true -%}  \n  x  \n{%- endif -%}\n  z"),
    ("ws_plus", "x \n  {%+ if true %}y{% endif %}\n  {% if true +%}\nz{% endif %}"),
    ("ws_comments", "a  {# c #}  b\n  {# line comment #}\nc {#- strip -#}   d"),
    ("ws_raw", "{% raw %}{{ not }} {% if %}{% endraw %}|  {% raw -%}  x  {%- endraw %}|"),
    ("ws_crlf", "line1\r\nline2\r\n{% if true %}\r\nx\r\n{% endif %}\r\n"),
    ("ws_trailing_newline", "trailing newline\n"),
    ("ws_two_trailing_newlines", "two\n\n"),
    ("ws_var_lines", "{{ 'a' }}\n{{ 'b' }}\n"),
    ("ws_set_indented", "  {% set x = 1 %}\n  {{ x }}"),
    ("ws_for_minus", "{% for i in [1,2] -%}\n  {{ i }}\n{%- endfor %}"),
    ("ws_tabs", "\t\t{% if true %}x{% endif %}\n \t {% if true %}\ny{% endif %}"),
    ("ws_comment_trim", "{{ 1 }}{# c #}\n{{ 2 }}"),
    ("ws_text_before_tag", "text {% if true %}\nkept{% endif %}"),
    ("ws_multiline_tag", "{% if\n true\n %}\nx{% endif %}"),
    ("ws_var_newline", "{{ 'v' }}\n\n{{ 'w' }}"),
    # operators and literals
    ("op_arith", "{{ 1 + 2 * 3 ** 2 }} {{ (1 + 2) * 3 }} {{ 10 - 2 - 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ -1|abs }}"),
    ("op_concat", "{{ 'a' ~ 1 ~ none ~ true }} {{ 1 ~ (2 + 3) }} {{ 'a' ~ 'b' | upper }}"),
    ("op_compare", "{{ not 1 == 2 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'b' in 'abc' }} {{ 2 not in [1, 3] }} {{ 'k' in d }} {{ 'v' in d }}"),
    ("op_cond", "{{ c if c else 'no' }} {{ 'yes' if true }}|{{ 'yes' if false }}| {{ 'x' if none else 'y' }} {{ 1 if 0 else 2 if 0 else 3 }}"),
    ("op_slices", "{{ [1, 2, 3][1:] }} {{ 'hello'[1:-1] }} {{ 'hello'[::2] }} {{ [1,2,3,4][::-2] }} {{ 'abc'[-5:99] }} {{ [1,2,3][:-1] }} {{ 'abc'[::-1] }} {{ (1,2,3)[1:] }}"),
    ("op_items", "{{ {'a': 1}['a'] }} {{ {'a': 1}.a }} {{ d['items'] }} {{ d.get('x', 'dflt') }} {{ d.get('k') }} {{ d.get('zz') }} {{ d.n }}"),
    ("op_division", "{{ 7 // -2 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 1 / 4 }} {{ 10 / 5 }} {{ 7 % -3 }} {{ 2 ** -2 }}"),
    ("op_floats", "{{ 0.1 }} {{ 1e-5 }} {{ 123456789012345678.0 }} {{ 3.0 }} {{ 2.5e-3 }} {{ 1e16 }} {{ 12345.678 }} {{ 1e15 }} {{ 0.0001 }} {{ -0.5 }} {{ 1.5e300 * 1e10 }}"),
    ("op_equality", "{{ true + 1 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ none == none }} {{ [1] == [1] }} {{ (1,) == [1] }} {{ {'a': 1} == {'a': 1} }} {{ 'a' != 'b' }}"),
    ("op_ordering", "{{ 'abc' < 'abd' }} {{ [1, 2] < [1, 3] }} {{ 2 >= 2.0 }} {{ 'B' < 'a' }} {{ 'é' > 'z' }}"),
    ("op_repeat", "{{ 'abc' * 2 }} {{ [1] * 3 }} {{ 3 * 'x' }} {{ 'x' * 0 }}|"),
    ("op_literals", "{{ 1_000 + 1 }} {{ 1.5e3 }} {{ 'it''s' }} {{ \"it's\" }} {{ True }} {{ None }} {{ false }}"),
    ("op_and_or", "{{ 0 and 1 }} {{ 2 and 3 }} {{ 0 or '' }} {{ 0 or 'x' }} {{ none or [] }}"),
    # undefined
    ("undef_print", "{{ undefined_var }}|{{ undefined_var is defined }}|{{ undefined_var | default('d') }}|{{ undefined_var | length }}|{{ not undefined_var }}|{{ undefined_var ~ 'x' }}"),
    ("undef_loop", "{% for x in undefined_var %}x{% else %}empty{% endfor %}{% if undefined_var %}t{% else %}f{% endif %}"),
    ("undef_missing_key", "[{{ d.missing }}][{{ d['missing'] }}][{{ users[9] }}][{{ none.x }}][{{ 'abc'.zz }}][{{ d.missing is defined }}]"),
    ("default_filter", "{{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 | d('zero', boolean=true) }} {{ d.missing | d('m') }}"),
    # string methods
    ("str_split_strip", "{{ ' a b  c '.split() }} {{ 'a,b,,c'.split(',', 1) }} {{ 'a b c'.rsplit(None, 1) }} {{ ' a b '.split(' ') }} [{{ '  x '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '--a--'.lstrip('-') }}|{{ '--a--'.rstrip('-') }}|{{ '\\n\\n x\\n'.lstrip('\\n') }}]"),
    ("str_case", "{{ 'Hello World'.lower() }} {{ 'hello world'.upper() }} {{ 'hello wORLD foo-bar 3rd'.title() }} {{ 'hELLO'.capitalize() }} {{ 'hello world-foo (bar) [baz] <q>'|title }} {{ 'mIxEd'|lower }}"),
    ("str_replace_find", "{{ 'aaa'.replace('a', 'b', 2) }} {{ 'abc'.replace('', '-') }} {{ 'x'|replace('x', 'y') }} {{ 'aaaa'|replace('a', 'b', 3) }} {{ 'abcabc'.find('c') }} {{ 'abc'.find('z') }} {{ 'ab'.startswith(('x', 'a')) }} {{ 'ab'.endswith('b') }} {{ 'banana'.count('a') }} {{ 'héllo'.find('l') }}"),
    ("str_format", "{{ '{0}-{1}-{0}'.format('a', 'b') }} {{ '{x}{{}}'.format(x=1) }} {{ '{}'.format(none) }} {{ '{!r}'.format('q') }} {{ '{} {}'.format(1.0, [1]) }}"),
    ("str_unicode", "{{ 'é日本'|length }} {{ 'é日本'[1] }} {{ 'é日本'[::-1] }} {{ 'é日本'|list }} {{ 'É'.lower() }} {{ 'été'|upper }} {{ 'é日本'[-1:] }}"),
    ("str_trim", "[{{ '  x  '|trim }}|{{ 'xyx'|trim('x') }}|{{ 'a\\tb\\n'|trim }}|{{ '\u3000x\u00a0'|trim }}|{{ none|trim }}|{{ 5|trim }}]"),
    ("str_layout", "{{ 'one two  three'|wordcount }} [{{ 'abc'|center(9) }}] [{{ 'line1\\nline2\\n\\nline4'|indent(2) }}] [{{ 'a\\nb'|indent(2, true) }}] [{{ 'a\\n\\nb'|indent(2, blank=true) }}] [{{ 'x\\n'|indent }}]"),
    ("str_escape", "{{ '<a href=\"x\">&\\'</a>'|e }} {{ 'x'|safe }} {{ '<'|escape }}"),
    ("str_join_method", "{{ ', '.join(['a', 'b']) }} {{ ''.join('xyz') }} {{ 'a\\nb\\r\\nc'.splitlines() }} {{ 'abc'.isalpha() }} {{ '12'.isdigit() }} {{ ' '.isspace() }}"),
    ("str_escapes", "{{ 'a\\nb' }} {{ 'tab\\there' }} {{ '\\x41\\u00e9\\U0001F600' }} {{ 'back\\\\slash' }} {{ 'unknown \\d escape' }}"),
    # list / dict filters
    ("f_sort", "{{ [3, 1, 2]|sort }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ users|sort(attribute='age')|map(attribute='name')|list }} {{ [1, 2]|reverse|list }} {{ 'abc'|reverse }} {{ [3, 1]|sort(reverse=true) }}"),
    ("f_dictsort", "{{ {'b': 2, 'A': 1, 'c': 0}|dictsort }} {{ {'b': 2, 'a': 1}|dictsort(by='value', reverse=true) }} {{ {'x': 1, 'y': 2}|items|list }} {{ d|dictsort(true) }}"),
    ("f_first_last_join", "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ []|first }}|{{ [1, 'a', none]|join('-') }} {{ [{'a': 'x'}, {'a': 'y'}]|join(',', attribute='a') }} {{ range(3)|join }} {{ 'abc'|first }}"),
    ("f_unique_batch", "{{ ['a', 'A', 'b', 'a']|unique|list }} {{ ['a', 'A']|unique(case_sensitive=true)|list }} {{ [1, 2, 3, 4, 5, 6, 7]|batch(3, 'x')|list }} {{ [1, 2, 3]|batch(2)|list }}"),
    ("f_selectattr", "{{ users|selectattr('active')|map(attribute='name')|list }} {{ users|rejectattr('active')|map(attribute='name')|join }} {{ users|selectattr('age', 'gt', 30)|list|length }} {{ users|selectattr('nick', 'defined')|map(attribute='nick')|list }} {{ users|map(attribute='nick', default='-')|list }} {{ users|selectattr('name', 'equalto', 'bob')|first }}"),
    ("f_select", "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('even')|list }} {{ [0, 1, '', 'a']|select|list }} {{ ['a', 'b']|map('upper')|list }} {{ [-1, 2]|map('abs')|list }} {{ [1, 5, 9]|select('>', 4)|list }} {{ ['x', 'y']|select('in', 'xz')|list }}"),
    ("f_numbers", "{{ '42'|int }} {{ '4.7'|int }} {{ 'x'|int(7) }} {{ 4.7|int }} {{ '1A'|int(base=16) }} {{ '3'|float }} {{ 'a'|float }} {{ 3|float }} {{ -3.5|abs }} {{ 3.14159|round(2) }} {{ 3.5|round }} {{ 4.5|round }} {{ 3.14159|round(1, 'floor') }} {{ 3.01|round(0, 'ceil') }} {{ 7|round }} {{ true|int }}"),
    ("f_minmax_sum", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ [1, 2, 3]|sum }} {{ users|sum(attribute='age') }} {{ ['b', 'A']|min }} {{ users|map(attribute='age')|max }} {{ [1.5, 2]|sum(start=10) }}"),
    ("f_tojson", "{{ data|tojson }}\n{{ data|tojson(indent=2) }}\n{{ data|tojson(indent=4, sort_keys=true) }}\n{{ data|tojson(separators=(',', ':')) }}\n{{ 'é\"\\\\\\n\\t\\x01'|tojson }}\n{{ data|tojson(ensure_ascii=true) }}\n{{ users[0]|tojson(indent='--') }}\n{{ [1, (2, 3)]|tojson }} {{ none|tojson }} {{ 1.0|tojson }}"),
    ("f_length_string_list", "{{ [1, 2]|length }} {{ {'a': 1}|count }} {{ 'abc'|length }} {{ users|list|length }} {{ [1, [2, 3]]|string }} {{ {'a': 'b'}|string }} {{ 'x'|list }} {{ {'a': 1, 'b': 2}|list }} {{ (1, 2)|list }} {{ 5|string ~ 1 }}"),
    ("f_map_chain", "{{ range(5)|batch(2)|map('sum')|list }} {{ (users|first).name }} {{ users|map(attribute='name')|map('upper')|join('+') }} {{ users|attr('0') is defined }}"),
    ("f_repr", "{{ {'a': [1, 'b', none, true, 1.5], 'c': {'d': ()}} }} {{ [] }} {{ {} }} {{ ('x',) }} {{ ['it\\'s', 'say \"hi\"', 'both \\' \"'] }} {{ ['\\n\\t\\x01\\\\', '\\x7f'] }} {{ ['é', '\\u00a0', '\\u200b', '😀', '\\u2028'] }}"),
    # tests
    ("t_types", "{{ 1 is number }} {{ 1.0 is float }} {{ 1 is integer }} {{ true is boolean }} {{ true is integer }} {{ true is number }} {{ 'a' is string }} {{ [] is sequence }} {{ {} is mapping }} {{ none is none }} {{ x is undefined }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ range is callable }} {{ 'a' is sequence }} {{ d is sequence }} {{ none is iterable }}"),
    ("t_values", "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 'a' is in 'abc' }} {{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ 2 is ge 3 }} {{ 1 is lt 2 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ x is not defined }} {{ 1 is not string }} {{ 'a' is equalto 'a' }} {{ none is sameas none }}"),
    # statements
    ("s_macro", "{% macro m(a, b='B', c=none) %}[{{ a }}|{{ b }}|{{ c }}|{{ varargs }}|{{ kwargs }}]{% endmacro %}{{ m(1) }}{{ m(1, 2) }}{{ m(1, c=3) }}{{ m(1, 2, 3, 4, 5) }}{{ m(a='x') }}{{ m(1, z=9) }}"),
    ("s_macro_scope", "{% set g = 'G' %}{% macro show(x) %}{{ g }}{{ x }}{% set g = 'inner' %}{{ g }}{% endmacro %}{{ show(1) }}{{ g }}{% macro rec(n) %}{{ n }}{% if n > 0 %}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(3) }}"),
    ("s_call_block", "{% macro outer() %}<{{ caller() }}>{% endmacro %}{% call outer() %}inside{% endcall %}{% macro lst(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) lst([1,2]) %}[{{ x }}]{% endcall %}"),
    ("s_namespace", "{% set ns = namespace(a=1, items=[]) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.a }} {{ ns.items }} {{ ns.missing is defined }} {{ ns.a is defined }}"),
    ("s_scoping", "{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + 10 %}{{ x }},{% endfor %}{{ x }}{% if true %}{% set x = 3 %}{% endif %}{{ x }}"),
    ("s_loop_vars", "{% for i in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem|default('-') }}{{ loop.nextitem|default('-') }}{{ loop.cycle('x', 'y') }}{{ loop.depth }};{% endfor %}"),
    ("s_nested_loops", "{% for a in [1,2] %}{% for b in [3,4] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}"),
    ("s_for_filter_else", "{% for i in range(10) if i is odd %}{{ i }}{{ loop.length }},{% else %}none{% endfor %}|{% for i in [] %}x{% else %}empty{% endfor %}"),
    ("s_unpacking", "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}{% set p, q = 'xy' %}{{ q }}{{ p }}{% set t = 1, 2 %}{{ t }}"),
    ("s_break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
    ("s_set_block", "{% set s | upper %}hello {{ 'world' }}{% endset %}{{ s }}|{% set t %}  x  {% endset %}[{{ t }}]{% set u | trim | upper %} y {% endset %}[{{ u }}]"),
    ("s_filter_block", "{% filter upper %}abc{{ 'd' }}{% endfilter %}{% filter replace('a', 'b') | upper %}aaa{% endfilter %}"),
    ("s_with", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}"),
    ("s_if_chain", "{% if a %}A{% elif b %}B{% elif c %}C{% else %}D{% endif %}{% if not c %}1{% elif c == 'see' %}2{% endif %}"),
    ("s_truthiness", "{% for v in [0, 0.0, '', [], {}, none, 'x', 1, [0], -1] %}{{ 'T' if v else 'F' }}{% endfor %}"),
    ("s_index_chains", "{{ users[0].name }} {{ users[-1]['name'] }} {{ users.0.name }} {{ nested.y.z }} {{ nested['y']['z'] }} {{ d.items()|list }} {{ d.keys()|list }} {{ d.values()|list }}"),
    ("s_print", "{% print 'printed', 1 %}"),
    ("s_strftime", "{{ strftime_now('%Y-%m-%d %H:%M:%S %j %a %b %p %I %y %e') }}|{{ strftime_now('%d %B %Y') }}"),
    ("s_generated_range", "{{ range(3)|list }} {{ range(0)|list }} {{ range(10, 0, -3)|list }} {{ range(2, 5)|list }}"),
    ("s_reassign_global", "{%- set users = users[1:] if users[0]['name'] == 'ann' else users %}{{ users|length }}{% for u in users %}{{ u.name }}{% endfor %}"),
    ("s_key_membership", "{{ 'nick' in users[0] }}{{ 'nick' in users[1] }}{% for k, v in users[0]|items if k != 'age' %}{{ k }}={{ v }};{% endfor %}"),
    ("s_macro_json_types", "{%- macro t(spec) -%}{%- if spec.type == 'string' -%}str{%- elif spec.type == 'array' -%}list[{{ t(spec['items']) }}]{%- elif spec.type is defined -%}{{ spec.type }}{%- else -%}Any{%- endif -%}{%- endmacro -%}{{ t({'type': 'array', 'items': {'type': 'string'}}) }} {{ t({}) }} {{ t({'type': 'integer'}) }}"),
    ("s_generation_tag", "a{% generation %}gen {{ c }}{% endgeneration %}b"),
    ("s_content_parts", "{{ data.nested | dictsort | map('last') | map('string') | join(';') }} {{ [{'type': 'text', 'text': 'x'}, {'type': 'image'}] | selectattr('type', 'equalto', 'text') | map(attribute='text') | join('\\n') }}"),
    ("s_percent_format", "{{ '%s=%d' % ('x', 3) }} {{ '%5.2f|%-4s|%04d|%x|%r|%%' % (3.14159, 'ab', 7, 255, 'q') }} {{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }} {{ '%s' % 'solo' }} {{ '%s and %s'|format('a', 'b') }} {{ '%(n)s'|format(n=5) }} {{ '%.3s|%e|%g' % ('abcdef', 12345.678, 0.0001) }} {{ '%+d % d' % (5, 5) }}"),
    ("e_percent_args", "{{ '%s %s' % ('only one',) }}"),
    ("e_percent_extra", "{{ '%s' % (1, 2) }}"),
    ("s_macro_plain_args", "{% macro p(a, b=1) %}{{ a }}{{ b }}{% endmacro %}{{ p(1) }}{{ p(b=2, a=3) }}"),
    ("e_macro_too_many_args", "{% macro p(a) %}{{ a }}{% endmacro %}{{ p(1, 2) }}"),
    ("e_macro_unknown_kwarg", "{% macro p(a) %}{{ a }}{% endmacro %}{{ p(1, z=2) }}"),
    ("e_macro_duplicate_arg", "{% macro p(a) %}{{ a }}{% endmacro %}{{ p(1, a=2) }}"),
    # errors (both must raise)
    ("e_raise", "before{{ raise_exception('boom ' ~ 1) }}after"),
    ("e_undefined_attr", "{{ undefined_var.attr }}"),
    ("e_add_types", "{{ 1 + 'a' }}"),
    ("e_append", "{% set l = [] %}{{ l.append(2) }}"),
    ("e_update", "{{ d.update({'x': 1}) }}"),
    ("e_iterate_int", "{% for x in 5 %}{% endfor %}"),
    ("e_div_zero", "{{ 1 / 0 }}"),
    ("e_big_range", "{{ range(200000)|length }}"),
    ("e_compare_types", "{{ 'a' < 1 }}"),
    ("e_undefined_plus", "{{ undefined_var + 1 }}"),
    ("e_undefined_index", "{{ undefined_var[0] }}"),
    ("e_call_missing_method", "{{ 'abc'.nomethod() }}"),
    ("e_unpack", "{% set a, b = [1, 2, 3] %}"),
    ("e_concat_precedence", "{{ 1 ~ 2 + 3 }}"),
    ("e_not_callable", "{{ c() }}"),
    ("e_syntax_if", "{% if %}x{% endif %}"),
    ("e_syntax_unclosed", "{% if true %}unclosed"),
    ("e_syntax_stray_end", "x{% endif %}"),
    ("e_syntax_unknown_filter", "{{ 1 | nofilter }}"),
    ("e_syntax_unknown_test", "{{ 1 is notatest }}"),
    ("e_syntax_unterminated_string", "{{ 'abc }}"),
    ("e_syntax_two_exprs", "{{ a b }}"),
    ("e_syntax_unknown_tag", "{% frobnicate %}"),
    ("e_syntax_empty_var", "{{ }}"),
    ("e_syntax_bad_paren", "{{ (1 + 2 }}"),
    ("e_syntax_unclosed_comment", "{# never closed"),
    ("e_syntax_unclosed_var", "{{ 1 + "),
]


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snippets.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"vars": VARS, "snippets": [{"id": i, "template": t} for i, t in S]}, f,
                  ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
