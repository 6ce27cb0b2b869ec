"""Normalizers: ``str → str`` transformations applied before pre-tokenization, with the
class names and constructor arguments of ``tokenizers.normalizers``."""
from __future__ import annotations

import base64
from typing import Any, List, Optional, Union

from ._base import Component, Regex, children_json, make_from_json, pattern_json

__all__ = [
    "Normalizer", "BertNormalizer", "ByteLevel", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "Nmt",
    "Precompiled", "Prepend", "Replace", "Sequence", "Strip", "StripAccents",
]


class Normalizer(Component):
    """Base class of all normalizers (not instantiable; use one of the subclasses)."""

    _kind = "normalizer"

    def normalize_str(self, sequence: str) -> str:
        """Normalizes ``sequence`` and returns the result (alignments are not returned).

        Args:
            sequence (:obj:`str`): The text to normalize.

        Returns:
            :obj:`str`: The normalized text.
        """
        return self._rust().normalize_str(sequence)


class BertNormalizer(Normalizer):
    """BERT's normalizer: cleans control characters, pads CJK characters with spaces, strips
    accents and lowercases.

    Args:
        clean_text (:obj:`bool`, defaults to :obj:`True`): Remove control characters and turn
            all whitespace into the classic space.
        handle_chinese_chars (:obj:`bool`, defaults to :obj:`True`): Put spaces around CJK characters.
        strip_accents (:obj:`bool`, `optional`): Strip accents; :obj:`None` means "as ``lowercase``".
        lowercase (:obj:`bool`, defaults to :obj:`True`): Lowercase.
    """

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True,
                 strip_accents: Optional[bool] = None, lowercase: bool = True) -> None:
        self._set({"type": "BertNormalizer", "clean_text": clean_text, "handle_chinese_chars": handle_chinese_chars,
                   "strip_accents": strip_accents, "lowercase": lowercase})


def _simple(name: str, doc: str):
    def __init__(self) -> None:
        self._set({"type": name})

    return type(name, (Normalizer,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


ByteLevel = _simple("ByteLevel", "Maps every byte of the input to a printable character (GPT-2's byte-level alphabet).")
Lowercase = _simple("Lowercase", "Lowercases (full Unicode lowercasing).")
NFC = _simple("NFC", "Unicode NFC normalization.")
NFD = _simple("NFD", "Unicode NFD normalization.")
NFKC = _simple("NFKC", "Unicode NFKC normalization.")
NFKD = _simple("NFKD", "Unicode NFKD normalization.")
Nmt = _simple("Nmt", "SentencePiece's NMT normalization (control characters removed, special spaces mapped).")
StripAccents = _simple("StripAccents", "Removes combining marks (use after NFD/NFKD to strip accents).")


class Strip(Normalizer):
    """Removes whitespace on the left and/or right.

    Args:
        left (:obj:`bool`, defaults to :obj:`True`): Strip the start.
        right (:obj:`bool`, defaults to :obj:`True`): Strip the end.
    """

    _aliases = {"left": "strip_left", "right": "strip_right"}

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self._set({"type": "Strip", "strip_left": left, "strip_right": right})


class Precompiled(Normalizer):
    """SentencePiece's precompiled normalizer (the ``precompiled_charsmap`` of a ``.model`` file).

    Args:
        precompiled_charsmap (:obj:`bytes`): The compiled character map.
    """

    def __init__(self, precompiled_charsmap: Union[bytes, List[int]]) -> None:
        data = bytes(precompiled_charsmap)
        self._set({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(data).decode("ascii")})


class Prepend(Normalizer):
    """Prepends ``prepend`` to a non-empty input.

    Args:
        prepend (:obj:`str`, defaults to ``"▁"``): The text to prepend.
    """

    def __init__(self, prepend: str = "▁") -> None:
        self._set({"type": "Prepend", "prepend": prepend})


class Replace(Normalizer):
    """Replaces every match of ``pattern`` with ``content``.

    Args:
        pattern (:obj:`str` or :class:`~tokenkit.Regex`): What to replace.
        content (:obj:`str`): The replacement.
    """

    def __init__(self, pattern: Union[str, Regex], content: str) -> None:
        self._set({"type": "Replace", "pattern": pattern_json(pattern), "content": content})


class Sequence(Normalizer):
    """Applies several normalizers in order.

    Args:
        normalizers (:obj:`List[Normalizer]`): The normalizers.
    """

    _children_key = "normalizers"

    def __init__(self, normalizers: List[Normalizer]) -> None:
        self._set({"type": "Sequence", "normalizers": children_json(normalizers, "normalizer")})


_CLASSES = {c.__name__: c for c in [BertNormalizer, ByteLevel, Lowercase, NFC, NFD, NFKC, NFKD, Nmt, Precompiled,
                                    Prepend, Replace, Sequence, Strip, StripAccents]}
_from_json = make_from_json(Normalizer, _CLASSES)


def unicode_normalizer_from_str(normalizer: str) -> Normalizer:
    """The Unicode normalizer named ``normalizer`` (``"nfc"``, ``"nfd"``, ``"nfkc"``, ``"nfkd"``)."""
    table = {"nfc": NFC, "nfd": NFD, "nfkc": NFKC, "nfkd": NFKD}
    if normalizer not in table:
        raise ValueError(f"{normalizer} is not an allowed normalizer. Allowed: {', '.join(table)}")
    return table[normalizer]()
