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


def corpus(max_bytes=300_000, files=("corpora/en/botchan.txt", "corpora/mixed/mixed_input.txt", "corpora/ja/wagahai.txt")):
    lines = []
    for rel in files:
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


def run_under_pty(script, *args):
    """Runs ``python -c script args`` with standard error on a pseudo-terminal; (stdout bytes,
    stderr text)."""
    import os
    import pty
    import subprocess
    import sys

    main, sub = pty.openpty()
    r = subprocess.run([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=sub, timeout=120,
                       check=True)
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
    return r.stdout, err.decode("utf-8", "replace")


def test_progress_bars_under_a_terminal(tmp_path):
    """show_progress=True draws indicatif bars on a terminal (run under a pseudo-terminal here)
    and the result is the same as with show_progress=False."""
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
    outputs = {flag: run_under_pty(script, str(text), flag) for flag in ("0", "1")}
    assert outputs["0"][0] == outputs["1"][0]
    assert "Compute merges" in outputs["1"][1] and "Compute merges" not in outputs["0"][1]


# ---- tokenizers.implementations: the ready-made classes, side by side with HF's ----

IMPLEMENTATIONS = {
    "ByteLevelBPETokenizer": (dict(), dict(vocab_size=700, special_tokens=["<|endoftext|>"])),
    "ByteLevelBPETokenizer_options": (dict(add_prefix_space=True, lowercase=True, unicode_normalizer="nfkc",
                                           trim_offsets=True), dict(vocab_size=500, min_frequency=3)),
    "CharBPETokenizer": (dict(), dict(vocab_size=700)),
    "CharBPETokenizer_options": (dict(lowercase=True, bert_normalizer=False, split_on_whitespace_only=True,
                                      suffix="@@"), dict(vocab_size=600, limit_alphabet=100, suffix="@@")),
    "SentencePieceBPETokenizer": (dict(), dict(vocab_size=700)),
    "SentencePieceUnigramTokenizer": (dict(), dict(vocab_size=400, special_tokens=["<unk>", "<pad>"],
                                                   unk_token="<unk>")),
    "BertWordPieceTokenizer": (dict(), dict(vocab_size=700)),
    "BertWordPieceTokenizer_options": (dict(lowercase=False, strip_accents=True), dict(vocab_size=500,
                                                                                      wordpieces_prefix="@@")),
}


def _impl(lib, name, init):
    import tokenizers.implementations  # noqa: F401  (HF's classes live there)

    cls = getattr(lib.implementations if lib is tokenizers else lib, name.split("_")[0])
    return cls(**init)


@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("source", ["iterator", "files"])
def test_implementations_train_like_hf(name, source, tmp_path):
    """Each convenience class, trained with HF's defaults (from an iterator or files), gives
    HF's tokenizer.json (Unigram: the same pieces, see README) and HF's encodings. English text:
    with more distinct chars than ``limit_alphabet`` (1000 by default), HF keeps the chars of
    equal count at the cut in hash order, and two HF runs differ."""
    lines = corpus(120_000, files=("corpora/en/botchan.txt",))
    init, train = IMPLEMENTATIONS[name]
    ours, ref = _impl(tokenkit, name, init), _impl(tokenizers, name, init)
    if source == "files":
        f = tmp_path / "corpus.txt"
        f.write_text("".join(lines), encoding="utf-8")
        ours.train(str(f), show_progress=False, **train)
        ref.train(str(f), show_progress=False, **train)
    else:
        ours.train_from_iterator(lines, show_progress=False, **train)
        ref.train_from_iterator(lines, show_progress=False, **train)
    a, b = json.loads(ours.to_str()), json.loads(ref.to_str())
    assert repr(ours) == repr(ref)
    text = "".join(lines[:30])
    if name.startswith("SentencePieceUnigram"):
        assert {p for p, _ in a["model"].pop("vocab")} == {p for p, _ in b["model"].pop("vocab")}
        assert a == b
        return
    if name.startswith(("CharBPE", "BertWordPiece")):
        # HF gives the suffixed (`!</w>`) / prefixed (`##a`) alphabet ids in hash order, so two
        # HF runs differ: vocabulary and merges compared as sets, encodings by their tokens.
        # Pairs of equal count are merged in that (hash) order too: for WordPiece, the last
        # merges before the vocabulary is full may differ (at most a few tokens).
        va, vb = set(a["model"].pop("vocab")), set(b["model"].pop("vocab"))
        slack = 8 if name.startswith("BertWordPiece") else 0
        assert len(va) == len(vb) and len(va ^ vb) <= slack, sorted(va ^ vb)
        assert {tuple(m) for m in a["model"].pop("merges", [])} == {tuple(m) for m in b["model"].pop("merges", [])}
        assert a == b
        if not slack:
            assert ours.encode(text).tokens == ref.encode(text).tokens
        return
    assert a == b
    assert ours.encode(text).ids == ref.encode(text).ids
    assert ours.encode(text).offsets == ref.encode(text).offsets
    assert ours.decode(ref.encode(text).ids) == ref.decode(ref.encode(text).ids)


def test_implementations_from_files(tmp_path):
    """from_file / constructors from vocabulary files (GPT-2's vocab.json + merges.txt, BERT's
    vocab.txt) and save_model, against HF's classes on corpus lines. (GPT-2's vocabulary has no
    `<unk>`: tokenkit's BPE refuses an unk token missing from the vocabulary, HF accepts it, so
    the BPE classes get `<|endoftext|>`.)"""
    reg = FIXTURES / "registry"
    vocab, merges, vocab_txt = reg / "gpt2/vocab.json", reg / "gpt2/merges.txt", reg / "bert_uncased/vocab.txt"
    if not (vocab.exists() and vocab_txt.exists()):
        pytest.skip("registry fixtures missing")
    from tokenizers import implementations as hf

    pairs = [
        (tokenkit.ByteLevelBPETokenizer.from_file(str(vocab), str(merges)),
         hf.ByteLevelBPETokenizer.from_file(str(vocab), str(merges))),
        (tokenkit.ByteLevelBPETokenizer(str(vocab), str(merges), add_prefix_space=True, trim_offsets=True),
         hf.ByteLevelBPETokenizer(str(vocab), str(merges), add_prefix_space=True, trim_offsets=True)),
        (tokenkit.CharBPETokenizer.from_file(str(vocab), str(merges), suffix="", unk_token="<|endoftext|>"),
         hf.CharBPETokenizer.from_file(str(vocab), str(merges), suffix="", unk_token="<|endoftext|>")),
        (tokenkit.SentencePieceBPETokenizer.from_file(str(vocab), str(merges), unk_token="<|endoftext|>"),
         hf.SentencePieceBPETokenizer.from_file(str(vocab), str(merges), unk_token="<|endoftext|>")),
        (tokenkit.BertWordPieceTokenizer.from_file(str(vocab_txt)), hf.BertWordPieceTokenizer.from_file(str(vocab_txt))),
        (tokenkit.BertWordPieceTokenizer(str(vocab_txt), lowercase=False), hf.BertWordPieceTokenizer(str(vocab_txt), lowercase=False)),
    ]
    lines = corpus(60_000)
    total = identical = 0
    for ours, ref in pairs:
        assert json.loads(ours.to_str()) == json.loads(ref.to_str())
        for line in lines[:100]:
            a, b = ours.encode(line, lines[0]), ref.encode(line, lines[0])
            total += 1
            identical += (a.ids, a.offsets, a.type_ids) == (b.ids, b.offsets, b.type_ids)
        assert ours.get_vocab_size() == ref.get_vocab_size()
        assert ours.normalize("Héllo") == ref.normalize("Héllo") if ref.normalizer else True
    print(f"implementations from files: {identical}/{total} encodings identical")
    assert identical == total
    # The async methods (asyncio is imported only when they run).
    import asyncio

    ours, ref = pairs[0]
    batch = lines[:50]

    async def both(tok):
        encs = await tok.async_encode_batch(batch)
        fast = await tok.async_encode_batch_fast(batch)
        return [e.ids for e in encs], [e.ids for e in fast], await tok.async_decode_batch([e.ids for e in encs])

    assert asyncio.run(both(ours)) == asyncio.run(both(ref))
    saved = tokenkit.ByteLevelBPETokenizer.from_file(str(vocab), str(merges)).save_model(str(tmp_path))
    again = hf.ByteLevelBPETokenizer.from_file(*saved)
    assert again.encode(lines[0]).ids == pairs[0][1].encode(lines[0]).ids


def test_implementation_progress_bars(tmp_path):
    """ByteLevelBPETokenizer.train_from_iterator(show_progress=True) draws HF's stage bars on a
    terminal (pseudo-terminal here), and nothing with show_progress=False."""
    script = (
        "import sys, tokenkit\n"
        "lines = open(sys.argv[1], encoding='utf-8').read().splitlines()\n"
        "tok = tokenkit.ByteLevelBPETokenizer()\n"
        "tok.train_from_iterator(lines, vocab_size=600, show_progress=sys.argv[2] == '1')\n"
        "print(tok.to_str())\n"
    )
    text = tmp_path / "corpus.txt"
    text.write_text("".join(corpus(60_000)), encoding="utf-8")
    outputs = {flag: run_under_pty(script, str(text), flag) for flag in ("0", "1")}
    assert outputs["0"][0] == outputs["1"][0]
    for stage in ("Count words", "Compute merges"):
        assert stage in outputs["1"][1] and stage not in outputs["0"][1]


def test_import_leaves_asyncio_alone():
    """`import tokenkit` does not import asyncio (it doubled the import time); the async
    methods import it when they run."""
    import subprocess
    import sys

    code = "import sys, tokenkit, tokenkit.sentencepiece; print('asyncio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
