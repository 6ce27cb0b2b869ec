"""GGUF: `tokenkit encode -t ggml-vocab-NAME.gguf --jsonl --no-special` against llama.cpp's own
tokenizer test vectors (`ggml-vocab-*.gguf.inp` / `.out` from the llama-cpp-python sdist; the
`.out` ids are what llama.cpp's `test-tokenizer-0` expects, with no BOS/EOS and special-token
text not parsed), for every vocab file that has them; `tokenkit save` of each to a tokenizer.json
that HF `tokenizers` loads with the same ids; clear errors for what is not supported."""
from __future__ import annotations

import pytest

import harness as h

SEP = "\n__ggml_vocab_test__\n"
WITH_VECTORS = ["bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2",
                "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"]


def vocab(name: str):
    p = h.fixture_path(f"registry/gguf/ggml-vocab-{name}.gguf")
    if p is None:
        pytest.skip(f"ggml-vocab-{name}.gguf absent on this machine")
    return p


def vectors(name: str) -> tuple[list[str], list[list[int]]]:
    """llama.cpp's test-tokenizer-0 reading of the .inp/.out pair."""
    p = vocab(name)
    raw = p.with_name(p.name + ".inp").read_text(encoding="utf-8")
    texts = raw.split(SEP)
    if texts and texts[-1] == "":
        texts.pop()
    lines = p.with_name(p.name + ".out").read_text(encoding="utf-8").split("\n")
    ids = [[int(x) for x in line.split()] for line in lines[: len(texts)]]
    assert len(texts) == len(ids) and texts, f"{name}: {len(texts)} inputs, {len(ids)} outputs"
    return texts, ids


@pytest.mark.parametrize("name", WITH_VECTORS)
def test_llama_cpp_vectors(name):
    texts, expected = vectors(name)
    with h.recording_cli_errors("gguf", name, "llama.cpp vectors", "--no-special", len(texts)):
        r = h.run_cli(["encode", "-t", str(vocab(name)), "--jsonl", "--no-special"], h.to_jsonl(texts))
        got = [row.get("ids", row.get("error")) for row in h.parse_jsonl(r.stdout, len(texts), "encode")]
    h.compare("gguf", name, "llama.cpp vectors", "--no-special", texts, expected, got)


@pytest.mark.parametrize("name", WITH_VECTORS)
def test_saved_tokenizer_json_gives_the_vectors_in_hf(name, work_dir):
    from tokenizers import Tokenizer

    texts, expected = vectors(name)
    out = work_dir / f"gguf-{name}.json"
    h.run_cli(["save", "-t", str(vocab(name)), "-o", str(out)], b"")
    hf = Tokenizer.from_file(str(out))
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    h.compare("gguf", name, "llama.cpp vectors", "saved, HF", texts, expected, got)


def test_bos_is_added_without_no_special():
    """llama-bpe and llama-spm add BOS (tokenizer.ggml.add_bos_token), gpt-2 adds nothing."""
    for name, first in (("llama-bpe", 128000), ("llama-spm", 1)):
        r = h.run_cli(["encode", "-t", str(vocab(name)), "--jsonl"], h.to_jsonl(["Hello"]))
        assert h.parse_jsonl(r.stdout, 1, "encode")[0]["ids"][0] == first, name
    texts, expected = vectors("gpt-2")
    r = h.run_cli(["encode", "-t", str(vocab("gpt-2")), "--jsonl"], h.to_jsonl(texts[:5]))
    assert [row["ids"] for row in h.parse_jsonl(r.stdout, 5, "encode")] == expected[:5]


def test_unsupported_and_broken_files_are_clear_errors(work_dir):
    # nomic-bert-moe's model is "t5" (llama.cpp's UGM), which tokenkit does not read.
    r = h.run_cli(["encode", "-t", str(vocab("nomic-bert-moe")), "x"], b"", check=False)
    err = r.stderr.decode()
    assert r.returncode == 1 and 'tokenizer.ggml.model "t5" is not supported' in err, err
    data = vocab("qwen2").read_bytes()
    for cut in (3, 24, 1000, len(data) // 2):
        bad = work_dir / f"cut{cut}.gguf"
        bad.write_bytes(b"GGUF" + data[4:cut] if cut > 4 else b"GGUF")
        r = h.run_cli(["encode", "-t", str(bad), "x"], b"", check=False)
        err = r.stderr.decode()
        assert r.returncode == 1 and "truncated" in err and "internal error" not in err, (cut, err)


def with_pre(name: str, pre: str, work_dir):
    """A copy of ggml-vocab-NAME.gguf whose `tokenizer.ggml.pre` is `pre` (a vocab-only file has
    no tensor data whose alignment a longer or shorter string could move)."""
    import struct

    data = vocab(name).read_bytes()
    key = b"tokenizer.ggml.pre"
    at = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
    assert struct.unpack_from("<I", data, at)[0] == 8, "tokenizer.ggml.pre is not a string"
    (old_len,) = struct.unpack_from("<Q", data, at + 4)
    start = at + 12
    new = data[:at + 4] + struct.pack("<Q", len(pre.encode())) + pre.encode() + data[start + old_len:]
    out = work_dir / f"ggml-vocab-{name}-as-{pre}.gguf"
    out.write_bytes(new)
    return out


# llama.cpp's names that share a vocab file's pre-tokenizer (llama-vocab.cpp): the same vectors.
ALIASES = [("gpt-2", p) for p in ("jais", "trillion", "granite-docling", "roberta-bpe", "exaone4", "modern-bert")] + \
    [("llama-bpe", p) for p in ("falcon3", "pixtral", "lfm2", "midm-2.0")] + \
    [("qwen2", p) for p in ("deepseek-r1-qwen", "megrez", "kormo", "grok-2", "hunyuan")] + \
    [("starcoder", p) for p in ("minerva-7b", "smollm", "codeshell")]


@pytest.mark.parametrize("name,pre", ALIASES)
def test_pre_type_aliases_give_the_vectors(name, pre, work_dir):
    texts, expected = vectors(name)
    path = with_pre(name, pre, work_dir)
    r = h.run_cli(["encode", "-t", str(path), "--jsonl", "--no-special"], h.to_jsonl(texts))
    got = [row.get("ids", row.get("error")) for row in h.parse_jsonl(r.stdout, len(texts), "encode")]
    h.compare("gguf", f"{name} as {pre}", "llama.cpp vectors", "--no-special", texts, expected, got)


def test_new_pre_types_load_and_unknown_ones_name_themselves(work_dir):
    """Every type with a regex loads (its regexes compile); one tokenkit does not know is an error
    naming it."""
    for pre in ("deepseek-v3", "chameleon", "gpt-4o", "llama4", "kimi-k2", "bailingmoe", "seed-coder", "viking",
                "bloom", "glm4"):
        r = h.run_cli(["encode", "-t", str(with_pre("qwen2", pre, work_dir)), "--jsonl", "--no-special"],
                      h.to_jsonl(["Hello world 12345 你好"]))
        assert h.parse_jsonl(r.stdout, 1, "encode")[0]["ids"], pre
    r = h.run_cli(["encode", "-t", str(with_pre("qwen2", "afmoe", work_dir)), "x"], b"", check=False)
    err = r.stderr.decode()
    assert r.returncode == 1 and 'tokenizer.ggml.pre "afmoe" is not supported' in err, err
