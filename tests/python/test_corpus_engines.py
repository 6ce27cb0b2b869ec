"""Near dedup spread over Ray Data and PySpark local mode (the README's recipes): band keys in
map tasks, a group-by on (band, key), components on the driver. The documents kept must be
exactly those of the single-machine `tokenkit corpus dedup --near` on the same Parquet file."""
from __future__ import annotations

import json
import random
import subprocess

import pytest

from data_corpus import documents, spark_session, tokenkit_bin

import tokenkit.corpus as tc

OPTIONS = {"threshold": 0.8}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Real paragraphs plus exact copies and copies with 1-10% of words replaced, as Parquet with
    ids in input order, and the ids the CLI keeps."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("near")
    rng = random.Random(9)
    docs = [t for t in documents(1500) if len(t.split()) >= 10]
    for _ in range(len(docs) // 3):
        words = rng.choice(docs).split(" ")
        rate = rng.choice([0.0, 0.01, 0.03, 0.1])
        docs.append(" ".join(f"x{rng.randrange(999)}" if rng.random() < rate else w for w in words))
    rng.shuffle(docs)
    path = d / "docs.parquet"
    pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs}), path, row_group_size=200)
    out = d / "kept.jsonl"
    subprocess.run([str(tokenkit_bin()), "corpus", "dedup", "-q", "--near", "--threshold", "0.8", "-o", str(out), str(path)],
                   check=True, capture_output=True)
    kept_texts = [json.loads(l)["text"] for l in out.read_text(encoding="utf-8").splitlines()]
    clusters = tc.clusters(docs, near=True, **OPTIONS)
    kept = {k for k, c in enumerate(clusters) if c == k}
    assert [docs[k] for k in sorted(kept)] == kept_texts
    assert len(docs) - len(kept) > len(docs) // 8
    return path, docs, kept


def kept_ids(n: int, pairs) -> set[int]:
    root = tc.components(pairs)
    return {k for k in range(n) if root.get(k, k) == k}


def test_components_of_linked_pairs():
    assert tc.components([(5, 3), (3, 9), (1, 2), (9, 7)]) == {5: 3, 3: 3, 9: 3, 7: 3, 1: 1, 2: 1}
    assert tc.components([]) == {}
    keys = tc.band_keys(["a b c d e f", "a b c d e f", "something else entirely"], bands=4, rows=2)
    assert len(keys) == 3 and all(len(k) == 4 for k in keys) and keys[0] == keys[1] != keys[2]
    with pytest.raises(Exception, match="at least 1"):
        tc.band_keys(["x"], bands=0, rows=2)


def test_ray_data_near_dedup(corpus):
    import numpy as np
    import ray
    import ray.data

    path, docs, want = corpus
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        def keys(batch):
            ks = np.array(tc.band_keys(list(batch["text"]), **OPTIONS), dtype=np.int64)
            bands = ks.shape[1]
            return {"id": np.repeat(batch["id"], bands), "band": np.tile(np.arange(bands), len(ks)), "key": ks.ravel()}

        def link(group):
            return {"id": group["id"], "first": np.full(len(group["id"]), group["id"].min())}

        ds = ray.data.read_parquet(str(path))
        links = (ds.map_batches(keys, batch_format="numpy", batch_size=256)
                 .groupby(["band", "key"]).map_groups(link, batch_format="numpy")
                 .filter(lambda r: r["id"] != r["first"]))
        got = kept_ids(len(docs), [(int(r["id"]), int(r["first"])) for r in links.iter_rows()])
    finally:
        ray.shutdown()
    print(f"ray near dedup: kept {len(got)}, single machine {len(want)}, same ids: {got == want}")
    assert got == want


def test_spark_near_dedup(corpus, monkeypatch):
    from pyspark.sql import functions as F

    path, docs, want = corpus
    spark = spark_session(monkeypatch, "tokenkit-near-dedup")
    try:
        def keys(batches):
            import pyarrow as pa

            for b in batches:
                ks = tc.band_keys(b.column("text").to_pylist(), **OPTIONS)
                ids = b.column("id").to_pylist()
                rows = [(i, band, key) for i, k in zip(ids, ks) for band, key in enumerate(k)]
                yield pa.RecordBatch.from_arrays(
                    [pa.array([r[0] for r in rows], pa.int64()), pa.array([r[1] for r in rows], pa.int32()),
                     pa.array([r[2] for r in rows], pa.int64())], names=["id", "band", "key"])

        rows = spark.read.parquet(str(path)).mapInArrow(keys, "id long, band int, key long")
        groups = rows.groupBy("band", "key").agg(F.min("id").alias("first"), F.collect_list("id").alias("ids"))
        links = (groups.where(F.size("ids") > 1).select(F.explode("ids").alias("id"), "first")
                 .where(F.col("id") != F.col("first")).distinct().collect())
        got = kept_ids(len(docs), [(r["id"], r["first"]) for r in links])
    finally:
        spark.stop()
    print(f"spark near dedup: kept {len(got)}, single machine {len(want)}, same ids: {got == want}")
    assert got == want
