"""Unigram `.model` files with extreme scores encode exactly as `sentencepiece` 0.2.3 does.

sentencepiece's one-best Viterbi sums scores in `f32` and rebases the path sums to 0 whenever
one leaves ±1e5 (`kScoreResetThreshold`), which decides the segmentation once scores are large
(±3.4e38, ±1e30, -1e9, BPE ranks read as Unigram scores); user-defined pieces score
`0.1 * (length - 1)`. Checked here through the CLI, ids, pieces, offsets and decode:

- every minimized model of the differential fuzz (`crates/tokenkit/tests/data/fuzz/sentencepiece/`,
  from `tests/fuzz/differential.py --cases 10000 --targets sentencepiece`, seed 1), on the text
  it was found with, the fuzz texts and the edge cases;
- Unigram models made from the botchan fixture with seeded extreme scores, on corpus lines and
  multi-line chunks (long enough for many rebases).
"""
from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

import harness as h
from test_sentencepiece import EDGE_CASES, _check

REGRESSIONS = h.REPO / "crates" / "tokenkit" / "tests" / "data" / "fuzz" / "sentencepiece"
# The text each regression model was minimized with (its directory name: what the scores are).
FOUND_WITH = {
    "unigram-max-user-defined": ".141",
    "unigram-llama2-pieces-minus-1e9": "rld! The",
    "unigram-minus-1e30": "e caf",
    "unigram-minus-max": "ello",
    "unigram-minus-max-unknown": "r 202",
    "unigram-minus-1e9": "e yea",
    "unigram-plus-1e30-user-defined": ".159",
    "unigram-minus-1e9-short": "yea",
}
# tests/fuzz/differential.py's texts.
FUZZ_TEXTS = [
    "Hello, world! The year 2024: naïve café, ÀÉÎ ß.",
    "日本語のテキスト 中文 한국어 👍🏽 \u200d\t\n  x",
    "<|endoftext|> [CLS] <s> </s> <unk> [MASK] <|begin_of_text|> ▁a ##b",
    "1234567890 3.14159 \0 \r\n a\u0301",
    "",
]
F32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
EXTREME = [F32_MAX, -F32_MAX, 3e38, -3e38, 1e30, -1e30, -1e9, 1e9, -2e5, 2e5, 1e-45, -1e-45,
           1.2e-38, 0.0, -0.0]
# (name, what is done to the scores of the botchan Unigram model); each is built with 3 seeds.
VARIANTS = ["extreme", "scaled", "ranks", "subnormal", "user_defined", "extreme_user_defined"]


def test_every_regression_is_listed():
    found = sorted(p.name for p in REGRESSIONS.iterdir() if (p / "tokenizer.model").is_file())
    assert found == sorted(FOUND_WITH), "a model under tests/data/fuzz/sentencepiece without its text, or the reverse"


@pytest.mark.parametrize("name", sorted(FOUND_WITH))
def test_fuzz_regression_matches_sentencepiece(name):
    spm = pytest.importorskip("sentencepiece")
    path = REGRESSIONS / name / "tokenizer.model"
    sp = spm.SentencePieceProcessor(model_file=str(path))
    _check(name, path, sp, "-", "fuzz texts", [FOUND_WITH[name]] + FUZZ_TEXTS + EDGE_CASES)


def _variant(base: bytes, variant: str, seed: int) -> bytes:
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    m = pb.ModelProto()
    m.ParseFromString(base)
    rng = random.Random(f"{variant}/{seed}")
    normal = [p for p in m.pieces if p.type == pb.ModelProto.SentencePiece.NORMAL]
    if variant in ("extreme", "extreme_user_defined"):
        for p in rng.sample(normal, 40):
            p.score = rng.choice(EXTREME)
    elif variant == "scaled":
        # Sums pass ±1e5 after a few pieces; f32 rounding of large sums decides ties.
        factor = rng.choice([1e4, 1e7, 1e30])
        for p in normal:
            p.score *= factor
    elif variant == "ranks":
        # A BPE model read as Unigram: the score of a piece is minus its rank.
        for rank, p in enumerate(normal):
            p.score = -float(rank * rng.choice([1, 1000, 10**6]))
    elif variant == "subnormal":
        for p in normal:
            p.score *= 1e-44
    elif variant == "user_defined":
        # Normal scores near the user-defined ones (0.1 per byte after the first), so that
        # user-defined pieces do not always win.
        for p in normal:
            p.score *= 0.02
    if variant in ("user_defined", "extreme_user_defined"):
        for p in rng.sample(normal, 30):
            p.type = pb.ModelProto.SentencePiece.USER_DEFINED
    return m.SerializeToString()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", VARIANTS)
def test_extreme_scores_match_sentencepiece(variant, seed, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    base = h.fixture_path("registry/sentencepiece/botchan_en_unigram_1000.model")
    corpora = h.corpus_files()
    if base is None or not corpora:
        pytest.skip("botchan model or corpora missing (run scripts/fetch_fixtures.py)")
    path = tmp_path / f"{variant}-{seed}.model"
    path.write_bytes(_variant(Path(base).read_bytes(), variant, seed))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    corpus = corpora[(VARIANTS.index(variant) * 3 + seed) % len(corpora)]
    inputs = h.sample_lines(corpus, 100) + h.sample_chunks(corpus, 20) + FUZZ_TEXTS + EDGE_CASES
    _check(f"{variant}-{seed}", path, sp, corpus, "lines, chunks, edge cases", inputs)
