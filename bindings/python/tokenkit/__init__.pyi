"""tokenkit: fast tokenizers with the HF ``tokenizers`` Python API.

Offsets reported to Python are character (Unicode code point) offsets into the input, exactly
as HF tokenizers reports them, except in :meth:`Tokenizer.encode_batch_fast` (UTF-8 bytes).
"""
from enum import Enum

import numpy
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import decoders as decoders
from . import models as models
from . import normalizers as normalizers
from . import pre_tokenizers as pre_tokenizers
from . import processors as processors
from . import trainers as trainers
from . import implementations as implementations
from .implementations import BertWordPieceTokenizer as BertWordPieceTokenizer
from .implementations import ByteLevelBPETokenizer as ByteLevelBPETokenizer
from .implementations import CharBPETokenizer as CharBPETokenizer
from .implementations import SentencePieceBPETokenizer as SentencePieceBPETokenizer
from .implementations import SentencePieceUnigramTokenizer as SentencePieceUnigramTokenizer
from .pretrained import AutoTokenizer as AutoTokenizer
from .pretrained import BatchEncoding as BatchEncoding
from .pretrained import PreTrainedTokenizer as PreTrainedTokenizer
from .trainers import Trainer
from ._base import Regex as Regex
from ._base import Token as Token
from .decoders import Decoder
from .models import Model
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer
from .processors import PostProcessor

__version__: str

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

class AddedToken:
    """A token added on top of the model's vocabulary, cut out of the input before normalization.

    Args:
        content (:obj:`str`): The text of the token.
        single_word (:obj:`bool`, defaults to :obj:`False`): Only match a whole word
            (no word character on either side).
        lstrip (:obj:`bool`, defaults to :obj:`False`): Swallow the whitespace on its left.
        rstrip (:obj:`bool`, defaults to :obj:`False`): Swallow the whitespace on its right.
        normalized (:obj:`bool`, defaults to ``not special``): Match against the normalized
            text rather than the raw input.
        special (:obj:`bool`, defaults to :obj:`False`): A special token (skipped by
            ``decode(skip_special_tokens=True)``).
    """

    def __init__(
        self,
        content: Optional[str] = None,
        *,
        single_word: bool = False,
        lstrip: bool = False,
        rstrip: bool = False,
        normalized: Optional[bool] = None,
        special: bool = False,
    ) -> None: ...
    @property
    def content(self) -> str:
        """The text of the token."""
    @content.setter
    def content(self, value: str) -> None: ...
    @property
    def single_word(self) -> bool:
        """Whether it only matches a whole word."""
    @property
    def lstrip(self) -> bool:
        """Whether it swallows the whitespace on its left."""
    @property
    def rstrip(self) -> bool:
        """Whether it swallows the whitespace on its right."""
    @property
    def normalized(self) -> bool:
        """Whether it is matched against the normalized text."""
    @property
    def special(self) -> bool:
        """Whether it is a special token."""
    @special.setter
    def special(self, value: bool) -> None: ...
    def __getstate__(self) -> Dict[str, Any]:
        """All fields as a dict (pickle)."""
    def __setstate__(self, state: Dict[str, Any]) -> None:
        """Restores the fields from :meth:`__getstate__`'s dict."""
    def __eq__(self, other: object) -> bool:
        """Equal when every field is equal."""
    def __hash__(self) -> int:
        """Hash of the content."""

class Encoding:
    """The result of encoding one input (a sequence or a pair).

    Token-level lists all have one entry per token; offsets are character offsets into the
    sequence the token comes from.
    """

    def __init__(self) -> None:
        """An empty encoding (used by pickle)."""
    def __len__(self) -> int:
        """Number of tokens."""
    def __getstate__(self) -> str:
        """The encoding as a JSON string (pickle)."""
    def __setstate__(self, state: str) -> None:
        """Restores an encoding from :meth:`__getstate__`."""
    @staticmethod
    def merge(encodings: Sequence["Encoding"], growing_offsets: bool = True) -> "Encoding":
        """Concatenates encodings.

        Args:
            encodings (:obj:`List[Encoding]`): The encodings to merge.
            growing_offsets (:obj:`bool`, defaults to :obj:`True`): Shift the offsets of each
                encoding to continue after the previous one.
        """
    @property
    def n_sequences(self) -> int:
        """Number of sequences in the encoding (1, or 2 for a pair)."""
    def set_sequence_id(self, sequence_id: int) -> None:
        """Marks every token as belonging to sequence ``sequence_id``."""
    @property
    def ids(self) -> List[int]:
        """Token ids."""
    @property
    def tokens(self) -> List[str]:
        """Token strings."""
    @property
    def words(self) -> List[Optional[int]]:
        """Word index of each token (deprecated alias of :attr:`word_ids`)."""
    @property
    def word_ids(self) -> List[Optional[int]]:
        """Word index of each token in its sequence (:obj:`None` for special tokens)."""
    @property
    def sequence_ids(self) -> List[Optional[int]]:
        """Sequence index of each token (:obj:`None` for added special tokens)."""
    @property
    def type_ids(self) -> List[int]:
        """Type (segment) id of each token."""
    @property
    def offsets(self) -> List[Tuple[int, int]]:
        """``(start, end)`` character offsets of each token in its sequence."""
    @property
    def special_tokens_mask(self) -> List[int]:
        """1 for special tokens (added by the post-processor, or padding), else 0."""
    @property
    def attention_mask(self) -> List[int]:
        """1 for real tokens, 0 for padding."""
    @property
    def overflowing(self) -> List["Encoding"]:
        """The parts cut off by truncation, each an encoding of its own."""
    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> Optional[Tuple[int, int]]:
        """Token range ``(start, end)`` of a word of sequence ``sequence_index``."""
    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> Optional[Tuple[int, int]]:
        """Character offsets of a word of sequence ``sequence_index``."""
    def token_to_sequence(self, token_index: int) -> Optional[int]:
        """The sequence a token belongs to."""
    def token_to_chars(self, token_index: int) -> Optional[Tuple[int, int]]:
        """Character offsets of a token in its sequence."""
    def token_to_word(self, token_index: int) -> Optional[int]:
        """The word a token belongs to, in its sequence."""
    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        """The token containing character ``char_pos`` of sequence ``sequence_index``."""
    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        """The word containing character ``char_pos`` of sequence ``sequence_index``."""
    def pad(
        self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0, pad_token: str = "[PAD]"
    ) -> None:
        """Pads in place to ``length`` tokens.

        Args:
            length (:obj:`int`): Target length.
            direction (:obj:`str`, defaults to ``"right"``): ``"left"`` or ``"right"``.
            pad_id (:obj:`int`): Id of the padding token.
            pad_type_id (:obj:`int`): Type id of the padding token.
            pad_token (:obj:`str`): The padding token.
        """
    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Truncates in place to ``max_length`` tokens; what is cut goes to :attr:`overflowing`
        in windows overlapping by ``stride`` tokens.

        Args:
            max_length (:obj:`int`): Maximum number of tokens.
            stride (:obj:`int`, defaults to 0): Overlap between consecutive parts.
            direction (:obj:`str`, defaults to ``"right"``): Which end to cut.
        """

class WordCounts:
    """Word (pre-token) counts: each distinct word and how many times it was seen, and the
    normalizer and pre-tokenizer that cut them when a tokenizer counted them.

    ``WordCounts(pairs, tokenizer=None)`` takes a dict or ``(word, count)`` pairs (equal words add
    up), recording ``tokenizer``'s cutting if given. ``a + b`` adds (counts cut differently are
    an error); ``==`` compares words and counts. Pickles compactly; :meth:`save` writes the
    count file ``tokenkit train --from-counts`` reads.
    """
    def __init__(self, pairs: Optional[Union[Dict[str, int], Iterable[Tuple[str, int]]]] = None,
                 tokenizer: Optional["Tokenizer"] = None) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, word: str) -> bool: ...
    def __getitem__(self, word: str) -> int: ...
    def __add__(self, other: "WordCounts") -> "WordCounts": ...
    def __iadd__(self, other: "WordCounts") -> "WordCounts": ...
    def get(self, word: str, default: Optional[int] = None) -> Optional[int]: ...
    def items(self) -> List[Tuple[str, int]]:
        """``(word, count)`` pairs, in no particular order."""
    def keys(self) -> List[str]: ...
    def update(self, other: Union["WordCounts", Dict[str, int], Iterable[Tuple[str, int]]]) -> None:
        """Adds ``other`` into these counts."""
    @property
    def total(self) -> int:
        """The sum of the counts."""
    @property
    def sequences(self) -> int:
        """Sequences counted (0 for counts given as pairs)."""
    @property
    def normalizer(self) -> Optional[str]:
        """The normalizer that cut the words, as tokenizer.json JSON (None: not recorded)."""
    @property
    def pre_tokenizer(self) -> Optional[str]:
        """The pre-tokenizer that cut the words, as tokenizer.json JSON (None: not recorded)."""
    def to_bytes(self) -> bytes:
        """The count file's bytes (``tokenkit count``'s format)."""
    @classmethod
    def from_bytes(cls, data: bytes) -> "WordCounts": ...
    def save(self, path: str) -> None:
        """Writes a count file, atomically."""
    @classmethod
    def load(cls, *paths: str) -> "WordCounts":
        """The counts of one or more count files, added up."""

class Tokenizer:
    """A tokenizer: normalizer → pre-tokenizer → model → post-processor, the decoder, the added
    vocabulary, padding and truncation.

    Args:
        model (:class:`~tokenkit.models.Model`): The model.
    """

    def __init__(self, model: Model) -> None: ...
    @staticmethod
    def from_file(path: str) -> "Tokenizer":
        """Loads a ``tokenizer.json`` (also accepts a BERT ``vocab.txt`` or a GPT-2
        ``vocab.json`` with ``merges.txt`` beside it, or a directory holding one of them)."""
    @staticmethod
    def from_str(json: str) -> "Tokenizer":
        """Parses ``tokenizer.json`` content."""
    @staticmethod
    def from_buffer(buffer: bytes) -> "Tokenizer":
        """Parses ``tokenizer.json`` content given as bytes."""
    @staticmethod
    def from_pretrained(identifier: str, revision: str = "main", token: Optional[str] = None) -> "Tokenizer":
        """Downloads ``tokenizer.json`` from the Hugging Face Hub (needs ``huggingface_hub``)."""
    def to_str(self, pretty: bool = False) -> str:
        """The ``tokenizer.json`` content."""
    def save(self, path: str, pretty: bool = True) -> None:
        """Writes ``tokenizer.json`` to ``path``."""
    def __getstate__(self) -> bytes:
        """The tokenizer.json content (pickle)."""
    def __setstate__(self, state: Union[bytes, str]) -> None:
        """Restores from :meth:`__getstate__`."""
    def encode(
        self,
        sequence: InputSequence,
        pair: Optional[InputSequence] = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        """Encodes a sequence, or a pair of sequences.

        Args:
            sequence: A :obj:`str`, or with ``is_pretokenized=True`` a list of words.
            pair: The second sequence of a pair, same type as ``sequence``.
            is_pretokenized (:obj:`bool`): The inputs are already split into words.
            add_special_tokens (:obj:`bool`): Apply the post-processor's special tokens.

        Returns:
            :class:`Encoding`: The encoding (truncated and padded when enabled).
        """
    def encode_batch(
        self, input: Iterable[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> List[Encoding]:
        """Encodes many inputs in parallel (the GIL is released).

        Args:
            input: Sequences, or pairs as 2-tuples/lists.
            is_pretokenized (:obj:`bool`): Sequences are lists of words.
            add_special_tokens (:obj:`bool`): Apply the post-processor's special tokens.

        Returns:
            :obj:`List[Encoding]`: One encoding per input, padded together when padding is enabled.
        """
    def encode_batch_fast(
        self, input: Iterable[EncodeInput], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> List[Encoding]:
        """Like :meth:`encode_batch`, but offsets are UTF-8 byte offsets (as in HF)."""
    def encode_to_numpy(
        self,
        sequence: InputSequence,
        pair: Optional[InputSequence] = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> "numpy.ndarray":
        """Encodes like :meth:`encode` and returns only the ids, as a 1-D ``numpy.uint32`` array."""
    def encode_batch_to_arrow(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> "pyarrow.ListArray":
        """Encodes many inputs in parallel and returns their ids as a ``pyarrow.ListArray`` of
        uint32, written without a Python object per token (for dataframe engines)."""
    def encode_batch_to_numpy(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
        pad_id: Optional[int] = None,
    ) -> Tuple["numpy.ndarray", "numpy.ndarray"]:
        """Encodes many inputs in parallel and returns ``(ids, attention_mask)``.

        Both are ``numpy.uint32`` arrays of shape ``(len(input), longest)``, written without a
        Python object per token. With padding enabled, rows are padded as :meth:`encode_batch`
        pads them; otherwise short rows are filled with ``pad_id`` (default 0) and mask 0.
        """
    def train(self, files: List[str], trainer: Optional[Trainer] = None) -> None:
        """Trains the model on text files (one sequence per line), with the GIL released.

        The normalizer and pre-tokenizer are applied to the corpus; the model is replaced by the
        trained one and the trainer's special tokens are added. ``trainer`` defaults to the
        default trainer of the model's kind.
        """
    def train_from_iterator(
        self, iterator: Iterable[Union[str, Iterable[str]]], trainer: Optional[Trainer] = None, length: Optional[int] = None
    ) -> None:
        """Trains the model on the strings of ``iterator`` (strings or batches of strings), read as
        they come; an exception raised by the iterator is re-raised. ``length`` is accepted for
        compatibility with HF and unused."""
    def count_words(self, iterator: Iterable[Union[str, Iterable[str]]]) -> "WordCounts":
        """Counts the words of ``iterator`` (strings or batches of strings) as training sees them:
        normalized, then pre-tokenized. Counts of separate batches (processes, Ray blocks, Spark
        partitions) add up with ``+``; :meth:`train_from_counts` trains on them."""
    def train_from_counts(
        self, counts: Union["WordCounts", Dict[str, int], Iterable[Tuple[str, int]]], trainer: Optional[Trainer] = None
    ) -> None:
        """Trains the model on word counts, as :meth:`train_from_iterator` would on the text they
        were counted from. Counts that record their cutting must match this tokenizer's
        normalizer and pre-tokenizer."""
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Decodes ids to text. An id outside the vocabulary raises (HF drops it silently)."""
    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> List[str]:
        """Decodes many id lists in parallel."""
    def post_process(
        self, encoding: Encoding, pair: Optional[Encoding] = None, add_special_tokens: bool = True
    ) -> Encoding:
        """Truncation, post-processing and padding of already-encoded sequences."""
    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many special tokens the post-processor adds to a single sequence or a pair."""
    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token`` (added tokens first), or :obj:`None`."""
    def id_to_token(self, id: int) -> Optional[str]:
        """The token of ``id``, or :obj:`None`."""
    def get_vocab(self, with_added_tokens: bool = True) -> Dict[str, int]:
        """The vocabulary (token → id)."""
    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The vocabulary size."""
    def get_added_tokens_decoder(self) -> Dict[int, AddedToken]:
        """The added tokens by id."""
    def add_tokens(self, tokens: List[Union[str, AddedToken]]) -> int:
        """Adds tokens to the vocabulary; returns how many were new."""
    def add_special_tokens(self, tokens: List[Union[str, AddedToken]]) -> int:
        """Adds special tokens; returns how many were new."""
    @property
    def encode_special_tokens(self) -> bool:
        """When :obj:`True`, special tokens in the input are encoded as ordinary text."""
    @encode_special_tokens.setter
    def encode_special_tokens(self, value: bool) -> None: ...
    @property
    def plan_name(self) -> str:
        """The encode plan this tokenizer runs: ``"general"``, ``"byte-level"``,
        ``"sentencepiece"`` or ``"bert"`` (``TOKENKIT_PLAN=general`` forces the general path)."""
    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: Optional[int] = None,
        pad_to_multiple_of: Optional[int] = None,
    ) -> None:
        """Pads encodings: to ``length`` tokens, or (``length=None``) to the longest of a batch.

        Args:
            direction (:obj:`str`): ``"left"`` or ``"right"``.
            pad_id (:obj:`int`): Id of the padding token.
            pad_type_id (:obj:`int`): Type id of the padding token.
            pad_token (:obj:`str`): The padding token.
            length (:obj:`int`, `optional`): Fixed length.
            pad_to_multiple_of (:obj:`int`, `optional`): Round the length up to a multiple of this.
        """
    def no_padding(self) -> None:
        """Disables padding."""
    @property
    def padding(self) -> Optional[Dict[str, Any]]:
        """The padding settings (``length``, ``pad_to_multiple_of``, ``pad_id``, ``pad_token``,
        ``pad_type_id``, ``direction``), or :obj:`None`."""
    def enable_truncation(
        self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right"
    ) -> None:
        """Truncates encodings to ``max_length`` tokens (special tokens included).

        Args:
            max_length (:obj:`int`): Maximum length.
            stride (:obj:`int`): Overlap of the overflowing parts.
            strategy (:obj:`str`): ``"longest_first"``, ``"only_first"`` or ``"only_second"``.
            direction (:obj:`str`): ``"left"`` or ``"right"``.
        """
    def no_truncation(self) -> None:
        """Disables truncation."""
    @property
    def truncation(self) -> Optional[Dict[str, Any]]:
        """The truncation settings (``max_length``, ``stride``, ``strategy``, ``direction``), or :obj:`None`."""
    @property
    def normalizer(self) -> Optional[Normalizer]:
        """The normalizer (a copy: assign to change it)."""
    @normalizer.setter
    def normalizer(self, value: Optional[Normalizer]) -> None: ...
    @property
    def pre_tokenizer(self) -> Optional[PreTokenizer]:
        """The pre-tokenizer (a copy: assign to change it)."""
    @pre_tokenizer.setter
    def pre_tokenizer(self, value: Optional[PreTokenizer]) -> None: ...
    @property
    def model(self) -> Model:
        """The model (a copy: assign to change it)."""
    @model.setter
    def model(self, value: Model) -> None: ...
    @property
    def post_processor(self) -> Optional[PostProcessor]:
        """The post-processor (a copy: assign to change it)."""
    @post_processor.setter
    def post_processor(self, value: Optional[PostProcessor]) -> None: ...
    @property
    def decoder(self) -> Optional[Decoder]:
        """The decoder (a copy: assign to change it)."""
    @decoder.setter
    def decoder(self, value: Optional[Decoder]) -> None: ...
