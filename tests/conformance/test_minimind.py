"""`tokenkit train --recipe minimind` against the Minimind project's own recipe run with HF
tokenizers (0.23.3) and loaded with transformers.

The reference side is the recipe as Minimind's training script writes it: a BPE model, the
ByteLevel pre-tokenizer without prefix space, `BpeTrainer(vocab_size=6400, special_tokens=
["<|endoftext|>", "<|im_start|>", "<|im_end|>"], initial_alphabet=ByteLevel.alphabet())`,
`train_from_iterator` over the `text` field of a JSONL corpus, then the ByteLevel decoder,
`tokenizer.save(...)` and `tokenizer.model.save(dir)`. Checks: tokenizer.json identical,
vocab.json and merges.txt byte-identical, and the directory tokenkit writes loads in
transformers' AutoTokenizer with the configuration the recipe asks for (special ids 0/1/2,
bos/eos/pad/unk, model_max_length 32768, PreTrainedTokenizerFast) and a chat template that
renders the ChatML turns, tool calls and the empty think block.
"""
from __future__ import annotations

import hashlib
import json
import random
import warnings
from pathlib import Path

import pytest

import harness as h

GROUP = "train"
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    if not h.corpus_files():
        pytest.skip("no corpora")
    out = tmp_path_factory.mktemp("minimind") / "pretrain.jsonl"
    rows = []
    for rel in h.corpus_rels(("en/pride_and_prejudice.txt", "zh/lunyu.txt", "ja/wagahai.txt", "code/cpython-3.11-stdlib.py.txt")):
        lines = h.corpus_lines(rel)[:1500]
        for i in range(0, len(lines), 10):  # documents of 10 lines, as in a pretraining JSONL
            rows.append({"text": "".join(lines[i:i + 10])})
    rows.append({"text": "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>"})
    out.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return out


def reference(corpus: Path, out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=6400, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    texts = (json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines())
    tok.train_from_iterator(texts, trainer=trainer)
    tok.decoder = decoders.ByteLevel()
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    tok.model.save(str(out))


def test_minimind_recipe(corpus, tmp_path):
    ours, ref = tmp_path / "ours", tmp_path / "ref"
    h.run_cli(["train", "-q", "--recipe", "minimind", "-o", str(ours), str(corpus)], b"")
    reference(corpus, ref)
    checks = {
        "tokenizer.json": json.loads((ours / "tokenizer.json").read_text()) == json.loads((ref / "tokenizer.json").read_text()),
        "vocab.json": (ours / "vocab.json").read_bytes() == (ref / "vocab.json").read_bytes(),
        "merges.txt": (ours / "merges.txt").read_bytes() == (ref / "merges.txt").read_bytes(),
    }

    transformers = pytest.importorskip("transformers")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = transformers.AutoTokenizer.from_pretrained(str(ours))
    cfg = json.loads((ours / "tokenizer_config.json").read_text())
    checks["config"] = (cfg["tokenizer_class"] == "PreTrainedTokenizerFast" and tok.model_max_length == 32768
                        and (tok.bos_token, tok.eos_token, tok.pad_token, tok.unk_token)
                        == ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|endoftext|>")
                        and [tok.convert_tokens_to_ids(s) for s in SPECIALS] == [0, 1, 2] and len(tok) == 6400)
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "content": "{\"temp\": 21}"},
        {"role": "assistant", "content": "It is 21°C."},
        {"role": "user", "content": "Thanks!"},
    ]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)
    checks["chat template"] = (text.startswith("<|im_start|>system\nYou are helpful.") and "<tool_call>" in text
                               and "<tool_response>" in text and text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n"))
    ids = tok(text)["input_ids"]
    checks["round trip"] = tok.decode(ids) == text and ids.count(1) == text.count("<|im_start|>")
    o = h.Outcome(identical=sum(checks.values()), total=len(checks))
    h._finish(GROUP, "minimind-recipe", "jsonl", "tokenizer.json/vocab.json/merges.txt/config vs Minimind's HF recipe", o)
    assert all(checks.values()), {k: v for k, v in checks.items() if not v}


# ---- the recipe's chat template is Minimind's own -------------------------------------------

# sha256 of the chat template Minimind publishes in its tokenizer_config.json (the file
# ../shared/fixtures/minimind/chat_template.jinja); the template is in no registry package, so on a
# machine without ../shared this pin is what ties the recipe's template to Minimind's.
MINIMIND_TEMPLATE_SHA256 = "4f57494cd38c0e4e50e27f4632fb6907414a68cc48d0bbc48da5449c596c69fa"
TINY_CORPUS = [
    "The quick brown fox jumps over the lazy dog.", "多少钱？一百块。", "def f(x):\n    return x + 1",
    "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>", "It is 21°C in Paris.",
] * 20
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "add", "description": "a + b",
                                      "parameters": {"type": "object", "properties": {"a": {"type": "number"},
                                                                                      "b": {"type": "number"}}}}},
]
OPTIONS = [
    {},
    {"add_generation_prompt": True},
    {"add_generation_prompt": True, "kwargs": {"enable_thinking": False}},
    {"add_generation_prompt": True, "kwargs": {"enable_thinking": True}},
    {"tools": TOOLS},
    {"tools": TOOLS, "add_generation_prompt": True, "kwargs": {"enable_thinking": False}},
]


def reference_template(recipe_template: str) -> str:
    """Minimind's published template: the shared fixture when present; without ../shared, the
    recipe's own text, which must then hash to the pinned sha256 of Minimind's file."""
    for p in (h.fixture_path("minimind/chat_template.jinja"),
              h.REPO.parent / "shared" / "fixtures" / "minimind" / "chat_template.jinja"):
        if p is not None and p.is_file():
            text = p.read_text(encoding="utf-8")
            assert hashlib.sha256(text.encode()).hexdigest() == MINIMIND_TEMPLATE_SHA256, f"{p} is not Minimind's template"
            return text
    assert hashlib.sha256(recipe_template.encode()).hexdigest() == MINIMIND_TEMPLATE_SHA256, \
        "the recipe's chat template is not Minimind's published one (sha256 differs)"
    return recipe_template


def _call(name, args, **extra):
    fn = {"name": name, "arguments": args}
    return {"type": "function", "function": fn, **extra}


def minimind_conversations() -> list[list[dict]]:
    """Hand-written cases for every branch of the template, then seeded random mixes."""
    u = {"role": "user", "content": "What's the weather in Paris?"}
    s = {"role": "system", "content": "You are terse."}
    a = {"role": "assistant", "content": "It is 21°C."}
    calls = {"role": "assistant", "content": "", "tool_calls": [_call("get_weather", {"city": "Paris"})]}
    t1, t2 = {"role": "tool", "content": "{\"temp\": 21}"}, {"role": "tool", "content": "sunny"}
    convs = [
        [u], [s, u], [s, u, a], [u, a, u], [s], [a], [t1], [u, calls, t1, a], [s, u, calls, t1, t2, a, u],
        [u, {"role": "assistant", "content": "Let me check.", "tool_calls": [_call("get_weather", "{\"city\": \"Paris\"}"),
                                                                           _call("add", {"a": 1, "b": 2.5})]}, t1, t2],
        [u, {"role": "assistant", "content": None, "tool_calls": [{"name": "add", "arguments": {"a": 1}}]}, t1],
        [u, {"role": "assistant", "content": "x", "reasoning_content": "think first"}],
        [s, u, {"role": "system", "content": "second system"}, a],
        [{"role": "user", "content": [{"type": "text", "text": "blocks"}]}, a],
        [{"role": "user", "content": "<tool_response>\nold\n</tool_response>"}, a],
        [{"role": "user", "content": "{{ 7 * 7 }}{% for x in range(10**9) %}{% endfor %}"}],
        [{"role": "user", "content": "多少钱？\n\n  spaces  "}, {"role": "assistant", "content": "一百块。"}],
        [{"role": "user", "content": ""}],
        [s, t1, t2, u],
    ]
    rng = random.Random(16)
    texts = ["Hi!", "", "line1\nline2", "多少钱？", "{\"k\": [1, 2]}", "<think>\nr\n</think>\n\nanswer", "  padded  ",
             "Ünïcödé 😀", "{{ x }}", "\\n literal"]
    for _ in range(150):
        conv = []
        if rng.random() < 0.4:
            conv.append({"role": "system", "content": rng.choice(texts)})
        for _ in range(rng.randint(1, 7)):
            role = rng.choice(["user", "user", "assistant", "assistant", "tool", "system"])
            m = {"role": role, "content": rng.choice(texts)}
            if role == "assistant" and rng.random() < 0.4:
                m["tool_calls"] = [_call(rng.choice(["get_weather", "add"]),
                                         rng.choice([{"city": rng.choice(texts)}, {"a": rng.randint(0, 9), "b": 0.5},
                                                     "{\"raw\": true}", {}]))
                                   for _ in range(rng.randint(1, 3))]
            conv.append(m)
        convs.append(conv)
    return convs


def _transformers_render(tok, template: str, req: dict):
    try:
        return {"text": tok.apply_chat_template(req["messages"], tools=req.get("tools"), chat_template=template,
                                                add_generation_prompt=req.get("add_generation_prompt", False),
                                                tokenize=False, **req.get("kwargs", {}))}
    except Exception:  # noqa: BLE001 - where the reference fails, tokenkit must fail too
        return {"error": True}


def test_minimind_recipe_template_renders_like_minimind(tmp_path):
    """The recipe's tokenizer_config.json carries Minimind's template byte for byte, and every
    render through `tokenkit chat --messages` (the interface line), `tokenkit chat --jsonl`,
    `--chat-template FILE` and Python's apply_chat_template equals transformers rendering
    Minimind's file."""
    transformers = pytest.importorskip("transformers")
    import tokenkit

    corpus = tmp_path / "pretrain.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in TINY_CORPUS), encoding="utf-8")
    ours = tmp_path / "ours"
    h.run_cli(["train", "-q", "--recipe", "minimind", "-o", str(ours), str(corpus)], b"")
    recipe_template = json.loads((ours / "tokenizer_config.json").read_text(encoding="utf-8"))["chat_template"]
    reference = reference_template(recipe_template)
    assert recipe_template == reference, "the recipe's chat_template is not Minimind's"
    ref_file = tmp_path / "minimind_chat_template.jinja"
    ref_file.write_text(reference, encoding="utf-8")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.AutoTokenizer.from_pretrained(str(ours))
    reqs = [{"messages": c, **o} for c in minimind_conversations() for o in OPTIONS]
    expected = [_transformers_render(hf, reference, q) for q in reqs]
    inputs = [json.dumps(q, ensure_ascii=False)[:120] for q in reqs]
    print(f"minimind: {sum('error' in e for e in expected)} of {len(reqs)} requests raise in transformers")

    # tokenkit chat --jsonl, on the recipe's directory and with --chat-template FILE
    for name, extra in (("recipe config", []), ("--chat-template", ["--chat-template", str(ref_file)])):
        r = h.run_cli(["chat", "-t", str(ours), "--jsonl", *extra], h.to_jsonl(reqs))
        got = [{"error": True} if "error" in g else {"text": g["text"]} for g in h.parse_jsonl(r.stdout, len(reqs), "chat")]
        h.compare("chat", f"minimind ({name})", "conversations", "render --jsonl", inputs, expected, got)

    # Python: tokenkit.AutoTokenizer(...).apply_chat_template
    tk = tokenkit.AutoTokenizer.from_pretrained(str(ours))
    got = []
    for q in reqs:
        try:
            got.append({"text": tk.apply_chat_template(q["messages"], tools=q.get("tools"), tokenize=False,
                                                       add_generation_prompt=q.get("add_generation_prompt", False),
                                                       **q.get("kwargs", {}))})
        except Exception:  # noqa: BLE001
            got.append({"error": True})
    h.compare("chat", "minimind (python)", "conversations", "apply_chat_template", inputs, expected, got)

    # The interface line, one process per request: every conversation, option sets in turn.
    picked = [(i, q) for i, q in enumerate(reqs) if i % len(OPTIONS) == (i // len(OPTIONS)) % len(OPTIONS)]
    got = []
    for i, q in picked:
        f = tmp_path / "messages.json"
        f.write_text(json.dumps({"messages": q["messages"], **({"tools": q["tools"]} if "tools" in q else {})},
                                ensure_ascii=False), encoding="utf-8")
        args = ["chat", "-t", str(ours), "--messages", str(f)]
        args += ["--add-generation-prompt"] if q.get("add_generation_prompt") else []
        args += ["--kwargs", json.dumps(q["kwargs"])] if "kwargs" in q else []
        r = h.run_cli(args, b"", check=False)
        got.append({"text": r.stdout.decode("utf-8")} if r.returncode == 0 else {"error": True})
    h.compare("chat", "minimind (chat --messages)", "conversations", "render", [inputs[i] for i, _ in picked],
              [expected[i] for i, _ in picked], got)


def test_recipe_takes_a_chat_template_file(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in TINY_CORPUS[:5]), encoding="utf-8")
    custom = tmp_path / "custom.jinja"
    custom.write_text("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}", encoding="utf-8")
    out = tmp_path / "out"
    h.run_cli(["train", "-q", "--recipe", "minimind", "--chat-template", str(custom), "-o", str(out), str(corpus)], b"")
    cfg = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert cfg["chat_template"] == custom.read_text(encoding="utf-8")
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    assert h.run_cli(["chat", "-t", str(out), "--messages", str(msgs)], b"").stdout == b"[user] hi\n"

    # A template that does not compile, a missing file, or --chat-template without a recipe:
    # refused before training, nothing written.
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for %}", encoding="utf-8")
    for args, want in (([str(bad)], "does not compile"), ([str(tmp_path / "missing.jinja")], "cannot read")):
        r = h.run_cli(["train", "-q", "--recipe", "minimind", "--chat-template", *args, "-o", str(tmp_path / "o2"),
                       str(corpus)], b"", check=False)
        assert r.returncode != 0 and want in r.stderr.decode(), r.stderr.decode()
        assert not (tmp_path / "o2").exists()
    r = h.run_cli(["train", "-q", "--chat-template", str(custom), "-o", str(tmp_path / "o3.json"), str(corpus)], b"",
                  check=False)
    assert r.returncode != 0 and "--recipe" in r.stderr.decode(), r.stderr.decode()
