"""Chat templates: `tokenkit chat --jsonl` against transformers' `apply_chat_template`.

Every template (hand-written ones in data/chat modelled on ChatML/Qwen2.5 with tools, Llama 3.1
with bos and date, Mistral with raise_exception on role alternation, Gemma, a Python-semantics
stress template; the Minimind template tokenkit writes; the real Llama-3 and Qwen3 templates
from the registry fixtures) is rendered over every conversation in data/chat/conversations.json
(system, multi-turn, tool calls with dict/string arguments, parallel calls, tool responses,
reasoning, content blocks, unicode, bad alternation, empty) × option sets (generation prompt,
tools, enable_thinking, date_string, continue_final_message). Both sides load the same
directory (tokenizer.json + tokenizer_config.json); the text must be identical, and where
transformers raises, tokenkit must report an error. Token ids are compared where the template's
special tokens are in the vocabulary.

A second test trains a small Minimind-layout tokenizer with HF, lets tokenkit write its
tokenizer_config.json/special_tokens_map.json, and checks that `AutoTokenizer.from_pretrained`
loads it (special ids 0/1/2, same rendering, same ids, decode round trip).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

import harness as h

os.environ["TZ"] = "UTC"  # strftime_now reads local time in both; pin the zone for the CLI subprocesses
time.tzset()

DATA = Path(__file__).parent / "data" / "chat"
CONV = json.loads((DATA / "conversations.json").read_text(encoding="utf-8"))
TOOLS = CONV["tools"]
CONVERSATIONS = CONV["conversations"]

# name -> (template file in data/chat, special tokens for tokenizer_config.json)
HANDWRITTEN = {
    "chatml_tools": ("chatml_tools.jinja", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}),
    "llama31_tools": ("llama31_tools.jinja", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    "mistral_alternating": ("mistral_alternating.jinja", {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}),
    "gemma_style": ("gemma_style.jinja", {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>",
                                          "image_token": "<image_soft_token>"}),
    "python_values": ("python_values.jinja", {"bos_token": "<s>", "eos_token": "</s>"}),
}
# name -> registry tokenizer_config.json (real templates)
REAL = {"llama3": "registry/llama3/tokenizer_config.json", "qwen3": "registry/qwen3/tokenizer_config.json"}
ALL = list(HANDWRITTEN) + ["minimind"] + [f"real:{n}" for n in REAL]
# templates whose special tokens are all in the llama3 vocabulary: compare ids too
IDS_TOO = {"llama31_tools", "real:llama3"}

OPTION_SETS = [
    {},
    {"add_generation_prompt": True},
    {"tools": TOOLS},
    {"tools": TOOLS, "add_generation_prompt": True},
    {"add_generation_prompt": True, "kwargs": {"enable_thinking": False}},
    {"add_generation_prompt": True, "kwargs": {"enable_thinking": True, "date_string": "05 Mar 2025", "extra": "E"}},
    {"continue_final_message": True},
]


def _base_tokenizer_json() -> Path:
    p = h.fixture_path("registry/llama3/tokenizer.json")
    if p is None:
        pytest.skip("registry/llama3/tokenizer.json missing (run scripts/fetch_fixtures.py)")
    return p


def _template_dir(name: str, work: Path) -> Path:
    d = work / f"chat-{name.replace(':', '_')}"
    if d.exists():
        return d
    tmp = work / f"chat-{name.replace(':', '_')}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy(_base_tokenizer_json(), tmp / "tokenizer.json")
    if name in HANDWRITTEN:
        file, special = HANDWRITTEN[name]
        cfg = {"tokenizer_class": "PreTrainedTokenizerFast", **special,
               "chat_template": (DATA / file).read_text(encoding="utf-8")}
        (tmp / "tokenizer_config.json").write_text(json.dumps(cfg, ensure_ascii=False, indent=2), encoding="utf-8")
    elif name == "minimind":
        # tokenkit writes the config (the llama3 vocabulary lacks the Minimind ids, so write it
        # into a directory without tokenizer.json first, then add one)
        (tmp / "tokenizer.json").unlink()
        h.run_cli(["chat", "-t", str(tmp), "--write-minimind-config"], b"")
        shutil.copy(_base_tokenizer_json(), tmp / "tokenizer.json")
    else:
        src = h.fixture_path(REAL[name.split(":", 1)[1]])
        if src is None:
            pytest.skip(f"{REAL[name.split(':', 1)[1]]} missing (run scripts/fetch_fixtures.py)")
        shutil.copy(src, tmp / "tokenizer_config.json")
    os.replace(tmp, d)
    return d


def _requests():
    reqs = []
    for conv_name, messages in CONVERSATIONS.items():
        for opts in OPTION_SETS:
            reqs.append((conv_name, {"messages": messages, **opts}))
    return reqs


def _hf_render(tok, req: dict, with_ids: bool):
    kwargs = dict(req.get("kwargs", {}))
    args = dict(tools=req.get("tools"), add_generation_prompt=req.get("add_generation_prompt", False),
                continue_final_message=req.get("continue_final_message", False), **kwargs)
    try:
        text = tok.apply_chat_template(req["messages"], tokenize=False, **args)
    except Exception as e:  # noqa: BLE001 - any failure of the reference is an expected error
        return {"error": True}, f"{type(e).__name__}: {e}"
    out = {"text": text}
    if with_ids:
        out["ids"] = tok.encode(text, add_special_tokens=False)
    return out, None


@pytest.mark.parametrize("name", ALL)
def test_chat_template_matches_transformers(name, work_dir):
    from transformers import AutoTokenizer

    d = _template_dir(name, work_dir)
    tok = AutoTokenizer.from_pretrained(str(d))
    with_ids = name in IDS_TOO
    reqs = _requests()
    expected, hf_errors = [], 0
    for _, req in reqs:
        e, err = _hf_render(tok, req, with_ids)
        hf_errors += err is not None
        expected.append(e)
    with h.recording_cli_errors("chat", name, "conversations", "render", len(reqs)):
        r = h.run_cli(["chat", "-t", str(d), "--jsonl"], h.to_jsonl([q for _, q in reqs]))
        got = h.parse_jsonl(r.stdout, len(reqs), "chat")
    fields = ["text", "ids"] if with_ids else ["text"]
    got = [{"error": True} if "error" in g else {k: g.get(k) for k in fields} for g in got]
    inputs = [f"{c} {json.dumps({k: v for k, v in q.items() if k not in ('messages', 'tools')})}"
              f"{' +tools' if 'tools' in q else ''}" for c, q in reqs]
    print(f"{name}: {hf_errors} of {len(reqs)} requests raise in transformers (tokenkit must fail too)")
    h.compare("chat", name, "conversations", "render", inputs, expected, got)


def test_minimind_directory_loads_in_transformers(work_dir):
    """tokenkit's Minimind tokenizer_config.json next to a Minimind-layout tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoTokenizer

    texts = [t for t in h.mixed_sample(lines_per_file=30, chunks_per_file=0) if t.strip()]
    if not texts:
        pytest.skip("no corpora")
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(texts, trainer)
    d = work_dir / "minimind-dir"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    hf.save(str(d / "tokenizer.json"))
    h.run_cli(["chat", "-t", str(d), "--write-minimind-config"], b"")
    cfg = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert cfg["bos_token"] == "<|im_start|>" and cfg["eos_token"] == "<|im_end|>"
    assert cfg["pad_token"] == cfg["unk_token"] == "<|endoftext|>"
    assert cfg["model_max_length"] == 32768 and cfg["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert (d / "special_tokens_map.json").is_file()

    tok = AutoTokenizer.from_pretrained(str(d))
    assert len(tok) == hf.get_vocab_size()
    assert [tok.convert_tokens_to_ids(t) for t in specials] == [0, 1, 2]
    assert (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id, tok.unk_token_id) == (1, 2, 0, 0)
    assert tok.model_max_length == 32768

    reqs = [q for _, q in _requests() if "tools" in q or q.get("kwargs")]
    expected = [_hf_render(tok, q, True)[0] for q in reqs]
    r = h.run_cli(["chat", "-t", str(d), "--jsonl"], h.to_jsonl(reqs))
    got = [{"error": True} if "error" in g else g for g in h.parse_jsonl(r.stdout, len(reqs), "chat")]
    h.compare("chat", "minimind+trained", "conversations", "render+ids", [json.dumps(q)[:100] for q in reqs],
              expected, got)
    texts_ok = [e["text"] for e in expected if "text" in e]
    roundtrip = sum(tok.decode(tok.encode(t, add_special_tokens=False)) == t for t in texts_ok)
    assert roundtrip == len(texts_ok), f"decode round trip: {roundtrip}/{len(texts_ok)}"


# ---- the interface line, and templates that run too long or produce too much ----------------

INTERFACE_TEMPLATE = DATA / "chatml_tools.jinja"
RUNAWAY = {
    # two nested loops of 10^10 iterations: jinja2 runs for hours
    "nested loops": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                     "step budget"),
    # a string doubled 64 times: jinja2 (transformers) raises MemoryError after filling memory
    "doubling": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"
                 "{{ ns.s }}", "built a string of"),
    # 100000 x 1 KB of literal text
    "output": ("{% for i in range(100000) %}" + "x" * 1000 + "{% endfor %}", "bytes of output (the output budget)"),
    # recursion that doubles its argument without storing it
    "recursion": ("{% macro f(s, n) %}{% if n > 0 %}{{ f(s ~ s, n - 1) }}{% endif %}{% endmacro %}{{ f('ab', 60) }}",
                  "built a string of"),
}


def _interface_dir(tmp_path: Path) -> Path:
    """A tiny tokenizer.json (so transformers loads the directory too) and a config with a template."""
    from tokenizers import Tokenizer, models

    d = tmp_path / "tok"
    d.mkdir()
    Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")).save(str(d / "tokenizer.json"))
    cfg = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
           "chat_template": "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"}
    (d / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return d


def test_chat_interface_line(tmp_path):
    """`tokenkit chat -t TOKENIZER_DIR --messages FILE.json [--chat-template FILE.jinja]
    [--add-generation-prompt] [--kwargs JSON]` prints what transformers' renderer prints."""
    from transformers import AutoTokenizer

    d = _interface_dir(tmp_path)
    cfg = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    hf = AutoTokenizer.from_pretrained(str(d))
    rows, expected, got = [], [], []
    for conv_name, messages in CONVERSATIONS.items():
        f = tmp_path / "messages.json"
        f.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
        for template in (None, INTERFACE_TEMPLATE):
            for agp in (False, True):
                for kwargs in (None, {"enable_thinking": False, "extra": "E"}):
                    src = cfg["chat_template"] if template is None else template.read_text(encoding="utf-8")
                    try:
                        expected.append({"text": hf.apply_chat_template(messages, chat_template=src, tokenize=False,
                                                                        add_generation_prompt=agp, **(kwargs or {}))})
                    except Exception:  # noqa: BLE001 - the reference fails: tokenkit must fail too
                        expected.append({"error": True})
                    args = ["chat", "-t", str(d), "--messages", str(f)]
                    args += ["--chat-template", str(template)] if template else []
                    args += ["--add-generation-prompt"] if agp else []
                    args += ["--kwargs", json.dumps(kwargs)] if kwargs else []
                    r = h.run_cli(args, b"", check=False)
                    got.append({"text": r.stdout.decode("utf-8")} if r.returncode == 0 else {"error": True})
                    if r.returncode != 0:
                        err = r.stderr.decode("utf-8", "replace")
                        assert "error" in err and "panicked" not in err and "RUST_BACKTRACE" not in err, err
                    rows.append(f"{conv_name} template={template and template.name} agp={agp} kwargs={kwargs}")
    h.compare("chat", "interface line", "conversations", "render", rows, expected, got)


@pytest.mark.parametrize("case", sorted(RUNAWAY))
def test_chat_runaway_template_ends_with_a_clear_error(case, tmp_path):
    source, want = RUNAWAY[case]
    d = _interface_dir(tmp_path)
    t = tmp_path / "runaway.jinja"
    t.write_text(source, encoding="utf-8")
    f = tmp_path / "messages.json"
    f.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    start = time.monotonic()
    r = h.run_cli(["chat", "-t", str(d), "--messages", str(f), "--chat-template", str(t)], b"", check=False,
                  timeout=120)
    elapsed = time.monotonic() - start
    err = r.stderr.decode("utf-8", "replace")
    print(f"{case}: exit {r.returncode} after {elapsed:.2f}s: {err.strip()}")
    assert r.returncode != 0 and r.stdout == b"", err
    assert want in err and "error: chat template stopped: " in err and err.count("\n") == 1, err
    # The same request in --jsonl mode is one error line, and the next request still renders.
    req = {"messages": [{"role": "user", "content": "hi"}], "template": str(t)}
    ok = {"messages": [{"role": "user", "content": "hi"}]}
    r = h.run_cli(["chat", "-t", str(d), "--jsonl"], h.to_jsonl([req, ok]), timeout=120)
    lines = h.parse_jsonl(r.stdout, 2, "chat")
    assert want in lines[0].get("error", ""), lines[0]
    assert lines[1]["text"] == "<user>hi\n", lines[1]


def test_chat_bad_arguments_are_clear_errors(tmp_path):
    d = _interface_dir(tmp_path)
    f = tmp_path / "messages.json"
    f.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for x in %}", encoding="utf-8")
    cases = [
        (["--chat-template", str(bad)], "does not compile"),
        (["--chat-template", str(tmp_path / "missing.jinja")], "cannot read"),
        (["--kwargs", "{not json"], "--kwargs"),
        (["--kwargs", "[1]"], "--kwargs must be a JSON object"),
        (["--chat-template", str(INTERFACE_TEMPLATE), "--template", "x"], "cannot be used with"),
    ]
    for extra, want in cases:
        r = h.run_cli(["chat", "-t", str(d), "--messages", str(f), *extra], b"", check=False)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode != 0 and want in err and "panicked" not in err, (extra, err)
