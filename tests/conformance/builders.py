"""Tokenizers built with the HF `tokenizers` Python API, one per component type and option.

Small vocabularies are trained once per session on a sample of the corpora (a few seconds);
every spec then assembles a pipeline around one of them, is saved as tokenizer.json, and both
sides (HF and tokenkit) read that file.

A spec is ``Spec(id, group, build)``; ``build(base)`` returns a ``tokenizers.Tokenizer``.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

import harness as h


def _train_lines(per_file: int) -> list[str]:
    return list(_train_lines_cached(per_file))


@functools.lru_cache(maxsize=None)
def _train_lines_cached(per_file: int) -> tuple[str, ...]:
    out = []
    for rel in h.corpus_files():
        lines = h.corpus_lines(rel)
        out += [lines[i] for i in h.spread(len(lines), per_file)]
    return tuple(out + h.EDGE_CASES)


BYTES = [f"<0x{b:02X}>" for b in range(256)]
SPECIALS_BERT = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
SPECIALS_SP = ["<unk>", "<s>", "</s>", "<pad>"]


class Bases:
    """Trained base models (lazily, once per process), as tokenizer.json dicts."""

    def __init__(self, work_dir: Path):
        self.dir = work_dir / "bases"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, dict] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> dict:
        with self._lock:
            if name not in self._cache:
                p = self.dir / f"{name}.json"
                if not p.exists():
                    tok = getattr(self, "_train_" + name)()
                    tok.save(str(p))
                self._cache[name] = json.loads(p.read_text(encoding="utf-8"))
            return self._cache[name]

    def model(self, name: str) -> dict:
        return self.get(name)["model"]

    # --- trainers -------------------------------------------------------------------------
    def _train(self, model, trainer, pre_tokenizer, per_file=800, normalizer=None):
        from tokenizers import Tokenizer

        tok = Tokenizer(model)
        tok.pre_tokenizer = pre_tokenizer
        if normalizer is not None:
            tok.normalizer = normalizer
        tok.train_from_iterator(_train_lines(per_file), trainer)
        return tok

    def _train_bytelevel_bpe(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.BPE(), trainers.BpeTrainer(
            vocab_size=1500, show_progress=False, special_tokens=["<|endoftext|>", "<pad>", "<s>", "</s>"],
            initial_alphabet=pt.ByteLevel.alphabet()), pt.ByteLevel(add_prefix_space=False))

    def _train_char_bpe(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.BPE(unk_token="[UNK]"), trainers.BpeTrainer(
            vocab_size=2500, limit_alphabet=300, show_progress=False, special_tokens=SPECIALS_BERT,
            initial_alphabet=list(" \t\n▁_")), pt.Whitespace())

    def _train_metaspace_bpe(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.BPE(unk_token="<unk>"), trainers.BpeTrainer(
            vocab_size=2500, limit_alphabet=400, show_progress=False, special_tokens=SPECIALS_SP,
            initial_alphabet=list(" \t\n▁")), pt.Metaspace())

    def _train_prefix_bpe(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"), trainers.BpeTrainer(
            vocab_size=2500, limit_alphabet=300, show_progress=False, special_tokens=SPECIALS_BERT,
            continuing_subword_prefix="##"), pt.Whitespace())

    def _train_suffix_bpe(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"), trainers.BpeTrainer(
            vocab_size=2500, limit_alphabet=300, show_progress=False, special_tokens=SPECIALS_BERT,
            end_of_word_suffix="</w>"), pt.Whitespace())

    def _train_unigram(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.Unigram(), trainers.UnigramTrainer(
            vocab_size=6000, show_progress=False, special_tokens=SPECIALS_SP, unk_token="<unk>"),
            pt.Metaspace(), per_file=300)

    def _train_wordpiece(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.WordPiece(unk_token="[UNK]"), trainers.WordPieceTrainer(
            vocab_size=3000, limit_alphabet=400, show_progress=False, special_tokens=SPECIALS_BERT),
            pt.BertPreTokenizer())

    def _train_wordpiece_at(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="@@"),
                           trainers.WordPieceTrainer(vocab_size=3000, limit_alphabet=400, show_progress=False,
                                                     special_tokens=SPECIALS_BERT, continuing_subword_prefix="@@"),
                           pt.BertPreTokenizer())

    def _train_wordlevel(self):
        from tokenizers import models, pre_tokenizers as pt, trainers

        return self._train(models.WordLevel(unk_token="[UNK]"), trainers.WordLevelTrainer(
            vocab_size=5000, show_progress=False, special_tokens=SPECIALS_BERT), pt.Whitespace())


# --- model constructors from the trained dicts -----------------------------------------------

def _merges(m: dict) -> list[tuple[str, str]]:
    return [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]]


def bpe(base: Bases, name: str, *, extra_vocab=(), **opts):
    from tokenizers import models

    m = base.model(name)
    vocab = dict(m["vocab"])
    for t in extra_vocab:
        vocab.setdefault(t, len(vocab))
    kw = {k: m.get(k) for k in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix")}
    kw.update(opts)
    return models.BPE(vocab, _merges(m), **{k: v for k, v in kw.items() if v is not None})


def unigram(base: Bases, *, byte_fallback=False, unk=True):
    from tokenizers import models

    m = base.model("unigram")
    vocab = [tuple(x) for x in m["vocab"]]
    if byte_fallback:
        have = {p for p, _ in vocab}
        vocab += [(b, -100.0) for b in BYTES if b not in have]
    return models.Unigram(vocab, m["unk_id"] if unk else None, byte_fallback)


def wordpiece(base: Bases, name="wordpiece", extra_vocab=(), **opts):
    from tokenizers import models

    m = dict(base.model(name))
    m["vocab"] = dict(m["vocab"])
    for t in extra_vocab:
        m["vocab"].setdefault(t, len(m["vocab"]))
    kw = {"unk_token": m["unk_token"], "continuing_subword_prefix": m["continuing_subword_prefix"],
          "max_input_chars_per_word": m["max_input_chars_per_word"]}
    kw.update(opts)
    return models.WordPiece(m["vocab"], **kw)


def wordlevel(base: Bases):
    from tokenizers import models

    m = base.model("wordlevel")
    return models.WordLevel(m["vocab"], m["unk_token"])


def precompiled_charsmap() -> bytes:
    """XLNet's nmt_nfkc charsmap (hub/xlnet_base_cased.json, with ../shared), else the same bytes
    from ALBERT's spiece.model (registry, always fetched): normalizer_spec (field 3) ->
    precompiled_charsmap (field 2). Both are checked equal where both are present."""
    import base64

    found = []
    p = h.fixture_path("hub/xlnet_base_cased.json")
    if p is not None:
        j = json.loads(p.read_text(encoding="utf-8"))
        found += [base64.b64decode(n["precompiled_charsmap"]) for n in j["normalizer"]["normalizers"]
                  if n["type"] == "Precompiled"]
        assert found, "no Precompiled normalizer in xlnet fixture"
    p = h.fixture_path("registry/albert/spiece.model")
    if p is not None:
        spec = next(v for tag, _, v in h.proto_fields(p.read_bytes()) if tag == 3)
        found += [v for tag, _, v in h.proto_fields(spec) if tag == 2]
    if not found:
        pytest.skip("no charsmap fixture (hub/xlnet_base_cased.json, registry/albert/spiece.model) present")
    assert all(c == found[0] for c in found), "XLNet's and ALBERT's charsmaps differ"
    return found[0]


# --- assembling ------------------------------------------------------------------------------

def make(model, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
         specials=(), tokens=()):
    from tokenizers import Tokenizer

    tok = Tokenizer(model)
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    if post_processor is not None:
        tok.post_processor = post_processor
    if decoder is not None:
        tok.decoder = decoder
    if specials:
        tok.add_special_tokens(list(specials))
    if tokens:
        tok.add_tokens(list(tokens))
    return tok


def bytelevel_pipeline(base, normalizer=None, pre_tokenizer=None, **kw):
    """ByteLevel BPE (no unknowns) around a normalizer under test."""
    from tokenizers import decoders, pre_tokenizers as pt

    return make(bpe(base, "bytelevel_bpe"), normalizer=normalizer,
                pre_tokenizer=pre_tokenizer if pre_tokenizer is not None else pt.ByteLevel(add_prefix_space=False),
                decoder=kw.pop("decoder", decoders.ByteLevel()), specials=["<|endoftext|>"], **kw)


def char_pipeline(base, pre_tokenizer, normalizer=None, **kw):
    """Char-level BPE with [UNK] around a pre-tokenizer under test."""
    return make(bpe(base, "char_bpe"), normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                specials=SPECIALS_BERT, **kw)


def byte_fallback_bpe(base, **opts):
    """The Metaspace BPE plus the 256 <0xXX> tokens, byte_fallback on (Llama style)."""
    return bpe(base, "metaspace_bpe", extra_vocab=BYTES, byte_fallback=True, **opts)


def llama_decoder(prepend=True):
    from tokenizers import decoders

    ds = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    if prepend:
        ds.append(decoders.Strip(" ", 1, 0))
    return decoders.Sequence(ds)


@dataclass
class Spec:
    id: str
    group: str
    build: Callable


def specs() -> list[Spec]:
    from tokenizers import Regex, decoders as d, normalizers as n, pre_tokenizers as pt, processors as pp

    S: list[Spec] = []

    def add(group, id_, fn):
        S.append(Spec(f"{group}:{id_}", group, fn))

    # ---- normalizers (ByteLevel BPE model, so no unknowns hide differences) --------------
    def norm(id_, mk, **kw):
        add("normalizer", id_, lambda b: bytelevel_pipeline(b, normalizer=mk(), **kw))

    for clean in (True, False):
        for chinese in (True, False):
            for strip in (None, True, False):
                for lower in (True, False):
                    if (clean, chinese) != (True, True) and (strip, lower) != (None, True):
                        continue  # full cross product only for the default clean/chinese
                    norm(f"BertNormalizer(clean_text={clean},handle_chinese_chars={chinese},strip_accents={strip},lowercase={lower})",
                         lambda c=clean, ch=chinese, s=strip, l=lower: n.BertNormalizer(
                             clean_text=c, handle_chinese_chars=ch, strip_accents=s, lowercase=l))
    for cls in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt"):
        norm(cls, lambda c=cls: getattr(n, c)())
    norm("Sequence(NFD,StripAccents)", lambda: n.Sequence([n.NFD(), n.StripAccents()]))
    norm("Sequence(NFKD,StripAccents,Lowercase)", lambda: n.Sequence([n.NFKD(), n.StripAccents(), n.Lowercase()]))
    for left, right in ((True, True), (True, False), (False, True)):
        norm(f"Strip(left={left},right={right})", lambda l=left, r=right: n.Strip(left=l, right=r))
    norm("Replace(' ','▁')", lambda: n.Replace(" ", "▁"))
    norm("Replace('e','')", lambda: n.Replace("e", ""))
    norm("Replace('th','THTH')", lambda: n.Replace("th", "THTH"))
    norm("Replace(Regex('\\s+'),' ')", lambda: n.Replace(Regex(r"\s+"), " "))
    norm("Replace(Regex('[0-9]'),'<d>')", lambda: n.Replace(Regex(r"[0-9]"), "<d>"))
    norm("Replace(Regex('(?i)the'),'')", lambda: n.Replace(Regex(r"(?i)the"), ""))
    norm("Replace(Regex('\\p{Han}'),'字字')", lambda: n.Replace(Regex(r"\p{Han}"), "字字"))
    norm("Prepend('▁')", lambda: n.Prepend("▁"))
    norm("Sequence(Prepend,Replace)-llama", lambda: n.Sequence([n.Prepend("▁"), n.Replace(" ", "▁")]))
    norm("ByteLevel", lambda: n.ByteLevel(), pre_tokenizer=pt.Split(Regex(r"\S+|\s+"), "isolated"))
    norm("Precompiled(xlnet)", lambda: n.Precompiled(precompiled_charsmap()))
    norm("Sequence(Precompiled,Replace)-xlnet", lambda: n.Sequence([
        n.Precompiled(precompiled_charsmap()), n.Replace("``", '"'), n.Replace("''", '"'),
        n.Replace(Regex(" {2,}"), " ")]))
    norm("Sequence(NFKC,Lowercase,Strip)", lambda: n.Sequence([n.NFKC(), n.Lowercase(), n.Strip()]))
    norm("Sequence(empty)", lambda: n.Sequence([]))

    # ---- pre-tokenizers ---------------------------------------------------------------------
    def pre(id_, mk, **kw):
        add("pre_tokenizer", id_, lambda b: char_pipeline(b, mk(), **kw))

    def pre_bl(id_, mk, **kw):
        add("pre_tokenizer", id_, lambda b: bytelevel_pipeline(b, pre_tokenizer=mk(), **kw))

    pre("BertPreTokenizer", lambda: pt.BertPreTokenizer())
    for aps, trim, rx in ((True, True, True), (False, True, True), (True, False, True), (False, False, False),
                          (True, True, False), (False, True, False)):
        pre_bl(f"ByteLevel(add_prefix_space={aps},trim_offsets={trim},use_regex={rx})",
               lambda a=aps, t=trim, r=rx: pt.ByteLevel(add_prefix_space=a, trim_offsets=t, use_regex=r))
    pre("Whitespace", lambda: pt.Whitespace())
    pre("WhitespaceSplit", lambda: pt.WhitespaceSplit())
    behaviors = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
    split_patterns = [
        ("' '", lambda: " "),
        ("'e'", lambda: "e"),
        ("'the'", lambda: "the"),
        ("Regex(\\s+)", lambda: Regex(r"\s+")),
        ("Regex(\\p{L}+|\\p{N}+)", lambda: Regex(r"\p{L}+|\p{N}+")),
        ("Regex(gpt2)", lambda: Regex(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")),
    ]
    for pname, pat in split_patterns:
        for beh in behaviors:
            for inv in (False, True):
                if inv and pname in ("'the'", "Regex(gpt2)"):
                    continue
                pre(f"Split({pname},{beh},invert={inv})", lambda p=pat, bh=beh, i=inv: pt.Split(p(), bh, invert=i))
    for beh in behaviors:
        pre(f"Punctuation({beh})", lambda bh=beh: pt.Punctuation(bh))
    for ind in (False, True):
        pre(f"Digits(individual_digits={ind})", lambda i=ind: pt.Digits(individual_digits=i))
    for scheme in ("always", "first", "never"):
        for split in (True, False):
            add("pre_tokenizer", f"Metaspace(▁,{scheme},split={split})",
                lambda b, s=scheme, sp=split: make(bpe(b, "metaspace_bpe"),
                                                   pre_tokenizer=pt.Metaspace("▁", s, sp),
                                                   decoder=d.Metaspace("▁", s, sp), specials=SPECIALS_SP))
    add("pre_tokenizer", "Metaspace(_,always,split=True)",
        lambda b: make(bpe(b, "char_bpe"), pre_tokenizer=pt.Metaspace("_", "always", True),
                       decoder=d.Metaspace("_", "always", True), specials=SPECIALS_BERT))
    pre("UnicodeScripts", lambda: pt.UnicodeScripts())
    pre("CharDelimiterSplit(' ')", lambda: pt.CharDelimiterSplit(" "))
    pre("CharDelimiterSplit('e')", lambda: pt.CharDelimiterSplit("e"))
    pre("FixedLength(5)", lambda: pt.FixedLength(5))
    pre("FixedLength(1)", lambda: pt.FixedLength(1))
    pre("Sequence(WhitespaceSplit,Punctuation,Digits)",
        lambda: pt.Sequence([pt.WhitespaceSplit(), pt.Punctuation(), pt.Digits(individual_digits=True)]))
    pre("Sequence(UnicodeScripts,BertPreTokenizer)", lambda: pt.Sequence([pt.UnicodeScripts(), pt.BertPreTokenizer()]))
    pre_bl("Sequence(Split(llama3),ByteLevel(use_regex=False))", lambda: pt.Sequence([
        pt.Split(Regex(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
                 "isolated", invert=False),
        pt.ByteLevel(add_prefix_space=False, use_regex=False)]))
    pre_bl("Sequence(Digits,ByteLevel)", lambda: pt.Sequence([pt.Digits(individual_digits=True),
                                                              pt.ByteLevel(add_prefix_space=False)]))

    # ---- models -------------------------------------------------------------------------------
    def model(id_, fn):
        add("model", id_, fn)

    ws = lambda: pt.Whitespace()  # noqa: E731
    model("BPE(bytelevel)", lambda b: bytelevel_pipeline(b))
    for fuse in (False, True):
        model(f"BPE(unk_token=[UNK],fuse_unk={fuse})",
              lambda b, f=fuse: make(bpe(b, "char_bpe", fuse_unk=f), pre_tokenizer=ws(), specials=SPECIALS_BERT))
    model("BPE(unk_token=None)", lambda b: make(bpe(b, "char_bpe", unk_token=None), pre_tokenizer=ws(),
                                                specials=SPECIALS_BERT))
    for fuse in (False, True):
        model(f"BPE(byte_fallback=True,fuse_unk={fuse})-llama",
              lambda b, f=fuse: make(byte_fallback_bpe(b, fuse_unk=f),
                                     normalizer=n.Sequence([n.Prepend("▁"), n.Replace(" ", "▁")]),
                                     decoder=llama_decoder(), specials=SPECIALS_SP))
    model("BPE(byte_fallback=True)-metaspace",
          lambda b: make(byte_fallback_bpe(b), pre_tokenizer=pt.Metaspace(), specials=SPECIALS_SP,
                         decoder=d.Sequence([d.ByteFallback(), d.Metaspace()])))
    model("BPE(continuing_subword_prefix=##)",
          lambda b: make(bpe(b, "prefix_bpe"), pre_tokenizer=ws(), specials=SPECIALS_BERT, decoder=d.WordPiece()))
    model("BPE(end_of_word_suffix=</w>)",
          lambda b: make(bpe(b, "suffix_bpe"), pre_tokenizer=ws(), specials=SPECIALS_BERT, decoder=d.BPEDecoder()))

    def frequent_words(b):
        words = {}
        for l in _train_lines(50):
            for w in l.split():
                words[w] = words.get(w, 0) + 1
        return [w for w, c in sorted(words.items(), key=lambda x: -x[1])[:300] if len(w) > 2]

    for ig in (False, True):
        model(f"BPE(ignore_merges={ig})-extra-vocab",
              lambda b, i=ig: make(bpe(b, "char_bpe", extra_vocab=frequent_words(b), ignore_merges=i),
                                   pre_tokenizer=ws(), specials=SPECIALS_BERT))
        model(f"BPE(ignore_merges={ig})-bytelevel",
              lambda b, i=ig: bytelevel_pipeline(b) if not i else make(
                  bpe(b, "bytelevel_bpe", ignore_merges=True), pre_tokenizer=pt.ByteLevel(add_prefix_space=False),
                  decoder=d.ByteLevel(), specials=["<|endoftext|>"]))
    model("BPE(dropout=1.0)", lambda b: make(bpe(b, "bytelevel_bpe", dropout=1.0),
                                             pre_tokenizer=pt.ByteLevel(add_prefix_space=False), decoder=d.ByteLevel()))
    model("WordPiece", lambda b: make(wordpiece(b), normalizer=n.BertNormalizer(lowercase=False),
                                      pre_tokenizer=pt.BertPreTokenizer(), decoder=d.WordPiece()))
    model("WordPiece(max_input_chars_per_word=6)",
          lambda b: make(wordpiece(b, max_input_chars_per_word=6), pre_tokenizer=pt.BertPreTokenizer(),
                         decoder=d.WordPiece()))
    model("WordPiece(continuing_subword_prefix=@@)",
          lambda b: make(wordpiece(b, "wordpiece_at"), pre_tokenizer=pt.BertPreTokenizer(),
                         decoder=d.WordPiece(prefix="@@")))
    model("WordPiece(unk_token=<?>)",
          lambda b: make(wordpiece(b, extra_vocab=["<?>"], unk_token="<?>"), pre_tokenizer=pt.BertPreTokenizer(),
                         decoder=d.WordPiece()))
    model("WordLevel", lambda b: make(wordlevel(b), pre_tokenizer=ws(), specials=SPECIALS_BERT))
    model("Unigram", lambda b: make(unigram(b), pre_tokenizer=pt.Metaspace(), decoder=d.Metaspace(),
                                    specials=SPECIALS_SP))
    model("Unigram(byte_fallback=True)",
          lambda b: make(unigram(b, byte_fallback=True), pre_tokenizer=pt.Metaspace(), specials=SPECIALS_SP,
                         decoder=d.Sequence([d.ByteFallback(), d.Metaspace()])))
    model("Unigram-no-pretokenizer-llama",
          lambda b: make(unigram(b, byte_fallback=True), normalizer=n.Sequence([n.Prepend("▁"), n.Replace(" ", "▁")]),
                         decoder=llama_decoder(), specials=SPECIALS_SP))
    model("Unigram(precompiled)-xlnet-like",
          lambda b: make(unigram(b), normalizer=n.Precompiled(precompiled_charsmap()),
                         pre_tokenizer=pt.Sequence([pt.WhitespaceSplit(), pt.Metaspace()]),
                         decoder=d.Metaspace(), specials=SPECIALS_SP))

    # ---- post-processors --------------------------------------------------------------------
    def proc(id_, fn):
        add("processor", id_, fn)

    def wp_tok(b, processor):
        t = make(wordpiece(b), normalizer=n.BertNormalizer(), pre_tokenizer=pt.BertPreTokenizer(),
                 decoder=d.WordPiece(), specials=SPECIALS_BERT)
        t.post_processor = processor(t)
        return t

    proc("TemplateProcessing(bert)", lambda b: wp_tok(b, lambda t: pp.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", t.token_to_id("[CLS]")), ("[SEP]", t.token_to_id("[SEP]"))])))
    proc("TemplateProcessing(odd-types)", lambda b: wp_tok(b, lambda t: pp.TemplateProcessing(
        single="$A:2 [SEP]:3 [MASK]:1", pair="[CLS]:5 $A:0 [MASK] $B:1 [SEP]:7 $B:2",
        special_tokens=[("[CLS]", t.token_to_id("[CLS]")), ("[SEP]", t.token_to_id("[SEP]")),
                        ("[MASK]", t.token_to_id("[MASK]"))])))
    proc("TemplateProcessing(multi-id-special)", lambda b: wp_tok(b, lambda t: pp.TemplateProcessing(
        single="[BOS] $A [EOS]", pair="[BOS] $A [EOS] $B:1 [EOS]:1",
        special_tokens=[{"id": "[BOS]", "ids": [t.token_to_id("[CLS]"), t.token_to_id("[MASK]")],
                         "tokens": ["[CLS]", "[MASK]"]},
                        {"id": "[EOS]", "ids": [t.token_to_id("[SEP]")], "tokens": ["[SEP]"]}])))
    proc("TemplateProcessing(plain)", lambda b: wp_tok(b, lambda t: pp.TemplateProcessing(single="$A", pair="$A $B:1")))
    proc("TemplateProcessing(llama)", lambda b: make(byte_fallback_bpe(b), normalizer=n.Sequence(
        [n.Prepend("▁"), n.Replace(" ", "▁")]), decoder=llama_decoder(), specials=SPECIALS_SP,
        post_processor=pp.TemplateProcessing(single="<s> $A", pair="<s> $A <s>:1 $B:1",
                                             special_tokens=[("<s>", 1)])))
    proc("BertProcessing", lambda b: wp_tok(b, lambda t: pp.BertProcessing(
        ("[SEP]", t.token_to_id("[SEP]")), ("[CLS]", t.token_to_id("[CLS]")))))
    for trim in (True, False):
        for aps in (True, False):
            proc(f"RobertaProcessing(trim_offsets={trim},add_prefix_space={aps})",
                 lambda b, tr=trim, a=aps: bytelevel_pipeline(
                     b, pre_tokenizer=pt.ByteLevel(add_prefix_space=a),
                     post_processor=pp.RobertaProcessing(("</s>", 3), ("<s>", 2), trim_offsets=tr, add_prefix_space=a)))
    for trim in (True, False):
        for aps in (True, False):
            proc(f"ByteLevel(trim_offsets={trim},add_prefix_space={aps})",
                 lambda b, tr=trim, a=aps: bytelevel_pipeline(
                     b, pre_tokenizer=pt.ByteLevel(add_prefix_space=a),
                     post_processor=pp.ByteLevel(trim_offsets=tr, add_prefix_space=a)))
    proc("Sequence(ByteLevel,TemplateProcessing)", lambda b: bytelevel_pipeline(
        b, pre_tokenizer=pt.ByteLevel(add_prefix_space=True),
        post_processor=pp.Sequence([pp.ByteLevel(trim_offsets=True),
                                    pp.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B:1 </s>:1",
                                                          special_tokens=[("<s>", 2), ("</s>", 3)])])))

    # ---- decoders ---------------------------------------------------------------------------
    def dec(id_, fn):
        add("decoder", id_, fn)

    dec("ByteLevel", lambda b: bytelevel_pipeline(b))
    for cleanup in (True, False):
        dec(f"WordPiece(##,cleanup={cleanup})", lambda b, c=cleanup: make(
            wordpiece(b), pre_tokenizer=pt.BertPreTokenizer(), decoder=d.WordPiece(cleanup=c), specials=SPECIALS_BERT))
    dec("WordPiece(@@)", lambda b: make(wordpiece(b, "wordpiece_at"), pre_tokenizer=pt.BertPreTokenizer(),
                                        decoder=d.WordPiece(prefix="@@"), specials=SPECIALS_BERT))
    for scheme in ("always", "first", "never"):
        for split in (True, False):
            dec(f"Metaspace(▁,{scheme},split={split})", lambda b, s=scheme, sp=split: make(
                unigram(b), pre_tokenizer=pt.Metaspace(), decoder=d.Metaspace("▁", s, sp), specials=SPECIALS_SP))
    dec("BPEDecoder(</w>)", lambda b: make(bpe(b, "suffix_bpe"), pre_tokenizer=ws(), decoder=d.BPEDecoder(),
                                           specials=SPECIALS_BERT))
    dec("BPEDecoder(suffix=ing)", lambda b: make(bpe(b, "char_bpe"), pre_tokenizer=ws(), decoder=d.BPEDecoder("ing"),
                                                 specials=SPECIALS_BERT))
    dec("ByteFallback", lambda b: make(byte_fallback_bpe(b), pre_tokenizer=pt.Metaspace(), decoder=d.ByteFallback(),
                                       specials=SPECIALS_SP))
    dec("Fuse", lambda b: make(bpe(b, "char_bpe"), pre_tokenizer=ws(), decoder=d.Fuse(), specials=SPECIALS_BERT))
    dec("Strip(' ',1,0)", lambda b: make(bpe(b, "metaspace_bpe"), pre_tokenizer=pt.Metaspace(),
                                         decoder=d.Strip(" ", 1, 0), specials=SPECIALS_SP))
    dec("Strip('▁',2,3)", lambda b: make(bpe(b, "metaspace_bpe"), pre_tokenizer=pt.Metaspace(),
                                         decoder=d.Strip("▁", 2, 3), specials=SPECIALS_SP))
    dec("Replace('▁',' ')", lambda b: make(bpe(b, "metaspace_bpe"), pre_tokenizer=pt.Metaspace(),
                                           decoder=d.Replace("▁", " "), specials=SPECIALS_SP))
    dec("Replace(Regex('[aeiou]'),'_')", lambda b: make(bpe(b, "char_bpe"), pre_tokenizer=ws(),
                                                        decoder=d.Replace(Regex("[aeiou]"), "_"), specials=SPECIALS_BERT))
    dec("Sequence(llama)", lambda b: make(byte_fallback_bpe(b), normalizer=n.Sequence([n.Prepend("▁"), n.Replace(" ", "▁")]),
                                          decoder=llama_decoder(), specials=SPECIALS_SP))
    dec("Sequence(ByteFallback,Fuse,Metaspace)", lambda b: make(
        byte_fallback_bpe(b), pre_tokenizer=pt.Metaspace(),
        decoder=d.Sequence([d.ByteFallback(), d.Fuse(), d.Metaspace()]), specials=SPECIALS_SP))

    def ctc_tok(b, cleanup):
        from tokenizers import models

        chars = sorted({c for l in _train_lines(30) for c in l if not c.isspace()})[:400]
        vocab = {"<pad>": 0, "|": 1, "<unk>": 2}
        for c in chars:
            vocab.setdefault(c, len(vocab))
        return make(models.WordLevel(vocab, "<unk>"), normalizer=n.Replace(" ", "|"),
                    pre_tokenizer=pt.FixedLength(1), decoder=d.CTC("<pad>", "|", cleanup),
                    specials=["<pad>"])

    for cleanup in (True, False):
        dec(f"CTC(cleanup={cleanup})", lambda b, c=cleanup: ctc_tok(b, c))
    return S


SPECS = None


def all_specs() -> list[Spec]:
    global SPECS
    if SPECS is None:
        SPECS = specs()
    return SPECS


class Built:
    """Build each spec once per process and keep (path, HF tokenizer)."""

    def __init__(self, work_dir: Path):
        self.bases = Bases(work_dir)
        self.dir = work_dir / "components"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, tuple[Path, object]] = {}
        self._by_id = {s.id: s for s in all_specs()}

    def get(self, spec_id: str):
        from tokenizers import Tokenizer

        if spec_id not in self._cache:
            if not h.corpus_files():
                pytest.skip("no corpora in .fixtures (run scripts/fetch_fixtures.py)")
            tok = self._by_id[spec_id].build(self.bases)
            safe = "".join(c if c.isalnum() or c in "-_=." else "_" for c in spec_id)[:150]
            digest = hashlib.sha1(spec_id.encode()).hexdigest()[:8]
            path = self.dir / f"{safe}-{digest}.json"
            tok.save(str(path))
            # both sides read the saved file
            self._cache[spec_id] = (path, Tokenizer.from_file(str(path)))
        return self._cache[spec_id]
