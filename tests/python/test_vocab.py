"""Vocabulary analysis (issue 25 item 3): `tokenkit vocab` against values computed here with the
reference libraries: tiktoken's own `_encode_bytes` / `_encode_single_piece` for reachability and
its `encode` for number splits and whitespace runs; HF tokenizers' `encode(decode([id]))` for a
tokenizer.json; GPT-2's known glitch tokens never seen on the English corpus."""
from __future__ import annotations

import json
import subprocess

import pytest

from data_corpus import corpus_file, fixture, reference_tiktoken, tokenkit_bin

GLITCH = [" SolidGoldMagikarp", " petertodd", "StreamerBot", " TheNitromeFan", "cloneembedreportprint",
          "rawdownload", " davidjl", " externalToEVA"]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([str(tokenkit_bin()), *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"tokenkit {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p


def vocab_json(*args: str) -> dict:
    return json.loads(cli("vocab", *args, "--json").stdout)


def test_cl100k_sections_match_tiktoken():
    """Every section is there; reachability, number splits and whitespace runs are tiktoken's."""
    enc = reference_tiktoken("cl100k_base")
    r = vocab_json("-t", str(fixture("tiktoken/cl100k_base.tiktoken")), "--numbers", "3", "--max-run", "12")
    assert {"tokenizer", "model", "vocab_size", "reachability", "numbers", "whitespace", "duplicates"} <= r.keys()
    assert r["model"] == "tiktoken" and r["vocab_size"] == enc.n_vocab == 100277

    # Reachability: a rank is reachable when tiktoken's _encode_bytes of its bytes gives it.
    ranks = enc._mergeable_ranks
    not_own = [rank for b, rank in ranks.items() if enc._encode_bytes(b) != [rank]]
    counts = r["reachability"]["counts"]
    assert counts.get("reachable", 0) + counts.get("whole_piece_only", 0) == len(ranks) - len(not_own) == 100256
    assert counts.get("unreachable", 0) + counts.get("shadowed", 0) == len(not_own) == 0
    assert counts["special"] == len(enc._special_tokens) == 5

    # Numbers: the digits per token of tiktoken's encoding of each number, per length.
    expected: dict[int, dict[str, int]] = {}
    for n in range(10 ** 3):
        digits = [sum(c.isdigit() for c in enc.decode_single_token_bytes(t).decode()) for t in enc.encode(str(n))]
        pattern = "+".join(str(d) for d in digits if d)
        expected.setdefault(len(str(n)), {}).setdefault(pattern, 0)
        expected[len(str(n))][pattern] += 1
    got = {d["digits"]: d["patterns"] for d in r["numbers"]["alone"]}
    assert got == expected == {1: {"1": 10}, 2: {"2": 90}, 3: {"3": 900}}

    # Whitespace: the run lengths tiktoken encodes as one token.
    runs = {"spaces": " ", "tabs": "\t", "newlines": "\n"}
    for w in r["whitespace"]:
        make = (lambda k: "\n" + " " * k) if w["kind"] == "indentation" else (lambda k, c=runs.get(w["kind"]): c * k)
        single = [k for k in range(1, 13) if len(enc.encode(make(k))) == 1]
        assert w["single_token"] == single, w["kind"]
    assert [w["kind"] for w in r["whitespace"]] == ["spaces", "tabs", "newlines", "indentation"]


def test_o200k_shadowed_tokens_are_tiktokens():
    """o200k's ranks whose bytes tiktoken does not encode back to them (the pattern cuts them:
    " I'", "\\n//", ...) are exactly the shadowed ones, and its merges build each of them."""
    enc = reference_tiktoken("o200k_base")
    not_own = sorted(rank for b, rank in enc._mergeable_ranks.items() if enc._encode_bytes(b) != [rank])
    r = vocab_json("-t", str(fixture("tiktoken/o200k_base.tiktoken")), "--numbers", "1", "--examples", "100")
    shadowed = sorted(t["id"] for t in r["reachability"]["shadowed"])
    assert shadowed == not_own and len(not_own) == r["reachability"]["counts"]["shadowed"] == 12
    assert "unreachable" not in r["reachability"]["counts"]
    for t in r["reachability"]["shadowed"]:
        b = enc.decode_single_token_bytes(t["id"])
        assert [x["id"] for x in t["encodes_to"]] == enc._encode_bytes(b)
        assert enc._encode_single_piece(b) == [t["id"]]


def test_gpt2_glitch_tokens_are_candidates():
    """GPT-2's known glitch tokens are never seen on the English corpus and are candidates;
    " the" and "," are seen and are not."""
    corpus = corpus_file("en")
    r = vocab_json("-t", str(fixture("registry/gpt2/vocab.json")), "--corpus", str(corpus), "--numbers", "1",
                   "--examples", "60000")
    g = r["glitch_candidates"]
    assert g["documents"] > 0 and g["tokens"] > 0
    candidates = {c["text"]: c for c in g["examples"]}
    assert len(candidates) == g["count"] > len(GLITCH), g["count"]
    for token in GLITCH:
        assert token in candidates, token
        assert candidates[token]["count"] == 0
    for frequent in [" the", ","]:
        assert frequent not in candidates, frequent
    ranks = sorted(list(candidates).index(t) + 1 for t in GLITCH)
    print(f"{g['count']} candidates over {g['tokens']} tokens of {corpus.name}; glitch tokens ranked {ranks}")


# tokenizer.json fixtures and what HF finds in them (checked below, counted here for the record).
HF_FILES = {
    "registry/bert_uncased/tokenizer.json": (0, 6823),  # [unused0], "##" pieces, accents stripped
    "registry/qwen3/tokenizer.json": (0, 1909),  # not in NFC: the NFC normalizer changes them
    "registry/gemma/tokenizer.json": (6302, 0),  # no merge builds them
    "registry/mistral01/tokenizer.json": (0, 15980),  # pieces without "▁" (word-internal)
}


@pytest.mark.parametrize("rel", list(HF_FILES))
def test_reachability_matches_hf(rel):
    """A tokenizer.json: the ordinary tokens HF's model does not give from their own string are
    the unreachable ones; those whose decoded text HF's encode does not give back are the
    shadowed and word-internal ones; counted the same."""
    from tokenizers import Tokenizer

    path = fixture(rel)
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    added = tok.get_added_tokens_decoder()
    model_fails, pipeline_fails, partial = 0, 0, 0
    byte_fallback = 0
    for s, i in tok.get_vocab(with_added_tokens=False).items():
        if i in added:
            continue
        if len(s) == 6 and s.startswith("<0x") and s.endswith(">"):
            byte_fallback += 1
            continue
        if [t.id for t in tok.model.tokenize(s)] != [i]:
            model_fails += 1
            continue
        text = tok.decode([i], skip_special_tokens=False)
        if tok.encode(text, add_special_tokens=False).ids == [i]:
            continue
        # Part of a character (byte-level): U+FFFD in its decoded text, not in its string.
        if "\ufffd" in text and "\ufffd" not in s:
            partial += 1
        else:
            pipeline_fails += 1
    counts = vocab_json("-t", str(path), "--numbers", "1")["reachability"]["counts"]
    assert sum(counts.values()) == tok.get_vocab_size(with_added_tokens=True)
    assert counts["special"] == len(added)
    assert counts.get("byte_fallback", 0) == byte_fallback
    assert counts.get("unreachable", 0) == model_fails
    assert counts.get("shadowed", 0) + counts.get("word_internal", 0) == pipeline_fails
    assert counts.get("partial_utf8", 0) == partial
    assert (model_fails, pipeline_fails) == HF_FILES[rel]


def test_llama3_whole_piece_only_matches_hf():
    """Llama 3's BPE looks a whole piece up before merging (ignore_merges): the tokens its
    merges alone do not build (HF with ignore_merges off) are the whole-piece-only ones."""
    from tokenizers import Tokenizer

    path = fixture("registry/llama3/tokenizer.json")
    tok = Tokenizer.from_file(str(path))
    spec = json.loads(path.read_text())
    spec["model"]["ignore_merges"] = False
    merged = Tokenizer.from_str(json.dumps(spec))
    added = tok.get_added_tokens_decoder()
    not_built = [i for s, i in tok.get_vocab(with_added_tokens=False).items()
                 if i not in added and [t.id for t in merged.model.tokenize(s)] != [i]]
    counts = vocab_json("-t", str(path), "--numbers", "1")["reachability"]["counts"]
    assert counts["whole_piece_only"] == len(not_built) == 588
    assert "unreachable" not in counts and "shadowed" not in counts


def test_text_output_has_every_section():
    out = cli("vocab", "-t", str(fixture("tiktoken/cl100k_base.tiktoken")), "--numbers", "2", "--examples", "3").stdout
    for heading in ["Tokens by reachability", "Numbers 0..10^2", "Whitespace runs", "Duplicate-looking tokens"]:
        assert heading in out, heading
    assert "3 digits" not in out


def test_errors_are_clear(tmp_path):
    p = cli("vocab", "-t", str(fixture("tiktoken/cl100k_base.tiktoken")), "--numbers", "9", check=False)
    assert p.returncode == 1 and "at most 10^6" in p.stderr, p.stderr
    missing = tmp_path / "missing.txt"
    p = cli("vocab", "-t", str(fixture("tiktoken/cl100k_base.tiktoken")), "--corpus", str(missing), check=False)
    assert p.returncode == 1 and "missing.txt" in p.stderr, p.stderr
    p = cli("vocab", "-t", str(fixture("tiktoken/cl100k_base.tiktoken")), "--min-count", "3", check=False)
    assert p.returncode == 1 and "--min-count" in p.stderr and "--corpus" in p.stderr, p.stderr
    p = cli("vocab", "-t", str(tmp_path / "nope.json"), check=False)
    assert p.returncode == 1 and "nope.json" in p.stderr, p.stderr
