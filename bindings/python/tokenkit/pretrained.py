"""Pretrained tokenizer directories, the way transformers' fast tokenizers use them.

``AutoTokenizer.from_pretrained(path)`` reads ``tokenizer.json`` with ``tokenizer_config.json`` and
``special_tokens_map.json`` when present, and returns a :class:`PreTrainedTokenizer` whose
``__call__``, ``encode``, ``decode``, ``batch_decode``, ``apply_chat_template`` and special-token
attributes behave as transformers' ``PreTrainedTokenizerFast`` (transformers 5) on the same
directory, without importing transformers. Only local directories are read.
"""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ._tokenkit import AddedToken, ChatTemplate, Tokenizer

__all__ = ["AutoTokenizer", "PreTrainedTokenizer", "BatchEncoding"]

VERY_LARGE_INTEGER = int(1e30)  # transformers' "no limit" model_max_length
LARGE_INTEGER = int(1e20)
SPECIAL_TOKENS_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_PADDING = {False: "do_not_pad", "do_not_pad": "do_not_pad", True: "longest", "longest": "longest",
            "max_length": "max_length"}
_TRUNCATION = {None: "do_not_truncate", False: "do_not_truncate", "do_not_truncate": "do_not_truncate",
               True: "longest_first", "longest_first": "longest_first", "only_first": "only_first",
               "only_second": "only_second"}


def _token_content(value: Any) -> Optional[str]:
    """A special token given as a string or as an AddedToken dict (``{"content": ...}``)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value.get("content")
    if isinstance(value, AddedToken):
        return value.content
    raise TypeError(f"a special token must be a str or an AddedToken dict, got {type(value).__name__}")


def _added_token(d: Dict[str, Any]) -> AddedToken:
    return AddedToken(d["content"], single_word=d.get("single_word", False), lstrip=d.get("lstrip", False),
                      rstrip=d.get("rstrip", False), normalized=d.get("normalized", not d.get("special", False)),
                      special=d.get("special", False))


class BatchEncoding(dict):
    """The output of :meth:`PreTrainedTokenizer.__call__`: a dict of model inputs (``input_ids``,
    ``attention_mask``, ...) that also keeps the :class:`~tokenkit.Encoding` objects."""

    def __init__(self, data: Dict[str, Any], encodings: Optional[list] = None, tensor_type: Optional[str] = None):
        super().__init__(data)
        self._encodings = encodings
        if tensor_type is not None:
            self.convert_to_tensors(tensor_type)

    @property
    def encodings(self) -> Optional[list]:
        """The :class:`~tokenkit.Encoding` of each row."""
        return self._encodings

    @property
    def data(self) -> Dict[str, Any]:
        return dict(self)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def convert_to_tensors(self, tensor_type: str) -> "BatchEncoding":
        """Turns every value into a numpy array (``"np"``); other frameworks are not supported."""
        if tensor_type != "np":
            raise ValueError(f"tokenkit returns tensors as numpy arrays only (return_tensors='np'), not {tensor_type!r}")
        import numpy as np

        for key, value in self.items():
            self[key] = np.asarray(value)
            if self[key].ndim == 1 and key != "overflow_to_sample_mapping" and key != "length":
                self[key] = self[key][None, :]
        return self

    def tokens(self, batch_index: int = 0) -> List[str]:
        """The tokens of row ``batch_index``."""
        return self._encodings[batch_index].tokens

    def word_ids(self, batch_index: int = 0) -> List[Optional[int]]:
        """The word index of each token of row ``batch_index``."""
        return self._encodings[batch_index].word_ids

    def sequence_ids(self, batch_index: int = 0) -> List[Optional[int]]:
        """The sequence index of each token of row ``batch_index``."""
        return self._encodings[batch_index].sequence_ids

    def char_to_token(self, batch_or_char_index: int, char_index: Optional[int] = None, sequence_index: int = 0):
        """The token holding a character (``char_to_token(char)`` or ``char_to_token(row, char)``)."""
        if char_index is None:
            batch_or_char_index, char_index = 0, batch_or_char_index
        return self._encodings[batch_or_char_index].char_to_token(char_index, sequence_index)


class PreTrainedTokenizer:
    """A tokenizer.json tokenizer with its transformers configuration (special tokens,
    ``model_max_length``, padding/truncation side, chat template). Built by
    :meth:`AutoTokenizer.from_pretrained`."""

    def __init__(self, tokenizer: Tokenizer, **config: Any):
        self._tokenizer = tokenizer
        self.init_kwargs = copy.deepcopy(config)
        self.name_or_path = config.pop("name_or_path", "")
        self.model_max_length = config.pop("model_max_length", None) or VERY_LARGE_INTEGER
        self.padding_side = config.pop("padding_side", "right")
        self.truncation_side = config.pop("truncation_side", "right")
        self.model_input_names = list(config.pop("model_input_names", ["input_ids", "attention_mask"]))
        self.clean_up_tokenization_spaces = config.pop("clean_up_tokenization_spaces", False)
        self.split_special_tokens = config.pop("split_special_tokens", False)
        self.chat_template = config.pop("chat_template", None)
        if isinstance(self.chat_template, list):  # [{"name": ..., "template": ...}, ...]
            self.chat_template = {t["name"]: t["template"] for t in self.chat_template}
        self._compiled: Dict[str, ChatTemplate] = {}
        self.pad_token_type_id = 0
        # Tokens from added_tokens_decoder that the tokenizer.json does not have yet.
        for _, tok in sorted(config.pop("added_tokens_decoder", {}).items(), key=lambda kv: int(kv[0])):
            tok = tok if isinstance(tok, dict) else {"content": _token_content(tok), "special": True}
            if tokenizer.token_to_id(tok["content"]) is None:
                if tok.get("special", False):
                    tokenizer.add_special_tokens([_added_token(tok)])
                else:
                    tokenizer.add_tokens([_added_token(tok)])
        self._special: Dict[str, Optional[str]] = {}
        for attr in SPECIAL_TOKENS_ATTRIBUTES:
            self._special[attr] = _token_content(config.pop(attr, None))
        extra = config.pop("extra_special_tokens", None) or config.pop("additional_special_tokens", None) or []
        self.extra_special_tokens = [_token_content(t) for t in (extra.values() if isinstance(extra, dict) else extra)]
        named = [t for t in self._special.values() if t is not None]
        missing = [t for t in named + self.extra_special_tokens if tokenizer.token_to_id(t) is None]
        if missing:
            tokenizer.add_special_tokens(missing)
        self._other_config = config

    # ---- loading and saving ------------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, path: Union[str, os.PathLike], **kwargs: Any) -> "PreTrainedTokenizer":
        """Loads a local directory holding ``tokenizer.json`` (and optionally
        ``tokenizer_config.json``, ``special_tokens_map.json``); ``kwargs`` override the config."""
        root = Path(path)
        if not (root / "tokenizer.json").is_file():
            raise OSError(f"{root}: no tokenizer.json in this directory (tokenkit reads local directories only)")
        config: Dict[str, Any] = {}
        if (root / "special_tokens_map.json").is_file():
            config.update(json.loads((root / "special_tokens_map.json").read_text(encoding="utf-8")))
        if (root / "tokenizer_config.json").is_file():
            config.update(json.loads((root / "tokenizer_config.json").read_text(encoding="utf-8")))
        if (root / "chat_template.jinja").is_file() and "chat_template" not in config:
            config["chat_template"] = (root / "chat_template.jinja").read_text(encoding="utf-8")
        config.update(kwargs)
        config.setdefault("name_or_path", str(path))
        for key in ("auto_map", "processor_class"):
            config.pop(key, None)
        return cls(Tokenizer.from_file(str(root / "tokenizer.json")), **config)

    def save_pretrained(self, path: Union[str, os.PathLike]) -> List[str]:
        """Writes ``tokenizer.json`` and ``tokenizer_config.json`` into ``path`` (created if needed)."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        self._tokenizer.save(str(root / "tokenizer.json"))
        config = dict(self._other_config)
        config.setdefault("tokenizer_class", "PreTrainedTokenizerFast")
        config.update({k: v for k, v in self._special.items() if v is not None})
        if self.extra_special_tokens:
            config["extra_special_tokens"] = list(self.extra_special_tokens)
        config.update(model_max_length=self.model_max_length, padding_side=self.padding_side,
                      truncation_side=self.truncation_side, clean_up_tokenization_spaces=self.clean_up_tokenization_spaces,
                      model_input_names=self.model_input_names)
        config["added_tokens_decoder"] = {
            str(i): {"content": t.content, "lstrip": t.lstrip, "normalized": t.normalized, "rstrip": t.rstrip,
                     "single_word": t.single_word, "special": t.special}
            for i, t in sorted(self._tokenizer.get_added_tokens_decoder().items())
        }
        if self.chat_template is not None:
            config["chat_template"] = self.chat_template
        out = root / "tokenizer_config.json"
        out.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return [str(root / "tokenizer.json"), str(out)]

    # ---- vocabulary and special tokens ------------------------------------------------------

    @property
    def backend_tokenizer(self) -> Tokenizer:
        """The :class:`tokenkit.Tokenizer` doing the work."""
        return self._tokenizer

    @property
    def is_fast(self) -> bool:
        return True

    @property
    def special_tokens_map(self) -> Dict[str, str]:
        """The named special tokens that are set (``bos_token``, ``eos_token``, ...)."""
        return {k: v for k, v in self._special.items() if v is not None}

    @property
    def all_special_tokens(self) -> List[str]:
        out: List[str] = []
        for t in list(self.special_tokens_map.values()) + self.extra_special_tokens:
            if t not in out:
                out.append(t)
        return out

    @property
    def all_special_ids(self) -> List[int]:
        return self.convert_tokens_to_ids(self.all_special_tokens)

    def __getattr__(self, name: str) -> Any:
        special = self.__dict__.get("_special", {})
        if name in special:
            return special[name]
        if name.endswith("_id") and name[:-3] in special:
            token = special[name[:-3]]
            return None if token is None else self.convert_tokens_to_ids(token)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in SPECIAL_TOKENS_ATTRIBUTES and "_special" in self.__dict__:
            self._special[name] = _token_content(value)
        else:
            super().__setattr__(name, value)

    @property
    def vocab_size(self) -> int:
        """Size of the base vocabulary (without added tokens)."""
        return self._tokenizer.get_vocab_size(with_added_tokens=False)

    def __len__(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    def get_vocab(self) -> Dict[str, int]:
        return self._tokenizer.get_vocab(with_added_tokens=True)

    def convert_tokens_to_ids(self, tokens: Union[str, Sequence[str]]) -> Union[Optional[int], List[Optional[int]]]:
        """Ids of tokens; an unknown token gives the unk id (None without an unk token)."""
        def one(t: str) -> Optional[int]:
            i = self._tokenizer.token_to_id(t)
            return i if i is not None else self.unk_token_id
        return one(tokens) if isinstance(tokens, str) else [one(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Union[int, Sequence[int]], skip_special_tokens: bool = False):
        """Tokens of ids (special ones dropped with ``skip_special_tokens``)."""
        if isinstance(ids, int):
            return self._tokenizer.id_to_token(ids)
        special = set(self.all_special_ids) if skip_special_tokens else set()
        return [self._tokenizer.id_to_token(int(i)) for i in ids if int(i) not in special]

    def tokenize(self, text: str, pair: Optional[str] = None, add_special_tokens: bool = False) -> List[str]:
        """The tokens of ``text`` (and ``pair``)."""
        return self._tokenizer.encode(text, pair, add_special_tokens=add_special_tokens).tokens

    # ---- encoding ---------------------------------------------------------------------------

    def _strategies(self, padding: Any, truncation: Any, max_length: Optional[int], pad_to_multiple_of: Optional[int]):
        if max_length is not None and padding is False and truncation is None:
            truncation = "longest_first"
        padding = _PADDING[padding] if not isinstance(padding, str) or padding in _PADDING else padding
        if padding not in ("do_not_pad", "longest", "max_length"):
            raise ValueError(f"{padding!r} is not a valid padding strategy")
        if truncation not in _TRUNCATION:
            raise ValueError(f"{truncation!r} is not a valid truncation strategy")
        truncation = _TRUNCATION[truncation]
        if max_length is None:
            if padding == "max_length":
                if self.model_max_length > LARGE_INTEGER:
                    padding = "do_not_pad"
                else:
                    max_length = self.model_max_length
            if truncation != "do_not_truncate":
                if self.model_max_length > LARGE_INTEGER:
                    truncation = "do_not_truncate"
                else:
                    max_length = self.model_max_length
        if padding != "do_not_pad" and (self.pad_token is None or self.pad_token_id is None):
            raise ValueError("Asking to pad but the tokenizer does not have a padding token. Please select a token "
                             "to use as `pad_token` (e.g. `tokenizer.pad_token = tokenizer.eos_token`).")
        if (truncation != "do_not_truncate" and padding != "do_not_pad" and pad_to_multiple_of is not None
                and max_length is not None and max_length % pad_to_multiple_of != 0):
            raise ValueError(f"Truncation and padding are both activated but truncation length ({max_length}) is "
                             f"not a multiple of pad_to_multiple_of ({pad_to_multiple_of}).")
        return padding, truncation, max_length

    def _configured(self, padding: str, truncation: str, max_length: Optional[int], stride: int,
                    pad_to_multiple_of: Optional[int], padding_side: Optional[str]) -> Tokenizer:
        """The backend tokenizer with this call's padding and truncation. As in transformers, the
        settings are written onto the backend tokenizer (only when they change)."""
        tok = self._tokenizer
        if truncation == "do_not_truncate":
            if tok.truncation is not None:
                tok.no_truncation()
        else:
            target = dict(max_length=max_length, stride=stride, strategy=truncation, direction=self.truncation_side)
            current = tok.truncation
            if current is None or {k: current.get(k) for k in target} != target:
                tok.enable_truncation(**target)
        if padding == "do_not_pad":
            if tok.padding is not None:
                tok.no_padding()
        else:
            target = dict(length=max_length if padding == "max_length" else None,
                          direction=padding_side or self.padding_side, pad_id=self.pad_token_id,
                          pad_token=self.pad_token, pad_type_id=self.pad_token_type_id,
                          pad_to_multiple_of=pad_to_multiple_of)
            if tok.padding != target:
                tok.enable_padding(**target)
        if tok.encode_special_tokens != self.split_special_tokens:
            tok.encode_special_tokens = self.split_special_tokens
        return tok

    def __call__(self, text: Any, text_pair: Any = None, add_special_tokens: bool = True, padding: Any = False,
                 truncation: Any = None, max_length: Optional[int] = None, stride: int = 0,
                 is_split_into_words: bool = False, pad_to_multiple_of: Optional[int] = None,
                 padding_side: Optional[str] = None, return_tensors: Optional[str] = None,
                 return_token_type_ids: Optional[bool] = None, return_attention_mask: Optional[bool] = None,
                 return_overflowing_tokens: bool = False, return_special_tokens_mask: bool = False,
                 return_offsets_mapping: bool = False, return_length: bool = False, **kwargs: Any) -> BatchEncoding:
        """Encodes one text, a pair, or a batch, with transformers' padding/truncation arguments."""
        padding, truncation, max_length = self._strategies(padding, truncation, max_length, pad_to_multiple_of)
        if is_split_into_words:
            batched = isinstance(text, (list, tuple)) and bool(text) and isinstance(text[0], (list, tuple))
        else:
            batched = isinstance(text, (list, tuple))
        if batched:
            if isinstance(text_pair, str):
                raise TypeError("when tokenizing batches of text, `text_pair` must be a list or tuple with the same "
                                "length as `text`.")
            if text_pair is not None and len(text) != len(text_pair):
                raise ValueError(f"batch length of `text`: {len(text)} does not match batch length of `text_pair`: "
                                 f"{len(text_pair)}.")
            inputs = list(zip(text, text_pair)) if text_pair is not None else list(text)
        else:
            inputs = [(text, text_pair)] if text_pair else [text]
        tok = self._configured(padding, truncation, max_length, stride, pad_to_multiple_of, padding_side)
        encodings = tok.encode_batch(inputs, add_special_tokens=add_special_tokens, is_pretokenized=is_split_into_words)

        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self.model_input_names
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names
        data: Dict[str, list] = {"input_ids": []}
        for name, wanted in (("token_type_ids", return_token_type_ids), ("attention_mask", return_attention_mask),
                             ("special_tokens_mask", return_special_tokens_mask),
                             ("offset_mapping", return_offsets_mapping), ("length", return_length)):
            if wanted:
                data[name] = []
        rows, mapping = [], []
        for i, enc in enumerate(encodings):
            parts = [enc] + (list(enc.overflowing) if return_overflowing_tokens else [])
            for e in parts:
                rows.append(e)
                mapping.append(i)
                data["input_ids"].append(e.ids)
                if return_token_type_ids:
                    data["token_type_ids"].append(e.type_ids)
                if return_attention_mask:
                    data["attention_mask"].append(e.attention_mask)
                if return_special_tokens_mask:
                    data["special_tokens_mask"].append(e.special_tokens_mask)
                if return_offsets_mapping:
                    data["offset_mapping"].append([tuple(o) for o in e.offsets])
                if return_length:
                    data["length"].append(len(e.ids))
        if return_overflowing_tokens:
            data["overflow_to_sample_mapping"] = mapping
        out = BatchEncoding(data, rows, tensor_type=return_tensors)
        if not batched and return_tensors is None and not return_overflowing_tokens:
            out = BatchEncoding({k: (v[0] if v and isinstance(v[0], list) else v) for k, v in out.items()}, rows)
        return out

    def encode(self, text: Any, text_pair: Any = None, add_special_tokens: bool = True, **kwargs: Any) -> List[int]:
        """The ids of ``text`` (and ``text_pair``)."""
        return self(text, text_pair, add_special_tokens=add_special_tokens, **kwargs)["input_ids"]

    # ---- decoding ---------------------------------------------------------------------------

    @staticmethod
    def clean_up_tokenization(text: str) -> str:
        """transformers' clean-up of spaces before punctuation and English contractions."""
        for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
            text = text.replace(a, b)
        return text

    def _decode_one(self, ids: Sequence[int], skip_special_tokens: bool, clean_up: Optional[bool]) -> str:
        text = self._tokenizer.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)
        clean_up = self.clean_up_tokenization_spaces if clean_up is None else clean_up
        # transformers skips the clean-up for BPE models (it would strip real spaces).
        if clean_up and type(self._tokenizer.model).__name__ != "BPE":
            text = self.clean_up_tokenization(text)
        return text

    def decode(self, token_ids: Any, skip_special_tokens: bool = False,
               clean_up_tokenization_spaces: Optional[bool] = None, **kwargs: Any) -> Union[str, List[str]]:
        """Text of an id list (or of each id list of a batch)."""
        if hasattr(token_ids, "tolist"):
            token_ids = token_ids.tolist()
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        if isinstance(token_ids, dict):
            token_ids = token_ids["input_ids"]
        if token_ids and isinstance(token_ids[0], (list, tuple)):
            return [self._decode_one(s, skip_special_tokens, clean_up_tokenization_spaces) for s in token_ids]
        return self._decode_one(token_ids, skip_special_tokens, clean_up_tokenization_spaces)

    def batch_decode(self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = False,
                     clean_up_tokenization_spaces: Optional[bool] = None, **kwargs: Any) -> List[str]:
        """Text of each id list."""
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self._decode_one(s, skip_special_tokens, clean_up_tokenization_spaces) for s in sequences]

    # ---- chat templates ---------------------------------------------------------------------

    def get_chat_template(self, chat_template: Optional[str] = None, tools: Optional[list] = None) -> str:
        """The template text to use: a named template, the one for tools, the default one, or the
        template passed in, chosen as transformers chooses."""
        if isinstance(self.chat_template, dict):
            named = self.chat_template
            if chat_template is not None and chat_template in named:
                return named[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in named:
                    return named["tool_use"]
                if "default" in named:
                    return named["default"]
                raise ValueError("This model has multiple chat templates with no default specified! Please either "
                                 "pass a chat template or the name of the template you wish to use to the "
                                 f"`chat_template` argument. Available template names are {sorted(named)}.")
        elif chat_template is None:
            if self.chat_template is None:
                raise ValueError("Cannot use chat template functions because tokenizer.chat_template is not set and "
                                 "no template argument was passed!")
            return self.chat_template
        return chat_template

    def _render(self, template: str, conversation: list, tools: Optional[list], documents: Optional[list],
                add_generation_prompt: bool, continue_final_message: Union[bool, str], kwargs: Dict[str, Any]) -> str:
        compiled = self._compiled.get(template)
        if compiled is None:
            compiled = self._compiled[template] = ChatTemplate(template)
        for what, items in (("tools", tools), ("documents", documents)):
            if items is not None and not all(isinstance(t, dict) for t in items):
                raise TypeError(f"{what} must be JSON-schema dicts (tokenkit does not build schemas from functions)")
        if continue_final_message is True:
            continue_final_message = "content"
        dumps = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
        return compiled.render(
            dumps(conversation), add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message or None,
            tools_json=None if tools is None else dumps(tools),
            documents_json=None if documents is None else dumps(documents),
            kwargs_json=dumps({**self.special_tokens_map, **kwargs}))

    def apply_chat_template(self, conversation: Any, tools: Optional[list] = None, documents: Optional[list] = None,
                            chat_template: Optional[str] = None, add_generation_prompt: bool = False,
                            continue_final_message: Union[bool, str] = False, tokenize: bool = True,
                            padding: Any = False, truncation: Any = False, max_length: Optional[int] = None,
                            return_tensors: Optional[str] = None, return_dict: bool = True,
                            tokenizer_kwargs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Any:
        """Renders a conversation (or a batch of them) with the chat template, as transformers'
        ``apply_chat_template``: the text with ``tokenize=False``, otherwise the encoding of that
        text without added special tokens (a :class:`BatchEncoding`, or the ids with
        ``return_dict=False``). Extra keyword arguments (e.g. ``enable_thinking``) reach the template."""
        if not tokenize:
            return_dict = False
        template = self.get_chat_template(chat_template, tools)
        if isinstance(conversation, (list, tuple)) and not conversation:
            raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
        batched = isinstance(conversation, (list, tuple)) and isinstance(conversation[0], (list, tuple))
        conversations = conversation if batched else [conversation]
        if continue_final_message and add_generation_prompt:
            raise ValueError("continue_final_message and add_generation_prompt are not compatible.")
        rendered = [self._render(template, list(c), tools, documents, add_generation_prompt, continue_final_message,
                                 kwargs) for c in conversations]
        if not batched:
            rendered = rendered[0]
        if not tokenize:
            return rendered
        out = self(rendered, padding=padding, truncation=truncation, max_length=max_length, add_special_tokens=False,
                   return_tensors=return_tensors, **(tokenizer_kwargs or {}))
        return out if return_dict else out["input_ids"]

    def __repr__(self) -> str:
        return (f"PreTrainedTokenizer(name_or_path={self.name_or_path!r}, vocab_size={self.vocab_size}, "
                f"model_max_length={self.model_max_length}, special_tokens={self.special_tokens_map})")


class AutoTokenizer:
    """``AutoTokenizer.from_pretrained(directory)``: transformers' entry point, for local
    directories with a ``tokenizer.json``."""

    @staticmethod
    def from_pretrained(path: Union[str, os.PathLike], **kwargs: Any) -> PreTrainedTokenizer:
        return PreTrainedTokenizer.from_pretrained(path, **kwargs)
