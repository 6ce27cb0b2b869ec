"""Shared machinery of the conformance suite: locating fixtures and the CLI, sampling corpora,
computing the oracle (HF `tokenizers`) side, running `tokenkit` once per input set, comparing
field by field and recording counts for the session summary.

Environment variables:
  TOKENKIT_BIN                path of the tokenkit binary (default: $CARGO_TARGET_DIR/release/tokenkit,
                              then <repo>/target/release/tokenkit)
  TOKENKIT_FIXTURES           fixture directory (default: <repo>/.fixtures, made by scripts/fetch_fixtures.py)
  TOKENKIT_CONFORMANCE_FULL=1 every corpus line / chunk instead of the default sample
  TOKENKIT_ORACLE_ONLY=1      compute the oracle side, then skip instead of calling the CLI
                              (to develop the harness before the CLI exists)
  TOKENKIT_CLI_TIMEOUT        seconds per CLI call (default 600)
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("TOKENKIT_FIXTURES", REPO / ".fixtures"))
FULL = os.environ.get("TOKENKIT_CONFORMANCE_FULL", "") not in ("", "0")
ORACLE_ONLY = os.environ.get("TOKENKIT_ORACLE_ONLY", "") not in ("", "0")
CLI_TIMEOUT = float(os.environ.get("TOKENKIT_CLI_TIMEOUT", "600"))
DEFAULT_BATCH = 1000  # the CLI's documented default --batch-size

FULL_FIELDS = ["ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
               "word_ids", "sequence_ids", "overflowing"]
BASIC_FIELDS = ["ids", "tokens", "offsets"]


# --------------------------------------------------------------------------------------------
# Fixtures on disk


@lru_cache(maxsize=1)
def manifest() -> dict:
    """``MANIFEST.json`` of the fixture step: every fixture it knows, present or ``{"absent": why}``."""
    p = FIXTURES / "MANIFEST.json"
    if not p.is_file():
        raise RuntimeError(f"{p} missing: run scripts/fetch_fixtures.py (scripts/setup.sh does)")
    return json.loads(p.read_text(encoding="utf-8"))


def fixture_path(rel: str) -> Path | None:
    """The fixture file ``rel``, or None where the fixture step recorded it as absent (a Hub file
    that only ../shared has). A fixture the manifest lists as present must be there: a test can
    skip for a fixture this machine cannot have, never for one that went missing."""
    p = FIXTURES / rel
    entry = manifest().get(rel)
    if entry is None:  # a file inside a listed directory (a corpus file)
        return p if p.exists() else None
    if "absent" in entry:
        return None
    if not p.exists():
        raise AssertionError(f"{p}: listed as present in {FIXTURES / 'MANIFEST.json'} but missing")
    return p


# name -> path relative to .fixtures (tokenizer.json files used as-is)
FILE_TOKENIZERS = {
    "gpt2": "hub/gpt2.json",
    "bert_base_cased": "hub/bert_base_cased.json",
    "llama2": "hub/llama2.json",
    "mistral03": "hub/mistral03.json",
    "xlnet_base_cased": "hub/xlnet_base_cased.json",
    "bert_uncased": "registry/bert_uncased/tokenizer.json",
    "llama3": "registry/llama3/tokenizer.json",
    "mistral01": "registry/mistral01/tokenizer.json",
    "qwen3": "registry/qwen3/tokenizer.json",
    "deepseek_v3": "registry/deepseek_v3/tokenizer.json",
    # Gemma-3's shape over the Gemma-4 vocabulary (derived by scripts/fetch_fixtures.py).
    "gemma": "registry/gemma/tokenizer.json",
}
# name -> (builder, required fixture files); built with the `tokenizers` Python API from the
# original vocabulary files, then saved as tokenizer.json for both sides.
BUILT_TOKENIZERS = {
    "gpt2_from_vocab_merges": ("registry/gpt2/vocab.json", "registry/gpt2/merges.txt"),
    "bert_uncased_from_vocab_txt": ("registry/bert_uncased/vocab.txt",),
    # The Hub's ALBERT and T5 tokenizer.json layouts (transformers' converters before v4.4x)
    # around ALBERT's SentencePiece model: see `_spm_hub_style`.
    "albert_hub_style": ("registry/albert/spiece.model",),
    "t5_hub_style": ("registry/albert/spiece.model",),
}
ALL_FIXTURE_TOKENIZERS = list(FILE_TOKENIZERS) + list(BUILT_TOKENIZERS)


def proto_fields(buf: bytes):
    """(field number, wire type, value) of a serialized protobuf message, top level only."""
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        tag, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(buf, i)
        elif wire == 2:
            n, i = _read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 5:
            v, i = struct.unpack("<f", buf[i:i + 4])[0], i + 4
        elif wire == 1:
            v, i = buf[i:i + 8], i + 8
        else:
            raise ValueError(f"wire type {wire}")
        yield tag, wire, v


def _read_varint(buf: bytes, i: int):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def _spm_hub_style(model: Path, style: str):
    """A Unigram tokenizer.json laid out as the Hub's ALBERT (`style` "albert") or T5 ("t5")
    files are, built with the `tokenizers` API from a SentencePiece model: pieces and scores
    from `sentencepiece`, the charsmap from the model proto; normalizers (ALBERT: quote
    replaces, NFKD, StripAccents, Lowercase), Precompiled, Replace(Regex(" {2,}"), " "); then
    WhitespaceSplit + Metaspace."""
    import sentencepiece as spm
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    sp = spm.SentencePieceProcessor(model_file=str(model))
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    normalizer_spec = next(v for tag, _, v in proto_fields(model.read_bytes()) if tag == 3)
    charsmap = next((v for tag, _, v in proto_fields(normalizer_spec) if tag == 2), b"")
    tok = Tokenizer(models.Unigram(vocab, unk_id=sp.unk_id(), byte_fallback=False))
    steps = []
    if style == "albert":
        steps = [normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
                 normalizers.StripAccents(), normalizers.Lowercase()]
    tok.normalizer = normalizers.Sequence(steps + [normalizers.Precompiled(charsmap),
                                                   normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    specials = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)]
    tok.add_special_tokens(specials)
    cls, sep = ("[CLS]", "[SEP]") if "[CLS]" in specials else (specials[0], specials[-1])
    single = f"{cls}:0 $A:0 {sep}:0" if style == "albert" else f"$A:0 {sep}:0"
    pair = f"{single} $B:1 {sep}:1"
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, sp.piece_to_id(t)) for t in {cls, sep}])
    return tok


def build_fixture_tokenizer(name: str, out_dir: Path) -> Path:
    """Return a tokenizer.json path for a fixture tokenizer (skips the test when unavailable)."""
    if name in FILE_TOKENIZERS:
        p = fixture_path(FILE_TOKENIZERS[name])
        if p is None:
            pytest.skip(f"fixture {FILE_TOKENIZERS[name]}: {manifest()[FILE_TOKENIZERS[name]]['absent']}")
        return p
    files = BUILT_TOKENIZERS[name]
    paths = [fixture_path(f) for f in files]
    if any(p is None for p in paths):
        pytest.skip(f"fixture files {files}: absent on this machine (.fixtures/MANIFEST.json)")
    out = out_dir / f"{name}.json"
    if out.exists():
        return out
    from tokenizers.implementations import BertWordPieceTokenizer, ByteLevelBPETokenizer

    if name == "gpt2_from_vocab_merges":
        tok = ByteLevelBPETokenizer(str(paths[0]), str(paths[1]))  # ByteLevel pre-tok/decoder/processor
        tok.add_special_tokens(["<|endoftext|>"])
    elif name.endswith("_hub_style"):
        tok = _spm_hub_style(paths[0], name.split("_")[0])
    else:
        tok = BertWordPieceTokenizer(str(paths[0]), lowercase=True)
    tmp = out.with_suffix(".tmp")
    tok.save(str(tmp))
    os.replace(tmp, out)
    return out


# --------------------------------------------------------------------------------------------
# Corpora and samples


def corpus_dir() -> Path | None:
    return fixture_path("corpora")


def corpus_files() -> list[str]:
    d = corpus_dir()
    if d is None:
        return []
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file() and not p.name.startswith("."))


# What a fresh clone without ../shared has in place of the shared corpora: botchan (from a
# registry) and small built-in samples per language.
CORPUS_FALLBACK = {"en": "en/botchan.txt", "zh": "builtin/zh/sample.txt", "ja": "builtin/ja/sample.txt",
                   "code": "builtin/code/sample.py.txt", "mixed": "builtin/mixed/sample.txt"}


def corpus_rels(rels: Sequence[str], fallback: Sequence[str] | None = None) -> list[str]:
    """The files of `rels` this checkout has, else the fallbacks: `fallback`, or for each of
    `rels` the fresh clone's file of its language (`CORPUS_FALLBACK`)."""
    d = corpus_dir()
    have = lambda rs: [r for r in rs if d is not None and (d / r).is_file()]  # noqa: E731
    if fallback is None:
        fallback = list(dict.fromkeys(CORPUS_FALLBACK[r.split("/")[0]] for r in rels if r.split("/")[0] in CORPUS_FALLBACK))
    return have(rels) or have(fallback)


@lru_cache(maxsize=4)
def corpus_lines(rel: str) -> tuple[str, ...]:
    """Lines of a corpus file without their trailing '\\n' (a '\\r' is kept)."""
    with open(corpus_dir() / rel, encoding="utf-8", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return tuple(lines)


def spread(n_items: int, k: int) -> list[int]:
    """k positions spread evenly over range(n_items)."""
    if n_items <= 0:
        return []
    if k >= n_items:
        return list(range(n_items))
    return [i * n_items // k for i in range(k)]


def sample_lines(rel: str, n: int = 300, allow_full: bool = True) -> list[str]:
    """First n lines (every line in FULL mode unless allow_full=False)."""
    return list(_sample_lines(rel, n, FULL and allow_full))


@lru_cache(maxsize=None)
def _sample_lines(rel: str, n: int, full: bool) -> tuple[str, ...]:
    lines = corpus_lines(rel)
    return tuple(lines) if full else tuple(lines[:n])


def spread_lines(rel: str, k: int) -> list[str]:
    """k lines from evenly spread positions of the file (cached: corpora are large)."""
    return list(_spread_lines(rel, k))


@lru_cache(maxsize=None)
def _spread_lines(rel: str, k: int) -> tuple[str, ...]:
    lines = corpus_lines(rel)
    return tuple(lines[i] for i in spread(len(lines), k))


def sample_chunks(rel: str, k: int = 60, size: int = 5, allow_full: bool = True) -> list[str]:
    """Multi-line chunks (each line keeps its '\\n'), from spread positions of the file
    (in FULL mode: all consecutive chunks, unless allow_full=False)."""
    return list(_sample_chunks(rel, k, size, FULL and allow_full))


@lru_cache(maxsize=None)
def _sample_chunks(rel: str, k: int, size: int, full: bool) -> tuple[str, ...]:
    lines = corpus_lines(rel)
    n_chunks = max(0, len(lines) - size + 1)
    starts = range(0, n_chunks, size) if full else spread(n_chunks, k)
    return tuple("".join(l + "\n" for l in lines[s:s + size]) for s in starts)


def sample_pairs(rel: str, n: int = 100, allow_full: bool = True) -> list[tuple[str, str]]:
    """Pairs of consecutive lines (all of them in FULL mode unless allow_full=False), plus
    (chunk, line) pairs."""
    return list(_sample_pairs(rel, n, FULL and allow_full))


@lru_cache(maxsize=None)
def _sample_pairs(rel: str, n: int, full: bool) -> tuple[tuple[str, str], ...]:
    lines = corpus_lines(rel)
    chunks = sample_chunks(rel, k=max(1, n // 5), allow_full=full)
    m = len(lines) - 1 if full else min(n, len(lines) - 1)
    pairs = [(lines[i], lines[i + 1]) for i in range(max(0, m))]
    pairs += [(c, lines[i % max(1, len(lines))]) for i, c in enumerate(chunks)]
    return tuple(pairs)


@lru_cache(maxsize=None)
def spread_pairs(rel: str, k: int) -> tuple[tuple[str, str], ...]:
    """k pairs of consecutive lines from evenly spread positions."""
    lines = corpus_lines(rel)
    return tuple((lines[i], lines[i + 1]) for i in spread(len(lines) - 1, k))


# Hand-written edge cases appended to every mixed sample.
EDGE_CASES = [
    "", " ", "  ", "\t", "\n", "\r\n", " \n ", "a", "A  B   C", "  leading", "trailing  ",
    "Hello, world!", "Hello,world!How are you?", "don't can't it's they're I'll we've",
    "3.14159 1,000,000 2024-01-01 0x1F 12345678901234567890",
    "Café naïve résumé façade Ångström", "e\u0301 a\u0308 ﬁ ﬂ ① Ⅻ ｶﾀｶﾅ ＡＢＣ ½",
    "👍🏽 👨\u200d👩\u200d👧\u200d👦 🇫🇷 ❤️ 😀😃😄", "zero\u200bwidth\u00a0nbsp\u3000ideo",
    "ctrl\u0001\u0007\u001f\u007f\u0085 and \ufeffBOM", "null\u0000byte",
    "子曰：学而时习之，不亦说乎？", "吾輩は猫である。名前はまだ無い。", "한국어 텍스트 ไทย हिन्दी",
    "Русский Ελληνικά עברית العربية", "x" * 300, "ab" * 200 + " " + "字" * 150,
    "<s> </s> <unk> [CLS] [SEP] [PAD] [MASK] <|endoftext|> <pad>",
    "▁already▁metaspace ▁ ▁▁", "Ġalready Ġbyte level", "##sub ##word", "<0x41> <0xFF>",
    "tabs\tand\t\tspaces    mixed \t \t end", "line1\nline2\n\nline4\n",
    "def f(x):\n    return x**2  # comment\n", "fn main() { println!(\"{}\", 1); }",
]


def mixed_sample(lines_per_file: int = 20, chunks_per_file: int = 4) -> list[str]:
    """A small sample across every corpus file plus EDGE_CASES (for component tests)."""
    return list(_mixed_sample(lines_per_file, chunks_per_file))


@lru_cache(maxsize=None)
def _mixed_sample(lines_per_file: int, chunks_per_file: int) -> tuple[str, ...]:
    out: list[str] = []
    for rel in corpus_files():
        if FULL:  # a larger sample, not the whole corpus (that is for test_fixtures)
            out += sample_lines(rel, 300, allow_full=False)
            out += sample_chunks(rel, k=60, allow_full=False)
        else:
            out += spread_lines(rel, lines_per_file)
            out += sample_chunks(rel, k=chunks_per_file, allow_full=False)
    return tuple(out + EDGE_CASES)


def mixed_pairs(n_per_file: int = 6) -> list[tuple[str, str]]:
    return list(_mixed_pairs(n_per_file))


@lru_cache(maxsize=None)
def _mixed_pairs(n_per_file: int) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for rel in corpus_files():
        ps = spread_pairs(rel, n_per_file)
        out += ps
        out += [(c, ps[0][0] if ps else "") for c in sample_chunks(rel, k=2, allow_full=False)]
    e = EDGE_CASES
    out += [(e[i], e[-1 - i]) for i in range(len(e))]
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Oracle side


def enc_to_dict(e, full: bool, with_overflow: bool = True) -> dict:
    d = {"ids": list(e.ids), "tokens": list(e.tokens), "offsets": [list(o) for o in e.offsets]}
    if full:
        d["type_ids"] = list(e.type_ids)
        d["attention_mask"] = list(e.attention_mask)
        d["special_tokens_mask"] = list(e.special_tokens_mask)
        d["word_ids"] = list(e.word_ids)
        d["sequence_ids"] = list(e.sequence_ids)
        if with_overflow:
            d["overflowing"] = [enc_to_dict(o, True, with_overflow=False) for o in e.overflowing]
    return d


def _as_hf_input(x, pretokenized: bool):
    if pretokenized:
        # a pair is an array of two arrays
        if len(x) == 2 and all(isinstance(w, list) for w in x):
            return (x[0], x[1])
        return x
    return tuple(x) if isinstance(x, (list, tuple)) else x


def hf_encode(tok, inputs: Sequence, *, add_special: bool = True, pretokenized: bool = False,
              batch_size: int = DEFAULT_BATCH, full: bool = True):
    """Encode like the CLI (consecutive batches with encode_batch).

    Returns (kept_inputs, expected_dicts, n_oracle_errors): inputs on which HF itself raises are
    dropped (and the batches recomputed without them), since there is nothing to compare.
    """
    kept = list(inputs)
    errors = 0
    while True:
        try:
            out = []
            for s in range(0, len(kept), batch_size):
                batch = [_as_hf_input(x, pretokenized) for x in kept[s:s + batch_size]]
                encs = tok.encode_batch(batch, add_special_tokens=add_special, is_pretokenized=pretokenized)
                out += [enc_to_dict(e, full) for e in encs]
            return kept, out, errors
        except BaseException as exc:  # HF raises, or panics (pyo3 PanicException is a BaseException)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            good = []
            for x in kept:
                try:
                    tok.encode_batch([_as_hf_input(x, pretokenized)], add_special_tokens=add_special,
                                     is_pretokenized=pretokenized)
                    good.append(x)
                except BaseException as e:  # noqa: BLE001
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
            if len(good) == len(kept):
                raise
            errors += len(kept) - len(good)
            kept = good


def hf_decode(tok, id_lists, skip_special: bool):
    kept, out, errors = [], [], 0
    for ids in id_lists:
        try:
            s = tok.decode(ids, skip_special_tokens=skip_special)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            errors += 1
            continue
        kept.append(ids)
        out.append(s)
    return kept, out, errors


def hf_decode_stream(tok, id_lists, skip_special: bool):
    from tokenizers.decoders import DecodeStream

    kept, out, errors = [], [], 0
    for ids in id_lists:
        try:
            st = DecodeStream(skip_special_tokens=skip_special)
            steps = [st.step(tok, i) for i in ids]
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            errors += 1
            continue
        kept.append(ids)
        out.append(steps)
    return kept, out, errors


# --------------------------------------------------------------------------------------------
# CLI side


def tokenkit_bin() -> Path:
    env = os.environ.get("TOKENKIT_BIN")
    if env:
        return Path(env)
    cands = []
    if os.environ.get("CARGO_TARGET_DIR"):
        cands.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "tokenkit")
    cands.append(REPO / "target" / "release" / "tokenkit")
    for c in cands:
        if c.exists():
            return c
    return cands[-1]


def require_cli() -> Path:
    if ORACLE_ONLY:
        pytest.skip("TOKENKIT_ORACLE_ONLY=1: oracle side computed, CLI not called")
    b = tokenkit_bin()
    if not b.exists():
        pytest.fail(f"tokenkit binary not found at {b}: run `cargo build --release -p tokenkit-cli` "
                    "(or scripts/setup.sh) or set TOKENKIT_BIN", pytrace=False)
    return b


def cli_prefix(b: Path) -> list[str]:
    # a .py stand-in (tests/conformance/reference_cli.py) runs under this interpreter
    return [sys.executable, str(b)] if b.suffix == ".py" else [str(b)]


def _cli_env() -> dict:
    env = dict(os.environ)
    bt = env.pop("TOKENKIT_CLI_RUST_BACKTRACE", None)
    if bt:
        env["RUST_BACKTRACE"] = bt
    elif bt is not None:
        env.pop("RUST_BACKTRACE", None)
    return env


def run_cli(args: list[str], stdin: bytes, *, check: bool = True, timeout: float | None = None):
    b = require_cli()
    try:
        r = subprocess.run([*cli_prefix(b), *args], input=stdin, capture_output=True,
                           timeout=timeout or CLI_TIMEOUT, env=_cli_env())
    except subprocess.TimeoutExpired:
        pytest.fail(f"tokenkit {' '.join(args)} timed out after {timeout or CLI_TIMEOUT}s", pytrace=False)
    if check and r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace")
        pytest.fail(f"tokenkit {' '.join(args)} exited {r.returncode}:\n{err[-3000:]}", pytrace=False)
    return r


def to_jsonl(items: Iterable, ensure_ascii: bool = False) -> bytes:
    return "".join(json.dumps(x, ensure_ascii=ensure_ascii) + "\n" for x in items).encode("utf-8")


def parse_jsonl(out: bytes, n_expected: int, what: str) -> list:
    text = out.decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    res = []
    for i, l in enumerate(lines):
        try:
            res.append(json.loads(l))
        except json.JSONDecodeError as e:
            pytest.fail(f"{what}: output line {i + 1} is not JSON ({e}): {l[:200]!r}", pytrace=False)
    if len(res) != n_expected:
        pytest.fail(f"{what}: expected {n_expected} output lines, got {len(res)}", pytrace=False)
    return res


def cli_encode(path: Path, inputs: Sequence, *, add_special: bool = True, pretokenized: bool = False,
               batch_size: int | None = None, full: bool = True, ensure_ascii: bool = False) -> list:
    args = ["encode", "-t", str(path), "--jsonl"]
    if full:
        args.append("--full")
    if not add_special:
        args.append("--no-special")
    if pretokenized:
        args.append("--pretokenized")
    if batch_size is not None:
        args += ["--batch-size", str(batch_size)]
    r = run_cli(args, to_jsonl([list(x) if isinstance(x, tuple) else x for x in inputs], ensure_ascii))
    return parse_jsonl(r.stdout, len(inputs), "encode")


def cli_decode(path: Path, id_lists, *, skip_special: bool, stream: bool = False) -> list:
    args = ["decode", "-t", str(path), "--jsonl"]
    if skip_special:
        args.append("--skip-special")
    if stream:
        args.append("--stream")
    r = run_cli(args, to_jsonl(id_lists))
    return parse_jsonl(r.stdout, len(id_lists), "decode")


# --------------------------------------------------------------------------------------------
# Comparison and reporting


def _short(x: Any, n: int = 90) -> str:
    s = json.dumps(x, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 1] + "…"


def first_diff(exp: Any, got: Any, fields: Sequence[str] | None = None) -> str | None:
    """Compact description of the first differing field, or None when equal."""
    if exp == got:
        return None
    if isinstance(exp, dict) and isinstance(got, dict):
        keys = list(fields or exp.keys())
        for k in keys:
            if k not in got:
                return f"field {k!r} missing from tokenkit output"
            if exp.get(k) != got.get(k):
                return f"{k}: " + (first_diff(exp.get(k), got.get(k)) or "")
        return None
    if isinstance(exp, list) and isinstance(got, list):
        i = 0
        while i < min(len(exp), len(got)) and exp[i] == got[i]:
            i += 1
        lo = max(0, i - 2)
        where = f"first diff at [{i}] (len hf={len(exp)} tk={len(got)})"
        if i < min(len(exp), len(got)) and isinstance(exp[i], dict):
            return f"{where}: " + (first_diff(exp[i], got[i]) or "")
        return f"{where}: hf[{lo}:]={_short(exp[lo:i + 4])} tk[{lo}:]={_short(got[lo:i + 4])}"
    return f"hf={_short(exp)} tk={_short(got)}"


@dataclass
class Outcome:
    identical: int = 0
    total: int = 0
    oracle_errors: int = 0
    mismatches: list[str] = field(default_factory=list)


RESULTS: list[dict] = []
_lock = threading.Lock()
_results_file = os.environ.get("TOKENKIT_CONFORMANCE_RESULTS")


def record(group: str, tokenizer: str, corpus: str, kind: str, o: Outcome, cli_error: bool = False) -> None:
    rec = {"group": group, "tokenizer": tokenizer, "corpus": corpus, "kind": kind,
           "identical": o.identical, "total": o.total, "oracle_errors": o.oracle_errors,
           "cli_error": cli_error}
    with _lock:
        RESULTS.append(rec)
        path = os.environ.get("TOKENKIT_CONFORMANCE_RESULTS")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")


def _diff_rows(o: Outcome, inputs: Sequence, expected: Sequence, got: Sequence,
               fields: Sequence[str] | None, offset: int = 0, max_show: int = 5) -> None:
    o.total += len(expected)
    for i, (inp, e, g) in enumerate(zip(inputs, expected, got)):
        d = first_diff(e, g, fields)
        if d is None:
            o.identical += 1
        elif len(o.mismatches) < max_show:
            o.mismatches.append(f"  #{offset + i} input={_short(inp, 120)}\n      {d}")


def _finish(group: str, tokenizer: str, corpus: str, kind: str, o: Outcome) -> Outcome:
    record(group, tokenizer, corpus, kind, o)
    extra = f" ({o.oracle_errors} inputs dropped: HF raised)" if o.oracle_errors else ""
    msg = f"{tokenizer} / {corpus} {kind}: {o.identical}/{o.total} identical{extra}"
    print(msg)
    if o.identical != o.total:
        pytest.fail(msg + "\n" + "\n".join(o.mismatches), pytrace=False)
    return o


def compare(group: str, tokenizer: str, corpus: str, kind: str, inputs: Sequence, expected: Sequence,
            got: Sequence, *, fields: Sequence[str] | None = None, oracle_errors: int = 0) -> Outcome:
    """Compare row by row, record the counts, print them, fail with the first few diffs."""
    o = Outcome(oracle_errors=oracle_errors)
    _diff_rows(o, inputs, expected, got, fields)
    return _finish(group, tokenizer, corpus, kind, o)


@contextmanager
def recording_cli_errors(group: str, tokenizer: str, corpus: str, kind: str, total: int):
    """A CLI failure (non-zero exit, bad output) counts as 0/total in the summary."""
    try:
        yield
    except pytest.fail.Exception:
        record(group, tokenizer, corpus, kind, Outcome(total=total), cli_error=True)
        raise


# Inputs per CLI call. Sample mode always fits in one call; in FULL mode large corpora are cut
# into slices (at batch boundaries, so per-batch padding is unchanged) to bound memory.
SLICE = int(os.environ.get("TOKENKIT_CONFORMANCE_SLICE", "20000"))


def _slices(n: int, batch_size: int):
    step = max(batch_size, SLICE // batch_size * batch_size)
    return [(s, min(n, s + step)) for s in range(0, n, step)] or [(0, 0)]


def check_encode(group: str, name: str, path: Path, corpus: str, kind: str, inputs: Sequence, *,
                 tok=None, add_special: bool = True, pretokenized: bool = False,
                 batch_size: int | None = None, full: bool = True, ensure_ascii: bool = False) -> Outcome:
    """Oracle encode + one CLI run (per slice) + field-by-field comparison."""
    from tokenizers import Tokenizer

    tok = tok or Tokenizer.from_file(str(path))
    bs = batch_size or DEFAULT_BATCH
    fields = FULL_FIELDS if full else BASIC_FIELDS
    o = Outcome()
    kept_inputs = list(inputs)
    if len(_slices(len(kept_inputs), bs)) > 1:
        # drop HF-rejected inputs first, so that slices keep the CLI's batch boundaries
        kept_inputs, _, o.oracle_errors = hf_encode(tok, kept_inputs, add_special=add_special,
                                                    pretokenized=pretokenized, batch_size=1, full=False)
    for lo, hi in _slices(len(kept_inputs), bs):
        kept, expected, errs = hf_encode(tok, kept_inputs[lo:hi], add_special=add_special,
                                         pretokenized=pretokenized, batch_size=bs, full=full)
        o.oracle_errors += errs
        with recording_cli_errors(group, name, corpus, kind, len(kept)):
            got = cli_encode(path, kept, add_special=add_special, pretokenized=pretokenized,
                             batch_size=batch_size, full=full, ensure_ascii=ensure_ascii)
        _diff_rows(o, kept, expected, got, fields, offset=lo)
    return _finish(group, name, corpus, kind, o)


def check_decode(group: str, name: str, path: Path, corpus: str, id_lists, *, tok=None,
                 skip_special: bool, stream: bool = False) -> Outcome:
    from tokenizers import Tokenizer

    tok = tok or Tokenizer.from_file(str(path))
    fn = hf_decode_stream if stream else hf_decode
    kind = ("decode-stream" if stream else "decode") + ("-skip" if skip_special else "")
    o = Outcome()
    id_lists = list(id_lists)
    for lo, hi in _slices(len(id_lists), 1):
        kept, expected, errs = fn(tok, id_lists[lo:hi], skip_special)
        o.oracle_errors += errs
        with recording_cli_errors(group, name, corpus, kind, len(kept)):
            got = cli_decode(path, kept, skip_special=skip_special, stream=stream)
        _diff_rows(o, kept, expected, got, None, offset=lo)
    return _finish(group, name, corpus, kind, o)


def decode_inputs(tok, encodings_ids: list[list[int]], n_random: int = 40, seed: int = 0,
                  repeats: bool = False) -> list[list[int]]:
    """Real id sequences plus seeded random ones (in range, incl. added/special tokens)."""
    import random

    rng = random.Random(seed)
    all_ids = sorted(set(tok.get_vocab(with_added_tokens=True).values()))
    added = sorted(tok.get_added_tokens_decoder().keys())
    out = [list(x) for x in encodings_ids]
    for _ in range(n_random):
        n = rng.randint(0, 24)
        ids = [rng.choice(all_ids) if rng.random() > 0.15 or not added else rng.choice(added) for _ in range(n)]
        if repeats:
            ids = [i for i in ids for _ in range(rng.randint(1, 3))]
        out.append(ids)
    return out


@lru_cache(maxsize=64)
def load_hf(path: str):
    """HF Tokenizer for a path (cached: loading the large fixtures takes a while)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


def ids_of(tok, inputs: Sequence, add_special: bool = True) -> list[list[int]]:
    _, encs, _ = hf_encode(tok, inputs, add_special=add_special, full=False)
    return [e["ids"] for e in encs]
