"""Pretrained tokenizer directories, the way transformers' fast tokenizers use them.

``AutoTokenizer.from_pretrained(path)`` reads ``tokenizer.json`` with ``tokenizer_config.json`` and
``special_tokens_map.json`` when present (or, without a tokenizer.json, a ``vocab.txt``, a
``vocab.json`` + ``merges.txt`` or a SentencePiece ``.model``, see :func:`_load_vocab_files`), and
returns a :class:`PreTrainedTokenizer` whose ``__call__`` (with ``text_target``), ``encode``,
``tokenize``, ``pad``, ``decode``, ``batch_decode``, ``add_tokens``, ``add_special_tokens``,
``train_new_from_iterator``, ``apply_chat_template`` and special-token attributes behave as
transformers' ``TokenizersBackend`` (transformers 5) on the same directory, without importing
transformers. Only local directories are read. Offsets and spans are in characters.
"""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from ._tokenkit import AddedToken, ChatTemplate, Tokenizer, pretrained_config, write_files

__all__ = ["AutoTokenizer", "PreTrainedTokenizer", "BatchEncoding", "CharSpan", "TokenSpan"]

VERY_LARGE_INTEGER = int(1e30)  # transformers' "no limit" model_max_length
LARGE_INTEGER = int(1e20)
SPECIAL_TOKENS_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_PADDING = {False: "do_not_pad", "do_not_pad": "do_not_pad", True: "longest", "longest": "longest",
            "max_length": "max_length"}
_TRUNCATION = {None: "do_not_truncate", False: "do_not_truncate", "do_not_truncate": "do_not_truncate",
               True: "longest_first", "longest_first": "longest_first", "only_first": "only_first",
               "only_second": "only_second"}


def _json_float(text: str) -> Union[float, int]:
    """A JSON number the library wrote as a float: an integral one beyond 64 bits was an integer
    in the file (transformers' ``model_max_length`` of ``int(1e30)``), as Python's json reads it."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) >= 2.0 ** 63 else value


def _token_content(value: Any) -> Optional[str]:
    """A special token given as a string or as an AddedToken dict (``{"content": ...}``)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value.get("content")
    if isinstance(value, AddedToken):
        return value.content
    raise TypeError(f"a special token must be a str or an AddedToken dict, got {type(value).__name__}")


def _special_value(value: Any) -> Any:
    """A special token as transformers keeps it: a str, or an AddedToken (from a config dict)."""
    if isinstance(value, dict):
        return _added_token({"special": True, **value})
    if value is None or isinstance(value, (str, AddedToken)):
        return value
    raise TypeError(f"a special token must be a str or an AddedToken, got {type(value).__name__}")


def _special_added(value: Union[str, AddedToken]) -> AddedToken:
    """A token given to ``add_special_tokens``: a str becomes an unnormalized special AddedToken."""
    if isinstance(value, str):
        return AddedToken(value, rstrip=False, lstrip=False, normalized=False, special=True)
    return value


def _trained_id(tokenizer: Tokenizer, token: str) -> int:
    """The id of a post-processor's token in a newly trained tokenizer (transformers' error otherwise)."""
    token_id = tokenizer.token_to_id(token)
    if token_id is None:
        raise ValueError("Attempted to set a token in the post processor that does not exist in the mapping")
    return token_id


def _added_token_dict(t: AddedToken) -> Dict[str, Any]:
    """An AddedToken as added_tokens_decoder holds it."""
    return {"content": t.content, "lstrip": t.lstrip, "normalized": t.normalized, "rstrip": t.rstrip,
            "single_word": t.single_word, "special": t.special}


def _token_json(value: Any) -> Any:
    """A special token as tokenizer_config.json holds it: a str, or an AddedToken dict."""
    if isinstance(value, AddedToken):
        return {"__type": "AddedToken", **_added_token_dict(value)}
    return value


def _to_py(value: Any) -> Any:
    """numpy arrays / torch tensors (or lists of them) as Python lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_to_py(v) for v in value]
    return value


def _added_token(d: Dict[str, Any]) -> AddedToken:
    return AddedToken(d["content"], single_word=d.get("single_word", False), lstrip=d.get("lstrip", False),
                      rstrip=d.get("rstrip", False), normalized=d.get("normalized", not d.get("special", False)),
                      special=d.get("special", False))


class CharSpan(NamedTuple):
    """A span of characters in the original text: ``start`` and ``end`` (exclusive)."""

    start: int
    end: int


class TokenSpan(NamedTuple):
    """A span of tokens in an encoding: ``start`` and ``end`` (exclusive)."""

    start: int
    end: int


def _is_empty(value: Any) -> bool:
    """Whether a (nested) list holds no scalar at all (transformers' ``len(flatten(v)) == 0``)."""
    if isinstance(value, (list, tuple)):
        return all(_is_empty(v) for v in value)
    return False


class BatchEncoding(dict):
    """The output of :meth:`PreTrainedTokenizer.__call__`: a dict of model inputs (``input_ids``,
    ``attention_mask``, ...) that also keeps the :class:`~tokenkit.Encoding` of each row, for the
    token/word/character mappings (character offsets, as transformers reports them).

    ``batch[key]`` is a value, ``batch[i]`` the :class:`~tokenkit.Encoding` of row ``i``, and
    ``batch[a:b]`` (without encodings) the values sliced, as in transformers."""

    def __init__(self, data: Optional[Dict[str, Any]] = None, encodings: Optional[list] = None,
                 tensor_type: Optional[str] = None, prepend_batch_axis: bool = False,
                 n_sequences: Optional[int] = None):
        super().__init__(data or {})
        self._encodings = encodings
        if n_sequences is None and encodings:
            n_sequences = encodings[0].n_sequences
        self._n_sequences = n_sequences
        self.convert_to_tensors(tensor_type, prepend_batch_axis=prepend_batch_axis)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return super().__getitem__(item)
        if self.__dict__.get("_encodings") is not None:
            return self._encodings[item]
        if isinstance(item, slice):
            return {key: value[item] for key, value in self.items()}
        raise KeyError("Invalid key. Only three types of key are available: (1) string, (2) integers for backend "
                       "Encoding, and (3) slices for data subsetting.")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return dict.__getitem__(self, name)
        except KeyError:
            raise AttributeError(name) from None

    @property
    def encodings(self) -> Optional[list]:
        """The :class:`~tokenkit.Encoding` of each row."""
        return self._encodings

    @property
    def n_sequences(self) -> Optional[int]:
        """How many sequences each row was made from (1, or 2 for pairs)."""
        return self._n_sequences

    @property
    def is_fast(self) -> bool:
        """Whether the encodings are kept (always, for tokenizer output)."""
        return self._encodings is not None

    @property
    def data(self) -> Dict[str, Any]:
        return dict(self)

    def convert_to_tensors(self, tensor_type: Optional[str] = None, prepend_batch_axis: bool = False) -> "BatchEncoding":
        """Turns every value into a numpy array (``"np"``) or a torch tensor (``"pt"``, when torch is
        installed), as transformers does: ragged rows make an object array (numpy) or an error."""
        if tensor_type is None:
            return self
        tensor_type = getattr(tensor_type, "value", tensor_type)
        import numpy as np

        if tensor_type == "pt":
            try:
                import torch
            except ImportError:
                raise ImportError("Unable to convert output to PyTorch tensors format, PyTorch is not installed.") from None

            def as_tensor(value: Any, dtype: Any = None) -> Any:
                if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
                    return torch.from_numpy(np.array(value))
                if _is_empty(value) and dtype is None:
                    dtype = torch.int64
                return torch.tensor(value, dtype=dtype)

            is_tensor = torch.is_tensor
        elif tensor_type == "np":
            def as_tensor(value: Any, dtype: Any = None) -> Any:
                if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple, np.ndarray)):
                    if len({len(v) for v in value}) > 1 and dtype is None:
                        value = as_tensor([np.asarray(v) for v in value], dtype=object)
                if _is_empty(value) and dtype is None:
                    dtype = np.int64
                return np.asarray(value, dtype=dtype)

            def is_tensor(obj: Any) -> bool:
                return isinstance(obj, np.ndarray)
        else:
            raise ValueError(f"{tensor_type!r} is not a valid TensorType, please select one of ['pt', 'np'] "
                             "(tokenkit does not convert to mlx)")
        for key, value in self.items():
            try:
                if prepend_batch_axis:
                    value = [value]
                if not is_tensor(value):
                    self[key] = as_tensor(value)
            except Exception as e:
                raise ValueError(
                    "Unable to create tensor, you should probably activate truncation and/or padding with "
                    "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your "
                    f"features (`{key}` in this case) have excessive nesting (inputs type `list` where type `int` is "
                    "expected).") from e
        return self

    def to(self, device: Any, *, non_blocking: bool = False) -> "BatchEncoding":
        """Moves every torch tensor to ``device`` (torch only)."""
        for key, value in list(self.items()):
            if hasattr(value, "to") and callable(value.to):
                self[key] = value.to(device=device, non_blocking=non_blocking)
        return self

    # ---- mappings between tokens, words and characters (row index first when given twice) ----

    def _encoding(self, what: str, first: int, second: Optional[int]) -> Tuple[Any, int]:
        if not self._encodings:
            raise ValueError(f"{what}() is not available when using Python based tokenizers")
        batch_index, index = (0, first) if second is None else (first, second)
        return self._encodings[batch_index], index

    def tokens(self, batch_index: int = 0) -> List[str]:
        """The tokens of row ``batch_index``."""
        return self._encoding("tokens", batch_index, 0)[0].tokens

    def word_ids(self, batch_index: int = 0) -> List[Optional[int]]:
        """The word index of each token of row ``batch_index``."""
        return self._encoding("word_ids", batch_index, 0)[0].word_ids

    def sequence_ids(self, batch_index: int = 0) -> List[Optional[int]]:
        """The sequence index of each token of row ``batch_index``."""
        return self._encoding("sequence_ids", batch_index, 0)[0].sequence_ids

    def token_to_sequence(self, batch_or_token_index: int, token_index: Optional[int] = None) -> Optional[int]:
        """The sequence (0 or 1) a token belongs to."""
        enc, i = self._encoding("token_to_sequence", batch_or_token_index, token_index)
        return enc.token_to_sequence(i)

    def token_to_word(self, batch_or_token_index: int, token_index: Optional[int] = None) -> Optional[int]:
        """The index of the word a token belongs to (None for special tokens)."""
        enc, i = self._encoding("token_to_word", batch_or_token_index, token_index)
        return enc.token_to_word(i)

    def word_to_tokens(self, batch_or_word_index: int, word_index: Optional[int] = None,
                       sequence_index: int = 0) -> Optional[TokenSpan]:
        """The tokens of a word of sequence ``sequence_index``, as a :class:`TokenSpan` (or None)."""
        enc, i = self._encoding("word_to_tokens", batch_or_word_index, word_index)
        span = enc.word_to_tokens(i, sequence_index)
        return TokenSpan(*span) if span is not None else None

    def token_to_chars(self, batch_or_token_index: int, token_index: Optional[int] = None) -> Optional[CharSpan]:
        """The characters of a token in its original text, as a :class:`CharSpan` (None for a
        special token added by the post-processor)."""
        enc, i = self._encoding("token_to_chars", batch_or_token_index, token_index)
        span = enc.token_to_chars(i)
        return CharSpan(*span) if span is not None else None

    def char_to_token(self, batch_or_char_index: int, char_index: Optional[int] = None,
                      sequence_index: int = 0) -> Optional[int]:
        """The token holding a character of sequence ``sequence_index`` (``char_to_token(char)`` or
        ``char_to_token(row, char)``)."""
        enc, i = self._encoding("char_to_token", batch_or_char_index, char_index)
        return enc.char_to_token(i, sequence_index)

    def word_to_chars(self, batch_or_word_index: int, word_index: Optional[int] = None,
                      sequence_index: int = 0) -> CharSpan:
        """The characters of a word of sequence ``sequence_index``, as a :class:`CharSpan`."""
        enc, i = self._encoding("word_to_chars", batch_or_word_index, word_index)
        return CharSpan(*enc.word_to_chars(i, sequence_index))

    def char_to_word(self, batch_or_char_index: int, char_index: Optional[int] = None,
                     sequence_index: int = 0) -> Optional[int]:
        """The index of the word holding a character of sequence ``sequence_index``."""
        enc, i = self._encoding("char_to_word", batch_or_char_index, char_index)
        return enc.char_to_word(i, sequence_index)


class PreTrainedTokenizer:
    """A tokenizer.json tokenizer with its transformers configuration (special tokens,
    ``model_max_length``, padding/truncation side, chat template). Built by
    :meth:`AutoTokenizer.from_pretrained`, or directly from a :class:`~tokenkit.Tokenizer` and the
    configuration's keys (``PreTrainedTokenizer(tok, pad_token="[PAD]", ...)``)."""

    def __init__(self, tokenizer: Tokenizer, **config: Any):
        self._tokenizer = tokenizer
        if "additional_special_tokens" in config and "extra_special_tokens" not in config:
            config["extra_special_tokens"] = config.pop("additional_special_tokens")
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
        # Named special tokens: the standard seven, then model-specific ones (any other
        # `*_token` key with a token value, or a dict `extra_special_tokens`), as transformers 5.
        self._special: Dict[str, Any] = {}
        for attr in SPECIAL_TOKENS_ATTRIBUTES:
            self._special[attr] = _special_value(config.pop(attr, None))
        extra = config.pop("extra_special_tokens", None) or []
        named = dict(extra) if isinstance(extra, dict) else {}
        for key in [k for k, v in config.items() if k.endswith("_token") and isinstance(v, (str, AddedToken, dict))]:
            if not isinstance(config[key], dict) or "content" in config[key]:
                named[key] = config.pop(key)
        for key, value in named.items():
            self._special[key] = _special_value(value)
        self._extra: List[Any] = [] if isinstance(extra, dict) else [_special_value(t) for t in extra]
        # Then, in one call as transformers: the tokens of added_tokens_decoder that are not added
        # tokens of the tokenizer yet (in id order), and the special tokens that are not either.
        known = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
        to_add = []
        for _, tok in sorted(config.pop("added_tokens_decoder", {}).items(), key=lambda kv: int(kv[0])):
            tok = _added_token(tok) if isinstance(tok, dict) else _special_added(tok) if isinstance(tok, str) else tok
            if tok.content not in known:
                known.add(tok.content)
                to_add.append(tok)
        for value in list(self._special.values()) + self._extra:
            if value is not None and str(value) not in known:
                known.add(str(value))
                to_add.append(AddedToken(value, special=True) if isinstance(value, str) else value)
        if to_add:
            tokenizer.add_tokens(to_add)
        self._other_config = config

    # ---- loading and saving ------------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, path: Union[str, os.PathLike], **kwargs: Any) -> "PreTrainedTokenizer":
        """Loads a local directory holding ``tokenizer.json`` (or the files transformers converts:
        ``vocab.txt``, ``vocab.json`` + ``merges.txt``, a SentencePiece ``spiece.model`` /
        ``tokenizer.model``), and optionally ``tokenizer_config.json``, ``special_tokens_map.json``
        and ``chat_template.jinja``; ``kwargs`` override the config.

        As transformers, a pad token (and the padding/truncation sides) set in tokenizer.json's
        ``padding``/``truncation`` are used when the configuration does not name them."""
        root = Path(path)
        if not root.is_dir():
            raise OSError(f"{root}: not a directory (tokenkit reads local directories only)")
        # The library's reader: tokenizer_config.json, special_tokens_map.json (for configs
        # without added_tokens_decoder) and the chat template files, merged as transformers does.
        config: Dict[str, Any] = json.loads(pretrained_config(str(root)), parse_float=_json_float)
        config.update(kwargs)
        config.setdefault("name_or_path", str(path))
        for key in ("auto_map", "processor_class"):
            config.pop(key, None)
        if (root / "tokenizer.json").is_file():
            tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        else:
            tokenizer, defaults = _load_vocab_files(root, config)
            config = {**defaults, **config}
        if "added_tokens_decoder" not in config:
            # transformers takes them from tokenizer.json; they stay in init_kwargs, so that
            # train_new_from_iterator adds back those the new vocabulary lacks.
            config["added_tokens_decoder"] = {str(i): _added_token_dict(t) for i, t in
                                              sorted(tokenizer.get_added_tokens_decoder().items())}
        padding, truncation = tokenizer.padding, tokenizer.truncation
        if padding is not None:
            config.setdefault("pad_token", padding["pad_token"])
            config.setdefault("padding_side", padding["direction"])
        if truncation is not None:
            config.setdefault("truncation_side", truncation["direction"])
        return cls(tokenizer, **config)

    def save_pretrained(self, path: Union[str, os.PathLike]) -> List[str]:
        """Writes ``tokenizer.json`` and ``tokenizer_config.json`` into ``path`` (created if needed)."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        config = dict(self._other_config)
        config.setdefault("tokenizer_class", "PreTrainedTokenizerFast")
        config.update({k: _token_json(v) for k, v in self._special.items() if v is not None})
        if self._extra:
            config["extra_special_tokens"] = [_token_json(t) for t in self._extra]
        config.update(model_max_length=self.model_max_length, padding_side=self.padding_side,
                      truncation_side=self.truncation_side, clean_up_tokenization_spaces=self.clean_up_tokenization_spaces,
                      model_input_names=self.model_input_names)
        config["added_tokens_decoder"] = {
            str(i): _added_token_dict(t) for i, t in sorted(self._tokenizer.get_added_tokens_decoder().items())}
        if self.chat_template is not None:
            config["chat_template"] = self.chat_template
        files = [(str(root / "tokenizer.json"), self._tokenizer.to_str(True)),
                 (str(root / "tokenizer_config.json"), json.dumps(config, indent=2, ensure_ascii=False) + "\n")]
        # One set: a failure leaves the previous directory's files as they were.
        write_files([(p, text.encode("utf-8")) for p, text in files])
        return [p for p, _ in files]

    # ---- vocabulary and special tokens ------------------------------------------------------

    @property
    def backend_tokenizer(self) -> Tokenizer:
        """The :class:`tokenkit.Tokenizer` doing the work."""
        return self._tokenizer

    @property
    def is_fast(self) -> bool:
        return True

    @property
    def SPECIAL_TOKENS_ATTRIBUTES(self) -> List[str]:  # noqa: N802 (transformers' name)
        """The names of the named special tokens: the standard seven, then model-specific ones."""
        return list(self._special)

    @property
    def special_tokens_map(self) -> Dict[str, str]:
        """The named special tokens that are set (``bos_token``, ``eos_token``, ...), as strings;
        the extra special tokens are in :attr:`extra_special_tokens`."""
        return {k: str(v) for k, v in self._special.items() if v is not None}

    @property
    def all_special_tokens(self) -> List[str]:
        """Named and extra special tokens, each once, as strings."""
        out: List[str] = []
        for t in list(self._special.values()) + self._extra:
            if t is not None and str(t) not in out:
                out.append(str(t))
        return out

    @property
    def all_special_ids(self) -> List[int]:
        return self.convert_tokens_to_ids(self.all_special_tokens)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        base = name[:-4] if name.endswith("_ids") else name[:-3] if name.endswith("_id") else name
        special = d.get("_special", {})
        if base in special:
            token = special[base]
            if token is None:
                return None
            return str(token) if base == name else self.convert_tokens_to_ids(str(token))
        if base == "extra_special_tokens" and "_extra" in d:
            tokens = [str(t) for t in d["_extra"]]
            return tokens if base == name else self.convert_tokens_to_ids(tokens)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        base = name[:-4] if name.endswith("_ids") else name[:-3] if name.endswith("_id") else name
        if "_special" in d and (base in d["_special"] or base in SPECIAL_TOKENS_ATTRIBUTES):
            if base != name and value is not None:
                value = self.convert_ids_to_tokens(value)
            if value is not None and not isinstance(value, (str, AddedToken)):
                raise ValueError(f"Cannot set a non-string value as the {base}")
            self._special[base] = value
        elif base == "extra_special_tokens" and "_extra" in d:
            if base != name and isinstance(value, (list, tuple)):
                value = [self.convert_ids_to_tokens(v) for v in value]
            if value is not None and not isinstance(value, (list, tuple)):
                raise ValueError(f"extra_special_tokens must be a list or tuple, got {type(value)}")
            d["_extra"] = [] if value is None else list(value)
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

    @property
    def vocab(self) -> Dict[str, int]:
        return self.get_vocab()

    @property
    def added_tokens_decoder(self) -> Dict[int, AddedToken]:
        """id → :class:`~tokenkit.AddedToken` of every added token."""
        return self._tokenizer.get_added_tokens_decoder()

    @property
    def added_tokens_encoder(self) -> Dict[str, int]:
        """content → id of every added token, by id."""
        return self.get_added_vocab()

    def get_added_vocab(self) -> Dict[str, int]:
        """The added tokens (special or not) as content → id, in id order."""
        return {t.content: i for i, t in sorted(self._tokenizer.get_added_tokens_decoder().items())}

    def add_tokens(self, new_tokens: Union[str, AddedToken, Sequence[Union[str, AddedToken]]],
                   special_tokens: bool = False) -> int:
        """Adds tokens (str or :class:`~tokenkit.AddedToken`) that are not added tokens yet, at the
        end of the vocabulary (a token of the model's vocabulary keeps its id); returns how many
        ids are new. With ``special_tokens=True`` they are special (skipped by
        ``decode(skip_special_tokens=True)``, never normalized)."""
        if not new_tokens:
            return 0
        if not isinstance(new_tokens, (list, tuple)):
            new_tokens = [new_tokens]
        if special_tokens:
            return self._tokenizer.add_special_tokens(list(new_tokens))
        return self._tokenizer.add_tokens(list(new_tokens))

    def add_special_tokens(self, special_tokens_dict: Dict[str, Any], replace_extra_special_tokens: bool = True) -> int:
        """Sets named special tokens (``{"pad_token": "[PAD]", ...}``) and extra ones
        (``{"extra_special_tokens": [...]}``, or the older key ``additional_special_tokens``), adds
        those not in the vocabulary yet, and returns how many ids are new, as transformers 5.

        The extra special tokens replace the current list (``replace_extra_special_tokens=True``)
        or extend it; tokens dropped from the list stay in the vocabulary."""
        if not special_tokens_dict:
            return 0
        special_tokens_dict = dict(special_tokens_dict)
        if "additional_special_tokens" in special_tokens_dict and not special_tokens_dict.get("extra_special_tokens"):
            special_tokens_dict["extra_special_tokens"] = special_tokens_dict.pop("additional_special_tokens")
        allowed = set(self._special) | {"extra_special_tokens"}
        to_add: List[Any] = []
        for key, value in special_tokens_dict.items():
            if key not in allowed:
                raise ValueError(f"Key {key} is not a valid special token. Valid keys are: {allowed}")
            if key == "extra_special_tokens":
                if not isinstance(value, (list, tuple)) or not all(isinstance(t, (str, AddedToken)) for t in value):
                    raise ValueError(f"Tokens {value} for key {key} should all be str or AddedToken instances")
                current = self.extra_special_tokens
                new = [_special_added(t) for t in value if replace_extra_special_tokens or str(t) not in current]
                if replace_extra_special_tokens and new:
                    self._extra = list(new)
                else:
                    self._extra.extend(new)
                to_add.extend(new)
            else:
                if not isinstance(value, (str, AddedToken)):
                    raise ValueError(f"Token {value} for key {key} should be a str or an AddedToken instance")
                value = _special_added(value)
                self._special[key] = value
                to_add.append(value)
        return self.add_tokens(to_add, special_tokens=True)

    def get_special_tokens_mask(self, token_ids_0: List[int], token_ids_1: Optional[List[int]] = None,
                                already_has_special_tokens: bool = False) -> List[int]:
        """1 for each id that is a special token's, 0 otherwise, for ids that already hold
        special tokens (``already_has_special_tokens=True``; transformers' generic fast tokenizer
        implements only this case)."""
        if already_has_special_tokens:
            if token_ids_1 is not None:
                raise ValueError("You should not supply a second sequence if the provided sequence of ids is already "
                                 "formatted with special tokens for the model.")
            special = set(self.all_special_ids)
            return [1 if int(i) in special else 0 for i in token_ids_0]
        raise NotImplementedError(f"{type(self).__name__} does not implement get_special_tokens_mask for "
                                  "non-formatted sequences")

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        """How many special tokens the post-processor adds to one sequence (or a pair)."""
        return self._tokenizer.num_special_tokens_to_add(pair)

    def convert_tokens_to_ids(self, tokens: Union[str, Sequence[str]]) -> Union[Optional[int], List[Optional[int]]]:
        """Ids of tokens; an unknown token gives the unk id (None without an unk token)."""
        def one(t: str) -> Optional[int]:
            i = self._tokenizer.token_to_id(str(t))
            return i if i is not None else self.unk_token_id
        return one(tokens) if isinstance(tokens, (str, AddedToken)) else [one(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Union[int, Sequence[int]], skip_special_tokens: bool = False):
        """Tokens of ids (special ones dropped with ``skip_special_tokens``)."""
        if isinstance(ids, int):
            return self._tokenizer.id_to_token(ids)
        special = set(self.all_special_ids) if skip_special_tokens else set()
        return [self._tokenizer.id_to_token(int(i)) for i in ids if int(i) not in special]

    def convert_tokens_to_string(self, tokens: List[str]) -> str:
        """The text of tokens, through the decoder (joined by spaces without one)."""
        decoder = self._tokenizer.decoder
        return decoder.decode(tokens) if decoder is not None else " ".join(tokens)

    def tokenize(self, text: str, pair: Optional[str] = None, add_special_tokens: bool = False, **kwargs: Any) -> List[str]:
        """The tokens of ``text`` (and ``pair``), never padded nor truncated, whatever the
        tokenizer.json configures or an earlier call set (as transformers)."""
        return self._encode_plus(text, pair, add_special_tokens=add_special_tokens, **kwargs).tokens()

    def train_new_from_iterator(self, text_iterator: Iterable[Any], vocab_size: int, length: Optional[int] = None,
                                new_special_tokens: Optional[List[Union[str, AddedToken]]] = None,
                                special_tokens_map: Optional[Dict[str, str]] = None,
                                **kwargs: Any) -> "PreTrainedTokenizer":
        """A new tokenizer with this one's pipeline and special tokens, its model trained on
        ``text_iterator`` (strings or batches of strings) to ``vocab_size``, as transformers'
        ``train_new_from_iterator``: the added special tokens are the trainer's first tokens (the
        non-special added tokens too for Unigram), ``new_special_tokens`` are appended,
        ``special_tokens_map`` renames tokens, the post-processor's ids are updated, and
        ``kwargs`` go to the trainer (``min_frequency``, ``show_progress``, ...)."""
        from . import pre_tokenizers, trainers

        tokenizer_json = json.loads(self._tokenizer.to_str())
        added_tokens = tokenizer_json.pop("added_tokens")
        post_processor = tokenizer_json.pop("post_processor")
        model = tokenizer_json["model"]
        kind = model["type"]
        rename = special_tokens_map or {}
        unk_token = None
        if kind == "BPE":
            model["vocab"], model["merges"] = {}, []
        elif kind == "Unigram":
            if model.get("unk_id") is not None:
                unk_token = rename.get(model["vocab"][model["unk_id"]][0], model["vocab"][model["unk_id"]][0])
                model["unk_id"] = 0
                model["vocab"] = [[unk_token, 0.0]]
        elif kind in ("WordLevel", "WordPiece"):
            model["vocab"] = {}
        else:
            raise ValueError(f"This method does not support this type of tokenizer (found {kind}) only BPE, Unigram, "
                             "WordLevel and WordPiece.")
        if "unk_token" in model and model["unk_token"] in rename:
            model["unk_token"] = rename[model["unk_token"]]
        tokenizer = Tokenizer.from_str(json.dumps(tokenizer_json))

        special_tokens: List[Any] = []
        for t in added_tokens:
            special = t.pop("special", None)
            t.pop("id", None)
            if kind != "Unigram" and not special:
                continue
            content = t.pop("content")
            special_tokens.append(AddedToken(rename.get(content, content), **t))
        special_tokens.extend(new_special_tokens or [])
        if kind == "BPE":
            for key in ("continuing_subword_prefix", "end_of_word_suffix"):
                if key not in kwargs and model.get(key) is not None:
                    kwargs[key] = model[key]
        if kind == "Unigram" and unk_token is not None:
            kwargs["unk_token"] = unk_token
        pre = tokenizer_json.get("pre_tokenizer")
        if pre is not None and (pre["type"] == "ByteLevel" or (pre["type"] == "Sequence" and any(
                p["type"] == "ByteLevel" for p in pre.get("pretokenizers", [])))):
            kwargs["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
        trainer_class = {"BPE": trainers.BpeTrainer, "Unigram": trainers.UnigramTrainer,
                         "WordLevel": trainers.WordLevelTrainer, "WordPiece": trainers.WordPieceTrainer}[kind]
        trainer = trainer_class(vocab_size=vocab_size, special_tokens=special_tokens, **kwargs)
        tokenizer.train_from_iterator(text_iterator, length=length, trainer=trainer)

        if post_processor is not None:
            trained = json.loads(tokenizer.to_str())
            for entry in (post_processor.get("special_tokens") or {}).values():
                entry["tokens"] = [rename.get(t, t) for t in entry["tokens"]]
                entry["ids"] = [_trained_id(tokenizer, t) for t in entry["tokens"]]
            for key in ("cls", "sep"):
                if key in post_processor:
                    token = rename.get(post_processor[key][0], post_processor[key][0])
                    post_processor[key] = [token, _trained_id(tokenizer, token)]
            trained["post_processor"] = post_processor
            tokenizer = Tokenizer.from_str(json.dumps(trained))

        config = copy.deepcopy(self.init_kwargs)
        for name, value in self._special.items():
            if value is None:
                continue
            content = rename.get(str(value), str(value))
            if isinstance(value, AddedToken):
                config[name] = AddedToken(content, single_word=value.single_word, lstrip=value.lstrip,
                                          rstrip=value.rstrip, normalized=value.normalized, special=True)
            else:
                config[name] = content
        extra = list(self._extra) + list(new_special_tokens or [])
        if extra:
            config["extra_special_tokens"] = [str(t) for t in extra]
        config.pop("additional_special_tokens", None)
        return type(self)(tokenizer, **config)

    # ---- encoding ---------------------------------------------------------------------------

    def _strategies(self, padding: Any, truncation: Any, max_length: Optional[int], pad_to_multiple_of: Optional[int]):
        padding = getattr(padding, "value", padding)
        truncation = getattr(truncation, "value", truncation)
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
                    pad_to_multiple_of: Optional[int], padding_side: Optional[str],
                    split_special_tokens: bool) -> Tokenizer:
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
        if tok.encode_special_tokens != split_special_tokens:
            tok.encode_special_tokens = split_special_tokens
        return tok

    def __call__(self, text: Any = None, text_pair: Any = None, text_target: Any = None, text_pair_target: Any = None,
                 add_special_tokens: bool = True, padding: Any = False, truncation: Any = None,
                 max_length: Optional[int] = None, stride: int = 0, is_split_into_words: bool = False,
                 pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None,
                 return_tensors: Optional[str] = None, return_token_type_ids: Optional[bool] = None,
                 return_attention_mask: Optional[bool] = None, return_overflowing_tokens: bool = False,
                 return_special_tokens_mask: bool = False, return_offsets_mapping: bool = False,
                 return_length: bool = False, verbose: bool = True, tokenizer_kwargs: Optional[Dict[str, Any]] = None,
                 **kwargs: Any) -> BatchEncoding:
        """Encodes one text, a pair, or a batch, with transformers' padding/truncation arguments.
        ``text_target`` (and ``text_pair_target``) are encoded the same way (``max_target_length``
        instead of ``max_length`` when given): their ids are the ``labels`` of the result, or the
        result itself when ``text`` is None."""
        options = dict(add_special_tokens=add_special_tokens, stride=stride, is_split_into_words=is_split_into_words,
                       pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side, return_tensors=return_tensors,
                       return_token_type_ids=return_token_type_ids, return_attention_mask=return_attention_mask,
                       return_overflowing_tokens=return_overflowing_tokens,
                       return_special_tokens_mask=return_special_tokens_mask,
                       return_offsets_mapping=return_offsets_mapping, return_length=return_length,
                       split_special_tokens=kwargs.pop("split_special_tokens", self.split_special_tokens))
        max_target_length = kwargs.pop("max_target_length", None)
        options.update(tokenizer_kwargs or {})
        options.update(kwargs)
        if text is None and text_target is None:
            raise ValueError("You need to specify either `text` or `text_target`.")
        padding, truncation, max_length = self._strategies(options.pop("padding", padding),
                                                           options.pop("truncation", truncation),
                                                           options.pop("max_length", max_length),
                                                           options.get("pad_to_multiple_of"))
        encodings = targets = None
        if text is not None:
            encodings = self._encode_plus(text, text_pair, padding=padding, truncation=truncation,
                                          max_length=max_length, **options)
        if text_target is not None:
            targets = self._encode_plus(text_target, text_pair_target, padding=padding, truncation=truncation,
                                        max_length=max_target_length if max_target_length is not None else max_length,
                                        **options)
        if targets is None:
            return encodings
        if encodings is None:
            return targets
        encodings["labels"] = targets["input_ids"]
        return encodings

    def _encode_plus(self, text: Any, text_pair: Any = None, add_special_tokens: bool = True,
                     padding: str = "do_not_pad", truncation: str = "do_not_truncate",
                     max_length: Optional[int] = None, stride: int = 0, is_split_into_words: bool = False,
                     pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None,
                     return_tensors: Optional[str] = None, return_token_type_ids: Optional[bool] = None,
                     return_attention_mask: Optional[bool] = None, return_overflowing_tokens: bool = False,
                     return_special_tokens_mask: bool = False, return_offsets_mapping: bool = False,
                     return_length: bool = False, split_special_tokens: Optional[bool] = None,
                     **kwargs: Any) -> BatchEncoding:
        """One encoding pass with resolved strategies (``padding``/``truncation`` as strategy names)."""
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
        if split_special_tokens is None:
            split_special_tokens = self.split_special_tokens
        tok = self._configured(padding, truncation, max_length, stride, pad_to_multiple_of, padding_side,
                               split_special_tokens)
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

    def pad(self, encoded_inputs: Any, padding: Any = True, max_length: Optional[int] = None,
            pad_to_multiple_of: Optional[int] = None, padding_side: Optional[str] = None,
            return_attention_mask: Optional[bool] = None, return_tensors: Optional[str] = None,
            verbose: bool = True) -> BatchEncoding:
        """Pads already encoded inputs (a dict of lists, a batch of them, a list of dicts, or a
        :class:`BatchEncoding`; lists, numpy arrays or torch tensors) to the longest row or to
        ``max_length``, as transformers' ``pad``: ``input_ids`` get the pad id, ``attention_mask`` 0,
        ``token_type_ids`` the pad type id, ``special_tokens_mask`` 1; other keys are kept."""
        import numpy as np

        if isinstance(encoded_inputs, (list, tuple)) and encoded_inputs and isinstance(encoded_inputs[0], dict):
            encoded_inputs = {key: [example[key] for example in encoded_inputs] for key in encoded_inputs[0]}
        else:
            encoded_inputs = dict(encoded_inputs)
        preserved_mask = None
        mask = encoded_inputs.get("attention_mask")
        if isinstance(mask, list) and mask and getattr(mask[0], "ndim", 0) > 1:
            preserved_mask = encoded_inputs.pop("attention_mask")
        main = self.model_input_names[0]
        if main not in encoded_inputs:
            raise ValueError("You should supply an encoding or a list of encodings to this method that includes "
                             f"{main}, but you provided {list(encoded_inputs.keys())}")
        required = encoded_inputs[main]
        if required is None or (hasattr(required, "__len__") and len(required) == 0):
            if return_attention_mask:
                encoded_inputs["attention_mask"] = []
            return encoded_inputs
        first = required[0]
        if isinstance(first, (list, tuple)):
            for item in required:
                if len(item) != 0:
                    first = item[0]
                    break
        if not isinstance(first, (int, list, tuple)):
            if type(first).__module__.startswith("torch"):
                return_tensors = "pt" if return_tensors is None else return_tensors
            elif isinstance(first, np.ndarray):
                return_tensors = "np" if return_tensors is None else return_tensors
            else:
                raise ValueError(f"type of {first} unknown: {type(first)}. Should be one of a python, numpy, or "
                                 "pytorch object.")
            encoded_inputs = {key: _to_py(value) for key, value in encoded_inputs.items()}
        strategy, _, max_length = self._strategies(padding, None, max_length, None)
        required = encoded_inputs[main]
        if required and not isinstance(required[0], (list, tuple)):
            return BatchEncoding(self._pad(encoded_inputs, max_length, strategy, pad_to_multiple_of, padding_side,
                                           return_attention_mask), tensor_type=return_tensors)
        batch_size = len(required)
        if any(len(v) != batch_size for v in encoded_inputs.values()):
            raise ValueError("Some items in the output dictionary have a different batch size than others.")
        if strategy == "longest":
            max_length = max(len(row) for row in required)
            strategy = "max_length"
        out: Dict[str, list] = {}
        for i in range(batch_size):
            row = self._pad({k: v[i] for k, v in encoded_inputs.items()}, max_length, strategy, pad_to_multiple_of,
                            padding_side, return_attention_mask)
            for key, value in row.items():
                out.setdefault(key, []).append(value)
        if preserved_mask is not None:
            sample = preserved_mask[0]
            if type(sample).__module__.startswith("torch"):
                import torch

                out["attention_mask"] = torch.stack(preserved_mask)
            else:
                out["attention_mask"] = np.stack(preserved_mask) if isinstance(sample, np.ndarray) else np.array(preserved_mask)
        return BatchEncoding(out, tensor_type=return_tensors)

    def _pad(self, inputs: Dict[str, Any], max_length: Optional[int], strategy: str,
             pad_to_multiple_of: Optional[int], padding_side: Optional[str],
             return_attention_mask: Optional[bool]) -> Dict[str, Any]:
        """Pads one row (a dict of lists) as transformers' ``_pad``."""
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names
        main = self.model_input_names[0]
        required = list(inputs[main])
        if strategy == "longest":
            max_length = len(required)
        if max_length is not None and pad_to_multiple_of is not None and max_length % pad_to_multiple_of != 0:
            max_length = (max_length // pad_to_multiple_of + 1) * pad_to_multiple_of
        if return_attention_mask and "attention_mask" not in inputs:
            inputs["attention_mask"] = [1] * len(required)
        if strategy != "do_not_pad" and len(required) != max_length:
            n = max_length - len(required)
            side = padding_side if padding_side is not None else self.padding_side
            if side not in ("right", "left"):
                raise ValueError(f"Invalid padding strategy:{side}")
            fills = [(main, self.pad_token_id), ("token_type_ids", self.pad_token_type_id), ("special_tokens_mask", 1)]
            if return_attention_mask:
                fills.append(("attention_mask", 0))
            for key, fill in fills:
                if key in inputs:
                    value = list(inputs[key])
                    inputs[key] = value + [fill] * n if side == "right" else [fill] * n + value
        return inputs

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


# Named special tokens and inputs of the tokenizer classes whose vocabulary files
# `_load_vocab_files` converts (transformers 5's defaults for each class).
_BERT = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
         "mask_token": "[MASK]"}
_CLASS_DEFAULTS: Dict[str, Dict[str, Any]] = {
    "BertTokenizer": {**_BERT, "model_input_names": ["input_ids", "token_type_ids", "attention_mask"]},
    "DistilBertTokenizer": dict(_BERT),
    "GPT2Tokenizer": {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"},
    "AlbertTokenizer": {"bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "<unk>", "sep_token": "[SEP]",
                        "pad_token": "<pad>", "cls_token": "[CLS]", "mask_token": "[MASK]"},
    "LlamaTokenizer": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "padding_side": "left"},
    "T5Tokenizer": {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
}
# Post-processor templates of the classes that have fixed ones; the others add
# `bos_token`/`eos_token` as `add_bos_token`/`add_eos_token` say (transformers' update_post_processor).
_CLASS_TEMPLATES: Dict[str, Tuple[str, str]] = {
    "BertTokenizer": ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    "DistilBertTokenizer": ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    "AlbertTokenizer": ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    "T5Tokenizer": ("$A </s>", "$A </s> $B </s>"),
}
_SENTENCEPIECE_FILES = ("spiece.model", "tokenizer.model", "sentencepiece.bpe.model")
_SP_UNKNOWN, _SP_CONTROL, _SP_USER_DEFINED = 2, 3, 4  # sentencepiece's piece types


def _bos_eos_template(config: Dict[str, Any]) -> Tuple[str, str]:
    """transformers' ``update_post_processor``: bos/eos around each sequence as asked."""
    bos, eos = _token_content(config.get("bos_token")), _token_content(config.get("eos_token"))
    add_bos = bool(config.get("add_bos_token", False)) and bos is not None
    add_eos = bool(config.get("add_eos_token", False)) and eos is not None
    single = f"{bos + ':0 ' if add_bos else ''}$A:0{' ' + eos + ':0' if add_eos else ''}"
    pair = f"{single}{' ' + bos + ':1' if add_bos else ''} $B:1{' ' + eos + ':1' if add_eos else ''}"
    return single, pair


def _llama_layout(doc: Dict[str, Any], config: Dict[str, Any]) -> Dict[str, Any]:
    """transformers 5's layout of a converted SentencePiece BPE model (``LlamaTokenizer``): no
    normalizer, ``Metaspace(prepend_scheme="first", split=False)``, no unk token in the model,
    and the merges ordered by the id of the merged piece (its ``generate_merges`` without
    scores), which decides which merge wins."""
    model = doc["model"]
    vocab = model["vocab"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    merges.sort(key=lambda m: (vocab[m[0] + m[1]], len(m[0]), len(m[1]), vocab[m[0]], vocab[m[1]]))
    model["merges"] = [list(m) for m in merges]
    model["unk_token"] = None
    doc["normalizer"] = None
    scheme = "first" if config.get("add_prefix_space", True) else "never"
    doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": False}
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    return doc


def _unigram_layout(doc: Dict[str, Any], pieces: List[Tuple[str, float, int]], cls: str,
                    config: Dict[str, Any]) -> Dict[str, Any]:
    """transformers 5's ``AlbertTokenizer`` / ``T5Tokenizer`` over a SentencePiece Unigram model:
    the pieces and scores, the model's charsmap (``Precompiled``; ALBERT first maps ``` `` ``` and
    ``''`` to ``"``, strips accents unless ``keep_accents`` and lowercases with
    ``do_lower_case``), then ``WhitespaceSplit`` and ``Metaspace`` (``▁`` before every word)."""
    charsmap = [n for n in _flat_normalizers(doc.get("normalizer")) if n.get("type") == "Precompiled"]
    steps: List[Dict[str, Any]] = []
    if cls == "AlbertTokenizer":
        steps += [{"type": "Replace", "pattern": {"String": q}, "content": '"'} for q in ("``", "''")]
        if not config.get("keep_accents", False):
            steps += [{"type": "NFKD"}, {"type": "StripAccents"}]
        if config.get("do_lower_case", True):
            steps.append({"type": "Lowercase"})
    steps += charsmap
    scheme = "always" if config.get("add_prefix_space", True) else "never"
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": True}
    unk_id = next((i for i, (_, _, kind) in enumerate(pieces) if kind == _SP_UNKNOWN), None)
    if cls == "T5Tokenizer":
        unk_id = 2  # transformers' T5Tokenizer fixes it (T5's own models have <unk> there)
    vocab = [[p, score] for p, score, _ in pieces] + [[t, 0.0] for t in reversed(_t5_sentinels(cls, config))]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": {"type": "Sequence", "normalizers": steps},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]},
            "post_processor": None, "decoder": metaspace,
            "model": {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": False}}


def _t5_sentinels(cls: Optional[str], config: Dict[str, Any]) -> List[str]:
    """T5's ``<extra_id_N>`` tokens (``extra_ids``, 100 by default), appended to the vocabulary
    in reverse order, for ``T5Tokenizer``."""
    if cls != "T5Tokenizer":
        return []
    return [f"<extra_id_{i}>" for i in range(int(config.get("extra_ids", 100)))]


def _flat_normalizers(normalizer: Optional[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The steps of a normalizer (a Sequence's children, or itself)."""
    if normalizer is None:
        return []
    if normalizer.get("type") == "Sequence":
        return [n for child in normalizer["normalizers"] for n in _flat_normalizers(child)]
    return [normalizer]


def _load_vocab_files(root: Path, config: Dict[str, Any]) -> Tuple[Tokenizer, Dict[str, Any]]:
    """The tokenizer of a directory without tokenizer.json, from the files transformers'
    converters read, and the special tokens and inputs of its class (``tokenizer_class`` in the
    config, which transformers needs to load such a directory at all; tokenkit guesses the class
    from the files without it):

    - ``vocab.txt``: BERT's pipeline (``BertTokenizer``, or ``DistilBertTokenizer``;
      ``do_lower_case``, ``strip_accents``, ``tokenize_chinese_chars``);
    - ``vocab.json`` + ``merges.txt``: GPT-2's byte-level BPE (``GPT2Tokenizer``; ``add_prefix_space``);
    - ``spiece.model`` / ``tokenizer.model`` / ``sentencepiece.bpe.model``: a BPE model in the
      layout of transformers 5's ``LlamaTokenizer``, a Unigram model in that of its
      ``AlbertTokenizer`` (``[CLS] ... [SEP]``) or ``T5Tokenizer`` (``... </s>``) when the config
      names one (transformers' ids, which differ from sentencepiece's on some texts), else as
      sentencepiece itself runs it; the control and user-defined pieces are extra special tokens
      (as transformers makes them), ``<unk>``/``<s>``/``</s>`` unk/bos/eos without a known class.

    Classes without a fixed template add bos/eos as ``add_bos_token``/``add_eos_token`` ask."""
    from . import normalizers, pre_tokenizers, processors
    from ._tokenkit import sentencepiece_pieces, sentencepiece_to_json

    cls = str(config.get("tokenizer_class") or "").replace("Fast", "") or None
    model = None
    if (root / "vocab.txt").is_file():
        cls = cls if cls in ("BertTokenizer", "DistilBertTokenizer") else "BertTokenizer"
        tok = Tokenizer.from_file(str(root / "vocab.txt"))
        tok.normalizer = normalizers.BertNormalizer(
            clean_text=True, handle_chinese_chars=config.get("tokenize_chinese_chars", True),
            strip_accents=config.get("strip_accents"), lowercase=config.get("do_lower_case", True))
    elif (root / "vocab.json").is_file() and (root / "merges.txt").is_file():
        cls = "GPT2Tokenizer"
        tok = Tokenizer.from_file(str(root / "vocab.json"))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=bool(config.get("add_prefix_space", False)))
    else:
        model = next((root / f for f in _SENTENCEPIECE_FILES if (root / f).is_file()), None)
        if model is None:
            raise OSError(f"{root}: no tokenizer.json, vocab.txt, vocab.json + merges.txt or "
                          f"{' / '.join(_SENTENCEPIECE_FILES)} in this directory")
        converted = json.loads(sentencepiece_to_json(str(model)))
        pieces = sentencepiece_pieces(str(model))
        if converted["model"]["type"] == "BPE":
            tok = Tokenizer.from_str(json.dumps(_llama_layout(converted, config)))
        elif cls in ("AlbertTokenizer", "T5Tokenizer"):
            tok = Tokenizer.from_str(json.dumps(_unigram_layout(converted, pieces, cls, config)))
        else:
            tok = Tokenizer.from_file(str(model))  # as sentencepiece runs it
        if cls not in _CLASS_DEFAULTS:
            cls = None
    defaults = copy.deepcopy(_CLASS_DEFAULTS.get(cls, {}))
    if model is not None:
        # transformers makes the control (special) and user-defined (not special) pieces extra
        # special tokens, added tokens that are never normalized.
        defaults["extra_special_tokens"] = [AddedToken(p, normalized=False, special=kind == _SP_CONTROL)
                                            for p, _, kind in pieces if kind in (_SP_CONTROL, _SP_USER_DEFINED)]
        defaults["extra_special_tokens"] += _t5_sentinels(cls, config)
    if cls is None:
        for name, token in (("unk_token", "<unk>"), ("bos_token", "<s>"), ("eos_token", "</s>")):
            if tok.token_to_id(token) is not None:
                defaults[name] = token
    template = _CLASS_TEMPLATES.get(cls) or _bos_eos_template({**defaults, **config})
    names = {w.split(":")[0] for w in " ".join(template).split() if not w.startswith("$")}
    ids = [(t, tok.token_to_id(t)) for t in sorted(names)]
    missing = [t for t, i in ids if i is None]
    if missing:
        raise OSError(f"{root}: the vocabulary has no {', '.join(missing)}, which the {cls or 'default'} template needs")
    tok.post_processor = processors.TemplateProcessing(single=template[0], pair=template[1], special_tokens=ids)
    return tok, defaults


class AutoTokenizer:
    """``AutoTokenizer.from_pretrained(directory)``: transformers' entry point, for local
    directories (see :meth:`PreTrainedTokenizer.from_pretrained`)."""

    @staticmethod
    def from_pretrained(path: Union[str, os.PathLike], **kwargs: Any) -> PreTrainedTokenizer:
        return PreTrainedTokenizer.from_pretrained(path, **kwargs)
