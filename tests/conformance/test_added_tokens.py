"""Added tokens with every option (special, normalized, single_word, lstrip, rstrip), added via
add_tokens / add_special_tokens and saved in tokenizer.json; encode (with and without special
tokens), decode (with and without skip_special) and decode stream."""
from __future__ import annotations

import itertools

import pytest

import harness as h

BASES = ["bert_uncased", "gpt2", "mistral01", "llama3", "xlnet_base_cased"]


def _groups():
    from tokenizers import AddedToken as A

    return {
        "single_word": ([A("hello", single_word=True), A("ing", single_word=True), A("子曰", single_word=True)], []),
        "not_single_word": ([A("hello"), A("ing"), A("the"), A("子曰")], []),
        "lstrip": ([A("<tag>", lstrip=True), A("[X]", lstrip=True), A("ing", lstrip=True)], []),
        "rstrip": ([A("</tag>", rstrip=True), A("[X]", rstrip=True), A("the", rstrip=True)], []),
        "lstrip_rstrip": ([A("[X]", lstrip=True, rstrip=True), A("<tag>", lstrip=True, rstrip=True,
                                                                   single_word=True)], []),
        "normalized_true": ([A("Café", normalized=True), A("HELLO", normalized=True), A("ﬁne", normalized=True),
                             A(" world", normalized=True)], []),
        "normalized_false": ([A("Café", normalized=False), A("HELLO", normalized=False), A("ﬁne", normalized=False),
                              A(" world", normalized=False)], []),
        "special_via_add_tokens": ([A("<|sp|>", special=True), A("[X]", special=True, lstrip=True)], []),
        "add_special_tokens": ([], [A("<|sp1|>"), A("<|sp2|>", normalized=True), A("[MSK]", lstrip=True, rstrip=True),
                                    A("hello", single_word=True)]),
        "overlapping": ([A("hell"), A("hello"), A("hello world"), A("lo w")], [A("<|a|>"), A("<|a|><|b|>")]),
        "existing_vocab_token": ([A("the"), A("Ġthe"), A("▁the"), A("##s")], []),
        # (no two tokens may normalize to the same string: HF then picks one by HashMap order,
        # which varies from run to run, e.g. "hello" and normalized "HELLO" under lowercasing)
        "everything": ([A("hello", single_word=True), A("<tag>", lstrip=True), A("</tag>", rstrip=True),
                        A("Café", normalized=False), A("WORLD", normalized=True), A("<|sp|>", special=True)],
                       [A("[MSK]", lstrip=True, rstrip=True), A("<|sp1|>")]),
    }


GROUPS = list(_groups())

TEMPLATES = [
    "{t}", " {t} ", "{t}{t}", "x{t}y", "say {t}, then {t}!", "  {t}  two  spaces", "\t{t}\ttab",
    "{t}\n{t}\n", "pre{t} post", "{t}ing {t}s", "Hello {t} world", "HELLO WORLD {t} café CAFÉ ﬁne",
    "tokenizing the theme <tag>x</tag>  [X]  y", "子曰 子曰学而 {t}子曰", "hello world hellohello hello, hello.",
]


def _inputs(group):
    adds, specials = _groups()[group]
    contents = [a.content for a in adds + specials]
    synth = [tpl.format(t=c) for tpl, c in itertools.product(TEMPLATES, contents)]
    corpus = []
    for rel in h.corpus_files():
        corpus += h.spread_lines(rel, 8)
    pairs = [(synth[i], synth[-1 - i]) for i in range(0, len(synth), 3)]
    return synth + corpus + h.EDGE_CASES + pairs


_BUILT: dict = {}


def _build(base, group, work_dir):
    if (base, group) not in _BUILT:
        _BUILT[(base, group)] = _build_uncached(base, group, work_dir)
    return _BUILT[(base, group)]


def _build_uncached(base, group, work_dir):
    if not h.corpus_files():
        pytest.skip("no corpora")
    from tokenizers import Tokenizer

    src = h.build_fixture_tokenizer(base, work_dir)
    tok = Tokenizer.from_str(h.load_hf(str(src)).to_str())  # a copy: the cached one stays pristine
    adds, specials = _groups()[group]
    if adds:
        tok.add_tokens(adds)
    if specials:
        tok.add_special_tokens(specials)
    path = work_dir / f"added-{base}-{group}.json"
    tok.save(str(path))
    return path, Tokenizer.from_file(str(path))


# llama3's 9 MB file makes each build slow: it gets the combined group only.
CASES = [(b, g) for b in BASES for g in GROUPS if b != "llama3" or g == "everything"]


@pytest.mark.parametrize("check", ["encode", "encode-nospecial", "decode", "decode-skip", "stream", "stream-skip"])
@pytest.mark.parametrize("base,group", CASES, ids=[f"{b}-{g}" for b, g in CASES])
def test_added_tokens(base, group, check, work_dir):
    path, tok = _build(base, group, work_dir)
    inputs = _inputs(group)
    if check.startswith("encode"):
        h.check_encode("added_tokens", f"{base}+{group}", path, "synthetic+corpus", check, inputs, tok=tok,
                       add_special=check == "encode")
        return
    # every 3rd input keeps the decode/stream oracle cheap (padded bases give 128 ids per line)
    ids = h.ids_of(tok, inputs[::3]) + h.ids_of(tok, inputs[:40:2], add_special=False)
    ids = h.decode_inputs(tok, ids, n_random=30, seed=3)
    h.check_decode("added_tokens", f"{base}+{group}", path, "synthetic+corpus", ids, tok=tok,
                   skip_special=check.endswith("skip"), stream=check.startswith("stream"))
