"""Word counts as a value (`Tokenizer.count_words`, `WordCounts`, `Tokenizer.train_from_counts`)
and the distributed training recipes of the README ("Train on Ray or Spark"): Ray Data
`map_batches` counting per block then `groupby(...).sum`, PySpark `mapPartitions` +
`reduceByKey`; the driver trains. Each is checked against the single-machine run on the same
JSONL corpus: the counts equal `tokenkit count --jsonl-field text`'s count file, and the trained
model equals HF tokenizers' `train_from_iterator` on the documents (and `tokenkit train`'s)."""
from __future__ import annotations

import collections
import json
import operator
import pickle
import subprocess

import pytest
import tokenizers

from data_corpus import documents, spark_session, tokenkit_bin, write_jsonl

import tokenkit
from tokenkit import WordCounts

VOCAB = 3000


def tokenkit_template() -> tokenkit.Tokenizer:
    """The byte-level BPE pipeline of `tokenkit train -p byte-level` (same pre-tokenizer JSON)."""
    tok = tokenkit.Tokenizer(tokenkit.models.BPE())
    tok.pre_tokenizer = tokenkit.pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tok


def tokenkit_trainer():
    return tokenkit.trainers.BpeTrainer(vocab_size=VOCAB, show_progress=False,
                                        initial_alphabet=tokenkit.pre_tokenizers.ByteLevel.alphabet())


def model_of(tok) -> dict:
    return json.loads(tok.to_str())["model"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The documents, their JSONL file, the single-machine count file's counts, and HF's model
    trained on the documents (the reference every path must equal)."""
    d = tmp_path_factory.mktemp("train_engines")
    docs = documents(3000)
    path = d / "docs.jsonl"
    write_jsonl(path, docs)
    counts_path = d / "single.counts"
    subprocess.run([str(tokenkit_bin()), "count", "-q", "-p", "byte-level", "--jsonl-field", "text", "-o",
                    str(counts_path), str(path)], check=True)
    single_json = d / "single.json"
    subprocess.run([str(tokenkit_bin()), "train", "-q", "-p", "byte-level", "-v", str(VOCAB), "--jsonl-field", "text",
                    "-o", str(single_json), str(path)], check=True)
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.train_from_iterator(docs, tokenizers.trainers.BpeTrainer(
        vocab_size=VOCAB, show_progress=False, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()))
    hf_model = model_of(hf)
    cli_model = json.loads(single_json.read_text(encoding="utf-8"))["model"]
    assert cli_model == hf_model, "tokenkit train (single machine) differs from HF"
    return d, path, docs, WordCounts.load(counts_path), hf_model


def test_count_words_equal_hf_pre_tokenizer_and_add_up(corpus):
    d, path, docs, single, hf_model = corpus
    tok = tokenkit_template()
    hf_pre = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    want = collections.Counter(w for doc in docs for w, _ in hf_pre.pre_tokenize_str(doc))
    counts = tok.count_words(docs)
    same = sum(counts.get(w) == c for w, c in want.items())
    print(f"count_words: {same}/{len(want)} words counted as HF's pre-tokenizer cuts them")
    assert same == len(want) == len(counts) and counts.total == sum(want.values())
    assert counts.sequences == len(docs)
    assert counts == single, "Tokenizer.count_words differs from tokenkit count's file"

    # Batches counted apart add up to the whole, in any grouping; a generator and batches of
    # lists count as a list does.
    a, b, c = tok.count_words(docs[:700]), tok.count_words(iter(docs[700:1500])), tok.count_words([docs[1500:]])
    assert (a + b) + c == a + (b + c) == counts
    acc = WordCounts()
    for part in (c, a, b):
        acc += part
    assert acc == counts and acc.sequences == len(docs)

    # Pickle (how Ray and Spark move it) and count-file bytes keep the counts and the cutting.
    again = pickle.loads(pickle.dumps(counts))
    assert again == counts and again.pre_tokenizer == counts.pre_tokenizer
    assert WordCounts.from_bytes(counts.to_bytes()) == counts
    pairs = WordCounts(counts.items())
    assert pairs == counts and pairs.pre_tokenizer is None and pickle.loads(pickle.dumps(pairs)).pre_tokenizer is None

    # Saved, it is a count file the CLI trains on: equal to HF trained on the text.
    saved = d / "python.counts"
    counts.save(saved)
    out = d / "from_python_counts.json"
    subprocess.run([str(tokenkit_bin()), "train", "-q", "-p", "byte-level", "-v", str(VOCAB), "--from-counts",
                    str(saved), "-o", str(out)], check=True)
    assert json.loads(out.read_text(encoding="utf-8"))["model"] == hf_model

    # Training from counts in Python equals HF on the text, from WordCounts or from plain pairs.
    for given in (counts, dict(counts.items()), iter(counts.items())):
        trained = tokenkit_template()
        trained.train_from_counts(given, tokenkit_trainer())
        assert model_of(trained) == hf_model


def test_bad_counts_are_clear_errors(corpus):
    d, path, docs, single, hf_model = corpus
    counts = tokenkit_template().count_words(docs[:50])
    other = tokenkit.Tokenizer(tokenkit.models.BPE())
    other.pre_tokenizer = tokenkit.pre_tokenizers.Whitespace()
    with pytest.raises(ValueError, match="another normalizer or pre-tokenizer"):
        counts + other.count_words(docs[:50])
    with pytest.raises(Exception, match="another pre-tokenizer"):
        other.train_from_counts(counts, tokenkit.trainers.BpeTrainer(vocab_size=500, show_progress=False))
    with pytest.raises(ValueError, match="do not record"):
        WordCounts(counts.items()).save(d / "never.counts")
    assert not (d / "never.counts").exists()
    blob = counts.to_bytes()
    for bad in (b"", b"TKCOUNT1" * 2, blob[:-1], blob[:20] + blob[40:], b"x" + blob[1:]):
        with pytest.raises(Exception, match="count"):
            WordCounts.from_bytes(bad)
    with pytest.raises(TypeError, match="pairs"):
        WordCounts([("word", "not a number")])
    with pytest.raises(Exception, match="no words"):
        tokenkit_template().train_from_counts(WordCounts(), tokenkit_trainer())


def test_ray_data_counts_then_driver_trains(corpus):
    import numpy as np
    import ray  # installed by the set-up (requirements-test.txt): missing is a failure, not a skip
    import ray.data

    d, path, docs, single, hf_model = corpus
    tok = tokenkit_template()

    def count_block(batch):
        items = tok.count_words(list(batch["text"])).items()
        return {"word": np.array([w for w, _ in items], dtype=object),
                "count": np.array([c for _, c in items], dtype=np.int64)}

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        ds = ray.data.read_json(str(path))
        summed = ds.map_batches(count_block, batch_format="numpy", batch_size=256).groupby("word").sum("count")
        counts = WordCounts(((r["word"], r["sum(count)"]) for r in summed.iter_rows()), tokenizer=tok)
    finally:
        ray.shutdown()
    same = sum(counts.get(w) == c for w, c in single.items())
    print(f"ray counts ({-(-len(docs) // 256)} batches of 256 documents): {same}/{len(single)} words equal to tokenkit count's")
    assert counts == single
    tok.train_from_counts(counts, tokenkit_trainer())
    assert model_of(tok) == hf_model


def test_spark_counts_then_driver_trains(corpus, monkeypatch):
    d, path, docs, single, hf_model = corpus
    tok = tokenkit_template()
    spark = spark_session(monkeypatch, "tokenkit-train-counts")
    try:
        def count_partition(lines):
            return tok.count_words(json.loads(line)["text"] for line in lines).items()

        lines = spark.sparkContext.textFile(str(path), minPartitions=4)
        pairs = lines.mapPartitions(count_partition).reduceByKey(operator.add)
        partitions = lines.getNumPartitions()
        counts = WordCounts(pairs.toLocalIterator(), tokenizer=tok)
    finally:
        spark.stop()
    same = sum(counts.get(w) == c for w, c in single.items())
    print(f"spark counts ({partitions} partitions): {same}/{len(single)} words equal to tokenkit count's")
    assert partitions >= 2 and counts == single
    tok.train_from_counts(counts, tokenkit_trainer())
    assert model_of(tok) == hf_model
