//! Expected values are the output of transformers 5.23.0's renderer (jinja2 3.1.6), obtained
//! with `transformers.utils.chat_template_utils.render_jinja_template` / Python's `repr`.

use super::*;
use serde_json::json;

fn render_kw(src: &str, messages: Json, kwargs: Json) -> Result<String> {
    let opts = ChatOptions { kwargs: kwargs.as_object().cloned().unwrap_or_default(), ..ChatOptions::default() };
    ChatTemplate::new(src)?.render(&messages, &opts)
}

#[test]
fn python_float_repr() {
    let got: Vec<String> = [1.0, 1e16, 1e15, 1e20, 0.0001, 1e-5, 123456789.123, -0.0, 1.0 / 3.0, 2.5e-10, 1.5e300]
        .iter()
        .map(|f| pyjson::py_float_repr(*f))
        .collect();
    // Python: [repr(f) for f in [...]]
    let want = [
        "1.0",
        "1e+16",
        "1000000000000000.0",
        "1e+20",
        "0.0001",
        "1e-05",
        "123456789.123",
        "-0.0",
        "0.3333333333333333",
        "2.5e-10",
        "1.5e+300",
    ];
    assert_eq!(got, want);
}

#[test]
fn trim_blocks_and_python_values() {
    let t = "{% for m in messages %}\n  {% if m.role == 'user' %}\n<{{ m.role }}>{{ m.content }}\n  {% endif %}\n{% endfor %}\n{{ x }}|{{ n }}|{{ b }}|{{ d }}|{{ f }}\n";
    let msgs = json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]);
    let got = render_kw(t, msgs, json!({"x": null, "n": 3, "b": false, "d": {"k": [1, "it's", null]}, "f": 0.1})).unwrap();
    assert_eq!(got, "<user>hi\nNone|3|False|{'k': [1, \"it's\", None]}|0.1");
}

#[test]
fn tojson_like_transformers_and_reasoning_aliases() {
    let t = "{{ messages | tojson }}|{{ messages[0] | tojson(indent=2) }}|{{ 'ü😀' | tojson(ensure_ascii=true) }}|{{ {'b':1,'a':2} | tojson(sort_keys=true, separators=(',', ':')) }}";
    let got = render_kw(t, json!([{"role": "user", "content": "é\"\\", "reasoning": "r"}]), json!({})).unwrap();
    let want = "[{\"thinking\": \"r\", \"role\": \"user\", \"content\": \"é\\\"\\\\\", \"reasoning\": \"r\", \"reasoning_content\": \"r\"}]|{\n  \"thinking\": \"r\",\n  \"role\": \"user\",\n  \"content\": \"é\\\"\\\\\",\n  \"reasoning\": \"r\",\n  \"reasoning_content\": \"r\"\n}|\"\\u00fc\\ud83d\\ude00\"|{\"a\":2,\"b\":1}";
    assert_eq!(got, want);
}

#[test]
fn tojson_indent_nested_and_empty() {
    // Python: json.dumps({"a":[1,{"é":"x\n\u0001"}],"e":[],"o":{},"f":1e16}, ensure_ascii=False, indent=2)
    let t = "{{ v | tojson(indent=2) }}";
    let got = render_kw(t, json!([{"role": "user"}]), json!({"v": {"a": [1, {"é": "x\n\u{1}"}], "e": [], "o": {}, "f": 1e16}})).unwrap();
    assert_eq!(
        got,
        "{\n  \"a\": [\n    1,\n    {\n      \"é\": \"x\\n\\u0001\"\n    }\n  ],\n  \"e\": [],\n  \"o\": {},\n  \"f\": 1e+16\n}"
    );
}

#[test]
fn generation_tags_render_their_body() {
    let t = "{% generation %}A{% endgeneration %}{%- generation -%}  B  {%- endgeneration %}\nC";
    assert_eq!(render_kw(t, json!([{"role": "user", "content": "x"}]), json!({})).unwrap(), "ABC");
}

#[test]
fn null_fields_are_dropped_and_empty_conversations_rejected() {
    let t = "{{ messages[0].content is defined }}";
    assert_eq!(render_kw(t, json!([{"role": "user", "content": null}]), json!({})).unwrap(), "False");
    let e = render_kw(t, json!([]), json!({})).unwrap_err().to_string();
    assert!(e.contains("empty conversation"), "{e}");
    let e = render_kw(t, json!({"role": "user"}), json!({})).unwrap_err().to_string();
    assert!(e.contains("JSON array"), "{e}");
}

#[test]
fn raise_exception_and_errors_are_clear() {
    let t = "{% if messages[0].role != 'system' %}{{ raise_exception('first message must be system') }}{% endif %}";
    let e = render_kw(t, json!([{"role": "user", "content": "x"}]), json!({})).unwrap_err().to_string();
    assert!(e.contains("the template raised an exception: first message must be system"), "{e}");
    let e = ChatTemplate::new("{% for x in %}").unwrap_err().to_string();
    assert!(e.starts_with("chat template does not compile"), "{e}");
    let e = render_kw("{{ messages | tojson(1, 2, 3, 4, 5) }}", json!([{"role": "user"}]), json!({})).unwrap_err();
    assert!(e.to_string().contains("tojson"), "{e}");
}

#[test]
fn continue_final_message_cuts_after_the_text() {
    let t = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}";
    let opts = ChatOptions { continue_final_message: Some("content".into()), ..ChatOptions::default() };
    let msgs = json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, I"}]);
    let got = ChatTemplate::new(t).unwrap().render(&msgs, &opts).unwrap();
    assert_eq!(got, "<user>Hi</user>\n<assistant>Hello, I");
    let both = ChatOptions { add_generation_prompt: true, ..opts };
    assert!(ChatTemplate::new(t).unwrap().render(&msgs, &both).is_err());
}

#[test]
fn pycompat_methods_and_namespace() {
    let t = "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }} {{ messages[0].content.strip().split(' ') }} {{ messages[0].get('x', 'dflt') }} {% for k, v in messages[0].items() %}{{ k }};{% endfor %} {{ [1, none] | join(',') }} {{ none | string }} {{ [1, 2] | trim }}";
    let got = render_kw(t, json!([{"role": "user", "content": "  a b  "}, {"role": "x"}]), json!({})).unwrap();
    assert_eq!(got, "2 ['a', 'b'] dflt role;content; 1,None None [1, 2]");
}

/// Control flow of every kind through the instrumented instructions (jump targets are remapped
/// when literal text and checks are inserted). Expected: transformers 5.23.0 / jinja2 3.1.6.
#[test]
fn instrumented_control_flow_renders_as_jinja2() {
    const T: &str = r#"{%- macro wrap(tag) -%}<{{ tag }}>{{ caller() }}</{{ tag }}>{%- endmacro -%}
{%- macro fact(n) -%}{% if n <= 1 %}1{% else %}{{ n * (fact(n - 1) | int) }}{% endif %}{%- endmacro -%}
{% set ns = namespace(acc='', n=0) %}
{% for m in messages %}
  {% if m.role == 'skip' %}{% continue %}{% endif %}
  {% if loop.index > 3 %}{% break %}{% endif %}
  {% call wrap(m.role) %}{{ m.content ~ '!' }}{{ loop.cycle('a', 'b') }}{% endcall %}
  {% set ns.acc = ns.acc + m.role[:1] %}{% set ns.n = ns.n + 1 %}
{% else %}none
{% endfor %}
{% set block %}B{{ ns.n * 2 }}{% endset %}
|{{ ns.acc }}|{{ block }}|{{ fact(5) }}|{{ [1, 2] + [3] }}|{{ 'ab' * 3 }}|{{ 'x' | replace('x', 'yz') }}|{{ 'A {} {}'.format(1, 'b') }}|{{ '%s-%s' | format(1, 2) }}|{{ 'a\nb' | indent(2, true) }}
{% for item in tree recursive %}[{{ item.name }}{% if item.children %}{{ loop(item.children) }}{% endif %}]{% endfor %}
{{ '-'.join(['p', 'q']) }}{{ 'r s'.replace(' ', '__') }}{% if not messages %}x{% elif messages|length > 10 %}y{% else %}z{% endif %}
"#;
    let msgs = json!([{"role": "user", "content": "u1"}, {"role": "skip", "content": "s"}, {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "{{ 7 * 7 }}{% for %}"}, {"role": "user", "content": "late"}]);
    let tree = json!([{"name": "r", "children": [{"name": "c1", "children": []}, {"name": "c2", "children": [{"name": "g"}]}]}]);
    let got = render_kw(T, msgs, json!({"tree": tree})).unwrap();
    assert_eq!(
        got,
        "<user>u1!a</user><assistant>a1!a</assistant>|ua|B4|120|[1, 2, 3]|ababab|yz|A 1 b|1-2|  a\n  b\n[r[c1][c2[g]]]p-qr__sz"
    );
}

#[test]
fn message_content_with_template_syntax_is_printed_verbatim() {
    let t = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ m.content | trim }}{% endfor %}";
    let content = "{{ 7 * 7 }}{% for x in range(10**9) %}{% endfor %}{{ raise_exception('no') }}";
    let got = render_kw(t, json!([{"role": "user", "content": content}]), json!({})).unwrap();
    assert_eq!(got, format!("<user>{content}{content}"));
}

fn limited(max_steps: u64, max_output_bytes: usize) -> ChatLimits {
    ChatLimits { max_steps, max_output_bytes }
}

fn render_limited(src: &str, limits: ChatLimits, messages: Json) -> Result<String> {
    ChatTemplate::with_limits(src, limits)?.render(&messages, &ChatOptions::default())
}

#[test]
fn step_budget_stops_long_loops_and_recursion() {
    let user = json!([{"role": "user", "content": "x"}]);
    let nested = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}done";
    let e = render_limited(nested, limited(200_000, 1 << 20), user.clone()).unwrap_err().to_string();
    assert!(e.contains("ran more than 200000 steps (the step budget)"), "{e}");
    // Exponential recursion that stays under the depth limit.
    let fork = "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}";
    let e = render_limited(fork, limited(200_000, 1 << 20), user.clone()).unwrap_err().to_string();
    assert!(e.contains("step budget"), "{e}");
    // The same loops, small enough, finish; so does a render whose steps are just under the budget.
    let small = "{% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}done";
    assert_eq!(render_limited(small, limited(1_000_000, 1 << 20), user.clone()).unwrap(), "done");
    // The step budget grows with the input: a conversation of 20000 short messages renders in
    // more steps than the configured 200000.
    let many: Vec<Json> = (0..20000).map(|i| json!({"role": "user", "content": format!("m{i}")})).collect();
    let chatml =
        "{% for m in messages %}{% if m.role == 'user' %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}";
    assert!(render_limited(chatml, limited(200_000, 1 << 20), json!(many)).unwrap().ends_with("m19999<|im_end|>\n"));
    // minijinja's own limits still hold.
    let e = render_limited("{% for i in range(10**9) %}{% endfor %}", ChatLimits::default(), user.clone()).unwrap_err();
    assert!(e.to_string().contains("range"), "{e}");
    let deep = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
    let e = render_limited(deep, ChatLimits::default(), user).unwrap_err().to_string();
    assert!(e.contains("recursion"), "{e}");
}

#[test]
fn value_budget_stops_strings_that_keep_growing() {
    let user = json!([{"role": "user", "content": "ab"}]);
    let lim = limited(1_000_000, 1 << 20);
    let loop64 = |body: &str| {
        format!("{{% set ns = namespace(s='ab', l=[1]) %}}{{% for i in range(64) %}}{body}{{% endfor %}}{{{{ ns.s | length }}}}")
    };
    for body in [
        "{% set ns.s = ns.s + ns.s %}",
        "{% set ns.s = ns.s ~ ns.s %}",
        "{% set ns.s = ns.s * 2 %}",
        "{% set ns.s = ns.s | replace('a', ns.s) %}",
        "{% set ns.s = ns.s.replace('a', ns.s) %}",
        "{% set ns.s = '%s%s' | format(ns.s, ns.s) %}",
        "{% set ns.s = '{}{}'.format(ns.s, ns.s) %}",
        "{% set ns.s = ns.s.join([ns.s, ns.s]) %}",
        "{% set ns.s = [ns.s, ns.s] | join %}",
        "{% set ns.s = [ns.s, ns.s] | tojson %}",
        "{% set ns.s = [ns.s, ns.s] | string %}",
        "{% set ns.l = ns.l + ns.l %}{% set ns.s = ns.l | tojson %}",
    ] {
        let e = render_limited(&loop64(body), lim, user.clone()).unwrap_err().to_string();
        assert!(e.starts_with("chat template stopped: the chat template built"), "{body}: {e}");
    }
    // Doubling through macro arguments (no operator result is ever stored).
    let rec = "{% macro f(s, n) %}{% if n > 0 %}{{ f(s + s, n - 1) }}{% else %}{{ s | length }}{% endif %}{% endmacro %}{{ f('ab', 60) }}";
    assert!(render_limited(rec, lim, user.clone()).unwrap_err().to_string().contains("built a string"));
    // Arguments that would allocate far more than the budget at once.
    for t in [
        "{{ 'a' | indent(10**12) }}",
        "{{ messages | tojson(indent=10**12) }}",
        "{{ ([1] * 10**9) | tojson }}",
        "{{ ','.join([messages[0].content] * 10**9) }}",
        "{{ [messages[0].content] * 10**9 }}",
    ] {
        let e = render_limited(t, lim, user.clone()).unwrap_err().to_string();
        assert!(e.contains("chat template stopped"), "{t}: {e}");
    }
    // Strings below the budget are fine.
    let ok = "{% set ns = namespace(s='ab') %}{% for i in range(10) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}";
    assert_eq!(render_limited(ok, lim, user).unwrap(), "2048");
}

#[test]
fn output_budget_counts_literal_text_and_values_and_scales_with_the_input() {
    let lim = limited(10_000_000, 1 << 20);
    let user = json!([{"role": "user", "content": "x"}]);
    let raw = format!("{{% for i in range(100000) %}}{}{{% endfor %}}", "z".repeat(100));
    let e = render_limited(&raw, lim, user.clone()).unwrap_err().to_string();
    assert!(e.contains("more than 1048576 bytes of output (the output budget)"), "{e}");
    let printed = "{% for i in range(100000) %}{{ messages }}{% endfor %}";
    assert!(render_limited(printed, lim, user).unwrap_err().to_string().contains("output budget"));
    // A conversation larger than the budget still renders: at least 4x the input is allowed.
    let big = "y".repeat(3 << 20);
    let t = "{% for m in messages %}{{ m.content }}{{ m.content }}{% endfor %}";
    assert_eq!(render_limited(t, lim, json!([{"role": "user", "content": big}])).unwrap().len(), 6 << 20);
}

#[test]
fn value_budget_bounds_the_total_of_built_strings() {
    // Each string is within the single-value budget; together they pass TOTAL_FACTOR times it.
    let lim = limited(10_000_000, 1 << 20);
    let content = "c".repeat(600_000); // input ~600 KB: the budget is 4x that, the total 32x the budget
    let t = |n: usize| format!("{{% for i in range({n}) %}}{{% set x = messages[0].content ~ i %}}{{% endfor %}}ok");
    let msgs = json!([{"role": "user", "content": content}]);
    assert_eq!(render_limited(&t(100), lim, msgs.clone()).unwrap(), "ok");
    let e = render_limited(&t(200), lim, msgs).unwrap_err().to_string();
    assert!(e.contains("bytes of strings in total (32 times the output budget)"), "{e}");
}
