"""`tokenkit tokenize` and `tokenkit.data`: every output format read back with an independent
reader (numpy.memmap, a Megatron-layout reader, datasets.load_dataset("parquet")) and compared,
document by document, with the reference library's ids (tiktoken's encode_ordinary, HF tokenizers'
encode) on the same documents; bad lines counted; thread counts and the Python call give the same
bytes; a run killed with SIGKILL at random points continues to identical output."""
from __future__ import annotations

import gzip
import json
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from data_corpus import (BAD_LINES, documents, fixture, read_megatron, reference_tiktoken, tokenkit_bin,
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
    n_bad = write_jsonl(path, docs, bad_every=500)
    return docs, path, n_bad


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
    docs, path, n_bad = corpus
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
    import hashlib
    assert meta["sha256"] == hashlib.sha256((tmp_path / "train.bin").read_bytes()).hexdigest()


def test_bin_gpt2_tokenizer_json_is_uint16_and_matches_hf(corpus, tmp_path):
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _ = corpus
    tok_path = fixture("hub/gpt2.json")
    run_cli("-t", tok_path, "--format", "bin", "-o", tmp_path / "g", path)
    meta = json.loads((tmp_path / "g.json").read_text())
    assert meta["dtype"] == "uint16" and meta["separator"] == {"token": "<|endoftext|>", "id": 50256}
    hf = HfTokenizer.from_file(str(tok_path))
    expected = [e.ids + [50256] for e in hf.encode_batch(docs)]
    same = compare_flat(np.memmap(tmp_path / "g.bin", dtype=np.uint16, mode="r"), expected)
    print(f"gpt2 bin: {same}/{len(docs)} documents identical to tokenizers")
    assert same == len(docs)


def test_megatron_llama3_matches_hf_with_bos_and_eos(corpus, tmp_path):
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _ = corpus
    tok_path = fixture("registry/llama3/tokenizer.json")
    run_cli("-t", tok_path, "--format", "megatron", "-o", tmp_path / "m_text_document", path)
    dtype, seqs, doc_idx = read_megatron(tmp_path / "m_text_document")
    hf = HfTokenizer.from_file(str(tok_path))
    eos = hf.token_to_id("<|end_of_text|>")
    expected = [e.ids + [eos] for e in hf.encode_batch(docs)]
    assert expected[0][0] == hf.token_to_id("<|begin_of_text|>")  # the post-processor's BOS
    assert dtype == np.int32  # Megatron's rule: 128256 ids >= 65500
    assert doc_idx.tolist() == list(range(len(docs) + 1))
    same = sum(s.tolist() == e for s, e in zip(seqs, expected))
    print(f"llama3 megatron: {same}/{len(docs)} documents identical to tokenizers")
    assert len(seqs) == len(docs) and same == len(docs)


def test_megatron_uint16_for_small_vocabularies(corpus, tmp_path):
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _ = corpus
    tok_path = fixture("hub/llama2.json")
    run_cli("-t", tok_path, "--format", "megatron", "-o", tmp_path / "l2", path)
    dtype, seqs, _ = read_megatron(tmp_path / "l2")
    hf = HfTokenizer.from_file(str(tok_path))
    expected = [e.ids + [hf.token_to_id("</s>")] for e in hf.encode_batch(docs)]
    assert dtype == np.uint16
    same = sum(s.tolist() == e for s, e in zip(seqs, expected))
    print(f"llama2 megatron: {same}/{len(docs)} documents identical to tokenizers")
    assert len(seqs) == len(docs) and same == len(docs)


def test_parquet_bert_keeps_columns_and_loads_with_datasets(corpus, tmp_path):
    import datasets
    from tokenizers import Tokenizer as HfTokenizer

    docs, path, _ = corpus
    tok_path = fixture("hub/bert_base_cased.json")
    run_cli("-t", tok_path, "--format", "parquet", "--keep-columns", "id", "-o", tmp_path / "p", path)
    meta = json.loads((tmp_path / "p.json").read_text())
    # BERT's template ends every document with [SEP]: no separator is added.
    assert meta["separator"] is None
    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / "p.parquet"), split="train",
                               cache_dir=str(tmp_path / "hf_cache"))
    assert ds.features["input_ids"].feature.dtype == "uint32"
    hf = HfTokenizer.from_file(str(tok_path))
    expected = [e.ids for e in hf.encode_batch(docs)]
    same = sum(row["input_ids"] == expected[int(row["id"])] and int(row["id"]) == k for k, row in enumerate(ds))
    print(f"bert parquet: {same}/{len(docs)} documents identical to tokenizers")
    assert len(ds) == len(docs) and same == len(docs)


def test_bad_lines_are_counted_and_strict_fails(corpus, tmp_path):
    docs, path, n_bad = corpus
    assert n_bad == 5
    p = subprocess.run([str(tokenkit_bin()), "tokenize", "-e", "gpt2", "-o", str(tmp_path / "b"), str(path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"{n_bad} bad records skipped" in p.stderr and "docs.jsonl:501: invalid JSON" in p.stderr, p.stderr
    assert json.loads((tmp_path / "b.json").read_text())["skipped"] == n_bad
    p = run_cli("-e", "gpt2", "--strict", "-o", tmp_path / "s", path, check=False)
    assert p.returncode == 1 and "docs.jsonl:501: invalid JSON" in p.stderr and "--strict" in p.stderr, p.stderr
    assert not (tmp_path / "s.bin").exists() and not (tmp_path / "s.json").exists()
    assert BAD_LINES  # the corpus holds each kind of bad line


def test_text_files_gzip_globs_and_directories(tmp_path):
    """Text inputs: a document per line or per file, plain and gzip, through a glob and a
    directory; ids equal tiktoken's."""
    ref = reference_tiktoken("r50k_base")
    src = [fixture("corpora/en/botchan.txt"), fixture("corpora/ja/wagahai.txt")]
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.txt").write_bytes(src[0].read_bytes())
    (d / "b.txt.gz").write_bytes(gzip.compress(src[1].read_bytes()))
    texts = [s.read_text(encoding="utf-8") for s in src]
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
    docs, path, _ = corpus
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
    docs, _, _ = corpus
    big = tmp_path / "big.jsonl"
    write_jsonl(big, docs * 6, bad_every=997)
    args = ["-e", "cl100k_base", "--format", "megatron", "--chunk-bytes", 40000]
    t0 = time.monotonic()
    run_cli(*args, "-o", tmp_path / "ref", big)
    full = time.monotonic() - t0
    ref = ((tmp_path / "ref.bin").read_bytes(), (tmp_path / "ref.idx").read_bytes(), (tmp_path / "ref.json").read_text())
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    out = tmp_path / "k"
    kills = resumed = 0
    for _ in range(5):
        p = subprocess.Popen([str(tokenkit_bin()), "tokenize", "-q", *map(str, args), "-o", str(out), str(big)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.05, 0.6) * full)
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
    got = (Path(f"{out}.bin").read_bytes(), Path(f"{out}.idx").read_bytes(), Path(f"{out}.json").read_text())
    print(f"kill-and-resume (seed {seed}): {kills} kills, uninterrupted run {full:.2f} s")
    assert kills >= 3, f"seed {seed}: only {kills} of 5 runs were still running when killed"
    assert got[0] == ref[0] and got[1] == ref[1], f"seed {seed}"
    assert json.loads(got[2])["tokens"] == json.loads(ref[2])["tokens"]
    assert not Path(f"{out}.journal").exists()
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert leftovers == [], leftovers


def test_a_different_command_does_not_resume(corpus, tmp_path):
    """A journal left by one command is not used by another (different tokenizer): the output
    is that of the second command alone."""
    docs, path, _ = corpus
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

    docs, _, _ = corpus
    docs = docs[:500]
    tok = tokenkit.Tokenizer.from_file(str(fixture("registry/llama3/tokenizer.json")))
    arr = tok.encode_batch_to_arrow(docs)
    assert isinstance(arr, pa.ListArray) and arr.type == pa.list_(pa.uint32())
    assert arr.to_pylist() == [e.ids for e in tok.encode_batch(docs)]
    from tokenkit import tiktoken as tk
    enc = tk.get_encoding("cl100k_base")
    arr = enc.encode_ordinary_batch_to_arrow(docs)
    assert arr.to_pylist() == reference_tiktoken("cl100k_base").encode_ordinary_batch(docs)
    de = tokenkit.data.DocumentEncoder("cl100k_base")
    assert de.separator == ("<|endoftext|>", 100257)
    assert de.encode_batch_to_arrow(docs).to_pylist() == [ids + [100257] for ids in arr.to_pylist()]
