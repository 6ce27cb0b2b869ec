"""Chat templates from Python: a template that runs too long or builds too much ends with a clear
exception (jinja2 runs two nested range(100000) loops for hours and fills memory doubling a
string; transformers then raises MemoryError), and message content is never template code."""
from __future__ import annotations

import json

import pytest

import tokenkit

RUNAWAY = {
    "nested loops": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                     "step budget"),
    "doubling": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"
                 "{{ ns.s }}", "built a string of"),
    "doubling with replace": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
                              "{% set ns.s = ns.s.replace('a', ns.s) %}{% endfor %}{{ ns.s }}", "built a string of"),
    "output": ("{% for i in range(100000) %}" + "x" * 1000 + "{% endfor %}", "bytes of output (the output budget)"),
}
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    d = tmp_path_factory.mktemp("chat-budgets")
    t = tokenkit.Tokenizer(tokenkit.models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
    t.pre_tokenizer = tokenkit.pre_tokenizers.Whitespace()
    t.save(str(d / "tokenizer.json"))
    cfg = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]",
           "chat_template": "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"}
    (d / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return tokenkit.AutoTokenizer.from_pretrained(str(d))


@pytest.mark.parametrize("case", sorted(RUNAWAY))
def test_runaway_template_raises_a_clear_error(tok, case):
    source, want = RUNAWAY[case]
    with pytest.raises(Exception, match="chat template stopped: .*" + want.replace("(", r"\(").replace(")", r"\)")):
        tok.apply_chat_template(MESSAGES, chat_template=source, tokenize=False)
    # the tokenizer is unharmed: the next render works
    assert tok.apply_chat_template(MESSAGES, tokenize=False) == "<user>hi\n"


def test_limits_of_range_and_recursion_hold(tok):
    with pytest.raises(Exception, match="range"):
        tok.apply_chat_template(MESSAGES, chat_template="{% for i in range(10**9) %}{% endfor %}", tokenize=False)
    with pytest.raises(Exception, match="recursion"):
        tok.apply_chat_template(MESSAGES, chat_template="{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
                                tokenize=False)


def test_message_content_is_printed_verbatim(tok):
    content = "{{ 7 * 7 }}{% for x in range(10**9) %}{% endfor %}{{ raise_exception('no') }}"
    assert tok.apply_chat_template([{"role": "user", "content": content}], tokenize=False) == f"<user>{content}\n"
