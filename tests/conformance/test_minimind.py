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

import json
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
    for rel in ("en/pride_and_prejudice.txt", "zh/lunyu.txt", "ja/wagahai.txt", "code/cpython-3.11-stdlib.py.txt"):
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
