"""The ready-made tokenizers of ``tokenizers.implementations``, over tokenkit:
:class:`ByteLevelBPETokenizer` (GPT-2), :class:`CharBPETokenizer` (Sennrich BPE with ``</w>``),
:class:`SentencePieceBPETokenizer`, :class:`SentencePieceUnigramTokenizer` and
:class:`BertWordPieceTokenizer`, with HF's constructors (a vocabulary and merges given as files or
in memory), ``from_file``, and ``train`` / ``train_from_iterator`` with HF's defaults, so that a
trained tokenizer is the one HF's class trains. Each one wraps a :class:`~tokenkit.Tokenizer`
(:class:`BaseTokenizer` forwards the usual methods to it).

``show_progress=True`` (the default, as in HF) draws progress bars on standard error while
training when it is a terminal.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from . import decoders, normalizers, pre_tokenizers, processors, trainers
from ._base import Regex
from ._tokenkit import AddedToken, Encoding, Tokenizer
from .models import BPE, Unigram, WordPiece

__all__ = ["BaseTokenizer", "ByteLevelBPETokenizer", "CharBPETokenizer", "SentencePieceBPETokenizer",
           "SentencePieceUnigramTokenizer", "BertWordPieceTokenizer"]

Tokens = List[Union[str, AddedToken]]
TextIterator = Union[Iterator[str], Iterator[Iterator[str]]]



async def _in_thread(fn, *args):
    """``fn(*args)`` in a worker thread. asyncio is imported here, not with the package: it
    doubles the import time of ``tokenkit``, and only the async methods need it."""
    import asyncio

    return await asyncio.to_thread(fn, *args)

class BaseTokenizer:
    """A :class:`~tokenkit.Tokenizer` with the parameters it was built with; the methods and
    pipeline attributes are the tokenizer's."""

    def __init__(self, tokenizer: Tokenizer, parameters: Optional[Dict[str, Any]] = None):
        self._tokenizer = tokenizer
        self._parameters = parameters if parameters is not None else {}

    def __repr__(self) -> str:
        return "Tokenizer(vocabulary_size={}, {})".format(
            self._tokenizer.get_vocab_size(), ", ".join(k + "=" + str(v) for k, v in self._parameters.items()))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many special tokens the post-processor adds to one sequence or a pair."""
        return self._tokenizer.num_special_tokens_to_add(is_pair)

    def get_vocab(self, with_added_tokens: bool = True) -> Dict[str, int]:
        """token → id."""
        return self._tokenizer.get_vocab(with_added_tokens=with_added_tokens)

    def get_added_tokens_decoder(self) -> Dict[int, AddedToken]:
        """id → AddedToken of the added vocabulary."""
        return self._tokenizer.get_added_tokens_decoder()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The vocabulary size."""
        return self._tokenizer.get_vocab_size(with_added_tokens=with_added_tokens)

    def enable_padding(self, direction: str = "right", pad_to_multiple_of: Optional[int] = None, pad_id: int = 0,
                       pad_type_id: int = 0, pad_token: str = "[PAD]", length: Optional[int] = None) -> None:
        """Pads every encoding (to the longest of a batch, or to ``length``)."""
        return self._tokenizer.enable_padding(direction=direction, pad_to_multiple_of=pad_to_multiple_of,
                                              pad_id=pad_id, pad_type_id=pad_type_id, pad_token=pad_token,
                                              length=length)

    def no_padding(self) -> None:
        """Disables padding."""
        return self._tokenizer.no_padding()

    @property
    def padding(self) -> Optional[dict]:
        """The padding settings, or None."""
        return self._tokenizer.padding

    def enable_truncation(self, max_length: int, stride: Optional[int] = 0,
                          strategy: Optional[str] = "longest_first") -> None:
        """Truncates every encoding to ``max_length`` tokens."""
        return self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def no_truncation(self) -> None:
        """Disables truncation."""
        return self._tokenizer.no_truncation()

    @property
    def truncation(self) -> Optional[dict]:
        """The truncation settings, or None."""
        return self._tokenizer.truncation

    def add_tokens(self, tokens: Tokens) -> int:
        """Adds tokens; returns how many were new."""
        return self._tokenizer.add_tokens(tokens)

    def add_special_tokens(self, special_tokens: Tokens) -> int:
        """Adds special tokens; returns how many were new."""
        return self._tokenizer.add_special_tokens(special_tokens)

    def normalize(self, sequence: str) -> str:
        """The normalizer's output for ``sequence``."""
        return self._tokenizer.normalizer.normalize_str(sequence)

    def encode(self, sequence: Any, pair: Any = None, is_pretokenized: bool = False,
               add_special_tokens: bool = True) -> Encoding:
        """Encodes a sequence (or a pair)."""
        if sequence is None:
            raise ValueError("encode: `sequence` can't be `None`")
        return self._tokenizer.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, inputs: List[Any], is_pretokenized: bool = False,
                     add_special_tokens: bool = True) -> List[Encoding]:
        """Encodes a batch in parallel."""
        if inputs is None:
            raise ValueError("encode_batch: `inputs` can't be `None`")
        return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch(self, inputs: List[Any], is_pretokenized: bool = False,
                                 add_special_tokens: bool = True) -> List[Encoding]:
        """:meth:`encode_batch` in a worker thread (the GIL is released while encoding)."""
        if inputs is None:
            raise ValueError("async_encode_batch: `inputs` can't be `None`")
        return await _in_thread(self._tokenizer.encode_batch, inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(self, inputs: List[Any], is_pretokenized: bool = False,
                                      add_special_tokens: bool = True) -> List[Encoding]:
        """``encode_batch_fast`` in a worker thread."""
        if inputs is None:
            raise ValueError("async_encode_batch_fast: `inputs` can't be `None`")
        return await _in_thread(self._tokenizer.encode_batch_fast, inputs, is_pretokenized, add_special_tokens)

    def decode(self, ids: List[int], skip_special_tokens: Optional[bool] = True) -> str:
        """Decodes ids to text."""
        if ids is None:
            raise ValueError("None input is not valid. Should be a list of integers.")
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences: List[List[int]], skip_special_tokens: Optional[bool] = True) -> List[str]:
        """Decodes many id lists."""
        if sequences is None:
            raise ValueError("None input is not valid. Should be list of list of integers.")
        return self._tokenizer.decode_batch(sequences, skip_special_tokens=skip_special_tokens)

    async def async_decode_batch(self, sequences: List[List[int]],
                                 skip_special_tokens: Optional[bool] = True) -> List[str]:
        """:meth:`decode_batch` in a worker thread."""
        if sequences is None:
            raise ValueError("async_decode_batch: `sequences` can't be `None`")
        return await _in_thread(self._tokenizer.decode_batch, sequences, skip_special_tokens)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token``, or None."""
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, id: int) -> Optional[str]:
        """The token of ``id``, or None."""
        return self._tokenizer.id_to_token(id)

    def save_model(self, directory: str, prefix: Optional[str] = None) -> List[str]:
        """Writes the model's files (vocab.json + merges.txt, vocab.txt, ...) into ``directory``."""
        return self._tokenizer.model.save(directory, prefix=prefix)

    def save(self, path: str, pretty: bool = True) -> None:
        """Writes tokenizer.json."""
        return self._tokenizer.save(path, pretty)

    def to_str(self, pretty: bool = False) -> str:
        """The tokenizer.json content."""
        return self._tokenizer.to_str(pretty)

    def post_process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                     add_special_tokens: bool = True) -> Encoding:
        """Truncation, post-processing and padding of an encoding (and its pair)."""
        return self._tokenizer.post_process(encoding, pair, add_special_tokens)

    @property
    def model(self) -> Any:
        return self._tokenizer.model

    @model.setter
    def model(self, model: Any) -> None:
        self._tokenizer.model = model

    @property
    def normalizer(self) -> Any:
        return self._tokenizer.normalizer

    @normalizer.setter
    def normalizer(self, normalizer: Any) -> None:
        self._tokenizer.normalizer = normalizer

    @property
    def pre_tokenizer(self) -> Any:
        return self._tokenizer.pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, pre_tokenizer: Any) -> None:
        self._tokenizer.pre_tokenizer = pre_tokenizer

    @property
    def post_processor(self) -> Any:
        return self._tokenizer.post_processor

    @post_processor.setter
    def post_processor(self, post_processor: Any) -> None:
        self._tokenizer.post_processor = post_processor

    @property
    def decoder(self) -> Any:
        return self._tokenizer.decoder

    @decoder.setter
    def decoder(self, decoder: Any) -> None:
        self._tokenizer.decoder = decoder

    # ---- shared by the subclasses ------------------------------------------------------------

    def _train(self, files: Union[str, List[str], None], iterator: Optional[TextIterator], trainer: Any,
               length: Optional[int] = None) -> None:
        """Trains on ``files`` or on ``iterator`` with ``trainer``."""
        if iterator is not None:
            self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)
        else:
            self._tokenizer.train([files] if isinstance(files, str) else list(files), trainer=trainer)

    def _add_known_special_tokens(self, *tokens: Union[str, AddedToken]) -> None:
        """Marks the tokens the vocabulary already has as special, as HF's classes do."""
        for token in tokens:
            if self._tokenizer.token_to_id(str(token)) is not None:
                self._tokenizer.add_special_tokens([str(token)])


def _normalizer(steps: List[Any]) -> Any:
    """One normalizer, a Sequence of several, or None."""
    if not steps:
        return None
    return steps[0] if len(steps) == 1 else normalizers.Sequence(steps)


class ByteLevelBPETokenizer(BaseTokenizer):
    """Byte-level BPE as OpenAI's GPT-2: ByteLevel pre-tokenizer, decoder and post-processor."""

    def __init__(self, vocab: Optional[Union[str, Dict[str, int]]] = None,
                 merges: Optional[Union[str, List[Tuple[str, str]]]] = None, add_prefix_space: bool = False,
                 lowercase: bool = False, dropout: Optional[float] = None, unicode_normalizer: Optional[str] = None,
                 continuing_subword_prefix: Optional[str] = None, end_of_word_suffix: Optional[str] = None,
                 trim_offsets: bool = False):
        if vocab is not None and merges is not None:
            tokenizer = Tokenizer(BPE(vocab, merges, dropout=dropout,
                                      continuing_subword_prefix=continuing_subword_prefix or "",
                                      end_of_word_suffix=end_of_word_suffix or ""))
        else:
            tokenizer = Tokenizer(BPE())
        steps = [normalizers.unicode_normalizer_from_str(unicode_normalizer)] if unicode_normalizer else []
        if lowercase:
            steps.append(normalizers.Lowercase())
        if steps:
            tokenizer.normalizer = _normalizer(steps)
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
        super().__init__(tokenizer, {
            "model": "ByteLevelBPE", "add_prefix_space": add_prefix_space, "lowercase": lowercase,
            "dropout": dropout, "unicode_normalizer": unicode_normalizer,
            "continuing_subword_prefix": continuing_subword_prefix, "end_of_word_suffix": end_of_word_suffix,
            "trim_offsets": trim_offsets})

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> "ByteLevelBPETokenizer":
        """From a ``vocab.json`` and a ``merges.txt``."""
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return ByteLevelBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(vocab_size: int, min_frequency: int, show_progress: bool, special_tokens: Optional[Tokens]) -> Any:
        return trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=show_progress,
                                   special_tokens=special_tokens or [],
                                   initial_alphabet=pre_tokenizers.ByteLevel.alphabet())

    def train(self, files: Union[str, List[str]], vocab_size: int = 30000, min_frequency: int = 2,
              show_progress: bool = True, special_tokens: Optional[Tokens] = None) -> None:
        """Trains on text files (all 256 byte symbols in the alphabet)."""
        self._train(files, None, self._trainer(vocab_size, min_frequency, show_progress, special_tokens))

    def train_from_iterator(self, iterator: TextIterator, vocab_size: int = 30000, min_frequency: int = 2,
                            show_progress: bool = True, special_tokens: Optional[Tokens] = None,
                            length: Optional[int] = None) -> None:
        """Trains on strings (or batches of strings)."""
        self._train(None, iterator, self._trainer(vocab_size, min_frequency, show_progress, special_tokens), length)


class CharBPETokenizer(BaseTokenizer):
    """Sennrich's BPE with an end-of-word suffix (``</w>``), BERT's normalizer (without
    lowercasing) and pre-tokenizer by default, as OpenAI GPT."""

    def __init__(self, vocab: Optional[Union[str, Dict[str, int]]] = None,
                 merges: Optional[Union[str, List[Tuple[str, str]]]] = None,
                 unk_token: Union[str, AddedToken] = "<unk>", suffix: str = "</w>", dropout: Optional[float] = None,
                 lowercase: bool = False, unicode_normalizer: Optional[str] = None, bert_normalizer: bool = True,
                 split_on_whitespace_only: bool = False):
        if vocab is not None and merges is not None:
            tokenizer = Tokenizer(BPE(vocab, merges, dropout=dropout, unk_token=str(unk_token),
                                      end_of_word_suffix=suffix))
        else:
            tokenizer = Tokenizer(BPE(unk_token=str(unk_token), dropout=dropout, end_of_word_suffix=suffix))
        super().__init__(tokenizer, {
            "model": "BPE", "unk_token": unk_token, "suffix": suffix, "dropout": dropout, "lowercase": lowercase,
            "unicode_normalizer": unicode_normalizer, "bert_normalizer": bert_normalizer,
            "split_on_whitespace_only": split_on_whitespace_only})
        self._add_known_special_tokens(unk_token)
        steps = [normalizers.unicode_normalizer_from_str(unicode_normalizer)] if unicode_normalizer else []
        if bert_normalizer:
            steps.append(normalizers.BertNormalizer(lowercase=False))
        if lowercase:
            steps.append(normalizers.Lowercase())
        if steps:
            tokenizer.normalizer = _normalizer(steps)
        tokenizer.pre_tokenizer = (pre_tokenizers.WhitespaceSplit() if split_on_whitespace_only
                                   else pre_tokenizers.BertPreTokenizer())
        tokenizer.decoder = decoders.BPEDecoder(suffix=suffix)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> "CharBPETokenizer":
        """From a ``vocab.json`` and a ``merges.txt``."""
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return CharBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(vocab_size: int, min_frequency: int, special_tokens: Optional[Tokens], limit_alphabet: int,
                 initial_alphabet: Optional[List[str]], suffix: Optional[str], show_progress: bool) -> Any:
        return trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                   special_tokens=["<unk>"] if special_tokens is None else special_tokens,
                                   limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet or [],
                                   end_of_word_suffix=suffix, show_progress=show_progress)

    def train(self, files: Union[str, List[str]], vocab_size: int = 30000, min_frequency: int = 2,
              special_tokens: Optional[Tokens] = None, limit_alphabet: int = 1000,
              initial_alphabet: Optional[List[str]] = None, suffix: Optional[str] = "</w>",
              show_progress: bool = True) -> None:
        """Trains on text files (special tokens default to ``["<unk>"]``)."""
        self._train(files, None, self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet,
                                               initial_alphabet, suffix, show_progress))

    def train_from_iterator(self, iterator: TextIterator, vocab_size: int = 30000, min_frequency: int = 2,
                            special_tokens: Optional[Tokens] = None, limit_alphabet: int = 1000,
                            initial_alphabet: Optional[List[str]] = None, suffix: Optional[str] = "</w>",
                            show_progress: bool = True, length: Optional[int] = None) -> None:
        """Trains on strings (or batches of strings)."""
        self._train(None, iterator, self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet,
                                                  initial_alphabet, suffix, show_progress), length)


class SentencePieceBPETokenizer(BaseTokenizer):
    """BPE with SentencePiece's pre-tokenization: NFKC, then Metaspace (``▁``)."""

    def __init__(self, vocab: Optional[Union[str, Dict[str, int]]] = None,
                 merges: Optional[Union[str, List[Tuple[str, str]]]] = None,
                 unk_token: Union[str, AddedToken] = "<unk>", replacement: str = "▁", add_prefix_space: bool = True,
                 dropout: Optional[float] = None, fuse_unk: Optional[bool] = False):
        if vocab is not None and merges is not None:
            tokenizer = Tokenizer(BPE(vocab, merges, dropout=dropout, unk_token=str(unk_token), fuse_unk=fuse_unk))
        else:
            tokenizer = Tokenizer(BPE(dropout=dropout, unk_token=str(unk_token), fuse_unk=fuse_unk))
        super().__init__(tokenizer, {"model": "SentencePieceBPE", "unk_token": unk_token, "replacement": replacement,
                                     "add_prefix_space": add_prefix_space, "dropout": dropout})
        self._add_known_special_tokens(unk_token)
        tokenizer.normalizer = normalizers.NFKC()
        scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs: Any) -> "SentencePieceBPETokenizer":
        """From a ``vocab.json`` and a ``merges.txt``."""
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return SentencePieceBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(vocab_size: int, min_frequency: int, special_tokens: Optional[Tokens], limit_alphabet: int,
                 initial_alphabet: Optional[List[str]], show_progress: bool) -> Any:
        return trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                   special_tokens=["<unk>"] if special_tokens is None else special_tokens,
                                   limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet or [],
                                   show_progress=show_progress)

    def train(self, files: Union[str, List[str]], vocab_size: int = 30000, min_frequency: int = 2,
              special_tokens: Optional[Tokens] = None, limit_alphabet: int = 1000,
              initial_alphabet: Optional[List[str]] = None, show_progress: bool = True) -> None:
        """Trains on text files (special tokens default to ``["<unk>"]``)."""
        self._train(files, None, self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet,
                                               initial_alphabet, show_progress))

    def train_from_iterator(self, iterator: TextIterator, vocab_size: int = 30000, min_frequency: int = 2,
                            special_tokens: Optional[Tokens] = None, limit_alphabet: int = 1000,
                            initial_alphabet: Optional[List[str]] = None, show_progress: bool = True,
                            length: Optional[int] = None) -> None:
        """Trains on strings (or batches of strings)."""
        self._train(None, iterator, self._trainer(vocab_size, min_frequency, special_tokens, limit_alphabet,
                                                  initial_alphabet, show_progress), length)


class SentencePieceUnigramTokenizer(BaseTokenizer):
    """Unigram with SentencePiece's pre-tokenization: Nmt, NFKC and runs of spaces collapsed,
    then Metaspace (``▁``)."""

    def __init__(self, vocab: Optional[List[Tuple[str, float]]] = None, replacement: str = "▁",
                 add_prefix_space: bool = True):
        tokenizer = Tokenizer(Unigram(vocab) if vocab is not None else Unigram())
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
        scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme)
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)
        super().__init__(tokenizer, {"model": "SentencePieceUnigram", "replacement": replacement,
                                     "add_prefix_space": add_prefix_space})

    @staticmethod
    def _trainer(vocab_size: int, show_progress: bool, special_tokens: Optional[Tokens],
                 initial_alphabet: Optional[List[str]], unk_token: Optional[str]) -> Any:
        return trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=special_tokens or [],
                                       show_progress=show_progress, initial_alphabet=initial_alphabet or [],
                                       unk_token=unk_token)

    def train(self, files: Union[str, List[str]], vocab_size: int = 8000, show_progress: bool = True,
              special_tokens: Optional[Tokens] = None, initial_alphabet: Optional[List[str]] = None,
              unk_token: Optional[str] = None) -> None:
        """Trains on text files."""
        self._train(files, None, self._trainer(vocab_size, show_progress, special_tokens, initial_alphabet, unk_token))

    def train_from_iterator(self, iterator: TextIterator, vocab_size: int = 8000, show_progress: bool = True,
                            special_tokens: Optional[Tokens] = None, initial_alphabet: Optional[List[str]] = None,
                            unk_token: Optional[str] = None, length: Optional[int] = None) -> None:
        """Trains on strings (or batches of strings)."""
        self._train(None, iterator,
                    self._trainer(vocab_size, show_progress, special_tokens, initial_alphabet, unk_token), length)


class BertWordPieceTokenizer(BaseTokenizer):
    """BERT's WordPiece tokenizer: BertNormalizer, BertPreTokenizer, ``[CLS] ... [SEP]``."""

    def __init__(self, vocab: Optional[Union[str, Dict[str, int]]] = None,
                 unk_token: Union[str, AddedToken] = "[UNK]", sep_token: Union[str, AddedToken] = "[SEP]",
                 cls_token: Union[str, AddedToken] = "[CLS]", pad_token: Union[str, AddedToken] = "[PAD]",
                 mask_token: Union[str, AddedToken] = "[MASK]", clean_text: bool = True,
                 handle_chinese_chars: bool = True, strip_accents: Optional[bool] = None, lowercase: bool = True,
                 wordpieces_prefix: str = "##"):
        if vocab is not None:
            tokenizer = Tokenizer(WordPiece(vocab, unk_token=str(unk_token)))
        else:
            tokenizer = Tokenizer(WordPiece(unk_token=str(unk_token)))
        super().__init__(tokenizer, {
            "model": "BertWordPiece", "unk_token": unk_token, "sep_token": sep_token, "cls_token": cls_token,
            "pad_token": pad_token, "mask_token": mask_token, "clean_text": clean_text,
            "handle_chinese_chars": handle_chinese_chars, "strip_accents": strip_accents, "lowercase": lowercase,
            "wordpieces_prefix": wordpieces_prefix})
        self._add_known_special_tokens(unk_token, sep_token, cls_token, pad_token, mask_token)
        tokenizer.normalizer = normalizers.BertNormalizer(clean_text=clean_text,
                                                          handle_chinese_chars=handle_chinese_chars,
                                                          strip_accents=strip_accents, lowercase=lowercase)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        if vocab is not None:
            sep_id, cls_id = tokenizer.token_to_id(str(sep_token)), tokenizer.token_to_id(str(cls_token))
            if sep_id is None:
                raise TypeError("sep_token not found in the vocabulary")
            if cls_id is None:
                raise TypeError("cls_token not found in the vocabulary")
            tokenizer.post_processor = processors.BertProcessing((str(sep_token), sep_id), (str(cls_token), cls_id))
        tokenizer.decoder = decoders.WordPiece(prefix=wordpieces_prefix)

    @staticmethod
    def from_file(vocab: str, **kwargs: Any) -> "BertWordPieceTokenizer":
        """From a ``vocab.txt``."""
        return BertWordPieceTokenizer(WordPiece.read_file(vocab), **kwargs)

    @staticmethod
    def _trainer(vocab_size: int, min_frequency: int, limit_alphabet: int, initial_alphabet: Optional[List[str]],
                 special_tokens: Optional[Tokens], show_progress: bool, wordpieces_prefix: str) -> Any:
        if special_tokens is None:
            special_tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        return trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                         limit_alphabet=limit_alphabet, initial_alphabet=initial_alphabet or [],
                                         special_tokens=special_tokens, show_progress=show_progress,
                                         continuing_subword_prefix=wordpieces_prefix)

    def train(self, files: Union[str, List[str]], vocab_size: int = 30000, min_frequency: int = 2,
              limit_alphabet: int = 1000, initial_alphabet: Optional[List[str]] = None,
              special_tokens: Optional[Tokens] = None, show_progress: bool = True,
              wordpieces_prefix: str = "##") -> None:
        """Trains on text files (special tokens default to BERT's five)."""
        self._train(files, None, self._trainer(vocab_size, min_frequency, limit_alphabet, initial_alphabet,
                                               special_tokens, show_progress, wordpieces_prefix))

    def train_from_iterator(self, iterator: TextIterator, vocab_size: int = 30000, min_frequency: int = 2,
                            limit_alphabet: int = 1000, initial_alphabet: Optional[List[str]] = None,
                            special_tokens: Optional[Tokens] = None, show_progress: bool = True,
                            wordpieces_prefix: str = "##", length: Optional[int] = None) -> None:
        """Trains on strings (or batches of strings)."""
        self._train(None, iterator, self._trainer(vocab_size, min_frequency, limit_alphabet, initial_alphabet,
                                                  special_tokens, show_progress, wordpieces_prefix), length)
