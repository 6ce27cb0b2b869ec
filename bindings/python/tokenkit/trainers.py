"""Trainers: learn a model's vocabulary from a corpus (BPE, WordPiece, WordLevel, Unigram), with
the class names, constructor arguments and defaults of ``tokenizers.trainers``.

A trainer is handed to :meth:`tokenkit.Tokenizer.train` or
:meth:`tokenkit.Tokenizer.train_from_iterator`; the tokenizer's normalizer and pre-tokenizer are
applied to the corpus, and its model is replaced by the trained one. Training runs in Rust with
the GIL released; the result does not depend on the number of threads.
"""
from __future__ import annotations

import copy
import json
from typing import Any, ClassVar, Dict, Iterable, List, Optional, Union

from ._tokenkit import AddedToken

__all__ = ["Trainer", "BpeTrainer", "WordPieceTrainer", "WordLevelTrainer", "UnigramTrainer"]

SpecialTokens = List[Union[str, AddedToken]]


def _special_json(tokens: Optional[Iterable[Union[str, AddedToken]]]) -> List[Dict[str, Any]]:
    out = []
    for t in tokens or []:
        if isinstance(t, str):
            t = AddedToken(t, special=True)
        if not isinstance(t, AddedToken):
            raise TypeError(f"special tokens must be str or AddedToken, got {type(t).__name__}")
        out.append({"content": t.content, "single_word": t.single_word, "lstrip": t.lstrip, "rstrip": t.rstrip,
                    "normalized": t.normalized, "special": True})
    return out


def _alphabet_json(chars: Optional[Iterable[str]]) -> List[str]:
    """HF keeps the first char of each string, as a set."""
    seen: List[str] = []
    for s in chars or []:
        if not isinstance(s, str):
            raise TypeError(f"initial_alphabet must hold str, got {type(s).__name__}")
        if s and s[0] not in seen:
            seen.append(s[0])
    return seen


class Trainer:
    """Base class of the trainers (not instantiable). Options are attributes
    (``trainer.vocab_size = 8000``); :meth:`__getstate__` gives HF's JSON form."""

    _tag: ClassVar[str] = ""
    _options: Dict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("use one of BpeTrainer, WordPieceTrainer, WordLevelTrainer, UnigramTrainer")

    def _init(self, options: Dict[str, Any]) -> None:
        object.__setattr__(self, "_options", options)

    def _inner(self) -> Dict[str, Any]:
        return self._options

    def _tk_json(self) -> str:
        """HF's JSON form, read by the Rust side."""
        return json.dumps({self._tag: self._inner()}, ensure_ascii=False)

    def __getstate__(self) -> bytes:
        return self._tk_json().encode()

    def __setstate__(self, state: bytes) -> None:
        obj = json.loads(state)
        object.__setattr__(self, "_options", obj[self._tag])

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("_options")
        if inner is None or name.startswith("_"):
            raise AttributeError(name)
        inner = self._inner()
        if name not in inner:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "special_tokens":
            return [AddedToken(t["content"], single_word=t["single_word"], lstrip=t["lstrip"], rstrip=t["rstrip"],
                               normalized=t["normalized"], special=True) for t in inner[name]]
        return copy.deepcopy(inner[name])

    def __setattr__(self, name: str, value: Any) -> None:
        inner = self._inner()
        if name not in inner:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "special_tokens":
            value = _special_json(value)
        elif name == "initial_alphabet":
            value = _alphabet_json(value)
        inner[name] = value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._tk_json()})"


class BpeTrainer(Trainer):
    """Trains a :class:`~tokenkit.models.BPE` model (byte-level BPE with
    ``initial_alphabet=pre_tokenizers.ByteLevel.alphabet()``).

    Args:
        vocab_size: Final vocabulary size, alphabet and special tokens included.
        min_frequency: Minimum count of a pair to be merged.
        show_progress: Progress bars on standard error while training, one per stage, as HF
            draws them (indicatif; shown only when standard error is a terminal).
        special_tokens: Tokens given the first ids, in order.
        limit_alphabet: Keep at most this many initial chars (the most frequent).
        initial_alphabet: Chars always in the alphabet (the first char of each string).
        continuing_subword_prefix: Prefix of non-initial subwords.
        end_of_word_suffix: Suffix of word-final subwords.
        max_token_length: Longest token, in chars.
    """

    _tag = "BpeTrainer"

    def __init__(self, vocab_size: int = 30000, min_frequency: int = 0, show_progress: bool = True,
                 special_tokens: Optional[SpecialTokens] = None, limit_alphabet: Optional[int] = None,
                 initial_alphabet: Optional[List[str]] = None, continuing_subword_prefix: Optional[str] = None,
                 end_of_word_suffix: Optional[str] = None, max_token_length: Optional[int] = None) -> None:
        self._init({"min_frequency": min_frequency, "vocab_size": vocab_size, "show_progress": show_progress,
                    "special_tokens": _special_json(special_tokens), "limit_alphabet": limit_alphabet,
                    "initial_alphabet": _alphabet_json(initial_alphabet),
                    "continuing_subword_prefix": continuing_subword_prefix, "end_of_word_suffix": end_of_word_suffix,
                    "max_token_length": max_token_length})


class WordPieceTrainer(Trainer):
    """Trains a :class:`~tokenkit.models.WordPiece` model (HF's way: BPE merges with the ``##``
    prefix). Arguments as :class:`BpeTrainer`, with ``continuing_subword_prefix="##"``."""

    _tag = "WordPieceTrainer"

    def __init__(self, vocab_size: int = 30000, min_frequency: int = 0, show_progress: bool = True,
                 special_tokens: Optional[SpecialTokens] = None, limit_alphabet: Optional[int] = None,
                 initial_alphabet: Optional[List[str]] = None, continuing_subword_prefix: str = "##",
                 end_of_word_suffix: Optional[str] = None) -> None:
        self._init({"bpe_trainer": {
            "min_frequency": min_frequency, "vocab_size": vocab_size, "show_progress": show_progress,
            "special_tokens": _special_json(special_tokens), "limit_alphabet": limit_alphabet,
            "initial_alphabet": _alphabet_json(initial_alphabet), "continuing_subword_prefix": continuing_subword_prefix,
            "end_of_word_suffix": end_of_word_suffix, "max_token_length": None}})

    def _inner(self) -> Dict[str, Any]:
        return self._options["bpe_trainer"]

    def _tk_json(self) -> str:
        return json.dumps({self._tag: self._options}, ensure_ascii=False)


class WordLevelTrainer(Trainer):
    """Trains a :class:`~tokenkit.models.WordLevel` model: the most frequent words.

    Args:
        vocab_size: Final vocabulary size, special tokens included.
        min_frequency: Minimum count of a word to be kept.
        show_progress: Progress bars on standard error (see :class:`BpeTrainer`).
        special_tokens: Tokens given the first ids, in order.
    """

    _tag = "WordLevelTrainer"

    def __init__(self, vocab_size: int = 30000, min_frequency: int = 0, show_progress: bool = True,
                 special_tokens: Optional[SpecialTokens] = None) -> None:
        self._init({"min_frequency": min_frequency, "vocab_size": vocab_size, "show_progress": show_progress,
                    "special_tokens": _special_json(special_tokens)})


class UnigramTrainer(Trainer):
    """Trains a :class:`~tokenkit.models.Unigram` model (EM over the lattice, then pruning).

    Args:
        vocab_size: Final vocabulary size, special tokens included.
        show_progress: Progress bars on standard error (see :class:`BpeTrainer`).
        special_tokens: Tokens given the first ids, in order.
        initial_alphabet: Chars always in the vocabulary.
        shrinking_factor: Fraction of the pieces kept by each pruning.
        unk_token: The unknown token.
        max_piece_length: Longest piece, in chars.
        n_sub_iterations: EM iterations between two prunings.
    """

    _tag = "UnigramTrainer"

    def __init__(self, vocab_size: int = 8000, show_progress: bool = True,
                 special_tokens: Optional[SpecialTokens] = None, initial_alphabet: Optional[List[str]] = None,
                 shrinking_factor: float = 0.75, unk_token: Optional[str] = None, max_piece_length: int = 16,
                 n_sub_iterations: int = 2) -> None:
        self._init({"show_progress": show_progress, "vocab_size": vocab_size, "n_sub_iterations": n_sub_iterations,
                    "shrinking_factor": shrinking_factor, "special_tokens": _special_json(special_tokens),
                    "initial_alphabet": _alphabet_json(initial_alphabet), "unk_token": unk_token,
                    "max_piece_length": max_piece_length, "seed_size": 1000000})
