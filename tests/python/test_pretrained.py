"""tokenkit.AutoTokenizer against transformers' AutoTokenizer on the same pretrained directories
(tokenizer.json from the fixtures + a tokenizer_config.json): __call__ with padding, truncation,
overflow and the return_* options, encode, decode/batch_decode, special-token attributes."""
from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

import tokenkit

transformers = pytest.importorskip("transformers")

FIXTURES = Path(__file__).resolve().parents[2] / ".fixtures"

# (tokenizer.json, tokenizer_config.json contents)
DIRS = {
    "bert": ("hub/bert_base_cased.json", {
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 16, "cls_token": "[CLS]",
        "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]", "mask_token": "[MASK]",
        "model_input_names": ["input_ids", "token_type_ids", "attention_mask"],
        "clean_up_tokenization_spaces": True}),
    "gpt2": ("hub/gpt2.json", {
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1024,
        "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>", "padding_side": "left", "truncation_side": "left"}),
    "llama2": ("hub/llama2.json", {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False, "normalized": False, "rstrip": False, "single_word": False},
        "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<unk>", "model_max_length": 24,
        "added_tokens_decoder": {"0": {"content": "<unk>", "special": True}, "1": {"content": "<s>", "special": True},
                                 "2": {"content": "</s>", "special": True},
                                 "32000": {"content": "<extra_tok>", "special": True}}}),
    "xlnet": ("hub/xlnet_base_cased.json", {
        "tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<pad>", "unk_token": "<unk>",
        "sep_token": "<sep>", "cls_token": "<cls>", "mask_token": "<mask>", "padding_side": "left",
        "extra_special_tokens": ["<eop>", "<eod>"]}),
}

BATCH = ["Hello world, this is a long sentence that goes on and on.", "short", "Ünïcödé 日本語 text", "",
         "It's 3.14 -- isn't it?  Double  spaces\n\nand newlines"]
CALLS = [
    dict(), dict(padding=True), dict(padding="max_length"), dict(truncation=True), dict(max_length=5),
    dict(padding=True, truncation=True, max_length=9, stride=2, return_overflowing_tokens=True),
    dict(truncation="only_second", max_length=12),
    dict(return_offsets_mapping=True, return_special_tokens_mask=True, return_length=True, return_token_type_ids=True),
    dict(padding=True, padding_side="left", pad_to_multiple_of=8), dict(add_special_tokens=False, padding="longest"),
    dict(return_tensors="np", padding=True), dict(return_attention_mask=False),
]


def outcome(f):
    try:
        return f(), None
    except BaseException as e:  # HF panics (pyo3 PanicException) where tokenkit raises
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return None, e


def same(a, b):
    return {k: str(v) for k, v in dict(a).items()} == {k: str(v) for k, v in dict(b).items()}


@pytest.fixture(scope="module", params=list(DIRS))
def pair(request, tmp_path_factory):
    src, config = DIRS[request.param]
    path = FIXTURES / src
    if not path.exists():
        pytest.skip(f"{src} not available")
    d = tmp_path_factory.mktemp(request.param)
    shutil.copy(path, d / "tokenizer.json")
    (d / "tokenizer_config.json").write_text(json.dumps(config))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tokenkit.AutoTokenizer.from_pretrained(d), transformers.AutoTokenizer.from_pretrained(d), d


@pytest.mark.parametrize("call", range(len(CALLS)))
def test_call_matches_transformers(pair, call):
    ours, ref, _ = pair
    kw = CALLS[call]
    for inp, inp_pair in ((BATCH, None), (BATCH[0], None), (BATCH[2], BATCH[4]), (BATCH, BATCH[::-1])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b, err = outcome(lambda: ref(inp, inp_pair, **kw))
        if err is not None:
            with pytest.raises(Exception):
                ours(inp, inp_pair, **kw)
            continue
        a = ours(inp, inp_pair, **kw)
        assert same(a, b), (kw, inp, inp_pair)
    if "return_tensors" not in kw:
        ids, err = outcome(lambda: ref.encode(BATCH[2], **kw))
        if err is None:
            assert ours.encode(BATCH[2], **kw) == ids


def test_decode_and_attributes(pair):
    ours, ref, _ = pair
    ids = ref(BATCH)["input_ids"]
    for kw in (dict(), dict(skip_special_tokens=True), dict(clean_up_tokenization_spaces=True),
               dict(clean_up_tokenization_spaces=False)):
        assert ours.batch_decode(ids, **kw) == ref.batch_decode(ids, **kw), kw
        assert ours.decode(ids[0], **kw) == ref.decode(ids[0], **kw), kw
        assert ours.decode(ids, **kw) == ref.decode(ids, **kw), kw
    assert ours.special_tokens_map == ref.special_tokens_map
    for attr in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
        assert getattr(ours, attr) == getattr(ref, attr), attr
        assert getattr(ours, attr + "_id") == getattr(ref, attr + "_id"), attr
    assert len(ours) == len(ref) and ours.vocab_size == ref.vocab_size
    assert ours.get_vocab() == ref.get_vocab()
    assert ours.tokenize(BATCH[2]) == ref.tokenize(BATCH[2])
    assert ours.convert_ids_to_tokens(ids[0]) == ref.convert_ids_to_tokens(ids[0])
    assert ours.convert_tokens_to_ids(["hello", "not-a-token-at-all"]) == ref.convert_tokens_to_ids(["hello", "not-a-token-at-all"])
    assert ours.model_max_length == ref.model_max_length
    assert ours.padding_side == ref.padding_side and ours.truncation_side == ref.truncation_side


def test_save_pretrained_roundtrip(pair, tmp_path):
    ours, ref, _ = pair
    ours.save_pretrained(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = transformers.AutoTokenizer.from_pretrained(tmp_path)
    for kw in (dict(padding=True), dict(truncation=True, max_length=7)):
        assert same(again(BATCH, **kw), ref(BATCH, **kw)), kw
    assert again.special_tokens_map == ref.special_tokens_map


CHAT_DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "chat"


@pytest.mark.parametrize("template", ["chatml_tools", "llama31_tools", "mistral_alternating", "gemma_style"])
def test_apply_chat_template_matches_transformers(template, tmp_path):
    """apply_chat_template (text, ids, BatchEncoding, batches, generation prompt, tools) on a
    directory with a chat template, against transformers on the same directory."""
    src = FIXTURES / "registry/llama3/tokenizer.json"
    if not src.exists():
        pytest.skip("llama3 fixture not available")
    shutil.copy(src, tmp_path / "tokenizer.json")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin_of_text|>",
              "eos_token": "<|eot_id|>", "pad_token": "<|end_of_text|>",
              "chat_template": (CHAT_DATA / f"{template}.jinja").read_text(encoding="utf-8")}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    data = json.loads((CHAT_DATA / "conversations.json").read_text(encoding="utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = transformers.AutoTokenizer.from_pretrained(tmp_path)
    ours = tokenkit.AutoTokenizer.from_pretrained(tmp_path)
    compared = 0
    for name, conv in data["conversations"].items():
        for kw in ({}, {"add_generation_prompt": True}, {"tools": data["tools"]},
                   {"tokenize": False, "add_generation_prompt": True, "date_string": "01 Jan 2025"},
                   {"return_dict": False}, {"continue_final_message": True}):
            b, err = outcome(lambda: ref.apply_chat_template(conv, **kw))
            if err is not None:
                with pytest.raises(Exception):
                    ours.apply_chat_template(conv, **kw)
                continue
            a = ours.apply_chat_template(conv, **kw)
            assert (dict(a) if isinstance(a, dict) else a) == (dict(b) if isinstance(b, dict) else b), (name, kw)
            compared += 1
    assert compared > 20
    convs = [data["conversations"]["single_user"], data["conversations"]["system_multi_turn"]]
    a = ours.apply_chat_template(convs, padding=True, add_generation_prompt=True)
    b = ref.apply_chat_template(convs, padding=True, add_generation_prompt=True)
    assert dict(a) == dict(b)
