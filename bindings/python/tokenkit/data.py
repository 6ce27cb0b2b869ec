"""Dataset jobs: tokenize whole corpora into training shards.

:func:`tokenize_files` is ``tokenkit tokenize`` as a call: text, JSONL and Parquet inputs (plain,
``.gz``, ``.zst``; files, directories, globs) into a flat token file (``numpy.memmap``), Megatron-LM's
indexed dataset or Parquet, streaming on all cores, resumable after a kill.

:class:`DocumentEncoder` runs the same encoding inside a dataframe engine (Ray Data's
``map_batches``, Spark's ``mapInArrow``, ``datasets.map``): each document's ids followed by the
separator, as a ``pyarrow.ListArray`` of uint32 with no Python object per token. It pickles as
what it was made from (an encoding name or tokenizer path pickles as that string), and builds its
encoder once per process.
"""
import os
from collections.abc import Mapping
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from ._tokenkit import Tokenizer, _DocumentEncoder
from ._tokenkit import stats_files as _stats_files
from ._tokenkit import tokenize_files as _tokenize_files

__all__ = ["tokenize_files", "stats", "DocumentEncoder"]

TokenizerLike = Union[str, "os.PathLike[str]", Tokenizer, Any]


def _resolve(tokenizer: TokenizerLike) -> Tuple[Dict[str, Any], str]:
    """Keyword arguments for the Rust side (``tokenizer=`` or ``encoding=``) and a name."""
    from . import tiktoken as _tiktoken

    if isinstance(tokenizer, Tokenizer):
        return {"tokenizer": tokenizer}, "tokenizer"
    if isinstance(tokenizer, _tiktoken.Encoding):
        return {"encoding": tokenizer._core}, tokenizer.name
    if isinstance(tokenizer, (str, os.PathLike)):
        name = os.fspath(tokenizer)
        if not os.path.exists(name) and name in _tiktoken.ENCODING_NAMES:
            return {"encoding": _tiktoken.get_encoding(name)._core}, name
        return {"tokenizer": Tokenizer.from_file(name)}, name
    raise TypeError(
        "tokenizer must be a tokenkit.Tokenizer, a tokenkit.tiktoken.Encoding, an encoding name or a tokenizer "
        f"file path, not {type(tokenizer).__name__}")


def tokenize_files(inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
                   output: Union[str, "os.PathLike[str]"], tokenizer: TokenizerLike, *, format: str = "bin",
                   field: str = "text", text_docs: str = "line", keep_columns: Iterable[str] = (),
                   separator: Optional[str] = None, eos: bool = True, add_special_tokens: bool = True,
                   val_fraction: float = 0.0, strict: bool = False, threads: Optional[int] = None,
                   progress: bool = False, chunk_bytes: Optional[int] = None) -> Dict[str, Any]:
    """Tokenizes ``inputs`` into ``output`` + ``.bin``/``.idx``/``.parquet`` and ``.json``, as
    ``tokenkit tokenize`` does (same options, same bytes); returns the summary (documents,
    tokens, dtype, sha256, skipped records, ...). Rerun after an interruption, it continues."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    kwargs, name = _resolve(tokenizer)
    return _tokenize_files([os.fspath(i) for i in inputs], os.fspath(output), format=format, field=field,
                           text_docs=text_docs, keep_columns=list(keep_columns), separator=separator, eos=eos,
                           add_special_tokens=add_special_tokens, val_fraction=val_fraction, strict=strict,
                           threads=threads, chunk_bytes=chunk_bytes, progress=progress, name=name, **kwargs)


def stats(corpora: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
          tokenizers: Union[TokenizerLike, Sequence[TokenizerLike]], *, field: str = "text", text_docs: str = "line",
          lang_field: Optional[str] = None, add_special_tokens: bool = False,
          threads: Optional[int] = None) -> Union[Dict[str, Any], list]:
    """Measures tokenizers on corpora, as ``tokenkit stats --json`` does: bytes, chars, words and
    tokens, ``bytes_per_token`` (compression), ``chars_per_token``, ``tokens_per_word``
    (fertility), unknown-token and byte-fallback rates, the token-length histogram, the share of
    the vocabulary used, per corpus (``corpora``) and per language label (``lang_field``).

    Each corpus is a file, directory or glob (text, JSONL, Parquet). ``tokenizers`` is one
    tokenizer (a dict is returned) or a list of them (a list of dicts): a ``tokenkit.Tokenizer``,
    a ``tokenkit.tiktoken.Encoding``, an encoding name or a tokenizer file path."""
    if isinstance(corpora, (str, os.PathLike)):
        corpora = [corpora]
    single = not isinstance(tokenizers, (list, tuple))
    encoders = []
    for t in [tokenizers] if single else tokenizers:
        kwargs, name = _resolve(t)
        encoders.append((name, kwargs.get("tokenizer"), kwargs.get("encoding")))
    reports = _stats_files([os.fspath(c) for c in corpora], encoders, field=field, text_docs=text_docs,
                           lang_field=lang_field, add_special_tokens=add_special_tokens, threads=threads)
    return reports[0] if single else reports


class DocumentEncoder:
    """Encodes documents as :func:`tokenize_files` does: each one's ids, then the separator.

    ``tokenizer`` is what :func:`tokenize_files` takes. Calling the object on a ``pyarrow``
    table or record batch (Ray Data ``map_batches(..., batch_format="pyarrow")``, Spark
    ``mapInArrow``) returns it with an ``input_ids`` column (``list<uint32>``) in place of
    ``field``; on a mapping of column name to list (the batch ``datasets.map(batched=True)``
    passes) it returns ``{"input_ids": [...]}``.
    """

    def __init__(self, tokenizer: TokenizerLike, *, field: str = "text", separator: Optional[str] = None,
                 eos: bool = True, add_special_tokens: bool = True, keep: bool = True) -> None:
        self._args = (tokenizer, field, separator, eos, add_special_tokens, keep)
        self.field = field
        self.keep = keep
        self._core: Optional[_DocumentEncoder] = None

    def _encoder(self) -> _DocumentEncoder:
        if self._core is None:
            tokenizer, _, separator, eos, add_special_tokens, _ = self._args
            kwargs, _ = _resolve(tokenizer)
            self._core = _DocumentEncoder(separator=separator, eos=eos, add_special_tokens=add_special_tokens, **kwargs)
        return self._core

    @property
    def separator(self) -> Optional[Tuple[str, int]]:
        """The separator as ``(token, id)``, or ``None``."""
        return self._encoder().separator

    def encode_batch_to_arrow(self, texts: Sequence[str]) -> Any:
        """The ids of each text and the separator, as a ``pyarrow.ListArray`` of uint32."""
        if not isinstance(texts, list):
            texts = texts.to_pylist() if hasattr(texts, "to_pylist") else list(texts)
        return self._encoder().encode_batch_to_arrow(texts)

    def __call__(self, batch: Any) -> Any:
        # datasets.map(batched=True) passes a LazyBatch: a Mapping of column name to list, not a dict.
        if isinstance(batch, Mapping):
            ids = self.encode_batch_to_arrow(batch[self.field]).to_pylist()
            return {"input_ids": ids}
        import pyarrow as pa

        ids = self.encode_batch_to_arrow(batch.column(self.field))
        names = [n for n in batch.schema.names if n != self.field] if self.keep else []
        arrays = [batch.column(n) for n in names] + [ids]
        if isinstance(batch, pa.RecordBatch):
            return pa.RecordBatch.from_arrays(arrays, names=names + ["input_ids"])
        return pa.table(dict(zip(names + ["input_ids"], arrays)))

    def __getstate__(self) -> object:
        return self._args

    def __setstate__(self, args: object) -> None:
        self.__init__(args[0], field=args[1], separator=args[2], eos=args[3], add_special_tokens=args[4], keep=args[5])
