"""load -> save -> load: `tokenkit save -t IN -o OUT` re-saves a tokenizer; HF loads OUT and must
encode and decode exactly like HF with IN. A second check compares the two files after an HF
load/serialise round trip (the canonical HF form), which catches lost options early."""
from __future__ import annotations

import json

import pytest

import builders as b
import harness as h

FIXTURE_IDS = [f"fixture:{n}" for n in h.ALL_FIXTURE_TOKENIZERS]
SPEC_IDS = [s.id for s in b.all_specs()]
EXTRA_IDS = ["added:gpt2+everything", "configured:bert_base_cased+pad+trunc"]
ALL_IDS = FIXTURE_IDS + SPEC_IDS + EXTRA_IDS


@pytest.fixture(scope="session")
def built(work_dir):
    return b.Built(work_dir)


def _source(item, built, work_dir):
    from tokenizers import AddedToken as A, Tokenizer

    kind, name = item.split(":", 1)
    if kind == "fixture":
        if not h.corpus_files():
            pytest.skip("no corpora")
        return h.build_fixture_tokenizer(name, work_dir)
    if kind == "added":
        src = h.build_fixture_tokenizer("gpt2", work_dir)
        tok = Tokenizer.from_file(str(src))
        tok.add_tokens([A("hello", single_word=True), A("<tag>", lstrip=True), A("</tag>", rstrip=True),
                        A("Café", normalized=False), A("<|sp|>", special=True)])
        tok.add_special_tokens([A("[MSK]", lstrip=True, rstrip=True), A("<|sp1|>")])
    elif kind == "configured":
        src = h.build_fixture_tokenizer("bert_base_cased", work_dir)
        tok = Tokenizer.from_file(str(src))
        tok.enable_padding(direction="left", pad_to_multiple_of=8, length=None)
        tok.enable_truncation(max_length=40, stride=3, strategy="only_second", direction="left")
    else:
        return built.get(item)[0]
    p = work_dir / f"save-src-{kind}.json"
    tok.save(str(p))
    return p


def _resave(src, work_dir, item):
    out = work_dir / ("resaved-" + "".join(c if c.isalnum() else "_" for c in item)[:120] + ".json")
    if out.exists():
        out.unlink()
    with h.recording_cli_errors("save", item, "-", "save", 1):
        h.run_cli(["save", "-t", str(src), "-o", str(out)], b"")
        if not out.exists():
            pytest.fail(f"tokenkit save exited 0 but wrote no {out}", pytrace=False)
    return out


@pytest.mark.parametrize("item", ALL_IDS, ids=ALL_IDS)
def test_save_roundtrip_encodings(item, built, work_dir):
    from tokenizers import Tokenizer

    src = _source(item, built, work_dir)
    ref = Tokenizer.from_file(str(src))
    texts = h.mixed_sample(5, 1) + h.mixed_pairs(1)
    out = _resave(src, work_dir, item)
    try:
        re = Tokenizer.from_file(str(out))
    except Exception as e:  # noqa: BLE001
        h.record("save", item, "-", "hf-load", h.Outcome(total=1), cli_error=True)
        pytest.fail(f"HF cannot load the file written by tokenkit save: {e}", pytrace=False)
    texts, exp, _ = h.hf_encode(ref, texts)  # inputs the original rejects are dropped
    kept, got, errs = h.hf_encode(re, texts)
    assert not errs, f"HF raises on the re-saved tokenizer for {errs} inputs the original accepts"
    ids, _, _ = h.hf_decode(ref, [e["ids"] for e in exp], False)  # ids the original cannot decode are dropped
    dec_exp = [h.hf_decode(ref, [i], s)[1] for i in ids for s in (False, True)]
    dec_got = [h.hf_decode(re, [i], s)[1] for i in ids for s in (False, True)]
    rows_in = texts + [f"decode#{k}" for k in range(len(dec_exp))]
    h.compare("save", item, "mixed-sample", "resaved-encode+decode", rows_in, exp + dec_exp, got + dec_got)


def _json_diff(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:100]} != {json.dumps(b)[:100]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in b:
                return f"{path}.{k} missing after tokenkit save"
            if k not in a:
                return f"{path}.{k} added by tokenkit save"
            d = _json_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _json_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {json.dumps(a)[:100]} != {json.dumps(b)[:100]}"


@pytest.mark.parametrize("item", ALL_IDS, ids=ALL_IDS)
def test_save_roundtrip_canonical_json(item, built, work_dir):
    from tokenizers import Tokenizer

    src = _source(item, built, work_dir)
    out = _resave(src, work_dir, item)
    a = json.loads(Tokenizer.from_file(str(src)).to_str())
    try:
        bj = json.loads(Tokenizer.from_file(str(out)).to_str())
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"HF cannot load the file written by tokenkit save: {e}", pytrace=False)
    d = _json_diff(a, bj)
    h.record("save-json", item, "-", "canonical-json", h.Outcome(identical=int(d is None), total=1))
    assert d is None, f"HF-canonical JSON differs after tokenkit save: {d}"
