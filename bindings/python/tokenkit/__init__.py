"""tokenkit: fast tokenizers with the HF ``tokenizers`` Python API.

``import tokenkit as tokenizers`` is meant to work for code that loads, encodes and decodes with
``tokenizer.json`` files: :class:`Tokenizer`, :class:`Encoding`, :class:`AddedToken` and the
component modules :mod:`~tokenkit.normalizers`, :mod:`~tokenkit.pre_tokenizers`,
:mod:`~tokenkit.models`, :mod:`~tokenkit.processors`, :mod:`~tokenkit.decoders`.
Offsets reported to Python are character offsets, as HF reports them.
"""
from enum import Enum
from typing import List, Tuple, Union

from ._tokenkit import AddedToken, Encoding, Tokenizer, WordCounts, __version__
from ._base import Regex, Token
from . import decoders, models, normalizers, pre_tokenizers, processors, trainers
from . import implementations
from .implementations import (BertWordPieceTokenizer, ByteLevelBPETokenizer, CharBPETokenizer,
                              SentencePieceBPETokenizer, SentencePieceUnigramTokenizer)
from .pretrained import AutoTokenizer, BatchEncoding, PreTrainedTokenizer

Offsets = Tuple[int, int]
TextInputSequence = str
PreTokenizedInputSequence = Union[List[str], Tuple[str]]
TextEncodeInput = Union[TextInputSequence, Tuple[TextInputSequence, TextInputSequence], List[TextInputSequence]]
PreTokenizedEncodeInput = Union[
    PreTokenizedInputSequence,
    Tuple[PreTokenizedInputSequence, PreTokenizedInputSequence],
    List[PreTokenizedInputSequence],
]
InputSequence = Union[TextInputSequence, PreTokenizedInputSequence]
EncodeInput = Union[TextEncodeInput, PreTokenizedEncodeInput]


class OffsetReferential(Enum):
    ORIGINAL = "original"
    NORMALIZED = "normalized"


class OffsetType(Enum):
    BYTE = "byte"
    CHAR = "char"


class SplitDelimiterBehavior(Enum):
    REMOVED = "removed"
    ISOLATED = "isolated"
    MERGED_WITH_PREVIOUS = "merged_with_previous"
    MERGED_WITH_NEXT = "merged_with_next"
    CONTIGUOUS = "contiguous"


__all__ = [
    "AddedToken", "Encoding", "Tokenizer", "WordCounts", "Regex", "Token", "decoders", "models", "normalizers", "pre_tokenizers",
    "processors", "trainers", "Offsets", "TextInputSequence", "PreTokenizedInputSequence", "TextEncodeInput",
    "PreTokenizedEncodeInput", "InputSequence", "EncodeInput", "OffsetReferential", "OffsetType",
    "SplitDelimiterBehavior", "AutoTokenizer", "BatchEncoding", "PreTrainedTokenizer", "__version__",
    "implementations", "BertWordPieceTokenizer", "ByteLevelBPETokenizer", "CharBPETokenizer",
    "SentencePieceBPETokenizer", "SentencePieceUnigramTokenizer",
]
