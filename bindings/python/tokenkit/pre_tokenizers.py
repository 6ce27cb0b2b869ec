"""Pre-tokenizers: split the normalized text into pieces (words) for the model, with the class
names and constructor arguments of ``tokenizers.pre_tokenizers``."""
from __future__ import annotations

from typing import List, Tuple, Union

from . import _tokenkit
from ._base import Component, Regex, children_json, make_from_json, pattern_json

__all__ = [
    "PreTokenizer", "BertPreTokenizer", "ByteLevel", "CharDelimiterSplit", "Digits", "FixedLength", "Metaspace",
    "Punctuation", "Sequence", "Split", "UnicodeScripts", "Whitespace", "WhitespaceSplit",
]

_BEHAVIORS = {
    "removed": "Removed",
    "isolated": "Isolated",
    "merged_with_previous": "MergedWithPrevious",
    "merged_with_next": "MergedWithNext",
    "contiguous": "Contiguous",
}
_PREPEND_SCHEMES = ("always", "never", "first")


def _behavior(behavior: str) -> str:
    if behavior in _BEHAVIORS.values():
        return behavior
    try:
        return _BEHAVIORS[behavior]
    except (KeyError, TypeError):
        raise ValueError(
            f"Wrong value for SplitDelimiterBehavior, expected one of: `removed, isolated, merged_with_previous, "
            f"merged_with_next, contiguous`, got {behavior!r}"
        ) from None


class PreTokenizer(Component):
    """Base class of all pre-tokenizers (not instantiable; use one of the subclasses)."""

    _kind = "pre_tokenizer"

    def pre_tokenize_str(self, sequence: str) -> List[Tuple[str, Tuple[int, int]]]:
        """Splits ``sequence`` as the pipeline would (without normalization).

        Args:
            sequence (:obj:`str`): The text to split.

        Returns:
            :obj:`List[Tuple[str, Offsets]]`: Each piece with its character offsets in ``sequence``.
        """
        return self._rust().pre_tokenize_str(sequence)


def _simple(name: str, doc: str):
    def __init__(self) -> None:
        self._set({"type": name})

    return type(name, (PreTokenizer,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


BertPreTokenizer = _simple("BertPreTokenizer", "Splits on whitespace and isolates each punctuation character (BERT).")
UnicodeScripts = _simple("UnicodeScripts", "Splits where the Unicode script changes (SentencePiece-like).")
Whitespace = _simple("Whitespace", r"Splits with the regex ``\w+|[^\w\s]+``.")
WhitespaceSplit = _simple("WhitespaceSplit", "Splits on whitespace.")


class ByteLevel(PreTokenizer):
    """GPT-2's byte-level pre-tokenizer: splits with the GPT-2 regex and maps bytes to printable
    characters.

    Args:
        add_prefix_space (:obj:`bool`, defaults to :obj:`True`): Add a space before the first word
            if there is none.
        trim_offsets (:obj:`bool`, defaults to :obj:`True`): Kept for the post-processor/decoder.
        use_regex (:obj:`bool`, defaults to :obj:`True`): Split with the GPT-2 regex first.
    """

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True, **_kwargs) -> None:
        self._set({"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": trim_offsets,
                   "use_regex": use_regex})

    @staticmethod
    def alphabet() -> List[str]:
        """The 256 characters bytes are mapped to.

        Returns:
            :obj:`List[str]`: The alphabet.
        """
        return _tokenkit.byte_level_alphabet()


class CharDelimiterSplit(PreTokenizer):
    """Splits on a character (which is removed).

    Args:
        delimiter (:obj:`str`): A single character.
    """

    def __init__(self, delimiter: str) -> None:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError("expected a string of length 1")
        self._set({"type": "CharDelimiterSplit", "delimiter": delimiter})


class Digits(PreTokenizer):
    """Splits digits from other characters.

    Args:
        individual_digits (:obj:`bool`, defaults to :obj:`False`): One piece per digit.
    """

    def __init__(self, individual_digits: bool = False) -> None:
        self._set({"type": "Digits", "individual_digits": individual_digits})


class FixedLength(PreTokenizer):
    """Splits into pieces of ``length`` characters.

    Args:
        length (:obj:`int`, defaults to 5): Characters per piece.
    """

    def __init__(self, length: int = 5) -> None:
        self._set({"type": "FixedLength", "length": length})


class Metaspace(PreTokenizer):
    """SentencePiece's whitespace handling: spaces become ``replacement`` and split the text.

    Args:
        replacement (:obj:`str`, defaults to ``"▁"``): One character replacing spaces.
        prepend_scheme (:obj:`str`, defaults to ``"always"``): ``"always"``, ``"never"`` or
            ``"first"`` (only before the first piece): when to prepend ``replacement``.
        split (:obj:`bool`, defaults to :obj:`True`): Split on ``replacement``.
    """

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ValueError("expected a string of length 1")
        if prepend_scheme not in _PREPEND_SCHEMES:
            raise ValueError(f"{prepend_scheme} is an unknown variant, should be one of ['first', 'never', 'always']")
        self._set({"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split})


class Punctuation(PreTokenizer):
    """Splits on punctuation characters.

    Args:
        behavior (:obj:`str`, defaults to ``"isolated"``): What to do with the punctuation:
            ``removed``, ``isolated``, ``merged_with_previous``, ``merged_with_next``, ``contiguous``.
    """

    def __init__(self, behavior: str = "isolated") -> None:
        self._set({"type": "Punctuation", "behavior": _behavior(behavior)})


class Split(PreTokenizer):
    """Splits on a pattern.

    Args:
        pattern (:obj:`str` or :class:`~tokenkit.Regex`): The delimiter.
        behavior (:obj:`str`): ``removed``, ``isolated``, ``merged_with_previous``,
            ``merged_with_next`` or ``contiguous``.
        invert (:obj:`bool`, defaults to :obj:`False`): Keep the matches as pieces instead.
    """

    def __init__(self, pattern: Union[str, Regex], behavior: str, invert: bool = False) -> None:
        self._set({"type": "Split", "pattern": pattern_json(pattern), "behavior": _behavior(behavior), "invert": invert})


class Sequence(PreTokenizer):
    """Applies several pre-tokenizers in order.

    Args:
        pretokenizers (:obj:`List[PreTokenizer]`): The pre-tokenizers.
    """

    _children_key = "pretokenizers"

    def __init__(self, pretokenizers: List[PreTokenizer]) -> None:
        self._set({"type": "Sequence", "pretokenizers": children_json(pretokenizers, "pre_tokenizer")})


_CLASSES = {c.__name__: c for c in [BertPreTokenizer, ByteLevel, CharDelimiterSplit, Digits, FixedLength, Metaspace,
                                    Punctuation, Sequence, Split, UnicodeScripts, Whitespace, WhitespaceSplit]}
_from_json = make_from_json(PreTokenizer, _CLASSES)
