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
    let want = ["1.0", "1e+16", "1000000000000000.0", "1e+20", "0.0001", "1e-05", "123456789.123", "-0.0",
        "0.3333333333333333", "2.5e-10", "1.5e+300"];
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
    assert_eq!(got, "{\n  \"a\": [\n    1,\n    {\n      \"é\": \"x\\n\\u0001\"\n    }\n  ],\n  \"e\": [],\n  \"o\": {},\n  \"f\": 1e+16\n}");
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
