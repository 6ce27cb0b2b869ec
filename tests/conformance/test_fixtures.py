"""Encode and decode parity for every fixture tokenizer on every corpus file.

Default mode samples each corpus (first 300 lines + 60 five-line chunks from spread positions,
100 pairs); TOKENKIT_CONFORMANCE_FULL=1 uses every line.
"""
from __future__ import annotations

import zlib

import pytest

import harness as h

CORPORA = h.corpus_files() or ["<no corpora: run scripts/fetch_fixtures.py>"]
ENCODE_KINDS = ["lines", "chunks", "pairs", "lines-nospecial", "pretokenized"]


def _tok(name, work_dir):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
    path = h.build_fixture_tokenizer(name, work_dir)
    return path, h.load_hf(str(path))


def _pretok_inputs(corpus):
    lines = h.sample_lines(corpus, 100, allow_full=False)
    single = [l.split() for l in lines]
    pairs = [[a.split(), b.split()] for a, b in h.sample_pairs(corpus, 30, allow_full=False)[:40]]
    # keep the JSON shapes of the contract: array of words, or array of two arrays
    return single + pairs


@pytest.mark.parametrize("kind", ENCODE_KINDS)
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", h.ALL_FIXTURE_TOKENIZERS)
def test_encode(name, corpus, kind, work_dir):
    path, tok = _tok(name, work_dir)
    if kind == "lines":
        h.check_encode("fixture", name, path, corpus, kind, h.sample_lines(corpus), tok=tok)
    elif kind == "chunks":
        h.check_encode("fixture", name, path, corpus, kind, h.sample_chunks(corpus), tok=tok)
    elif kind == "pairs":
        h.check_encode("fixture", name, path, corpus, kind, h.sample_pairs(corpus), tok=tok)
    elif kind == "lines-nospecial":
        # sampled even in FULL mode (the lines/chunks/pairs kinds cover every line)
        inputs = (h.sample_lines(corpus, 100, allow_full=False) + h.sample_chunks(corpus, 20, allow_full=False)
                  + h.sample_pairs(corpus, 20, allow_full=False))
        h.check_encode("fixture", name, path, corpus, kind, inputs, tok=tok, add_special=False)
    elif kind == "pretokenized":
        # also feeds \\u-escaped JSON (ensure_ascii) to exercise the CLI's JSON string parsing
        h.check_encode("fixture", name, path, corpus, kind, _pretok_inputs(corpus), tok=tok,
                       pretokenized=True, ensure_ascii=True)


@pytest.mark.parametrize("name", h.ALL_FIXTURE_TOKENIZERS)
def test_encode_edge_cases(name, work_dir):
    path, tok = _tok(name, work_dir)
    e = h.EDGE_CASES
    inputs = e + [(a, b) for a, b in zip(e, reversed(e))]
    h.check_encode("fixture", name, path, "edge-cases", "mixed", inputs, tok=tok)
    h.check_encode("fixture", name, path, "edge-cases", "mixed-nospecial", inputs, tok=tok, add_special=False)


@pytest.mark.parametrize("skip", [False, True], ids=["keep-special", "skip-special"])
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", h.ALL_FIXTURE_TOKENIZERS)
def test_decode(name, corpus, skip, work_dir):
    path, tok = _tok(name, work_dir)
    texts = h.sample_lines(corpus, 100, allow_full=False) + h.sample_chunks(corpus, 20, allow_full=False)
    ids = h.ids_of(tok, texts) + h.ids_of(tok, texts[:20], add_special=False)
    ids = h.decode_inputs(tok, ids, n_random=20, seed=zlib.crc32(corpus.encode()))
    h.check_decode("fixture", name, path, corpus, ids, tok=tok, skip_special=skip)


@pytest.mark.parametrize("skip", [False, True], ids=["keep-special", "skip-special"])
@pytest.mark.parametrize("name", h.ALL_FIXTURE_TOKENIZERS)
def test_decode_stream(name, skip, work_dir):
    path, tok = _tok(name, work_dir)
    texts = h.mixed_sample(lines_per_file=10, chunks_per_file=2)
    ids = h.decode_inputs(tok, h.ids_of(tok, texts), n_random=60, seed=7)
    h.check_decode("fixture", name, path, "mixed-sample", ids, tok=tok, skip_special=skip, stream=True)
