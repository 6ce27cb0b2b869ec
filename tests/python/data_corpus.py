"""Shared pieces of the dataset-tokenization tests (test_data_*.py): the fixture paths, the
tokenkit binary, a JSONL corpus built from the fixture corpora, and a reader of Megatron-LM's
indexed dataset written from the layout Megatron documents (megatron/core/datasets/indexed_dataset.py),
independent of tokenkit's writer."""
from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
import harness  # noqa: E402  (tests/conformance/harness.py: the binary's location rule)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / ".fixtures"
os.environ.setdefault("TOKENKIT_TIKTOKEN_DIR", str(FIXTURES / "tiktoken"))

# Bad lines put into the corpus: each is counted, never encoded.
BAD_LINES = ['{"text": "unterminated', '["not", "an", "object"]', '{"title": "no text field"}', '{"text": 42}']


def fixture(rel: str) -> Path:
    """A fixture file; missing is an error (the set-up fetches them), never a skip."""
    p = FIXTURES / rel
    assert p.exists(), f"{p} is missing: run scripts/setup.sh (scripts/fetch_fixtures.py fetches it)"
    return p


def tokenkit_bin() -> Path:
    """The release binary, found as the conformance suite finds it; missing is an error."""
    path = harness.tokenkit_bin()
    assert path.exists(), f"no tokenkit binary at {path}: run scripts/setup.sh"
    return path


# The corpus of each language: the first of these that the set-up provides (../shared/corpora on
# the project machines; on a fresh clone Botchan from the sentencepiece sdist for English and the
# built-in samples of scripts/fetch_fixtures.py for the others).
SOURCES = {
    "en": ["corpora/en/botchan.txt", "corpora/builtin/en/sample.txt"],
    "ja": ["corpora/ja/wagahai.txt", "corpora/builtin/ja/sample.txt"],
    "zh": ["corpora/zh/lunyu.txt", "corpora/builtin/zh/sample.txt"],
    "code": ["corpora/code/cpython-3.11-stdlib.py.txt", "corpora/builtin/code/sample.py.txt"],
    "mixed": ["corpora/mixed/utf8_input.txt", "corpora/builtin/mixed/sample.txt"],
}


def corpus_file(lang: str) -> Path:
    """The corpus file of `lang` (see SOURCES); none at all is an error, never a skip."""
    for rel in SOURCES[lang]:
        if (FIXTURES / rel).is_file():
            return FIXTURES / rel
    raise AssertionError(f"no {lang} corpus in {FIXTURES / 'corpora'}: run scripts/setup.sh")


def documents(max_docs: int = 4000) -> list[str]:
    """Paragraphs (texts between blank lines; the non-blank lines of a file with too few
    paragraphs, such as a built-in sample) of the English, Japanese, Chinese, code and mixed
    corpora, interleaved, up to `max_docs`."""
    per_source = []
    for lang in SOURCES:
        text = corpus_file(lang).read_text(encoding="utf-8")
        want = max_docs // len(SOURCES) + 1
        paras = [p for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
        if len(paras) < want:
            paras = [line for line in text.splitlines() if line.strip()]
        per_source.append(paras[:want])
    docs = []
    for k in range(max(len(p) for p in per_source)):
        for paras in per_source:
            if k < len(paras):
                docs.append(paras[k])
    return docs[:max_docs]


def write_jsonl(path: Path, docs: list[str], bad_every: int = 0) -> int:
    """Writes `docs` as JSON lines (`{"text": ..., "id": k}`), with a bad line after every
    `bad_every` documents; returns the number of bad lines."""
    bad = 0
    with open(path, "w", encoding="utf-8") as f:
        for k, d in enumerate(docs):
            f.write(json.dumps({"id": k, "text": d}, ensure_ascii=False) + "\n")
            if bad_every and k % bad_every == bad_every - 1:
                f.write(BAD_LINES[bad % len(BAD_LINES)] + "\n")
                bad += 1
    return bad


def reference_tiktoken(name: str):
    """tiktoken's own encoding `name`, its ranks read from the fixture rank file."""
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    path = fixture(f"tiktoken/{name}.tiktoken")
    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(**getattr(op, name)())


MEGATRON_DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32,
                   8: np.uint16}


def read_megatron(prefix: Path) -> tuple[np.dtype, list[np.ndarray], np.ndarray]:
    """(dtype, sequences, document_indices) of a Megatron indexed dataset: `.idx` is the magic
    `MMIDIDX\\0\\0`, version <Q, dtype code <B, sequence count <Q, document count <Q, then int32
    lengths, int64 byte pointers, int64 document indices; `.bin` holds the tokens."""
    idx = Path(f"{prefix}.idx").read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    (version,) = struct.unpack_from("<Q", idx, 9)
    assert version == 1
    (code,) = struct.unpack_from("<B", idx, 17)
    n_seq, n_doc = struct.unpack_from("<QQ", idx, 18)
    off = 34
    lengths = np.frombuffer(idx, np.int32, n_seq, off)
    off += 4 * n_seq
    pointers = np.frombuffer(idx, np.int64, n_seq, off)
    off += 8 * n_seq
    doc_idx = np.frombuffer(idx, np.int64, n_doc, off)
    off += 8 * n_doc
    assert off == len(idx), "no sequence modes expected"
    dtype = np.dtype(MEGATRON_DTYPES[code])
    data = np.memmap(f"{prefix}.bin", dtype=dtype, mode="r")
    seqs = [np.asarray(data[p // dtype.itemsize: p // dtype.itemsize + n]) for p, n in zip(pointers, lengths)]
    return dtype, seqs, doc_idx


def spark_session(monkeypatch, name: str):
    """A PySpark local[2] session whose Python workers are this interpreter (Spark starts them
    with `python3` from PATH unless told, and they need the one with pyarrow and tokenkit)."""
    from pyspark.sql import SparkSession

    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    return (SparkSession.builder.master("local[2]").appName(name)
            .config("spark.ui.enabled", "false").config("spark.sql.execution.arrow.maxRecordsPerBatch", "256")
            .getOrCreate())
