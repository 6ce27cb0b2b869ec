"""Measuring and seeing tokenizers (issue 25): `tokenkit stats` and `tokenkit.data.stats` against
values computed here from the reference libraries (tiktoken, HF tokenizers) and by hand;
`tokenkit.tools.EncodingVisualizer` against `tokenizers.tools.EncodingVisualizer`, element by
element; `tokenkit viz` pages rendered in headless Chromium (Debian's chromium + chromium-driver,
driven by selenium), their token spans checked against the reference ids, screenshots kept."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from data_corpus import ROOT, corpus_file, fixture, reference_tiktoken, tokenkit_bin

import tokenkit
import tokenkit.data
from tokenkit.tools import Annotation, EncodingVisualizer

ARTIFACTS = ROOT / "target" / "test-artifacts"

TOKENIZER_FILES = ["registry/bert_uncased/tokenizer.json", "registry/mistral01/tokenizer.json",
                   "registry/llama3/tokenizer.json", "registry/qwen3/tokenizer.json"]

TEXTS = [
    "Hello, world! Tokenizers cut text into pieces.",
    "naïve café — 東京タワー 🦀🦀 ok",
    "  leading spaces\tand\ttabs\n\nnew lines  ",
    "unknown ☃ snowman and chunky oov words",
    "",
]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([str(tokenkit_bin()), *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"tokenkit {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p


# --------------------------------------------------------------------------------------------
# stats


def expected_counts(lines: list[str], encode) -> dict:
    """Documents, bytes, chars, words (str.split) and tokens of the non-blank lines, as computed
    here with the reference encoder."""
    docs = [line for line in lines if line]
    return {
        "documents": len(docs),
        "bytes": sum(len(d.encode()) for d in docs),
        "chars": sum(len(d) for d in docs),
        "words": sum(len(d.split()) for d in docs),
        "tokens": sum(len(encode(d)) for d in docs),
    }


def corpus_lines(lang: str, limit: int = 400) -> list[str]:
    lines = corpus_file(lang).read_text(encoding="utf-8").splitlines()
    return lines[:limit]


@pytest.fixture(scope="module")
def small_corpora(tmp_path_factory):
    d = tmp_path_factory.mktemp("stats")
    paths = {}
    for lang in ("en", "ja", "code"):
        p = d / f"{lang}.txt"
        p.write_text("\n".join(corpus_lines(lang)) + "\n", encoding="utf-8")
        paths[lang] = p
    return paths


def test_stats_json_matches_tiktoken_and_hand_counts(small_corpora):
    enc = reference_tiktoken("cl100k_base")
    paths = [str(p) for p in small_corpora.values()]
    out = cli("stats", "-e", "cl100k_base", "--json", *paths).stdout.splitlines()
    assert len(out) == 1
    r = json.loads(out[0])
    total = {k: 0 for k in ("documents", "bytes", "chars", "words", "tokens")}
    checked = 0
    for (lang, path), c in zip(small_corpora.items(), r["corpora"]):
        want = expected_counts(corpus_lines(lang), enc.encode_ordinary)
        assert c["corpus"] == str(path)
        assert {k: c[k] for k in want} == want, lang
        assert c["bytes_per_token"] == pytest.approx(want["bytes"] / want["tokens"])
        assert c["tokens_per_word"] == pytest.approx(want["tokens"] / want["words"])
        for k in total:
            total[k] += want[k]
        checked += 1
    assert checked == 3
    assert {k: r[k] for k in total} == total
    assert r["bytes_per_token"] == pytest.approx(total["bytes"] / total["tokens"])
    assert r["chars_per_token"] == pytest.approx(total["chars"] / total["tokens"])
    assert r["unknown_tokens"] == r["byte_fallback_tokens"] == 0
    assert sum(r["token_bytes_histogram"].values()) == r["tokens"]
    ids = {i for lang in small_corpora for line in corpus_lines(lang) if line for i in enc.encode_ordinary(line)}
    assert r["vocab_used"] == len(ids) and r["vocab_size"] == enc.n_vocab
    # Token lengths: the histogram of the reference token bytes.
    lengths = {}
    for lang in small_corpora:
        for line in corpus_lines(lang):
            for t in enc.encode_ordinary(line):
                n = min(len(enc.decode_single_token_bytes(t)), 16)
                key = "16+" if n == 16 else str(n)
                lengths[key] = lengths.get(key, 0) + 1
    assert {k: v for k, v in r["token_bytes_histogram"].items() if v} == lengths
    print(f"stats cl100k: {checked}/3 corpora identical to the counts from tiktoken, {r['tokens']} tokens")


def test_stats_unknown_rate_and_python_call_match_hf(small_corpora, tmp_path):
    from tokenizers import Tokenizer as HfTokenizer

    path = fixture("registry/bert_uncased/tokenizer.json")
    hf = HfTokenizer.from_file(str(path))
    hf.no_padding()
    hf.no_truncation()
    unk = hf.token_to_id("[UNK]")
    docs = [line for lang in ("en", "ja") for line in corpus_lines(lang) + ["snowman ☃ and 🦀"] if line]
    corpus = tmp_path / "docs.jsonl"
    langs = []
    with corpus.open("w", encoding="utf-8") as f:
        for k, d in enumerate(docs):
            lang = "ja" if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", d) else "en"
            langs.append(lang)
            f.write(json.dumps({"text": d, "lang": lang}, ensure_ascii=False) + "\n")
        f.write('{"no_text": 1}\n')
    ids = [hf.encode(d, add_special_tokens=False).ids for d in docs]
    got = json.loads(cli("stats", "-t", str(path), "--json", "--lang-field", "lang", str(corpus)).stdout)
    assert got["tokens"] == sum(map(len, ids))
    assert got["unknown_tokens"] == sum(i.count(unk) for i in ids) > 0
    assert got["unknown_rate"] == pytest.approx(got["unknown_tokens"] / got["tokens"])
    assert got["skipped_records"] == 1
    for lang in ("en", "ja"):
        sel = [i for i, l in zip(ids, langs) if l == lang]
        assert got["languages"][lang]["tokens"] == sum(map(len, sel))
        assert got["languages"][lang]["documents"] == len(sel)
    # With the post-processor's tokens: [CLS] and [SEP] per document.
    with_special = json.loads(cli("stats", "-t", str(path), "--json", "--special", str(corpus)).stdout)
    assert with_special["tokens"] == got["tokens"] + 2 * len(docs)
    # The Python call gives the CLI's numbers.
    py = tokenkit.data.stats(corpus, str(path), lang_field="lang")
    assert py == got
    both = tokenkit.data.stats([corpus], [tokenkit.Tokenizer.from_file(str(path)), "cl100k_base"])
    cl100k = reference_tiktoken("cl100k_base")
    assert [b["tokens"] for b in both] == [got["tokens"], sum(len(cl100k.encode_ordinary(d)) for d in docs)]


def test_stats_byte_fallback_is_counted(tmp_path):
    """Mistral 7B's SentencePiece model (byte fallback): characters it lacks become <0xNN> pieces;
    its tokenizer.json (BPE with byte_fallback) counts the same."""
    import sentencepiece as spm

    model = fixture("registry/mistral01/tokenizer.model")
    sp = spm.SentencePieceProcessor(model_file=str(model))
    text = "plain words and 東京 ☃ ꙮ 𓀀 ᚠᛇᚻ"
    corpus = tmp_path / "t.txt"
    corpus.write_text(text + "\n", encoding="utf-8")
    got = json.loads(cli("stats", "-t", str(model), "--json", str(corpus)).stdout)
    ids = sp.encode(text)
    assert got["tokens"] == len(ids)
    assert got["byte_fallback_tokens"] == sum(sp.IsByte(i) for i in ids) > 0
    assert got["unknown_tokens"] == sum(sp.IsUnknown(i) for i in ids)
    as_json = json.loads(cli("stats", "-t", str(fixture("registry/mistral01/tokenizer.json")), "--json", str(corpus)).stdout)
    assert as_json["byte_fallback_tokens"] == got["byte_fallback_tokens"]
    assert as_json["byte_fallback_rate"] == pytest.approx(got["byte_fallback_tokens"] / as_json["tokens"])


def test_stats_table_and_chart(small_corpora, tmp_path):
    chart = tmp_path / "stats.svg"
    paths = [str(p) for p in small_corpora.values()]
    p = cli("stats", "-e", "cl100k_base", "-e", "o200k_base", "-t", str(fixture("registry/gpt2/vocab.json")),
            "--chart", str(chart), *paths)
    lines = p.stdout.splitlines()
    assert lines[0].split()[:3] == ["tokenizer", "corpus", "tokens"]
    # A row per tokenizer and corpus, and one for all corpora, for each of the three.
    assert len(lines) == 1 + 3 * (3 + 1)
    svg = chart.read_text(encoding="utf-8")
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    texts = [t.text.strip() for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text]
    for name in ("cl100k_base", "o200k_base", "vocab.json", "en.txt", "ja.txt", "code.txt"):
        assert name in texts, (name, texts)
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert len(bars) >= 2 * 3 * 3
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(chart, ARTIFACTS / "stats.svg")


def test_stats_errors_are_clear(tmp_path):
    p = cli("stats", "--json", str(tmp_path), check=False)
    assert p.returncode != 0 and "give at least one tokenizer" in p.stderr
    p = cli("stats", "-e", "cl100k_base", str(tmp_path / "missing.txt"), check=False)
    assert p.returncode != 0 and "missing.txt" in p.stderr and "panicked" not in p.stderr


# --------------------------------------------------------------------------------------------
# EncodingVisualizer


class Elements(HTMLParser):
    """The elements inside `<div class="tokenized-text">`: (tag, classes, data attributes and
    style, text) in document order, and the closing tags."""

    def __init__(self):
        super().__init__()
        self.inside = 0
        self.items: list = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and "tokenized-text" in (a.get("class") or ""):
            self.inside = 1
            return
        if self.inside:
            self.inside += 1
            keep = sorted((k, v) for k, v in a.items() if k.startswith("data-") or k == "style")
            self.items.append(("start", tag, tuple((a.get("class") or "").split()), tuple(keep)))

    def handle_endtag(self, tag):
        if self.inside:
            self.inside -= 1
            if self.inside:
                self.items.append(("end", tag))

    def handle_data(self, data):
        if self.inside > 1:
            self.items.append(("text", data))


def elements(html: str) -> list:
    p = Elements()
    p.feed(html)
    return p.items


def test_encoding_visualizer_markup_is_hf(tmp_path):
    from tokenizers import Tokenizer as HfTokenizer
    from tokenizers.tools import Annotation as HfAnnotation
    from tokenizers.tools import EncodingVisualizer as HfVisualizer

    same = total = 0
    for rel in TOKENIZER_FILES:
        path = str(fixture(rel))
        ours = EncodingVisualizer(tokenkit.Tokenizer.from_file(path), default_to_notebook=False)
        theirs = HfVisualizer(HfTokenizer.from_file(path), default_to_notebook=False)
        for text in TEXTS[:-1]:
            annos = [(0, 5, "first"), (7, 12, "second"), (10, 20, "overlap")] if len(text) > 20 else []
            got = ours(text, annotations=[Annotation(*a) for a in annos])
            want = theirs(text, annotations=[HfAnnotation(*a) for a in annos])
            total += 1
            assert elements(got) == elements(want), (rel, text)
            assert elements(got), "an empty picture compares as nothing"
            same += 1
    # The annotation converter and the label colours.
    conv = EncodingVisualizer(tokenkit.Tokenizer.from_file(str(fixture(TOKENIZER_FILES[0]))), default_to_notebook=False,
                              annotation_converter=lambda d: Annotation(d["s"], d["e"], d["l"]))
    assert 'data-label="x"' in conv("some text", annotations=[{"s": 0, "e": 4, "l": "x"}])
    labels = [Annotation(0, 1, l) for l in "cbaxyzuvw"]
    assert EncodingVisualizer.calculate_label_colors(labels) == HfVisualizer.calculate_label_colors(labels)
    print(f"EncodingVisualizer: {same}/{total} pictures element for element as tokenizers.tools")
    assert same == total == len(TOKENIZER_FILES) * (len(TEXTS) - 1)


def test_encoding_visualizer_empty_text_and_notebook_flag():
    tok = tokenkit.Tokenizer.from_file(str(fixture(TOKENIZER_FILES[1])))
    html = EncodingVisualizer(tok, default_to_notebook=False)("")
    assert elements(html) == [] and '<div class="tokenized-text" dir=auto></div>' in html
    try:
        import IPython  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="default_to_notebook=False"):
            EncodingVisualizer(tok)


# --------------------------------------------------------------------------------------------
# tokenkit viz in a browser


def rendered_tokens(driver) -> list[tuple[list[int], str]]:
    """Each token span's ids and rendered text, and the special tokens, in page order."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('.tokenized-text > span, .tokenized-text .annotation > span')).map(
            s => [s.dataset.ids ? s.dataset.ids.split(' ').map(Number) : [], s.className, s.textContent]);
    """)


@pytest.mark.parametrize("source", ["cl100k_base", "o200k_base", "registry/llama3/tokenizer.json",
                                    "registry/bert_uncased/tokenizer.json"])
def test_viz_page_in_chromium(source, browser, tmp_path):
    text = "Tokenizers cut text: naïve 東京タワー 🦀 ☃ x = 12345;"
    out = tmp_path / "viz.html"
    if source.startswith("registry/"):
        from tokenizers import Tokenizer as HfTokenizer

        path = str(fixture(source))
        cli("viz", "-t", path, "-o", str(out), text)
        hf = HfTokenizer.from_file(path)
        hf.no_padding()
        hf.no_truncation()
        want = hf.encode(text).ids
    else:
        cli("viz", "-e", source, "-o", str(out), text)
        want = reference_tiktoken(source).encode_ordinary(text)
    browser.get(out.as_uri())
    spans = rendered_tokens(browser)
    # The ids in page order: a run lists the tokens of its first character, so a token that also
    # holds the start of the next run (a character cut between bytes) is listed twice in a row.
    got_ids = [i for ids, _, _ in spans for i in ids]
    dedup = lambda xs: [x for k, x in enumerate(xs) if k == 0 or x != xs[k - 1]]  # noqa: E731
    assert dedup(got_ids) == dedup(want), (source, got_ids, want)
    assert "".join(t for _, _, t in spans) == text, source
    summary = browser.find_element("css selector", ".summary").text
    assert summary.startswith(f"{len(want)} tokens,"), summary
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", source)
    assert browser.save_screenshot(str(ARTIFACTS / f"viz-{name}.png"))
    print(f"viz {source}: {len(want)} tokens, page spans cover the text, screenshot target/test-artifacts/viz-{name}.png")


# --------------------------------------------------------------------------------------------
# Simple tokenizers: characters, words, bytes


def simple_corpus(tmp_path) -> tuple[Path, list[str]]:
    """Training lines (English, Japanese, code) and held-out lines of the same corpora."""
    train, held = [], []
    for lang in ("en", "ja", "code"):
        lines = [l for l in corpus_file(lang).read_text(encoding="utf-8").splitlines() if l.strip()]
        cut = min(1500, len(lines) * 9 // 10)   # the built-in samples of a fresh clone have ~200 lines
        train += lines[:cut]
        held += lines[cut:cut + 100]
    path = tmp_path / "train.txt"
    path.write_text("\n".join(train) + "\n", encoding="utf-8")
    return path, held


@pytest.mark.parametrize("kind", ["char", "word"])
def test_char_and_word_tokenizers_are_hf_wordlevel(kind, tmp_path):
    from tokenizers import Regex
    from tokenizers import Tokenizer as HfTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    train, held = simple_corpus(tmp_path)
    out = tmp_path / f"{kind}.json"
    vocab_size = 3000 if kind == "char" else 8000
    cli("train", "-q", "-m", kind, "-v", str(vocab_size), "--special-tokens", "<unk>", "-o", str(out), str(train))
    hf = HfTokenizer(models.WordLevel(unk_token="<unk>"))
    if kind == "char":
        hf.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), "isolated")
        hf.decoder = decoders.Fuse()
    else:
        hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.train([str(train)], trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=["<unk>"]))
    loaded = HfTokenizer.from_file(str(out))   # HF reads tokenkit's file
    assert loaded.get_vocab() == hf.get_vocab()
    ours = tokenkit.Tokenizer.from_file(str(out))
    same = sum(ours.encode(l).ids == hf.encode(l).ids == loaded.encode(l).ids for l in held)
    unk = hf.token_to_id("<unk>")
    if kind == "char":
        # Lines of known characters decode back to themselves (the Fuse decoder joins them).
        known = [l for l in held if unk not in hf.encode(l).ids]
        assert known and all(ours.decode(ours.encode(l).ids) == hf.decode(hf.encode(l).ids) == l for l in known)
    print(f"{kind} tokenizer: vocabulary = HF's WordLevel ({len(hf.get_vocab())}), {same}/{len(held)} held-out lines identical")
    assert same == len(held)


def test_byte_tokenizer_is_utf8_and_compresses_exactly_one(tmp_path):
    from tokenizers import Tokenizer as HfTokenizer

    out = tmp_path / "byte.json"
    cli("train", "-q", "-m", "byte", "--special-tokens", "<|endoftext|>", "-o", str(out))
    texts = TEXTS + ["\x00\x7f\u0080 \uffff \U0010ffff", "a<|endoftext|>b"]
    hf = HfTokenizer.from_file(str(out))
    ours = tokenkit.Tokenizer.from_file(str(out))
    for t in texts:
        # Every UTF-8 byte is its own id; the special token is one id after them.
        want = [ord("a"), 256, ord("b")] if t == "a<|endoftext|>b" else list(t.encode())
        assert hf.encode(t).ids == want, t
        assert ours.encode(t).ids == want, t
        assert ours.decode(want, skip_special_tokens=False) == hf.decode(want, skip_special_tokens=False) == t
    assert ours.get_vocab_size() == 257
    corpus = tmp_path / "t.txt"
    corpus.write_text("\n".join(corpus_lines("ja") + corpus_lines("en")) + "\n", encoding="utf-8")
    got = json.loads(cli("stats", "-t", str(out), "--json", str(corpus)).stdout)
    assert got["tokens"] == got["bytes"] > 0 and got["bytes_per_token"] == 1.0
    p = cli("train", "-m", "byte", "-v", "300", "-o", str(tmp_path / "b2.json"), check=False)
    assert p.returncode != 0 and "--vocab-size" in p.stderr, p.stderr


def test_seed_examples_by_hand(tmp_path):
    """The examples of Stanford CS336's tokenization lecture, counted by hand: "Hello, 🌍! 你好!"
    is 20 bytes and 13 characters (the byte tokenizer: 20 tokens, exactly 1 byte per token; the
    character tokenizer: 13 tokens, 20/13 = 1.538 bytes per token, the lecture's figure); "I'll say
    supercalifragilisticexpialidocious!" is 44 bytes and 3 words, which the word tokenizer (HF's
    Whitespace: runs of word characters and of punctuation, spaces dropped) cuts into 6 tokens: I
    ' ll say supercalifragilisticexpialidocious ! (2 tokens per word)."""
    hello, word = "Hello, 🌍! 你好!", "I'll say supercalifragilisticexpialidocious!"
    train = tmp_path / "train.txt"
    train.write_text(f"{hello}\n{word}\n", encoding="utf-8")
    for kind in ("byte", "char", "word"):
        args = ["-o", str(tmp_path / f"{kind}.json")] + ([] if kind == "byte" else ["--special-tokens", "<unk>", str(train)])
        cli("train", "-q", "-m", kind, *args)
    want = {  # (text, tokenizer): (bytes, chars, words, tokens)
        (hello, "byte"): (20, 13, 3, 20), (hello, "char"): (20, 13, 3, 13),
        (word, "byte"): (44, 44, 3, 44), (word, "word"): (44, 44, 3, 6),
    }
    for (text, kind), (nbytes, chars, words, tokens) in want.items():
        corpus = tmp_path / "one.txt"
        corpus.write_text(text + "\n", encoding="utf-8")
        got = json.loads(cli("stats", "-q", "-t", str(tmp_path / f"{kind}.json"), "--json", str(corpus)).stdout)
        assert (got["bytes"], got["chars"], got["words"], got["tokens"], got["unknown_tokens"]) == (nbytes, chars, words, tokens, 0), (kind, got)
        assert got["bytes_per_token"] == nbytes / tokens and got["tokens_per_word"] == tokens / words, (kind, got)
    assert round(20 / 13, 3) == 1.538
