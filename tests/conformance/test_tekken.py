"""Mistral Tekken (`tekken.json`): `tokenkit encode -t tekken.json` against `mistral-common`'s
`Tekkenizer` (ids offset by the special tokens; `<s>` with `encode(s, bos=True, eos=False)`,
none with `--no-special`; special-token text encoded as text) on every corpus, lines and
chunks; decoding with special tokens kept (`SpecialTokenPolicy.KEEP`) and skipped (`IGNORE`);
and `tokenkit save` to a tokenizer.json that HF `tokenizers` loads with the same ids."""
from __future__ import annotations

import random
from functools import lru_cache

import pytest

import harness as h

tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy  # noqa: E402

FILES = ["registry/tekken/tekken_240718.json", "registry/tekken/tekken_240911.json"]
CORPORA = h.corpus_files() or ["<no corpora>"]


def path_of(rel: str):
    p = h.fixture_path(rel)
    if p is None:
        pytest.skip(f"{rel} absent on this machine")
    return p


@lru_cache(maxsize=None)
def reference(rel: str):
    return tekken.Tekkenizer.from_file(path_of(rel))


def cli_ids(rel: str, texts: list[str], flags: list[str] = ()) -> list:
    r = h.run_cli(["encode", "-t", str(path_of(rel)), "--jsonl", *flags], h.to_jsonl(texts))
    return [row.get("ids", row.get("error")) for row in h.parse_jsonl(r.stdout, len(texts), "encode")]


def compare(rel: str, corpus: str, kind: str, texts: list[str], expected: list, flags: list[str] = ()):
    name = rel.rsplit("/", 1)[-1]
    with h.recording_cli_errors("tekken", name, corpus, kind, len(texts)):
        got = cli_ids(rel, texts, flags)
    h.compare("tekken", name, corpus, kind, texts, expected, got)


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("rel", FILES)
def test_encode_like_mistral_common(rel, corpus):
    if not h.corpus_files():
        pytest.skip("no corpora in .fixtures")
    ref = reference(rel)
    lines = h.sample_lines(corpus, 300)
    compare(rel, corpus, "lines bos", lines, [ref.encode(t, bos=True, eos=False) for t in lines])
    chunks = h.sample_chunks(corpus, 60)
    compare(rel, corpus, "chunks --no-special", chunks, [ref.encode(t, bos=False, eos=False) for t in chunks],
            ["--no-special"])


SPECIAL_TEXTS = ["<s>[INST] hi [/INST]</s>", "<unk><pad>[TOOL_CALLS]", "<SPECIAL_42> x", "[IMG][IMG_END]", ""]


@pytest.mark.parametrize("rel", FILES)
def test_special_token_text_is_text(rel):
    ref = reference(rel)
    compare(rel, "special", "text", SPECIAL_TEXTS, [ref.encode(t, bos=True, eos=False) for t in SPECIAL_TEXTS])


@pytest.mark.parametrize("rel", FILES)
def test_decode_like_mistral_common(rel):
    ref = reference(rel)
    rng = random.Random(0)
    ids = [ref.encode(t, bos=True, eos=True) for t in h.mixed_sample(5, 1)]
    ids += [[rng.randrange(ref.n_words) for _ in range(20)] for _ in range(30)]
    name = rel.rsplit("/", 1)[-1]
    for flags, policy in (([], SpecialTokenPolicy.KEEP), (["--skip-special"], SpecialTokenPolicy.IGNORE)):
        r = h.run_cli(["decode", "-t", str(path_of(rel)), "--jsonl", *flags], h.to_jsonl(ids))
        got = h.parse_jsonl(r.stdout, len(ids), "decode")
        h.compare("tekken", name, "mixed+random", f"decode {policy.name}", ids,
                  [ref.decode(i, special_token_policy=policy) for i in ids], got)


@pytest.mark.parametrize("rel", FILES)
def test_saved_tokenizer_json_gives_mistral_common_ids_in_hf(rel, work_dir):
    from tokenizers import Tokenizer

    out = work_dir / (rel.rsplit("/", 1)[-1].replace(".json", "") + ".tokenizer.json")
    h.run_cli(["save", "-t", str(path_of(rel)), "-o", str(out)], b"")
    hf = Tokenizer.from_file(str(out))
    ref = reference(rel)
    # A tokenizer.json cannot say that special-token text is text (HF's encode_special_tokens is
    # not saved): HF matches it as special tokens, so texts holding one are compared apart.
    specials = [t["token_str"] for t in ref._all_special_tokens]
    all_texts = h.mixed_sample(10, 2)
    texts = [t for t in all_texts if not any(s in t for s in specials)]
    assert len(all_texts) - len(texts) <= 2, "the mixed sample should hardly hold special-token text"
    got = [e.ids for e in hf.encode_batch(texts)]
    h.compare("tekken", rel.rsplit("/", 1)[-1], "mixed", "saved, HF", texts,
              [ref.encode(t, bos=True, eos=False) for t in texts], got)
    assert hf.encode("a<s>b", add_special_tokens=False).ids == ref.encode("a", False, False) + [1] + ref.encode(
        "b", False, False)
