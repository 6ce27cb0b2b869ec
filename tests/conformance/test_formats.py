"""The simple formats load straight into the CLI: a BERT vocab.txt and GPT-2's vocab.json +
merges.txt, compared with the pipelines HF builds from the same files
(`BertWordPieceTokenizer`, `ByteLevelBPETokenizer`)."""
from __future__ import annotations

import pytest

import harness as h

CORPORA = h.corpus_files() or ["<no corpora: run scripts/fetch_fixtures.py>"]
FORMATS = {
    "bert_uncased_vocab_txt": ("registry/bert_uncased/vocab.txt", "bert_uncased_from_vocab_txt"),
    "gpt2_vocab_json_merges": ("registry/gpt2/vocab.json", "gpt2_from_vocab_merges"),
}


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("name", list(FORMATS))
def test_raw_format_encodes_like_hf(name, corpus, work_dir):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
    raw_rel, built = FORMATS[name]
    raw = h.fixture_path(raw_rel)
    if raw is None:
        pytest.skip(f"{raw_rel} not present (run scripts/fetch_fixtures.py)")
    hf_tok = h.load_hf(str(h.build_fixture_tokenizer(built, work_dir)))
    lines = h.sample_lines(corpus, 150, allow_full=False)
    h.check_encode("format", name, raw, corpus, "lines", lines, tok=hf_tok)
    pairs = [list(p) for p in h.sample_pairs(corpus, 40, allow_full=False)]
    h.check_encode("format", name, raw, corpus, "pairs", pairs, tok=hf_tok)
