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
