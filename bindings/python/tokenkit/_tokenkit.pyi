"""The compiled extension module (internal). Public names are re-exported by :mod:`tokenkit`."""
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import AddedToken as AddedToken
from . import Encoding as Encoding
from . import Tokenizer as Tokenizer

__version__: str

class DecodeStream:
    """Streaming decoding: feed ids one (or a few) at a time, get text once it is complete.

    Args:
        ids (:obj:`List[int]`, `optional`): Context ids pre-filled into the stream (their text is
            not returned). A lone bool is taken as ``skip_special_tokens``.
        skip_special_tokens (:obj:`bool`, defaults to :obj:`False`): Skip special tokens.
    """

    def __init__(self, ids: Optional[List[int]] = None, skip_special_tokens: Optional[bool] = False) -> None: ...
    def step(self, tokenizer: Tokenizer, id: Any) -> Optional[str]:
        """Adds the next id (or list of ids); returns the new text, or :obj:`None` while the
        text is not complete yet (e.g. a partial UTF-8 character)."""

class Component:
    """A pipeline component compiled from its tokenizer.json object (internal).

    Args:
        kind (:obj:`str`): ``normalizer``, ``pre_tokenizer``, ``model``, ``processor`` or ``decoder``.
        json (:obj:`str`): The component's JSON object.
    """

    def __init__(self, kind: str, json: str) -> None: ...
    def to_json(self) -> str:
        """The JSON the library writes for this component."""
    def normalize_str(self, sequence: str) -> str:
        """Normalizer: the normalized text."""
    def pre_tokenize_str(self, sequence: str) -> List[Tuple[str, Tuple[int, int]]]:
        """Pre-tokenizer: the pieces with their character offsets."""
    def decode(self, tokens: List[str]) -> str:
        """Decoder: the text of the tokens."""
    def tokenize(self, sequence: str) -> List[Tuple[int, str, Tuple[int, int]]]:
        """Model: ``(id, token, byte offsets)`` of each token."""
    def token_to_id(self, token: str) -> Optional[int]:
        """Model: the id of a token."""
    def id_to_token(self, id: int) -> Optional[str]:
        """Model: the token of an id."""
    def get_vocab_size(self) -> int:
        """Model: the vocabulary size."""
    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """Post-processor: how many tokens it adds."""
    def process(self, encoding: Encoding, pair: Optional[Encoding] = None, add_special_tokens: bool = True) -> Encoding:
        """Post-processor: applies it to an encoding (and its pair)."""

def template_processing_json(single: Any, pair: Any, special_tokens_json: str) -> str:
    """The JSON of a TemplateProcessing built (and checked) by the library."""

def byte_level_alphabet() -> List[str]:
    """The 256 characters ByteLevel maps bytes to."""

def parse_rank_file(data: bytes, origin: str) -> Dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file's content: ``{token bytes: rank}``."""

def tiktoken_encoding_names(available_only: bool = False) -> List[str]:
    """The named encodings; with ``available_only``, those whose rank file is found."""
    ...

def tiktoken_data_dirs() -> List[str]:
    """The directories searched for rank files, in order."""

def tokenize_files(inputs: List[str], output: str, *, tokenizer: Any = None, encoding: Any = None, format: str = "bin",
                   field: str = "text", text_docs: str = "line", keep_columns: List[str] = ..., separator: Optional[str] = None,
                   eos: bool = True, add_special_tokens: bool = True, val_fraction: float = 0.0, strict: bool = False,
                   threads: Optional[int] = None, chunk_bytes: Optional[int] = None, progress: bool = False,
                   name: Optional[str] = None) -> Dict[str, Any]: ...
def stats_files(corpora: List[str], encoders: List[Tuple[str, Any, Any]], *, field: str = "text", text_docs: str = "line",
                lang_field: Optional[str] = None, add_special_tokens: bool = False,
                threads: Optional[int] = None) -> List[Dict[str, Any]]: ...
def render_tokens_html(text: str, tokens: List[Tuple[int, str, Optional[Tuple[int, int]], bool, bool]],
                       annotations: List[Tuple[int, int, str]], *, detailed: bool = False, title: Optional[str] = None,
                       summary: str = "") -> str: ...
def label_colors(labels: List[str]) -> List[Tuple[str, str]]: ...
def corpus_pii(texts: List[str], config: str = "{}") -> Tuple[List[str], List[Tuple[str, int]]]: ...
def corpus_find_pii(text: str, config: str = "{}") -> List[Tuple[str, int, int]]: ...
def corpus_band_keys(texts: List[str], config: str) -> List[List[int]]: ...
def corpus_clusters(texts: List[str], *, near: bool = False, threshold: Optional[float] = None, num_perm: int = 128,
                    bands: Optional[int] = None, rows: Optional[int] = None, shingle: str = "word", ngram: int = 5,
                    seed: int = 1) -> List[int]: ...
def corpus_files(step: str, inputs: List[str], output: str, *, field: str = "text", strict: bool = False, near: bool = False,
                 threshold: Optional[float] = None, num_perm: int = 128, bands: Optional[int] = None, rows: Optional[int] = None,
                 shingle: str = "word", ngram: int = 5, seed: int = 1, threads: Optional[int] = None) -> Dict[str, Any]: ...
class _DocumentEncoder:
    def __init__(self, *, tokenizer: Any = None, encoding: Any = None, separator: Optional[str] = None, eos: bool = True,
                 add_special_tokens: bool = True) -> None: ...
    separator: Optional[Tuple[str, int]]
    id_space: int
    def encode_batch_to_arrow(self, texts: List[str]) -> Any: ...
def write_files(files: List[Tuple[str, bytes]]) -> None:
    """Writes ``(path, data)`` files as one set, atomically: temporary names, renamed once all are complete."""

class ChatTemplate:
    """A compiled Jinja chat template, rendered as transformers' ``apply_chat_template``."""

    def __init__(self, source: str) -> None: ...
    @property
    def source(self) -> str:
        """The template text."""
    def render(
        self,
        messages_json: str,
        add_generation_prompt: bool = False,
        continue_final_message: Optional[str] = None,
        tools_json: Optional[str] = None,
        documents_json: Optional[str] = None,
        kwargs_json: Optional[str] = None,
    ) -> str:
        """Renders one conversation (JSON text in, prompt text out)."""

class TiktokenCore:
    """The Rust side of :class:`tokenkit.tiktoken.Encoding` (tiktoken's ``CoreBPE``)."""

    def __init__(
        self,
        name: str,
        pat_str: str,
        mergeable_ranks: Dict[bytes, int],
        special_tokens: Dict[str, int],
        explicit_n_vocab: Optional[int] = None,
    ) -> None: ...
    @staticmethod
    def get(name: str) -> "TiktokenCore":
        """A named encoding read from the rank-file data directories."""
    @staticmethod
    def from_file(path: str, name: Optional[str] = None) -> "TiktokenCore":
        """A rank file with the pattern and special tokens of a named encoding."""
    name: str
    pat_str: str
    n_vocab: int
    max_token_value: int
    special_tokens: Dict[str, int]
    def encode_ordinary(self, text: str) -> List[int]: ...
    def encode(self, text: str, allowed_special: Any, disallowed_special: Any) -> List[int]: ...
    def encode_to_numpy(self, text: str, allowed_special: Any, disallowed_special: Any) -> Any: ...
    def count(self, text: str, allowed_special: Any, disallowed_special: Any) -> int: ...
    def encode_ordinary_batch(self, texts: List[str]) -> List[List[int]]: ...
    def encode_ordinary_batch_to_arrow(self, texts: List[str]) -> Any: ...
    def encode_batch(self, texts: List[str], allowed_special: Any, disallowed_special: Any) -> List[List[int]]: ...
    def encode_with_unstable(self, text: str, allowed_special: Any, disallowed_special: Any) -> Tuple[List[int], List[List[int]]]: ...
    def encode_single_piece(self, piece: bytes) -> List[int]: ...
    def encode_bytes(self, data: bytes) -> List[int]: ...
    def encode_single_token(self, token: bytes) -> int: ...
    def decode_bytes(self, tokens: List[int]) -> bytes: ...
    def decode_bytes_batch(self, batch: List[List[int]]) -> List[bytes]: ...
    def decode_single_token_bytes(self, token: int) -> bytes: ...
    def token_byte_values(self) -> List[bytes]: ...
    def is_special_token(self, token: int) -> bool: ...

class SentencePieceCore:
    """The Rust side of :class:`tokenkit.sentencepiece.SentencePieceProcessor`."""

    @staticmethod
    def from_bytes(data: bytes) -> "SentencePieceCore": ...
    @staticmethod
    def from_file(path: str) -> "SentencePieceCore": ...
    def encode(
        self,
        input: Union[str, bytes, List[Union[str, bytes]]],
        out: str,
        add_bos: bool,
        add_eos: bool,
        reverse: bool,
        emit_unk_piece: bool,
        sampling: Optional[Tuple[int, float]] = None,
        num_threads: int = -1,
    ) -> List[Any]: ...
    def nbest(self, input: Union[str, bytes], nbest_size: int, out: str, add_bos: bool, add_eos: bool, reverse: bool,
              emit_unk_piece: bool) -> List[Tuple[List[Any], float]]: ...
    def decode_ids(self, ids: Sequence[int]) -> str: ...
    def decode_ids_batch(self, batch: Sequence[Sequence[int]], num_threads: int) -> List[str]: ...
    def decode_pieces(self, pieces: Sequence[str]) -> str: ...
    def decode_pieces_batch(self, batch: Sequence[Sequence[str]], num_threads: int) -> List[str]: ...
    def normalize(self, input: Union[str, bytes]) -> str: ...
    def piece_size(self) -> int: ...
    def piece_to_id(self, piece: str) -> int: ...
    def id_to_piece(self, id: int) -> str: ...
    def score(self, id: int) -> float: ...
    def kind(self, id: int) -> int: ...
    def special_ids(self) -> Tuple[int, int, int, int]: ...
    def serialized(self) -> bytes: ...

def sentencepiece_set_random_seed(seed: int) -> None: ...
