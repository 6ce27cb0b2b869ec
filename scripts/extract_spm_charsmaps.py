#!/usr/bin/env python3
"""Writes crates/tokenkit/src/formats/sentencepiece/charsmaps/*.bin.gz: the precompiled charsmap
of each built-in normalization rule, as the `sentencepiece` package (pinned in
requirements-test.txt) writes it into a model it trains. Checks each against its sha256."""
import gzip
import hashlib
import io
import pathlib

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

SHA256 = {
    "nmt_nfkc": "1e2c7b43d3ee9755ceaa2ac335e253d8703604e0249ee1e81156c92b46423844",
    "nfkc": "7e46d9e08af4b6a37991b04fb8388644c1595a0abcd0f26d6a5d575e2a3663ea",
    "nmt_nfkc_cf": "2c03512e62f9ed965ec90d85314211b63b5b8aa0395311ea2147eec9ff738907",
    "nfkc_cf": "d8dfef3d6db0eef0742f8b55a73aee7fce6c1e21d26a09b8d3d4b52c42a791cb",
}
OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/tokenkit/src/formats/sentencepiece/charsmaps"

for rule, sha in SHA256.items():
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world"] * 20), model_writer=out,
                                   vocab_size=20, model_type="char", normalization_rule_name=rule, minloglevel=2)
    proto = pb.ModelProto()
    proto.ParseFromString(out.getvalue())
    charsmap = proto.normalizer_spec.precompiled_charsmap
    assert hashlib.sha256(charsmap).hexdigest() == sha, f"{rule}: sha256 differs"
    (OUT / f"{rule}.bin.gz").write_bytes(gzip.compress(charsmap, 9, mtime=0))
    print(rule, len(charsmap))
