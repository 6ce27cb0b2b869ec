"""Models: turn a piece into tokens (BPE, WordPiece, WordLevel, Unigram), with the class names
and constructor arguments of ``tokenizers.models``."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence as Seq, Tuple, Union

from . import _tokenkit
from ._base import Component, Token, make_from_json

__all__ = ["Model", "BPE", "Unigram", "WordLevel", "WordPiece"]


class Model(Component):
    """Base class of all models (not instantiable; use one of the subclasses)."""

    _kind = "model"

    def tokenize(self, sequence: str) -> List[Token]:
        """Tokenizes one piece with the model alone.

        Args:
            sequence (:obj:`str`): The piece.

        Returns:
            :obj:`List[Token]`: The tokens, with byte offsets into ``sequence``.
        """
        return [Token(i, v, o) for (i, v, o) in self._rust().tokenize(sequence)]

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token`` in the model's vocabulary, or :obj:`None`."""
        return self._rust().token_to_id(token)

    def id_to_token(self, id: int) -> Optional[str]:
        """The token of ``id`` in the model's vocabulary, or :obj:`None`."""
        return self._rust().id_to_token(id)

    def get_vocab_size(self) -> int:
        """The size of the model's vocabulary."""
        return self._rust().get_vocab_size()

    def save(self, folder: str, prefix: Optional[str] = None, name: Optional[str] = None) -> List[str]:
        """Writes the model's vocabulary files into ``folder``.

        Args:
            folder (:obj:`str`): An existing directory.
            prefix (:obj:`str`, `optional`): Prefix of the file names.

        Returns:
            :obj:`List[str]`: The paths written.
        """
        prefix = prefix or name
        return self._save(folder, f"{prefix}-" if prefix else "")

    def _save(self, folder: str, prefix: str) -> List[str]:
        raise NotImplementedError(f"{type(self).__name__}.save")

    def __getattr__(self, name: str) -> Any:
        if name == "vocab":  # HF does not expose the vocabulary as an attribute
            raise AttributeError(name)
        return super().__getattr__(name)


def _write(files: List[Tuple[str, str]]) -> List[str]:
    """Writes ``(path, text)`` files as one set, atomically (temporary names, then renamed once
    all are complete), and returns the paths."""
    _tokenkit.write_files([(p, t.encode("utf-8")) for p, t in files])
    return [p for p, _ in files]


def _json(value: Any) -> str:
    """JSON as HF's models write it (serde_json: compact, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _vocab_json(vocab: Dict[str, int]) -> str:
    return _json(dict(_sorted_vocab(vocab)))


def _sorted_vocab(vocab: Dict[str, int]) -> List[Tuple[str, int]]:
    return sorted(vocab.items(), key=lambda kv: kv[1])


def _read_json_vocab(path: str) -> Dict[str, int]:
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    if not isinstance(vocab, dict):
        raise Exception(f"{path}: expected a JSON object mapping tokens to ids")
    return vocab


class BPE(Model):
    """Byte-Pair Encoding.

    Args:
        vocab (:obj:`Dict[str, int]`, `optional`): token → id.
        merges (:obj:`List[Tuple[str, str]]`, `optional`): The merges, by priority.
        cache_capacity (:obj:`int`, `optional`): Accepted for compatibility (not serialized).
        dropout (:obj:`float`, `optional`): BPE dropout, between 0 and 1.
        unk_token (:obj:`str`, `optional`): The unknown token.
        continuing_subword_prefix (:obj:`str`, `optional`): Prefix of non-initial subwords.
        end_of_word_suffix (:obj:`str`, `optional`): Suffix of word-final subwords.
        fuse_unk (:obj:`bool`, defaults to :obj:`False`): Fuse consecutive unknown tokens.
        byte_fallback (:obj:`bool`, defaults to :obj:`False`): Use ``<0xXX>`` byte tokens instead of unk.
        ignore_merges (:obj:`bool`, defaults to :obj:`False`): Look whole words up in the
            vocabulary before applying merges.
    """

    def __init__(self, vocab: Optional[Union[Dict[str, int], str]] = None,
                 merges: Optional[Union[Seq[Tuple[str, str]], str]] = None, cache_capacity: Optional[int] = None,
                 dropout: Optional[float] = None, unk_token: Optional[str] = None,
                 continuing_subword_prefix: Optional[str] = None, end_of_word_suffix: Optional[str] = None,
                 fuse_unk: Optional[bool] = None, byte_fallback: Optional[bool] = False,
                 ignore_merges: Optional[bool] = False) -> None:
        if (vocab is None) != (merges is None):
            raise Exception("`vocab` and `merges` must be both specified")
        if isinstance(vocab, str) and isinstance(merges, str):
            vocab, merges = BPE.read_file(vocab, merges)
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise Exception("Error while initializing BPE: dropout should be between 0 and 1, inclusive")
        vocab = dict(vocab or {})
        merges = [list(m.split(" ", 1)) if isinstance(m, str) else list(m) for m in (merges or [])]
        self._set({
            "type": "BPE", "dropout": dropout, "unk_token": unk_token,
            "continuing_subword_prefix": continuing_subword_prefix, "end_of_word_suffix": end_of_word_suffix,
            "fuse_unk": bool(fuse_unk), "byte_fallback": bool(byte_fallback), "ignore_merges": bool(ignore_merges),
            "vocab": dict(_sorted_vocab(vocab)), "merges": merges,
        })

    @staticmethod
    def read_file(vocab: str, merges: str) -> Tuple[Dict[str, int], List[Tuple[str, str]]]:
        """Reads a ``vocab.json`` and a ``merges.txt``.

        Returns:
            :obj:`Tuple[Dict[str, int], List[Tuple[str, str]]]`: The vocabulary and the merges.
        """
        v = _read_json_vocab(vocab)
        out: List[Tuple[str, str]] = []
        with open(merges, encoding="utf-8") as f:
            for n, line in enumerate(f.read().split("\n")):
                if line.startswith("#version") or not line:
                    continue
                parts = line.split(" ")
                if len(parts) != 2:
                    raise Exception(f"{merges}: line {n + 1}: a merge must be two tokens separated by a space")
                out.append((parts[0], parts[1]))
        return v, out

    @classmethod
    def from_file(cls, vocab: str, merges: str, **kwargs: Any) -> "BPE":
        """A BPE model from a ``vocab.json`` and a ``merges.txt`` (other arguments as the constructor)."""
        v, m = cls.read_file(vocab, merges)
        return cls(v, m, **kwargs)

    def _save(self, folder: str, prefix: str) -> List[str]:
        merges = "".join((m if isinstance(m, str) else " ".join(m)) + "\n" for m in self._json["merges"])
        return _write([(os.path.join(folder, f"{prefix}vocab.json"), _vocab_json(self._json["vocab"])),
                       (os.path.join(folder, f"{prefix}merges.txt"), "#version: 0.2\n" + merges)])


class WordPiece(Model):
    """WordPiece (BERT): greedy longest-match-first subwords.

    Args:
        vocab (:obj:`Dict[str, int]`, `optional`): token → id.
        unk_token (:obj:`str`, defaults to ``"[UNK]"``): The unknown token.
        max_input_chars_per_word (:obj:`int`, defaults to 100): Longer words become ``unk_token``.
        continuing_subword_prefix (:obj:`str`, defaults to ``"##"``): Prefix of non-initial subwords.
    """

    def __init__(self, vocab: Optional[Union[Dict[str, int], str]] = None, unk_token: str = "[UNK]",
                 max_input_chars_per_word: int = 100, continuing_subword_prefix: str = "##") -> None:
        if isinstance(vocab, str):
            vocab = WordPiece.read_file(vocab)
        self._set({"type": "WordPiece", "unk_token": unk_token, "continuing_subword_prefix": continuing_subword_prefix,
                   "max_input_chars_per_word": max_input_chars_per_word,
                   "vocab": dict(_sorted_vocab(dict(vocab or {})))})

    @staticmethod
    def read_file(vocab: str) -> Dict[str, int]:
        """Reads a ``vocab.txt`` (one token per line; the id is the line number)."""
        with open(vocab, encoding="utf-8") as f:
            return {line.rstrip("\r\n"): i for i, line in enumerate(f)}

    @classmethod
    def from_file(cls, vocab: str, **kwargs: Any) -> "WordPiece":
        """A WordPiece model from a ``vocab.txt`` (other arguments as the constructor)."""
        return cls(cls.read_file(vocab), **kwargs)

    def _save(self, folder: str, prefix: str) -> List[str]:
        text = "".join(tok + "\n" for tok, _ in _sorted_vocab(self._json["vocab"]))
        return _write([(os.path.join(folder, f"{prefix}vocab.txt"), text)])


class WordLevel(Model):
    """Word-level model: each piece is looked up whole.

    Args:
        vocab (:obj:`Dict[str, int]`, `optional`): token → id.
        unk_token (:obj:`str`, `optional`, defaults to ``"<unk>"``): The unknown token.
    """

    def __init__(self, vocab: Optional[Union[Dict[str, int], str]] = None, unk_token: Optional[str] = None) -> None:
        if isinstance(vocab, str):
            vocab = WordLevel.read_file(vocab)
        self._set({"type": "WordLevel", "vocab": dict(_sorted_vocab(dict(vocab or {}))),
                   "unk_token": "<unk>" if unk_token is None else unk_token})

    @staticmethod
    def read_file(vocab: str) -> Dict[str, int]:
        """Reads a ``vocab.json``."""
        return _read_json_vocab(vocab)

    @classmethod
    def from_file(cls, vocab: str, unk_token: Optional[str] = None) -> "WordLevel":
        """A WordLevel model from a ``vocab.json``."""
        return cls(cls.read_file(vocab), unk_token=unk_token)

    def _save(self, folder: str, prefix: str) -> List[str]:
        return _write([(os.path.join(folder, f"{prefix}vocab.json"), _vocab_json(self._json["vocab"]))])


class Unigram(Model):
    """Unigram language model (SentencePiece).

    Args:
        vocab (:obj:`List[Tuple[str, float]]`, `optional`): Tokens with their log-probabilities;
            the id is the position.
        unk_id (:obj:`int`, `optional`): Id of the unknown token.
        byte_fallback (:obj:`bool`, `optional`): Use ``<0xXX>`` byte tokens instead of unk.
        alpha, nbest_size: Sampling parameters, accepted for compatibility (not serialized).
    """

    def __init__(self, vocab: Optional[Seq[Tuple[str, float]]] = None, unk_id: Optional[int] = None,
                 byte_fallback: Optional[bool] = None, alpha: Optional[float] = None,
                 nbest_size: Optional[int] = None) -> None:
        if vocab is None:
            self._set({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]], "byte_fallback": False})
            return
        self._set({"type": "Unigram", "unk_id": unk_id, "vocab": [[t, float(s)] for t, s in vocab],
                   "byte_fallback": bool(byte_fallback)})

    def _save(self, folder: str, prefix: str) -> List[str]:
        return _write([(os.path.join(folder, f"{prefix}unigram.json"), json.dumps(self._json, ensure_ascii=False, indent=2))])


_CLASSES = {"BPE": BPE, "WordPiece": WordPiece, "WordLevel": WordLevel, "Unigram": Unigram}
_from_json = make_from_json(Model, _CLASSES)
