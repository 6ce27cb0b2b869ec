"""SentencePiece `.model` files load straight into the CLI and encode/decode exactly as the
`sentencepiece` package does: ids, pieces (the CLI's tokens), offsets (sentencepiece's
begin/end, in chars) and decoded text, for every model × every corpus (lines and multi-line
chunks); plus malformed models (truncated protobuf, a bad charsmap, no unknown piece).

The reference is `sentencepiece` itself, never the HF conversion of the same model (which
differs on a few documented inputs, see ../shared/DATA.md)."""
from __future__ import annotations

import re
import struct

import pytest

import harness as h

MODELS = {
    "llama2": "hub/llama2.model",
    "mistral03": "hub/mistral03.model",
    "xlnet_base_cased": "hub/xlnet_base_cased.model",
    "botchan_unigram": "registry/sentencepiece/botchan_en_unigram_1000.model",
    "botchan_bpe": "registry/sentencepiece/botchan_en_bpe_1000.model",
    "kyoto_ja_unigram": "registry/sentencepiece/kyoto_ja_unigram_8000.model",
    "albert_30k": "registry/albert/spiece.model",
    "mistral01": "registry/mistral01/tokenizer.model",
}
CORPORA = h.corpus_files() or ["<no corpora: run scripts/fetch_fixtures.py>"]

EDGE_CASES = [
    "", " ", "   ", "\n", "\n\t", "  hello   world  ", "a  b\t\tc\n\nd", "\u3000x\u3000y\u3000",
    "é́ ñ Å ﬁ ﬂ ① Ⅻ ｶﾀｶﾅ ＡＢＣ ｈｅｌｌｏ", "😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️", "中文 日本語 한국어",
    "Русский текст, Ελληνικά, עברית, العربية, हिन्दी, ไทย", "e\u0301 a\u0308 o\u0302",
    "<s> </s> <unk> <pad> <0x41> ▁ ▁▁", "a\u0000b\u0001c\u007f", "\u200b\u200c\u200d\ufeff",
    "12345678901234567890 3.14159", "-" * 57, "x" * 3000, "\r\n\r\n", "\u00a0\u2009\u202f",
]


@pytest.fixture(scope="module")
def processors():
    sp = pytest.importorskip("sentencepiece")
    cache = {}

    def get(name):
        if name not in cache:
            path = h.fixture_path(MODELS[name])
            if path is None:
                pytest.skip(f"{MODELS[name]} not present (run scripts/fetch_fixtures.py)")
            cache[name] = (path, sp.SentencePieceProcessor(model_file=str(path)))
        return cache[name]
    return get


def _check(name, path, sp, corpus, kind, inputs):
    # offset_mapping: sentencepiece's begin/end per piece, in chars.
    expected = [{"ids": r["ids"], "tokens": r["pieces"], "offsets": [list(o) for o in r["offsets"]]}
                for r in sp.encode(inputs, out_type="offset_mapping")]
    with h.recording_cli_errors("sentencepiece", name, corpus, kind, len(inputs)):
        got = h.cli_encode(path, inputs, full=False)
    h.compare("sentencepiece", name, corpus, kind, inputs, expected, got, fields=["ids", "tokens", "offsets"])
    id_lists = [e["ids"] for e in expected]
    with h.recording_cli_errors("sentencepiece", name, corpus, kind + " decode", len(inputs)):
        decoded = h.cli_decode(path, id_lists, skip_special=False)
    h.compare("sentencepiece", name, corpus, kind + " decode", id_lists, sp.decode(id_lists), decoded)


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_sentencepiece(name, corpus, processors):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
    path, sp = processors(name)
    _check(name, path, sp, corpus, "lines", h.sample_lines(corpus, 300))
    _check(name, path, sp, corpus, "chunks", h.sample_chunks(corpus, 60))


@pytest.mark.parametrize("name", list(MODELS))
def test_model_edge_cases(name, processors):
    path, sp = processors(name)
    _check(name, path, sp, "-", "edge cases", EDGE_CASES)


# Chars around which normalization rules start or continue: letters with combining marks,
# kana with voicing marks (full and half width), Hangul jamo, compatibility forms, spaces.
TRICKY_ALPHABET = ("aeiouAEn .,-'\t\n" "\u0301\u0300\u0308\u0323\u0302\u0303\u0338" "かがはばぱカ\u3099\u309a"
                   "ｶﾊ\uff9e\uff9f" "\u1100\u1161\u11a8\u3131\u314f" "ÅéñﬁⅫ①\u3000\u00a0" "中日" "😀\U0001d15e")


@pytest.mark.parametrize("name", list(MODELS))
def test_model_tricky_random_strings(name, processors):
    """Random strings dense in chars that start or continue a normalization rule (the
    normalizer copies other chars without looking the rules up)."""
    import random
    rng = random.Random(1234)
    inputs = ["".join(rng.choice(TRICKY_ALPHABET) for _ in range(rng.randint(1, 40))) for _ in range(400)]
    path, sp = processors(name)
    _check(name, path, sp, "-", "tricky random strings", inputs)


def test_decode_special_ids(processors):
    """Control ids vanish, unk becomes ' ⁇ ', stray bytes become U+FFFD, as sentencepiece decodes."""
    path, sp = processors("llama2")
    byte = sp.piece_to_id("<0xE2>")
    id_lists = [[1, 2], [0], [1, 450, 0, 2], [byte], [byte, byte, sp.piece_to_id("<0x41>")],
                [sp.piece_to_id("▁hello"), 1, sp.piece_to_id("▁world")], []]
    decoded = h.cli_decode(path, id_lists, skip_special=False)
    h.compare("sentencepiece", "llama2", "-", "special ids decode", id_lists, sp.decode(id_lists), decoded)


# --------------------------------------------------------------------------------------------
# Malformed models. The protobuf is written by hand (no protobuf package needed).

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(tag: int, wire: int, payload: bytes) -> bytes:
    key = _varint(tag << 3 | wire)
    if wire == 2:
        return key + _varint(len(payload)) + payload
    return key + payload


def _piece(text: str, score: float, kind: int) -> bytes:
    return _field(1, 2, _field(1, 2, text.encode()) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, _varint(kind)))


def _model(pieces, charsmap: bytes | None = None) -> bytes:
    out = b"".join(_piece(*p) for p in pieces)
    out += _field(2, 2, _field(3, 0, _varint(1)))  # trainer_spec: model_type UNIGRAM
    if charsmap is not None:
        out += _field(3, 2, _field(1, 2, b"custom") + _field(2, 2, charsmap))
    return out


GOOD = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), ("▁", -1.0, 1), ("a", -2.0, 1), ("b", -2.5, 1), ("▁ab", -3.0, 1)]


def _expect_error(work_dir, fname, data: bytes, keywords):
    p = work_dir / fname
    p.write_bytes(data)
    r = h.run_cli(["encode", "-t", str(p), "--jsonl"], b'"ab ba"\n', check=False, timeout=60)
    err = r.stderr.decode("utf-8", "replace")
    problems = []
    if r.returncode == 0:
        problems.append("exit status 0")
    if r.returncode == 101 or "panicked" in err:
        problems.append("panic")
    if not any(re.search(k, err, re.IGNORECASE) for k in keywords):
        problems.append(f"stderr names none of {keywords}")
    if str(p.name) not in err:
        problems.append("stderr does not name the file")
    h.record("errors", f"sentencepiece {fname}", "-", "error-handling", h.Outcome(identical=int(not problems), total=1))
    assert not problems, f"{fname}: {', '.join(problems)}; exit={r.returncode}; stderr={err[:500]!r}"


def test_handmade_model_is_valid(work_dir):
    """The base of the malformed models encodes, so the error tests fail for the right reason."""
    sp = pytest.importorskip("sentencepiece")
    p = work_dir / "good.model"
    p.write_bytes(_model(GOOD))
    proc = sp.SentencePieceProcessor(model_file=str(p))
    got = h.cli_encode(p, ["ab ba"], full=False)
    assert got[0]["ids"] == proc.encode("ab ba")


def test_truncated_model(work_dir, processors):
    path, _ = processors("botchan_unigram")
    data = path.read_bytes()
    _expect_error(work_dir, "truncated.model", data[: len(data) // 2], [r"protobuf", r"ModelProto", r"truncat", r"buffer"])


def test_corrupt_model(work_dir):
    _expect_error(work_dir, "corrupt.model", b"\x0a\x05\x0a\x03abc" + b"\xff" * 64, [r"protobuf", r"ModelProto", r"invalid"])


def test_bad_charsmap(work_dir):
    bad = struct.pack("<I", 1 << 20) + b"\x00" * 16  # announces a 1 MiB trie
    _expect_error(work_dir, "bad_charsmap.model", _model(GOOD, bad), [r"charsmap"])


def test_no_unknown_piece(work_dir):
    _expect_error(work_dir, "no_unk.model", _model([p for p in GOOD if p[2] != 2]), [r"unknown piece", r"unk"])


# --------------------------------------------------------------------------------------------
# Conversion: `tokenkit save -t X.model -o out.json` writes an HF tokenizer.json; HF loads it,
# tokenkit encodes it exactly as HF does, and its ids are sentencepiece's.

@pytest.fixture(scope="module")
def converted(work_dir, processors):
    cache = {}

    def get(name):
        if name not in cache:
            path, sp = processors(name)
            out = work_dir / f"converted_{name}.json"
            h.run_cli(["save", "-t", str(path), "-o", str(out)], b"")
            from tokenizers import Tokenizer
            cache[name] = (out, Tokenizer.from_file(str(out)), sp)
        return cache[name]
    return get


CONVERSION_CORPORA = [c for c in CORPORA if c.split("/")[0] in ("en", "ja", "mixed", "code")][:6] or CORPORA


@pytest.mark.parametrize("corpus", CONVERSION_CORPORA)
@pytest.mark.parametrize("name", list(MODELS))
def test_converted_tokenizer_json(name, corpus, converted):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
    out, tok, sp = converted(name)
    inputs = h.sample_lines(corpus, 150, allow_full=False) + h.sample_chunks(corpus, 30, allow_full=False)
    # tokenkit on the converted file = HF on the converted file (ids, tokens, offsets).
    h.check_encode("sentencepiece-converted", name, out, corpus, "lines+chunks vs HF", inputs, tok=tok,
                   add_special=False, full=False)
    # HF on the converted file = sentencepiece on the .model (ids).
    got = [e.ids for e in tok.encode_batch(inputs, add_special_tokens=False)]
    h.compare("sentencepiece-converted", name, corpus, "HF(converted) ids vs sentencepiece", inputs,
              sp.encode(inputs), got)


# --------------------------------------------------------------------------------------------
# n-best (Unigram): `tokenkit encode --nbest N` = sentencepiece's nbest_encode (ids, pieces and
# scores, in the same order: tokenkit's A* agenda moves ties exactly as sentencepiece's heap).

UNIGRAM_MODELS = ["xlnet_base_cased", "botchan_unigram", "kyoto_ja_unigram", "albert_30k"]
NBEST_CORPORA = [c for c in CORPORA if c.split("/")[0] in ("en", "ja", "zh", "mixed", "code")]


def _sp_nbest(sp, text: str, n: int):
    """sentencepiece's n-best list: [{"ids", "tokens", "score"}] from its serialized NBestSentencePieceText."""
    raw = sp._processor._NBestEncodeAsSerializedProto(text, n, False, False, False, False)
    out = []
    for tag, _, spt in h.proto_fields(raw):
        if tag != 1:
            continue
        ids, tokens, score = [], [], 0.0
        for t, _, v in h.proto_fields(spt):
            if t == 2:
                fields = {ft: fv for ft, _, fv in h.proto_fields(v)}
                ids.append(fields.get(2, 0))
                tokens.append(fields.get(1, b"").decode("utf-8"))
            elif t == 3:
                score = v
        out.append({"ids": ids, "tokens": tokens, "score": score})
    return out


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _check_nbest(name, path, sp, corpus, kind, inputs, n):
    expected = [_sp_nbest(sp, t, n) for t in inputs]
    # The pure-Python API gives the same ids (a guard on the proto parsing above).
    assert [[e["ids"] for e in exp] for exp in expected[:20]] == sp.nbest_encode_as_ids(inputs[:20], nbest_size=n)
    with h.recording_cli_errors("sentencepiece-nbest", name, corpus, kind, len(inputs)):
        r = h.run_cli(["encode", "-t", str(path), "--jsonl", "--nbest", str(n)], h.to_jsonl(inputs))
        got = h.parse_jsonl(r.stdout, len(inputs), "encode --nbest")
    got = [[{"ids": e["ids"], "tokens": e["tokens"], "score": _f32(e["score"])} for e in g["nbest"]] for g in got]
    h.compare("sentencepiece-nbest", name, corpus, kind, inputs, expected, got)


@pytest.mark.parametrize("corpus", NBEST_CORPORA)
@pytest.mark.parametrize("name", UNIGRAM_MODELS)
def test_nbest_matches_sentencepiece(name, corpus, processors):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
    path, sp = processors(name)
    _check_nbest(name, path, sp, corpus, "lines nbest=8", h.sample_lines(corpus, 60, allow_full=False), 8)
    _check_nbest(name, path, sp, corpus, "chunks nbest=3", h.sample_chunks(corpus, 6, allow_full=False), 3)


@pytest.mark.parametrize("name", UNIGRAM_MODELS)
def test_nbest_edge_cases(name, processors):
    path, sp = processors(name)
    for n in (1, 2, 5, 50):
        _check_nbest(name, path, sp, "-", f"edge cases nbest={n}", EDGE_CASES, n)


# --------------------------------------------------------------------------------------------
# Denormalizer: a model trained with custom normalization and denormalization rules (no
# fixture has one); sentencepiece applies the denormalizer's charsmap to decoded text.

@pytest.fixture(scope="module")
def denorm_model(work_dir):
    spm = pytest.importorskip("sentencepiece")
    corpus = h.fixture_path("corpora/en/botchan.txt")
    if corpus is None:
        pytest.skip("corpora/en/botchan.txt not present (run scripts/fetch_fixtures.py)")
    # Rules: code points in hex, source TAB target. Normalization folds a few chars; the
    # denormalizer rewrites ASCII sequences and a CJK char (leftmost-longest: "ab" before "a").
    norm = work_dir / "norm.tsv"
    norm.write_text("41\t61\n3000\t20\nFF01\t21\n", encoding="utf-8")
    denorm = work_dir / "denorm.tsv"
    denorm.write_text("61 62\t41 42\n61\t2C6F\n63\t43 43\n2E 20\t2E 20 20\n4E2D\t4E2D 6587\n", encoding="utf-8")
    prefix = work_dir / "denorm_model"
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=400,
                                   normalization_rule_tsv=str(norm), denormalization_rule_tsv=str(denorm),
                                   byte_fallback=True, minloglevel=2)
    path = prefix.with_suffix(".model")
    return path, spm.SentencePieceProcessor(model_file=str(path))


@pytest.mark.parametrize("corpus", [c for c in CORPORA if c.split("/")[0] in ("en", "zh", "mixed")][:4])
def test_denormalizer_matches_sentencepiece(corpus, denorm_model):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
    path, sp = denorm_model
    assert sp.decode(sp.encode("abc")) != "abc", "the trained model has no denormalizer"
    inputs = h.sample_lines(corpus, 150, allow_full=False) + h.sample_chunks(corpus, 10, allow_full=False)
    _check("denorm_trained", path, sp, corpus, "lines+chunks", inputs)


def test_denormalizer_edge_cases(denorm_model):
    path, sp = denorm_model
    _check("denorm_trained", path, sp, "-", "edge cases", EDGE_CASES + ["abc cab ab. 中文", "ＡＢ！　a", "aaa"])


# --------------------------------------------------------------------------------------------
# Sampling (subword regularisation). tokenkit's generator is not sentencepiece's, so samples
# are compared as distributions: for short texts with few segmentations, the exact
# probabilities come from the full n-best list (p ~ exp(alpha * score)); tokenkit's and
# sentencepiece's empirical frequencies over many draws must both be close to them.

SAMPLE_TEXTS = {"botchan_unigram": ["hello world", "the cat"], "kyoto_ja_unigram": ["日本の歴史", "東京都に行く"]}
N_SAMPLES = 3000


def _exact(sp, text, alpha, k):
    nb = _sp_nbest(sp, text, 512)
    assert len(nb) < 512, "too many segmentations for an exact distribution"
    nb = nb[:k] if k > 0 else nb
    import math
    ws = [math.exp(alpha * e["score"]) for e in nb]
    z = sum(ws)
    return {tuple(e["ids"]): w / z for e, w in zip(nb, ws)}


def _freq(samples):
    from collections import Counter
    c = Counter(tuple(s) for s in samples)
    return {k: v / len(samples) for k, v in c.items()}


def _tv(p, q):
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def _cli_samples(path, text, n, alpha, k, seed=0):
    r = h.run_cli(["encode", "-t", str(path), "--jsonl", "--sample-alpha", str(alpha), "--nbest-size", str(k),
                   "--seed", str(seed)], h.to_jsonl([text] * n))
    return [e["ids"] for e in h.parse_jsonl(r.stdout, n, "encode --sample-alpha")]


@pytest.mark.parametrize("k", [-1, 4])
@pytest.mark.parametrize("alpha", [0.1, 0.5])
@pytest.mark.parametrize("name", list(SAMPLE_TEXTS))
def test_sampling_distribution(name, alpha, k, processors):
    path, sp = processors(name)
    problems = []
    for text in SAMPLE_TEXTS[name]:
        exact = _exact(sp, text, alpha, k)
        ours = _cli_samples(path, text, N_SAMPLES, alpha, k)
        theirs = sp.encode([text] * N_SAMPLES, enable_sampling=True, alpha=alpha, nbest_size=k)
        tv_ours, tv_theirs = _tv(_freq(ours), exact), _tv(_freq(theirs), exact)
        print(f"{name} {text!r} alpha={alpha} nbest_size={k}: {len(exact)} segmentations, "
              f"TV(tokenkit, exact)={tv_ours:.3f}, TV(sentencepiece, exact)={tv_theirs:.3f}")
        # Every draw is a segmentation of the text (one of those with non-zero probability).
        bad = [s for s in ours if tuple(s) not in exact]
        if bad:
            problems.append(f"{text!r}: {len(bad)} samples are not segmentations, e.g. {bad[0]}")
        # 3000 draws over a handful of outcomes: sampling noise in TV is ~0.02.
        if tv_ours > max(0.06, 2 * tv_theirs):
            problems.append(f"{text!r}: TV(tokenkit, exact)={tv_ours:.3f} (sentencepiece {tv_theirs:.3f})")
        # Reproducible for a seed, different for another.
        if _cli_samples(path, text, 50, alpha, k, seed=7) != _cli_samples(path, text, 50, alpha, k, seed=7):
            problems.append(f"{text!r}: same seed, different samples")
    h.record("sentencepiece-sampling", name, "-", f"alpha={alpha} nbest_size={k}",
             h.Outcome(identical=int(not problems), total=1))
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("name", UNIGRAM_MODELS)
def test_sampling_is_valid_on_corpus(name, processors):
    """Samples of corpus lines decode to what the line decodes to; a huge alpha gives the best path."""
    path, sp = processors(name)
    lines = [l for l in h.mixed_sample(3, 0) if l.strip()][:40] if h.corpus_files() else EDGE_CASES
    r = h.run_cli(["encode", "-t", str(path), "--jsonl", "--sample-alpha", "0.2", "--seed", "3"], h.to_jsonl(lines))
    ours = [e["ids"] for e in h.parse_jsonl(r.stdout, len(lines), "encode --sample-alpha")]
    h.compare("sentencepiece-sampling", name, "mixed", "sampled ids decode to the input",
              lines, [sp.decode(sp.encode(l)) for l in lines], sp.decode(ours))
    r = h.run_cli(["encode", "-t", str(path), "--jsonl", "--sample-alpha", "1000"], h.to_jsonl(lines))
    greedy = [e["ids"] for e in h.parse_jsonl(r.stdout, len(lines), "encode --sample-alpha 1000")]
    # A best path: the Viterbi one, or one tied with it in score (drawn at random among ties).
    best = []
    for l, g in zip(lines, greedy):
        nb = _sp_nbest(sp, l, 8)
        tied = [e["ids"] for e in nb if e["score"] == nb[0]["score"]]
        best.append(g if g in tied else sp.encode(l))
    h.compare("sentencepiece-sampling", name, "mixed", "alpha=1000 gives a best path", lines, best, greedy)
