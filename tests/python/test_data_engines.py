"""The distributed recipes of the README ("Prepare a pre-training dataset"): Ray Data
`map_batches`, PySpark `mapInArrow` with a broadcast encoder, HF `datasets.map(num_proc=2)`, each
with `tokenkit.data.DocumentEncoder`; each checks its ids equal those the single-process
`tokenkit tokenize` writes for the same Parquet file."""
from __future__ import annotations

import json
import pickle
import subprocess

import numpy as np
import pytest

from data_corpus import documents, fixture, spark_session, tokenkit_bin

import tokenkit.data


@pytest.fixture(scope="module")
def parquet_input(tmp_path_factory):
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("engines")
    docs = documents(2000)
    path = d / "docs.parquet"
    pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs}), path, row_group_size=300)
    return d, path, docs


def cli_documents(d, path, *tokenizer_args) -> list[list[int]]:
    """The documents' ids as `tokenkit tokenize --format parquet` writes them (one row each)."""
    import pyarrow.parquet as pq

    out = d / ("cli_" + "_".join(a.replace("/", "_") for a in tokenizer_args))
    subprocess.run([str(tokenkit_bin()), "tokenize", "-q", *tokenizer_args, "--format", "parquet", "-o", str(out),
                    str(path)], check=True)
    return pq.read_table(f"{out}.parquet").column("input_ids").to_pylist()


def test_document_encoder_pickles_small():
    tok_path = str(fixture("registry/llama3/tokenizer.json"))
    for spec in ("cl100k_base", tok_path):
        enc = tokenkit.data.DocumentEncoder(spec)
        enc.encode_batch_to_arrow(["warm up"])
        blob = pickle.dumps(enc)
        assert len(blob) < 1000, (spec, len(blob))
        again = pickle.loads(blob)
        assert again.encode_batch_to_arrow(["hello world"]).to_pylist() == enc.encode_batch_to_arrow(
            ["hello world"]).to_pylist()


def test_ray_data_map_batches(parquet_input):
    import ray  # installed by the set-up (requirements-test.txt): missing is a failure, not a skip
    import ray.data

    d, path, docs = parquet_input
    want = cli_documents(d, path, "-e", "cl100k_base")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ds = ray.data.read_parquet(str(path))
        ds = ds.map_batches(tokenkit.data.DocumentEncoder("cl100k_base"), batch_format="pyarrow", batch_size=256)
        out = d / "ray_out"
        ds.write_parquet(str(out))
    finally:
        ray.shutdown()
    import pyarrow.dataset as pads

    table = pads.dataset(str(out), format="parquet").to_table().sort_by("id")
    got = table.column("input_ids").to_pylist()
    same = sum(g == w for g, w in zip(got, want))
    print(f"ray map_batches: {same}/{len(docs)} documents identical to tokenkit tokenize")
    assert len(got) == len(docs) and same == len(docs)
    assert table.column("id").to_pylist() == list(range(len(docs)))


def test_spark_map_in_arrow_with_broadcast(parquet_input, monkeypatch):

    d, path, docs = parquet_input
    tok_path = str(fixture("registry/mistral01/tokenizer.json"))
    want = cli_documents(d, path, "-t", tok_path)
    spark = spark_session(monkeypatch, "tokenkit-test")
    try:
        encoder = spark.sparkContext.broadcast(tokenkit.data.DocumentEncoder(tok_path))

        def tokenize(batches):
            import pyarrow as pa

            enc = encoder.value
            for b in batches:
                ids = enc.encode_batch_to_arrow(b.column("text")).cast(pa.list_(pa.int32()))  # Spark has no uint32
                yield pa.RecordBatch.from_arrays([b.column("id"), ids], names=["id", "input_ids"])

        df = spark.read.parquet(str(path)).mapInArrow(tokenize, "id long, input_ids array<int>")
        rows = sorted(df.collect(), key=lambda r: r["id"])
    finally:
        spark.stop()
    got = [list(r["input_ids"]) for r in rows]
    same = sum(g == w for g, w in zip(got, want))
    print(f"spark mapInArrow: {same}/{len(docs)} documents identical to tokenkit tokenize")
    assert len(got) == len(docs) and same == len(docs)


def test_datasets_map_num_proc_2(parquet_input, tmp_path):
    import datasets

    d, path, docs = parquet_input
    tok_path = str(fixture("registry/llama3/tokenizer.json"))
    want = cli_documents(d, path, "-t", tok_path)
    ds = datasets.load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    # A tokenkit.Tokenizer object (pickled to the workers) rather than a path, as HF users pass one.
    tok = tokenkit.Tokenizer.from_file(tok_path)
    ds = ds.map(tokenkit.data.DocumentEncoder(tok), batched=True, num_proc=2, remove_columns=["text"])
    got = ds["input_ids"]
    same = sum(g == w for g, w in zip(got, want))
    print(f"datasets.map(num_proc=2): {same}/{len(docs)} documents identical to tokenkit tokenize")
    assert len(got) == len(docs) and same == len(docs)
    # The bin output of the same command is the rows, one after the other.
    subprocess.run([str(tokenkit_bin()), "tokenize", "-q", "-t", tok_path, "-o", str(tmp_path / "b"), str(path)],
                   check=True)
    meta = json.loads((tmp_path / "b.json").read_text())
    flat = np.memmap(tmp_path / "b.bin", dtype=meta["dtype"], mode="r")
    assert flat.tolist() == [i for row in want for i in row]
