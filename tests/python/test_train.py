"""Training from Python: tokenkit.Tokenizer.train / train_from_iterator with tokenkit.trainers
give the same tokenizer.json as HF tokenizers' trainers on the same pipeline and corpus sample."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import tokenizers

import tokenkit

FIXTURES = Path(__file__).resolve().parents[2] / ".fixtures"


def corpus(max_bytes=300_000):
    lines = []
    for rel in ("corpora/en/botchan.txt", "corpora/mixed/mixed_input.txt", "corpora/ja/wagahai.txt"):
        p = FIXTURES / rel
        if not p.exists():
            continue
        total = 0
        for line in p.read_text(encoding="utf-8").splitlines(keepends=True):
            total += len(line.encode())
            if total > max_bytes // 3:
                break
            lines.append(line)
    if not lines:
        pytest.skip("no corpora")
    return lines


def build(lib, kind):
    if kind == "byte_level_bpe":
        tok = lib.Tokenizer(lib.models.BPE())
        tok.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = lib.decoders.ByteLevel()
        trainer = lib.trainers.BpeTrainer(vocab_size=1200, min_frequency=2, special_tokens=["<|endoftext|>", "<pad>"],
                                          initial_alphabet=lib.pre_tokenizers.ByteLevel.alphabet())
    elif kind == "bpe_metaspace":
        tok = lib.Tokenizer(lib.models.BPE(unk_token="<unk>"))
        tok.normalizer = lib.normalizers.NFKC()
        tok.pre_tokenizer = lib.pre_tokenizers.Metaspace()
        trainer = lib.trainers.BpeTrainer(vocab_size=900, special_tokens=["<unk>"], max_token_length=6)
    elif kind == "wordlevel":
        tok = lib.Tokenizer(lib.models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = lib.pre_tokenizers.Whitespace()
        trainer = lib.trainers.WordLevelTrainer(vocab_size=500, min_frequency=2, special_tokens=["[UNK]", "[PAD]"])
    else:
        raise ValueError(kind)
    return tok, trainer


@pytest.mark.parametrize("kind", ["byte_level_bpe", "bpe_metaspace", "wordlevel"])
def test_train_from_iterator_matches_hf(kind):
    lines = corpus()
    h, ht = build(tokenizers, kind)
    t, tt = build(tokenkit, kind)
    def options(trainer):
        # HF writes the alphabet in hash order and has two fields that only it uses.
        (name, opts), = json.loads(trainer.__getstate__()).items()
        opts = {k: sorted(v) if k == "initial_alphabet" else v for k, v in opts.items()
                if k not in ("progress_format", "words", "seed_size")}
        return name, opts
    assert options(tt) == options(ht)
    h.train_from_iterator(lines, ht)
    # batches of strings, from a generator: read lazily
    t.train_from_iterator((lines[i:i + 100] for i in range(0, len(lines), 100)), tt)
    assert json.loads(t.to_str()) == json.loads(h.to_str())
    text = "".join(lines[:20])
    assert t.encode(text).ids == h.encode(text).ids


def test_train_files_and_default_trainer(tmp_path):
    lines = corpus()
    f = tmp_path / "corpus.txt"
    f.write_text("".join(lines), encoding="utf-8")
    h, ht = build(tokenizers, "byte_level_bpe")
    t, tt = build(tokenkit, "byte_level_bpe")
    h.train([str(f)], ht)
    t.train([str(f)], tt)
    assert json.loads(t.to_str()) == json.loads(h.to_str())
    # No trainer: the model kind's default trainer (WordLevel: vocab 30000).
    h2, _ = build(tokenizers, "wordlevel")
    t2, _ = build(tokenkit, "wordlevel")
    h2.train([str(f)])
    t2.train([str(f)])
    assert t2.get_vocab() == h2.get_vocab()


def test_trainer_attributes_and_pickle():
    t = tokenkit.trainers.BpeTrainer(vocab_size=100, special_tokens=["<s>", tokenkit.AddedToken("<x>", lstrip=True)],
                                     initial_alphabet=["a", "bc"])
    h = tokenizers.trainers.BpeTrainer(vocab_size=100, special_tokens=["<s>", tokenizers.AddedToken("<x>", lstrip=True)],
                                       initial_alphabet=["a", "bc"])
    assert t.vocab_size == h.vocab_size == 100
    assert sorted(t.initial_alphabet) == sorted(h.initial_alphabet)
    assert [(x.content, x.lstrip, x.special) for x in t.special_tokens] == [(x.content, x.lstrip, x.special) for x in h.special_tokens]
    t.vocab_size = 5
    assert t.vocab_size == 5
    again = pickle.loads(pickle.dumps(t))
    assert again.vocab_size == 5 and json.loads(again.__getstate__()) == json.loads(t.__getstate__())
    wp = tokenkit.trainers.WordPieceTrainer(vocab_size=77)
    assert wp.vocab_size == 77 and wp.continuing_subword_prefix == "##"


def test_iterator_errors_propagate():
    tok, trainer = build(tokenkit, "wordlevel")

    def bad():
        yield "some text here"
        raise RuntimeError("corpus reader failed")

    with pytest.raises(RuntimeError, match="corpus reader failed"):
        tok.train_from_iterator(bad(), trainer)
    with pytest.raises(TypeError, match="str or batches"):
        tok.train_from_iterator([1, 2, 3], trainer)
    with pytest.raises(Exception, match="no words"):
        tok.train_from_iterator([], trainer)
    # The tokenizer is unchanged after a failed training.
    assert tok.get_vocab_size() == 0


def test_progress_bars_under_a_terminal(tmp_path):
    """show_progress=True draws indicatif bars on a terminal (run under a pseudo-terminal here)
    and the result is the same as with show_progress=False."""
    import os
    import pty
    import subprocess
    import sys

    text = tmp_path / "corpus.txt"
    text.write_text("".join(corpus(60_000)), encoding="utf-8")
    script = (
        "import sys, tokenkit\n"
        "from tokenkit import models, trainers, pre_tokenizers\n"
        "tok = tokenkit.Tokenizer(models.BPE())\n"
        "tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)\n"
        "tok.train([sys.argv[1]], trainers.BpeTrainer(vocab_size=600, show_progress=sys.argv[2] == '1'))\n"
        "print(tok.to_str())\n"
    )
    outputs = {}
    for flag in ("0", "1"):
        main, sub = pty.openpty()
        r = subprocess.run([sys.executable, "-c", script, str(text), flag], stdout=subprocess.PIPE, stderr=sub,
                           timeout=120, check=True)
        os.close(sub)
        err = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        os.close(main)
        outputs[flag] = (r.stdout, err.decode("utf-8", "replace"))
    assert outputs["0"][0] == outputs["1"][0]
    assert "Compute merges" in outputs["1"][1] and "Compute merges" not in outputs["0"][1]
