"""`tokenkit tokenize` and `tokenkit.data`: every output format read back with an independent
reader (numpy.memmap, a Megatron-layout reader, datasets.load_dataset("parquet")) and compared,
document by document, with the reference library's ids (tiktoken's encode_ordinary, HF tokenizers'
encode) on the same documents; bad lines counted; thread counts and the Python call give the same
bytes; a run killed with SIGKILL at random points continues to identical output."""
from __future__ import annotations

import gzip
import hashlib
import json
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from data_corpus import (BAD_LINES, corpus_file, documents, fixture, read_megatron, reference_tiktoken, tokenkit_bin,
                         write_jsonl)

import tokenkit
import tokenkit.data


def run_cli(*args, check=True, **kw):
    p = subprocess.run([str(tokenkit_bin()), "tokenize", "-q", *map(str, args)], capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"tokenkit tokenize failed ({p.returncode}): {p.stderr}")
    return p


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    docs = documents(3000)
    path = d / "docs.jsonl"
    # Eight bad lines (each kind twice) whatever the corpus size (smaller on a fresh clone).
    bad_every = len(docs) // 8
    n_bad = write_jsonl(path, docs, bad_every=bad_every)
    return docs, path, n_bad, bad_every


def compare_flat(flat: np.ndarray, expected: list[list[int]]) -> int:
    """How many documents of `expected` are identical at their place in `flat`; the lengths must
    add up exactly."""
    assert len(flat) == sum(map(len, expected)), (len(flat), sum(map(len, expected)))
    same, pos = 0, 0
    for ids in expected:
        same += flat[pos:pos + len(ids)].tolist() == ids
        pos += len(ids)
    return same


def test_bin_cl100k_matches_tiktoken_encode_ordinary(corpus, tmp_path):
    docs, path, n_bad, _ = corpus
    out = tmp_path / "train"
    run_cli("-e", "cl100k_base", "--field", "text", "--format", "bin", "-o", out, path)
    meta = json.loads((tmp_path / "train.json").read_text())
    ref = reference_tiktoken("cl100k_base")
    expected = [ids + [ref.eot_token] for ids in ref.encode_ordinary_batch(docs)]
    assert ref.eot_token == 100257
    assert meta["dtype"] == "uint32"  # 100277 ids
    assert (meta["documents"], meta["tokens"], meta["skipped"]) == (len(docs), sum(map(len, expected)), n_bad)
    flat = np.memmap(tmp_path / "train.bin", dtype=np.uint32, mode="r")
    same = compare_flat(flat, expected)
    print(f"cl100k bin: {same}/{len(docs)} documents identical to tiktoken")
    assert same == len(docs)
    assert meta["sha256"] == hashlib.sha256((tmp_path / "train.bin").read_bytes()).hexdigest()


def test_bin_mistral_tokenizer_json_is_uint16_with_bos_and_eos_as_hf(corpus, tmp_path):
    """A tokenizer.json whose template starts each encoding with <s> (Mistral v0.1, Llama-2's
    layout): each document is HF's `encode` (BOS included) and then </s>."""
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _, _ = corpus
    tok_path = fixture("registry/mistral01/tokenizer.json")
    run_cli("-t", tok_path, "--format", "bin", "-o", tmp_path / "m", path)
    meta = json.loads((tmp_path / "m.json").read_text())
    assert meta["dtype"] == "uint16" and meta["separator"] == {"token": "</s>", "id": 2}
    hf = HfTokenizer.from_file(str(tok_path))
    expected = [e.ids + [2] for e in hf.encode_batch(docs)]
    assert all(ids[0] == 1 for ids in expected)  # <s>, from the template
    same = compare_flat(np.memmap(tmp_path / "m.bin", dtype=np.uint16, mode="r"), expected)
    print(f"mistral01 bin: {same}/{len(docs)} documents identical to tokenizers")
    assert same == len(docs)


# Meta's current Llama-3 tokenizer.json: ByteLevel, then a template that starts every encoding
# with <|begin_of_text|> (the fixture is the first release, whose post-processor is ByteLevel only,
# so that neither HF nor tokenkit adds a BOS with it).
LLAMA3_BOS_TEMPLATE = {
    "type": "Sequence",
    "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                  {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
         "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000],
                                                  "tokens": ["<|begin_of_text|>"]}}},
    ],
}


# (tokenizer, end-of-document token, BOS from the post-processor or None, Megatron's dtype)
MEGATRON_CASES = {
    "llama3": ("registry/llama3/tokenizer.json", "<|end_of_text|>", None, np.int32),  # 128256 ids >= 65500
    "llama3_bos_template": ("registry/llama3/tokenizer.json", "<|end_of_text|>", 128000, np.int32),
    "mistral01": ("registry/mistral01/tokenizer.json", "</s>", 1, np.uint16),  # 32000 ids < 65500
}


@pytest.mark.parametrize("case", list(MEGATRON_CASES))
def test_megatron_matches_hf_bos_from_the_post_processor(corpus, tmp_path, case):
    """Megatron's preprocess_data.py with a HuggingFace tokenizer writes `tokenizer(text).input_ids`
    (the post-processor's special tokens) and, with --append-eod, the EOS (`<|end_of_text|>` for
    Llama-3, `</s>` for Mistral): tokenkit writes the same, with a BOS exactly when the
    tokenizer.json adds one, in Megatron's dtype."""
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _, _ = corpus
    rel, eos_token, bos, want_dtype = MEGATRON_CASES[case]
    tok_path = fixture(rel)
    if case == "llama3_bos_template":
        tj = json.loads(tok_path.read_text(encoding="utf-8"))
        tj["post_processor"] = LLAMA3_BOS_TEMPLATE
        tok_path = tmp_path / "llama3_bos.json"
        tok_path.write_text(json.dumps(tj), encoding="utf-8")
    run_cli("-t", tok_path, "--format", "megatron", "-o", tmp_path / "m_text_document", path)
    dtype, seqs, doc_idx = read_megatron(tmp_path / "m_text_document")
    hf = HfTokenizer.from_file(str(tok_path))
    eos = hf.token_to_id(eos_token)
    expected = [e.ids + [eos] for e in hf.encode_batch(docs)]
    if bos is None:
        assert not any(ids[0] == hf.token_to_id("<|begin_of_text|>") for ids in expected)
    else:
        assert all(ids[0] == bos for ids in expected)
    assert dtype == want_dtype
    assert doc_idx.tolist() == list(range(len(docs) + 1))
    same = sum(s.tolist() == e for s, e in zip(seqs, expected))
    print(f"{case} megatron: {same}/{len(docs)} documents identical to tokenizers")
    assert len(seqs) == len(docs) and same == len(docs)


def test_parquet_bert_keeps_columns_and_loads_with_datasets(corpus, tmp_path):
    import datasets
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _, _ = corpus
    tok_path = fixture("registry/bert_uncased/tokenizer.json")
    run_cli("-t", tok_path, "--format", "parquet", "--keep-columns", "id", "-o", tmp_path / "p", path)
    meta = json.loads((tmp_path / "p.json").read_text())
    # BERT's template ends every document with [SEP]: no separator is added.
    assert meta["separator"] is None
    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / "p.parquet"), split="train",
                               cache_dir=str(tmp_path / "hf_cache"))
    assert ds.features["input_ids"].feature.dtype == "uint32"
    hf = HfTokenizer.from_file(str(tok_path))
    # This tokenizer.json truncates and pads to 128 (a sentence-transformers model): a document is
    # encoded whole, as `tokenizer(text)` in transformers (no truncation unless asked) does.
    assert hf.truncation["max_length"] == 128 and hf.padding["length"] == 128
    hf.no_truncation()
    hf.no_padding()
    expected = [e.ids for e in hf.encode_batch(docs)]
    same = sum(row["input_ids"] == expected[int(row["id"])] and int(row["id"]) == k for k, row in enumerate(ds))
    print(f"bert parquet: {same}/{len(docs)} documents identical to tokenizers")
    assert len(ds) == len(docs) and same == len(docs)


def test_bad_lines_are_counted_and_strict_fails(corpus, tmp_path):
    docs, path, n_bad, bad_every = corpus
    # An independent count of the lines that are no document: not JSON, not an object, or no
    # string "text" (the corpus has no blank lines and no empty texts).
    independent = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            independent += 1
            continue
        independent += not (isinstance(value, dict) and isinstance(value.get("text"), str))
    assert independent == n_bad == 8
    first = f"docs.jsonl:{bad_every + 1}: invalid JSON"
    p = subprocess.run([str(tokenkit_bin()), "tokenize", "-e", "gpt2", "-o", str(tmp_path / "b"), str(path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"{n_bad} bad records skipped" in p.stderr and first in p.stderr, p.stderr
    meta = json.loads((tmp_path / "b.json").read_text())
    print(f"bad lines: {meta['skipped']}/{independent} counted, {meta['documents']}/{len(docs)} documents")
    assert (meta["skipped"], meta["empty"], meta["documents"]) == (n_bad, 0, len(docs))
    p = run_cli("-e", "gpt2", "--strict", "-o", tmp_path / "s", path, check=False)
    assert p.returncode == 1 and first in p.stderr and "--strict" in p.stderr, p.stderr
    assert not (tmp_path / "s.bin").exists() and not (tmp_path / "s.json").exists()
    assert BAD_LINES  # the corpus holds each kind of bad line


def test_text_files_gzip_globs_and_directories(tmp_path):
    """Text inputs: a document per line or per file, plain and gzip, through a glob and a
    directory; ids equal tiktoken's."""
    ref = reference_tiktoken("r50k_base")
    src = [corpus_file("en"), corpus_file("ja")]
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.txt").write_bytes(src[0].read_bytes())
    (d / "b.txt.gz").write_bytes(gzip.compress(src[1].read_bytes()))
    # The bytes as the CLI reads them (read_text would turn a CRLF file's line ends into "\n").
    texts = [s.read_bytes().decode("utf-8") for s in src]
    run_cli("-e", "r50k_base", "--text-docs", "file", "-o", tmp_path / "f", d)
    expected = [ids + [50256] for ids in ref.encode_ordinary_batch(texts)]
    assert compare_flat(np.memmap(tmp_path / "f.bin", dtype=np.uint16, mode="r"), expected) == 2
    run_cli("-e", "r50k_base", "-o", tmp_path / "l", f"{d}/*.t*")
    lines = [line.rstrip("\r") for t in texts for line in t.split("\n") if line.strip()]
    expected = [ids + [50256] for ids in ref.encode_ordinary_batch(lines)]
    same = compare_flat(np.memmap(tmp_path / "l.bin", dtype=np.uint16, mode="r"), expected)
    print(f"r50k lines: {same}/{len(lines)} identical to tiktoken")
    assert same == len(lines)


def test_thread_counts_python_and_val_split_give_the_same_bytes(corpus, tmp_path):
    docs, path, _, _ = corpus
    outs = []
    for threads in (1, 2):
        run_cli("-e", "o200k_base", "--threads", threads, "--chunk-bytes", 50000, "-o", tmp_path / f"t{threads}", path)
        outs.append((tmp_path / f"t{threads}.bin").read_bytes())
    s = tokenkit.data.tokenize_files(path, tmp_path / "py", "o200k_base", chunk_bytes=123457)
    outs.append((tmp_path / "py.bin").read_bytes())
    assert outs[0] == outs[1] == outs[2]
    assert s["train"]["documents"] == len(docs) and s["dtype"] == "uint32"
    # A validation split by text hash: train + val hold every document once, each in its place.
    run_cli("-e", "o200k_base", "--val-fraction", "0.1", "-o", tmp_path / "v", path)
    meta = json.loads((tmp_path / "v.json").read_text())
    assert meta["documents"] + meta["val"]["documents"] == len(docs)
    assert 0.05 * len(docs) < meta["val"]["documents"] < 0.15 * len(docs)
    n = len(np.memmap(tmp_path / "v.bin", dtype=np.uint32, mode="r")) + len(
        np.memmap(tmp_path / "v.val.bin", dtype=np.uint32, mode="r"))
    assert n * 4 == len(outs[0])


def test_killed_at_random_points_resumes_to_identical_output(corpus, tmp_path):
    docs, _, _, _ = corpus
    big = tmp_path / "big.jsonl"
    # Enough text (8 MB at least) that encoding, not loading the tokenizer, takes most of a run,
    # so that kills land after some chunks were journaled (the built-in corpus is small).
    size = sum(len(d.encode()) for d in docs)
    write_jsonl(big, docs * max(6, -(-8_000_000 // max(size, 1))), bad_every=997)
    args = ["-e", "cl100k_base", "--format", "megatron", "--chunk-bytes", 40000]
    t0 = time.monotonic()
    run_cli(*args, "-o", tmp_path / "ref", big)
    full = time.monotonic() - t0
    ref = ((tmp_path / "ref.bin").read_bytes(), (tmp_path / "ref.idx").read_bytes(), (tmp_path / "ref.json").read_text())
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    out = tmp_path / "k"
    journal = Path(f"{out}.journal")
    total = sum(1 for _ in big.open("rb"))
    kills = resumed = 0
    for run in range(5):
        # Kill points are drawn in journaled progress, not in time (a resumed run has less left to
        # do than the uninterrupted one): the first run is killed while loading or in its first
        # chunks, the others after a random number of further records, each with a random delay.
        start = journaled_records(journal)
        target = start + (0 if run == 0 else rng.randint(1, total // 8))
        p = subprocess.Popen([str(tokenkit_bin()), "tokenize", "-q", *map(str, args), "-o", str(out), str(big)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10 * full + 10
        while p.poll() is None and journaled_records(journal) < target and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.05) * full)
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        _, err = p.communicate()
        resumed += "resumed" in err
        # Never a partial file under a final name: either absent or complete.
        for ext, want in (("bin", ref[0]), ("idx", ref[1])):
            f = Path(f"{out}.{ext}")
            assert not f.exists() or f.read_bytes() == want, f"seed {seed}: partial {f}"
    p = run_cli(*args, "-o", out, big)
    resumed += "resumed" in p.stderr
    got = (Path(f"{out}.bin").read_bytes(), Path(f"{out}.idx").read_bytes(), Path(f"{out}.json").read_text())
    print(f"kill-and-resume (seed {seed}): {kills} kills, {resumed} runs continued a killed one, "
          f"uninterrupted run {full:.2f} s; output identical: {got[:2] == ref[:2]}")
    assert kills >= 3, f"seed {seed}: only {kills} of 5 runs were still running when killed"
    # A run that completes continues from a journal (the summary says "resumed"): resuming was tested.
    assert resumed >= 1, f"seed {seed}: no run continued from a journal"
    assert got[0] == ref[0] and got[1] == ref[1], f"seed {seed}"
    assert json.loads(got[2])["tokens"] == json.loads(ref[2])["tokens"]
    # The resumed run hashes the kept prefix of its token file, then what it appends.
    assert json.loads(got[2])["sha256"] == json.loads(ref[2])["sha256"] == hashlib.sha256(got[0]).hexdigest()
    assert not Path(f"{out}.journal").exists()
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert leftovers == [], leftovers


def journaled_records(journal: Path) -> int:
    """How many input records a job's journal says are done (0 without a journal)."""
    try:
        return json.loads(journal.read_bytes())["records"]
    except (FileNotFoundError, ValueError):
        return 0


def test_a_different_command_does_not_resume(corpus, tmp_path):
    """A journal left by one command is not used by another (different tokenizer): the output
    is that of the second command alone."""
    docs, path, _, _ = corpus
    out = tmp_path / "x"
    p = subprocess.Popen([str(tokenkit_bin()), "tokenize", "-q", "-e", "cl100k_base", "--chunk-bytes", "20000",
                          "-o", str(out), str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    p.kill()
    p.wait()
    run_cli("-e", "r50k_base", "-o", out, path)
    run_cli("-e", "r50k_base", "-o", tmp_path / "clean", path)
    assert Path(f"{out}.bin").read_bytes() == (tmp_path / "clean.bin").read_bytes()


def test_arrow_batches_match_encode(corpus):
    import pyarrow as pa

    docs, _, _, _ = corpus
    from tokenizers import Tokenizer as HfTokenizer

    docs = docs[:500]
    tok_path = str(fixture("registry/mistral01/tokenizer.json"))
    arr = tokenkit.Tokenizer.from_file(tok_path).encode_batch_to_arrow(docs)
    assert isinstance(arr, pa.ListArray) and arr.type == pa.list_(pa.uint32())
    same = sum(a == e.ids for a, e in zip(arr.to_pylist(), HfTokenizer.from_file(tok_path).encode_batch(docs)))
    from tokenkit import tiktoken as tk
    enc = tk.get_encoding("cl100k_base")
    arr = enc.encode_ordinary_batch_to_arrow(docs)
    same_tt = sum(a == r for a, r in zip(arr.to_pylist(), reference_tiktoken("cl100k_base").encode_ordinary_batch(docs)))
    print(f"arrow: {same}/{len(docs)} identical to tokenizers, {same_tt}/{len(docs)} to tiktoken")
    assert same == same_tt == len(docs) == len(arr)
    de = tokenkit.data.DocumentEncoder("cl100k_base")
    assert de.separator == ("<|endoftext|>", 100257)
    assert de.encode_batch_to_arrow(docs).to_pylist() == [ids + [100257] for ids in arr.to_pylist()]


def test_bad_arguments_and_inputs_are_clear_errors(corpus, tmp_path):
    """Bad arguments and unreadable inputs give exit status 1 and a message naming what is wrong,
    never a panic, and no output under a final name."""
    _, path, _, _ = corpus
    garbage = tmp_path / "broken.parquet"
    garbage.write_bytes(b"PAR1 this is not a parquet file")
    cases = [
        (["-e", "cl100k_base", "-o", tmp_path / "x", tmp_path / "missing.jsonl"], "missing.jsonl"),
        (["-e", "cl100k_base", "-o", tmp_path / "x", f"{tmp_path}/*.nothing"], "matches no file"),
        (["-e", "cl100k_base", "--separator", "<nope>", "-o", tmp_path / "x", path], "not a token"),
        (["-e", "cl100k_base", "--keep-columns", "id", "-o", tmp_path / "x", path], "Parquet output only"),
        (["-e", "cl100k_base", "--val-fraction", "1", "-o", tmp_path / "x", path], "val-fraction"),
        (["-e", "cl100k_base", "-o", tmp_path / "x", garbage], "broken.parquet"),
        (["-e", "cl100k_base", "--field", "body", "-o", tmp_path / "x", garbage.with_name("none.parquet")], "none.parquet"),
    ]
    for args, needle in cases:
        p = run_cli(*args, check=False)
        assert p.returncode == 1 and needle in p.stderr and "panicked" not in p.stderr, (args, p.returncode, p.stderr)
        # (A journal may stay: after an error mid-way, the same command continues from it.)
        finals = [f for f in tmp_path.glob("x.*") if f.suffix != ".journal"]
        assert not finals, (args, finals)
    print(f"bad arguments and inputs: {len(cases)}/{len(cases)} clear errors")
