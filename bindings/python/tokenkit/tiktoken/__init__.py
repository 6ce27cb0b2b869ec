"""The tiktoken API over tokenkit: ``from tokenkit import tiktoken`` in place of ``import tiktoken``.

``get_encoding(name)`` reads the rank file of a named encoding (r50k_base/gpt2, p50k_base,
p50k_edit, cl100k_base, o200k_base, o200k_harmony, llama3, llama4, qwen2, qwen3.5, whisper,
whisper-gpt2) from a local data directory:
``$TOKENKIT_TIKTOKEN_DIR``, then ``~/.cache/tokenkit/tiktoken``, then ``./.fixtures/tiktoken``.
Llama-3's model is looked for as ``llama3.tiktoken``, then as Meta's ``tokenizer.model``, in each
of them, then in ``./.fixtures/registry/llama3/``. Nothing is downloaded; the error names every
path looked at. :mod:`tokenkit.tiktoken.load` reads rank files as ``tiktoken.load`` does. ``Encoding(name, pat_str=, mergeable_ranks=, special_tokens=)`` builds one
from its parts, as in tiktoken.

Encodings give the same ids, bytes and errors as tiktoken (``ValueError`` for a disallowed
special token, ``KeyError`` for an id with no token). Batches run in parallel in Rust with the
GIL released; ``num_threads`` is accepted and the process's thread pool is used. tokenkit adds
:meth:`Encoding.count`, which counts tokens without building the id list.
"""
from __future__ import annotations

import functools
import threading
from typing import AbstractSet, Any, Collection, Dict, List, Literal, Optional, Sequence, Tuple, Union

from .._tokenkit import TiktokenCore, tiktoken_encoding_names
from . import load

__all__ = ["Encoding", "get_encoding", "list_encoding_names", "encoding_for_model", "encoding_name_for_model", "load"]

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str]]

ENCODING_NAMES = tuple(tiktoken_encoding_names())


def _fix_surrogates(text: str) -> str:
    """tiktoken's fallback for strs holding lone surrogates: replace them with U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _policy(special: Union[str, Collection[str]]) -> Union[str, frozenset]:
    return special if special == "all" else frozenset(special)


class Encoding:
    """A tiktoken encoding: a split pattern, byte-level BPE ranks (the ids) and special tokens.

    Args:
        name: The encoding's name.
        pat_str: The split regex (tiktoken's syntax).
        mergeable_ranks: Token bytes → rank; the ranks are the merge priorities and the ids.
        special_tokens: Special token → id.
        explicit_n_vocab: When given, the number of tokens must be exactly this.
    """

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: Dict[bytes, int],
                 special_tokens: Dict[str, int], explicit_n_vocab: Optional[int] = None) -> None:
        self._init(TiktokenCore(name, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab), registered=False)
        self._mergeable_ranks_given = mergeable_ranks

    def _init(self, core: TiktokenCore, registered: bool) -> None:
        self._core = core
        self.name = core.name
        self._pat_str = core.pat_str
        self._special_tokens = core.special_tokens
        self.max_token_value = core.max_token_value
        self._registered = registered
        # The per-line calls go straight to the core, which takes tiktoken's keywords with its
        # defaults and replaces lone surrogates itself: no Python frame, about a sixth of a short
        # call's cost (and no frozenset per call). Not where a subclass overrides the method.
        for method in ("encode_ordinary", "encode", "count"):
            if getattr(type(self), method) is getattr(Encoding, method):
                setattr(self, method, getattr(core, method))

    @classmethod
    def _from_core(cls, core: TiktokenCore, registered: bool) -> "Encoding":
        enc = cls.__new__(cls)
        enc._init(core, registered)
        return enc

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ---- encoding ---------------------------------------------------------------------------

    def _call(self, method: str, text: str, *args):
        try:
            return getattr(self._core, method)(text, *args)
        except UnicodeEncodeError:
            return getattr(self._core, method)(_fix_surrogates(text), *args)

    def encode_ordinary(self, text: str) -> List[int]:
        """The ids of ``text``, special tokens treated as ordinary text."""
        # Instances call the core's method directly (see `_init`); this is what they do.
        return self._core.encode_ordinary(text)

    def encode(self, text: str, *, allowed_special: AllowedSpecial = set(),  # noqa: B006
               disallowed_special: DisallowedSpecial = "all") -> List[int]:
        """The ids of ``text``. Special tokens in ``allowed_special`` (or ``"all"``) become their
        ids; a special token in ``disallowed_special`` (by default every special token not
        allowed) raises ``ValueError``; the others are ordinary text."""
        # Instances call the core's method directly (see `_init`); this is what they do.
        return self._core.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_to_numpy(self, text: str, *, allowed_special: AllowedSpecial = set(),  # noqa: B006
                        disallowed_special: DisallowedSpecial = "all"):
        """:meth:`encode` as a 1-D ``numpy.uint32`` array."""
        return self._core.encode_to_numpy(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def count(self, text: str, *, allowed_special: AllowedSpecial = set(),  # noqa: B006
              disallowed_special: DisallowedSpecial = "all") -> int:
        """``len(encode(text, ...))`` without building the id list (tokenkit extension)."""
        # Instances call the core's method directly (see `_init`); this is what they do.
        return self._core.count(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_ordinary_batch(self, text: List[str], *, num_threads: int = 8) -> List[List[int]]:
        """:meth:`encode_ordinary` of each text, in parallel."""
        try:
            return self._core.encode_ordinary_batch(list(text))
        except UnicodeEncodeError:
            return self._core.encode_ordinary_batch([_fix_surrogates(t) for t in text])

    def encode_ordinary_batch_to_arrow(self, text: List[str]) -> Any:
        """:meth:`encode_ordinary_batch` as a ``pyarrow.ListArray`` of uint32 (no Python object per
        token), for dataframe engines."""
        try:
            return self._core.encode_ordinary_batch_to_arrow(list(text))
        except UnicodeEncodeError:
            return self._core.encode_ordinary_batch_to_arrow([_fix_surrogates(t) for t in text])

    def encode_batch(self, text: List[str], *, num_threads: int = 8,
                     allowed_special: AllowedSpecial = set(),  # noqa: B006
                     disallowed_special: DisallowedSpecial = "all") -> List[List[int]]:
        """:meth:`encode` of each text, in parallel."""
        allowed, disallowed = _policy(allowed_special), _policy(disallowed_special)
        try:
            return self._core.encode_batch(list(text), allowed, disallowed)
        except UnicodeEncodeError:
            return self._core.encode_batch([_fix_surrogates(t) for t in text], allowed, disallowed)

    def encode_with_unstable(self, text: str, *, allowed_special: AllowedSpecial = set(),  # noqa: B006
                             disallowed_special: DisallowedSpecial = "all") -> Tuple[List[int], List[List[int]]]:
        """The stable ids of ``text`` and every id sequence a continuation of ``text`` could
        start with (tiktoken's ``encode_with_unstable``; the completions come sorted, tiktoken
        gives them in hash order). Special tokens follow :meth:`encode`."""
        return self._call("encode_with_unstable", text, _policy(allowed_special), _policy(disallowed_special))

    def _encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> List[int]:
        """BPE of ``text_or_bytes`` as one piece: no regex split, no special tokens."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core.encode_single_piece(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> List[int]:
        """:meth:`encode_ordinary` (tiktoken's pure-Python reference path gives the same ids)."""
        return self.encode_ordinary(text)

    def _encode_bytes(self, text: bytes) -> List[int]:
        """Ordinary encoding of bytes that may end inside a UTF-8 sequence."""
        return self._core.encode_bytes(bytes(text))

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the one token (special tokens included) whose text is ``text_or_bytes``;
        ``KeyError`` when there is none."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core.encode_single_token(text_or_bytes)

    # ---- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The concatenated bytes of the tokens."""
        return self._core.decode_bytes(list(tokens))

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of the tokens; bytes that are not UTF-8 are handled by ``errors`` (as in
        ``bytes.decode``; the default replaces them, so decoding is lossy)."""
        return self._core.decode_bytes(list(tokens)).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included); ``KeyError`` for an unknown id."""
        return self._core.decode_single_token_bytes(token)

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each token."""
        return [self._core.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """The text and, per token, the index of the char where it starts (a token that starts
        inside a char starts at that char). Raises when the bytes are not valid UTF-8."""
        parts = self.decode_tokens_bytes(tokens)
        offsets, n_chars = [], 0
        for b in parts:
            starts_inside = bool(b) and 0x80 <= b[0] < 0xC0
            offsets.append(max(0, n_chars - starts_inside))
            n_chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> List[str]:
        """:meth:`decode` of each token list."""
        return [b.decode("utf-8", errors=errors) for b in self._core.decode_bytes_batch([list(t) for t in batch])]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> List[bytes]:
        """:meth:`decode_bytes` of each token list, in parallel."""
        return self._core.decode_bytes_batch([list(t) for t in batch])

    # ---- vocabulary -------------------------------------------------------------------------

    def token_byte_values(self) -> List[bytes]:
        """The bytes of every mergeable token, sorted (as tiktoken returns them)."""
        return sorted(self._core.token_byte_values())

    @property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        given = self.__dict__.get("_mergeable_ranks_given")
        if given is not None:
            return given
        ranks = {}
        for rank in range(self.max_token_value + 1):
            if not self._core.is_special_token(rank):
                try:
                    ranks[self._core.decode_single_token_bytes(rank)] = rank
                except KeyError:
                    pass
        self._mergeable_ranks_given = ranks
        return ranks

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set:
        """The special tokens' strings."""
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token."""
        return self._core.is_special_token(token)

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1``."""
        return self.max_token_value + 1

    # ---- pickling: registered encodings by name, others by their parts ----------------------

    def __getstate__(self) -> object:
        if self._registered:
            return self.name
        return {"name": self.name, "pat_str": self._pat_str, "mergeable_ranks": self._mergeable_ranks,
                "special_tokens": self._special_tokens}

    def __setstate__(self, value: object) -> None:
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        self.__init__(**value)


_lock = threading.Lock()
_ENCODINGS: Dict[str, Encoding] = {}


def get_encoding(encoding_name: str) -> Encoding:
    """The named encoding, its rank file read from the local data directory (cached)."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    with _lock:
        enc = _ENCODINGS.get(encoding_name)
        if enc is None:
            try:
                core = TiktokenCore.get(encoding_name)
            except Exception as e:
                if encoding_name not in ENCODING_NAMES:
                    raise ValueError(f"Unknown encoding {encoding_name}.\n{e}") from None
                raise
            enc = _ENCODINGS[encoding_name] = Encoding._from_core(core, registered=True)
        return enc


def list_encoding_names() -> List[str]:
    """The encodings :func:`get_encoding` can load: the named ones whose rank file is found in
    the data directories (or where the set-up puts package files, ``./.fixtures/registry/``)."""
    return tiktoken_encoding_names(available_only=True)


# Which encoding OpenAI models use (the same table as tiktoken.model).
MODEL_PREFIX_TO_ENCODING: Dict[str, str] = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base", "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony", "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base", "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}
MODEL_TO_ENCODING: Dict[str, str] = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base", "gpt-5": "o200k_base", "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base", "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base", "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base", "davinci-002": "cl100k_base", "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base", "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base", "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base", "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base", "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base",
    "ada": "r50k_base", "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base", "code-cushman-001": "p50k_base", "davinci-codex": "p50k_base",
    "cushman-codex": "p50k_base", "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding an OpenAI model uses; ``KeyError`` for an unknown model."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. "
                   "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect.") from None


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding an OpenAI model uses."""
    return get_encoding(encoding_name_for_model(model_name))
