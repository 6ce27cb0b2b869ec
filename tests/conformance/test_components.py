"""Every component type and option of HF tokenizers 0.23, in tokenizers built with the Python
API (see builders.py), encoded and decoded on a small sample of every corpus plus edge cases."""
from __future__ import annotations

import pytest

import builders as b
import harness as h

SPEC_IDS = [s.id for s in b.all_specs()]
CHECKS = ["encode", "encode-nospecial", "decode", "decode-skip", "stream", "stream-skip"]


@pytest.fixture(scope="session")
def built(work_dir):
    return b.Built(work_dir)


def _inputs():
    return h.mixed_sample() + h.mixed_pairs()


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("spec_id", SPEC_IDS, ids=SPEC_IDS)
def test_component(spec_id, check, built):
    path, tok = built.get(spec_id)
    group, name = spec_id.split(":", 1)
    if check.startswith("encode"):
        h.check_encode(group, name, path, "mixed-sample", check, _inputs(), tok=tok,
                       add_special=check == "encode")
        return
    texts = h.mixed_sample(lines_per_file=10, chunks_per_file=2)
    ids = h.ids_of(tok, texts) + h.ids_of(tok, h.mixed_pairs(2))
    ids = h.decode_inputs(tok, ids, n_random=40, seed=len(spec_id), repeats=name.startswith("CTC"))
    h.check_decode(group, name, path, "mixed-sample", ids, tok=tok, skip_special=check.endswith("skip"),
                   stream=check.startswith("stream"))


@pytest.mark.parametrize("batch_size", [1, 3])
def test_component_small_batches(batch_size, built):
    """--batch-size must not change unpadded results."""
    path, tok = built.get("model:BPE(bytelevel)")
    h.check_encode("model", "BPE(bytelevel)", path, "mixed-sample", f"encode-batch{batch_size}",
                   h.mixed_sample(5, 1), tok=tok, batch_size=batch_size)


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_bpe_dropout_loads(p, built, work_dir):
    """BPE dropout: RNGs differ, so only check that the file loads and the output is a valid
    segmentation: same number of lines, tokens concatenate to HF's (no-dropout) tokens per word,
    ids are the vocabulary ids of the tokens."""
    from tokenizers import Tokenizer

    path, _ = built.get("model:BPE(bytelevel)")
    import json

    j = json.loads(path.read_text(encoding="utf-8"))
    j["model"]["dropout"] = p
    dpath = work_dir / f"bpe_dropout_{p}.json"
    dpath.write_text(json.dumps(j), encoding="utf-8")
    ref = Tokenizer.from_file(str(path))
    texts = h.mixed_sample(5, 1)
    got = h.cli_encode(dpath, texts, full=False)
    vocab = ref.get_vocab()
    bad = []
    for t, g in zip(texts, got):
        e = ref.encode(t)
        if "".join(g["tokens"]) != "".join(e.tokens) or any(vocab.get(tk) != i for tk, i in zip(g["tokens"], g["ids"])):
            bad.append(t)
    o = h.Outcome(identical=len(texts) - len(bad), total=len(texts))
    h.record("model", f"BPE(dropout={p})", "mixed-sample", "segmentation-valid", o)
    assert not bad, f"{len(bad)} invalid segmentations, first: {bad[:3]!r}"
