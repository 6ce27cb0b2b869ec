"""The cache of built tables (`TOKENKIT_CACHE_DIR`): a tiktoken encoding loaded from the cache
gives tiktoken's ids, exactly as one built from the rank file; an entry that is corrupt or
truncated is not read (the tables are built again and the entry rewritten); a different
encoding gets its own entry; `TOKENKIT_CACHE=0` writes nothing. The same for tokenizer.json
files (byte-level BPE and WordPiece) against HF tokenizers, for a tokenizer pickled by one
process and unpickled by another, and the cache's size bound (`TOKENKIT_CACHE_MAX_MB`)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tokenkit")
tiktoken = pytest.importorskip("tiktoken")

FIXTURES = Path(__file__).resolve().parents[2] / ".fixtures"
CHILD = """
import json, sys
from tokenkit._tokenkit import TiktokenCore
enc = TiktokenCore.from_file(sys.argv[1], sys.argv[2])
print(json.dumps([enc.encode_ordinary(t) for t in json.loads(sys.stdin.read())]))
"""


def need(rel: str) -> Path:
    p = FIXTURES / rel
    if not p.is_file():
        pytest.skip(f"{p} absent (run scripts/fetch_fixtures.py)")
    return p


def texts() -> list[str]:
    out = []
    for rel in ("corpora/en/pride_and_prejudice.txt", "corpora/code/cpython-3.11-stdlib.py.txt"):
        lines = need(rel).read_text(encoding="utf-8").splitlines(keepends=True)
        out += lines[:1500]
    out += ["", " ", "Grüße, 世界 🦙 <|endoftext|>", "x" * 5000, "\u00e9" * 300]
    return out


def reference(name: str, rank_file: Path, inputs: list[str]) -> list[list[int]]:
    import tiktoken.load
    import tiktoken_ext.openai_public as op

    op.load_tiktoken_bpe = lambda *_a, **_k: tiktoken.load.load_tiktoken_bpe(str(rank_file))
    enc = tiktoken.Encoding(**getattr(op, name)())
    return [enc.encode_ordinary(t) for t in inputs]


def load_and_encode(rank_file: Path, name: str, inputs: list[str], env: dict) -> list[list[int]]:
    r = subprocess.run([sys.executable, "-c", CHILD, str(rank_file), name], input=json.dumps(inputs),
                       capture_output=True, text=True, env={**os.environ, **env}, check=True)
    return json.loads(r.stdout)


def test_cached_tables_give_tiktoken_ids_and_bad_entries_are_rebuilt(tmp_path):
    rank_file = need("tiktoken/cl100k_base.tiktoken")
    inputs = texts()
    expected = reference("cl100k_base", rank_file, inputs)
    cache = tmp_path / "cache"
    on = {"TOKENKIT_CACHE_DIR": str(cache)}

    assert load_and_encode(rank_file, "cl100k_base", inputs, {**on, "TOKENKIT_CACHE": "0"}) == expected
    assert not cache.exists(), "TOKENKIT_CACHE=0 wrote an entry"

    # Miss: built, stored. Hit: read, not rewritten.
    assert load_and_encode(rank_file, "cl100k_base", inputs, on) == expected
    (entry,) = cache.iterdir()
    # A hit marks the entry used (its mtime); a rebuild would replace the file (a new inode).
    stamp = entry.stat().st_ino
    assert load_and_encode(rank_file, "cl100k_base", inputs, on) == expected
    assert entry.stat().st_ino == stamp, "a valid entry was rebuilt"

    # A flipped byte and a truncated entry are not read: built again and rewritten.
    good = entry.read_bytes()
    for bad in (good[: len(good) // 2] + bytes([good[len(good) // 2] ^ 0x40]) + good[len(good) // 2 + 1:],
                good[: len(good) - 7], good[:100]):
        entry.write_bytes(bad)
        assert load_and_encode(rank_file, "cl100k_base", inputs, on) == expected
        assert entry.read_bytes() == good, "a bad entry was not rewritten"
    print(f"cl100k_base: {len(inputs)}/{len(inputs)} texts identical to tiktoken, cold, cached and after 3 bad entries")

    # Another encoding of the same kind gets its own entry, and its own ids.
    p50k = need("tiktoken/p50k_base.tiktoken")
    assert load_and_encode(p50k, "p50k_base", inputs[:300], on) == reference("p50k_base", p50k, inputs[:300])
    assert len(list(cache.iterdir())) == 2


TOKENIZER_CHILD = """
import json, pickle, sys
from tokenkit import Tokenizer
src, how = sys.argv[1], sys.argv[2]
if how == "pickle":
    open(sys.argv[3], "wb").write(pickle.dumps(Tokenizer.from_file(src)))
    sys.exit()
tok = pickle.loads(open(src, "rb").read()) if how == "unpickle" else Tokenizer.from_file(src)
print(json.dumps([tok.encode(t).ids for t in json.loads(sys.stdin.read())]))
"""


def run_tokenizer(env: dict, *args: str, inputs: list[str] | None = None) -> list[list[int]] | None:
    r = subprocess.run([sys.executable, "-c", TOKENIZER_CHILD, *args], input=json.dumps(inputs or []),
                       capture_output=True, text=True, env={**os.environ, **env}, check=True)
    return json.loads(r.stdout) if r.stdout.strip() else None


@pytest.mark.parametrize("rel", ["registry/llama3/tokenizer.json", "registry/bert_uncased/tokenizer.json"])
def test_cached_tokenizer_json_and_pickles_give_hf_ids(tmp_path, rel):
    tokenizers = pytest.importorskip("tokenizers")
    path = need(rel)
    inputs = texts()[:1500] + ["<|begin_of_text|>hi<|eot_id|> [CLS] x [SEP] [MASK]"]
    hf = tokenizers.Tokenizer.from_file(str(path))
    expected = [hf.encode(t).ids for t in inputs]
    cache = tmp_path / "cache"
    on = {"TOKENKIT_CACHE_DIR": str(cache)}
    assert run_tokenizer(on, str(path), "load", inputs=inputs) == expected  # built, stored
    (entry,) = cache.iterdir()
    stamp = entry.stat().st_ino
    assert run_tokenizer(on, str(path), "load", inputs=inputs) == expected  # read
    assert entry.stat().st_ino == stamp, "a valid entry was rebuilt"
    # Pickled by one process: its tables are stored under the pickled JSON's key, which the
    # unpickling process reads (no second build: the entry is there before it runs).
    blob = tmp_path / "tok.pkl"
    run_tokenizer(on, str(path), "pickle", str(blob))
    assert len(list(cache.iterdir())) == 2, "pickling did not store the tables"
    entries = {e.name: e.stat().st_ino for e in cache.iterdir()}
    assert run_tokenizer(on, str(blob), "unpickle", inputs=inputs) == expected
    assert {e.name: e.stat().st_ino for e in cache.iterdir()} == entries
    # Without a cache, the same ids.
    assert run_tokenizer({"TOKENKIT_CACHE": "0"}, str(blob), "unpickle", inputs=inputs) == expected
    print(f"{rel}: {len(inputs)}/{len(inputs)} texts identical to HF tokenizers, built, cached and unpickled")


def test_cache_size_bound_keeps_the_most_recent_entries(tmp_path):
    cache = tmp_path / "cache"
    files = [need("registry/bert_uncased/tokenizer.json"), need("registry/llama3/tokenizer.json")]
    # Room for one entry (BERT's is about 1.6 MB, Llama-3's about 35 MB): writing the second
    # removes the first; the entry just written stays whatever the bound.
    env = {"TOKENKIT_CACHE_DIR": str(cache), "TOKENKIT_CACHE_MAX_MB": "10"}
    for f in files:
        run_tokenizer(env, str(f), "load", inputs=["hello"])
    (entry,) = cache.iterdir()
    assert entry.stat().st_size > 2_000_000, "the entry kept is not the one written last"
    run_tokenizer({**env, "TOKENKIT_CACHE_MAX_MB": "0"}, str(files[0]), "load", inputs=["hello"])
    assert len(list(cache.iterdir())) == 1


CLI = Path(os.environ.get("TOKENKIT_CLI", Path(__file__).resolve().parents[2] / "target" / "release" / "tokenkit"))


def cli_ids(env: dict, path: Path, inputs: list[str]) -> list[list[int]]:
    if not CLI.is_file():
        pytest.skip(f"{CLI} absent: cargo build --release -p tokenkit-cli")
    lines = "".join(json.dumps(t) + "\n" for t in inputs)
    r = subprocess.run([str(CLI), "encode", "-t", str(path), "--jsonl", "--no-special"], input=lines, capture_output=True,
                       text=True, env={**os.environ, **env}, check=True)
    return [json.loads(line)["ids"] for line in r.stdout.splitlines()]


@pytest.mark.parametrize("name", ["llama-bpe", "bert-bge", "qwen2"])
def test_cached_gguf_gives_llama_cpp_ids(tmp_path, name):
    """A GGUF tokenizer is stored under its metadata bytes: built, then read, then rebuilt
    from a corrupt entry, every time llama.cpp's own test vectors."""
    path = need(f"registry/gguf/ggml-vocab-{name}.gguf")
    texts = path.with_name(path.name + ".inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    if texts[-1] == "":
        texts.pop()
    lines = path.with_name(path.name + ".out").read_text(encoding="utf-8").split("\n")
    expected = [[int(x) for x in line.split()] for line in lines[: len(texts)]]
    assert len(texts) > 10 and len(expected) == len(texts)
    cache = tmp_path / "cache"
    on = {"TOKENKIT_CACHE_DIR": str(cache)}
    assert cli_ids(on, path, texts) == expected  # built, stored
    (entry,) = cache.iterdir()
    stamp = entry.stat().st_ino
    assert cli_ids(on, path, texts) == expected  # read
    assert entry.stat().st_ino == stamp, "a valid entry was rebuilt"
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 2])
    assert cli_ids(on, path, texts) == expected  # a truncated entry: built again, rewritten
    assert entry.read_bytes() == good
    print(f"gguf {name}: {len(texts)}/{len(texts)} vectors identical to llama.cpp, built, cached and rebuilt")


SPM_CHILD = """
import json, sys
from tokenkit import sentencepiece as s
p = s.SentencePieceProcessor(model_file=sys.argv[1])
texts = json.loads(sys.stdin.read())
print(json.dumps({"ids": [p.encode(t) for t in texts], "pieces": [p.encode(t, out_type=str) for t in texts[:300]],
                  "vocab": [[p.id_to_piece(i), p.get_score(i), p.is_control(i), p.is_unknown(i), p.is_unused(i), p.is_byte(i),
                             p.piece_to_id(p.id_to_piece(i))] for i in range(p.get_piece_size())]}))
"""


def spm_ids(env: dict, path: Path, inputs: list[str]) -> list[list[int]]:
    """tokenkit.sentencepiece's ids of `inputs` for the `.model` at `path`, in a fresh process,
    after checking its pieces of the first 300 and its vocabulary (pieces, scores, types and
    `piece_to_id`) against sentencepiece's."""
    r = subprocess.run([sys.executable, "-c", SPM_CHILD, str(path)], input=json.dumps(inputs), capture_output=True,
                       text=True, env={**os.environ, **env}, check=True)
    got = json.loads(r.stdout)
    spm = pytest.importorskip("sentencepiece")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    vocab = [[ref.id_to_piece(i), ref.get_score(i), ref.is_control(i), ref.is_unknown(i), ref.is_unused(i), ref.is_byte(i),
              ref.piece_to_id(ref.id_to_piece(i))] for i in range(ref.get_piece_size())]
    assert got["vocab"] == vocab, "pieces, scores or types differ from sentencepiece's"
    assert got["pieces"] == [ref.encode(t, out_type=str) for t in inputs[:300]]
    return got["ids"]


@pytest.mark.parametrize("rel", ["registry/albert/spiece.model", "hub/xlnet_base_cased.model"])
def test_charsmap_check_and_unigram_trie_are_remembered(tmp_path, rel):
    """A Unigram `.model`'s tables (vocabulary, scores, types, and the trie once a model has
    encoded enough text to build it) are built once: the entry is written on the first load (these models carry sentencepiece's known nmt_nfkc charsmap, whose
    trie check is skipped, so there is no check entry); loads with it, and after it was corrupted
    (built again, rewritten), give sentencepiece's ids."""
    spm = pytest.importorskip("sentencepiece")

    path = need(rel)
    inputs = texts()[:800]
    expected = [spm.SentencePieceProcessor(model_file=str(path)).encode(t) for t in inputs]
    cache = tmp_path / "cache"
    assert spm_ids({"TOKENKIT_CACHE_DIR": str(cache)}, path, inputs) == expected  # built, stored
    stamps = {e: e.stat().st_ino for e in cache.iterdir()}
    assert len(stamps) == 1
    assert spm_ids({"TOKENKIT_CACHE_DIR": str(cache)}, path, inputs) == expected  # read
    assert {e: e.stat().st_ino for e in cache.iterdir()} == stamps, "a valid entry was rebuilt"
    good = {e: e.read_bytes() for e in cache.iterdir()}
    for entry, data in good.items():
        mid = len(data) // 2
        entry.write_bytes(data[:mid] + bytes([data[mid] ^ 0x10]) + data[mid + 1:])
    assert spm_ids({"TOKENKIT_CACHE_DIR": str(cache)}, path, inputs) == expected
    assert {e: e.read_bytes() for e in cache.iterdir()} == good, "a corrupt entry was not rewritten"
    print(f"{rel}: {len(inputs)}/{len(inputs)} texts identical to sentencepiece, built, cached and rebuilt")


@pytest.mark.parametrize("rel", ["registry/sentencepiece/kyoto_ja_unigram_8000.model", "registry/albert/spiece.model",
                                 "hub/xlnet_base_cased.model"])
def test_unigram_ids_before_and_after_the_trie_is_built(rel):
    """A Unigram `.model` loaded without the table cache looks its pieces up by their text until
    it has encoded 4 bytes per piece, then builds its trie: sentencepiece's ids on both sides (the
    texts are more than twice that)."""
    spm = pytest.importorskip("sentencepiece")
    path = need(rel)
    inputs = texts()
    ref = spm.SentencePieceProcessor(model_file=str(path))
    assert sum(len(t.encode()) for t in inputs) > 2 * 4 * ref.get_piece_size()
    expected = [ref.encode(t) for t in inputs]
    assert spm_ids({"TOKENKIT_CACHE": "0"}, path, inputs) == expected
    print(f"{rel}: {len(inputs)}/{len(inputs)} texts identical to sentencepiece, before and after the trie was built")


def test_unigram_json_ids_same_before_and_after_the_trie_is_built():
    """A Unigram tokenizer.json (HF's `models.Unigram`, XLNet's) builds no trie at load: its
    pieces are looked up by their text until it has encoded 4 bytes per piece of text it had
    not seen (distinct words; here Japanese lines, one word each, are more than twice that),
    then it builds its trie. HF tokenizers' ids on both sides, in one fresh process."""
    tokenizers = pytest.importorskip("tokenizers")
    path = need("hub/xlnet_base_cased.json")
    ja = list(dict.fromkeys(need("corpora/ja/wagahai.txt").read_text(encoding="utf-8").splitlines()))[:3000]
    # One load encodes them all: English prose (before the build), the Japanese lines, then
    # code lines, whose words are mostly new, and the odd texts of `texts()` (after it).
    english = texts()
    inputs = english[:1500] + ja + english[1500:]
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert sum(len(t.encode()) for t in ja) > 2 * 4 * hf.get_vocab_size()
    expected = [hf.encode(t).ids for t in inputs]
    assert run_tokenizer({"TOKENKIT_CACHE": "0"}, str(path), "load", inputs=inputs) == expected
    print(f"xlnet tokenizer.json: {len(inputs)}/{len(inputs)} texts identical to HF tokenizers, before and after the trie was built")


def test_cached_sentencepiece_bpe_tables_give_sentencepiece_ids(tmp_path):
    """A BPE `.model`'s tables (vocabulary, scores, types, merge tables) are stored on the first
    load; later loads read them, a truncated entry is built again; every time sentencepiece's
    ids."""
    spm = pytest.importorskip("sentencepiece")
    path = need("hub/llama2.model")
    inputs = texts()[:1500]
    expected = [spm.SentencePieceProcessor(model_file=str(path)).encode(t) for t in inputs]
    cache = tmp_path / "cache"

    def load() -> list[list[int]]:
        return spm_ids({"TOKENKIT_CACHE_DIR": str(cache)}, path, inputs)

    assert load() == expected  # built, stored
    (entry,) = cache.iterdir()
    stamp = entry.stat().st_ino
    assert load() == expected  # read
    assert entry.stat().st_ino == stamp, "a valid entry was rebuilt"
    good = entry.read_bytes()
    entry.write_bytes(good[:-5])
    assert load() == expected  # a truncated entry: built again, rewritten
    assert entry.read_bytes() == good
    print(f"llama2 .model: {len(inputs)}/{len(inputs)} texts identical to sentencepiece, built, cached and rebuilt")


def test_unknown_charsmap_is_checked_once(tmp_path):
    """A `.model` whose precompiled charsmap is none of the known ones (here Kyoto's nfkc one
    with a replacement string changed, still valid) has its charsmap's trie checked on the first
    load, which writes a check entry beside the model's entry; later loads read both. With the
    model's entry removed, the load builds the tables again but reads the check entry (kept,
    not rewritten). Every load gives sentencepiece's ids for the same modified file."""
    spm = pytest.importorskip("sentencepiece")
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    proto = pb.ModelProto()
    proto.ParseFromString(need("registry/sentencepiece/kyoto_ja_unigram_8000.model").read_bytes())
    charsmap = bytearray(proto.normalizer_spec.precompiled_charsmap)
    assert charsmap, "the model carries no charsmap"
    # The first ASCII letter of the replacement strings (after the size and the trie) changes case.
    strings = 4 + int.from_bytes(charsmap[:4], "little")
    at = next(i for i in range(strings, len(charsmap)) if chr(charsmap[i]).isascii() and chr(charsmap[i]).isalpha())
    charsmap[at] ^= 0x20
    proto.normalizer_spec.precompiled_charsmap = bytes(charsmap)
    path = tmp_path / "modified_charsmap.model"
    path.write_bytes(proto.SerializeToString())

    inputs = texts()[:400] + ["ＡＢＣ ａｂｃ ｶﾀｶﾅ ①②③ ㌀ ﬁ", "日本語のテキストです。"]
    expected = [spm.SentencePieceProcessor(model_file=str(path)).encode(t) for t in inputs]
    cache = tmp_path / "cache"
    env = {"TOKENKIT_CACHE_DIR": str(cache)}

    assert spm_ids({**env, "TOKENKIT_CACHE": "0"}, path, inputs) == expected
    assert not cache.exists(), "TOKENKIT_CACHE=0 wrote an entry"
    assert spm_ids(env, path, inputs) == expected  # charsmap checked, tables built: two entries
    entries = {e: e.stat().st_ino for e in cache.iterdir()}
    assert len(entries) == 2, sorted(e.name for e in entries)
    # The check entry records a result only; the model's entry holds the tables and the file.
    check, model = sorted(entries, key=lambda e: e.stat().st_size)
    assert check.stat().st_size < 1000 < model.stat().st_size
    assert spm_ids(env, path, inputs) == expected  # both read
    assert {e: e.stat().st_ino for e in cache.iterdir()} == entries, "a valid entry was rewritten"
    model.unlink()
    assert spm_ids(env, path, inputs) == expected  # tables built again, the check read
    assert check.stat().st_ino == entries[check], "the check entry was rewritten"
    assert sorted(e.name for e in cache.iterdir()) == sorted(e.name for e in entries), "the model's entry was not stored again"
    print(f"modified charsmap: {len(inputs)}/{len(inputs)} texts identical to sentencepiece; check entry written once, read twice")
