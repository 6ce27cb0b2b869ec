"""Corpus preparation: the steps of ``tokenkit corpus`` over lists of strings and over files.

- :func:`pii` replaces personal data by typed placeholders (``[EMAIL]``, ``[PHONE]``, ``[ID]``,
  ``[CARD]``, ``[IP]``, ``[IBAN]``, ``[URL]``) and counts them; :func:`find_pii` lists them.
- :func:`clusters` gives each text's duplicate cluster (exact, or near with MinHash + LSH) and
  :func:`dedup` the texts without duplicates (the first of each cluster, in order).
- :func:`pii_files` and :func:`dedup_files` are ``tokenkit corpus pii|dedup`` as calls.

The functions over lists are plain per-batch functions, usable as map functions in Ray Data or
Spark (``pii`` per batch; exact ``dedup`` is global, so it needs all texts or a groupby on a hash).
"""
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._tokenkit import corpus_clusters as _clusters
from ._tokenkit import corpus_files as _files
from ._tokenkit import corpus_find_pii as _find_pii
from ._tokenkit import corpus_pii as _pii

__all__ = ["pii", "find_pii", "clusters", "dedup", "pii_files", "dedup_files"]

PathLike = Union[str, "os.PathLike[str]"]


def pii(texts: Sequence[str]) -> Tuple[List[str], Dict[str, int]]:
    """The texts with their personal data replaced, and the count per placeholder."""
    out, counts = _pii(list(texts))
    return out, {k: n for k, n in counts if n}


def find_pii(text: str) -> List[Tuple[str, int, int]]:
    """The personal data of ``text`` as ``(placeholder, start, end)``, in characters."""
    return _find_pii(text)


def clusters(texts: Sequence[str], *, near: bool = False, threshold: Optional[float] = None, num_perm: int = 128,
             bands: Optional[int] = None, rows: Optional[int] = None, shingle: str = "word", ngram: int = 5,
             seed: int = 1) -> List[int]:
    """The cluster of each text: the index of the first text of its cluster."""
    return _clusters(list(texts), near=near, threshold=threshold, num_perm=num_perm, bands=bands, rows=rows,
                     shingle=shingle, ngram=ngram, seed=seed)


def dedup(texts: Sequence[str], **kwargs: Any) -> List[str]:
    """The texts without duplicates: the first of each cluster, in order (options as :func:`clusters`)."""
    texts = list(texts)
    return [t for k, (t, c) in enumerate(zip(texts, clusters(texts, **kwargs))) if c == k]


def _inputs(inputs: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    if isinstance(inputs, (str, os.PathLike)):
        return [os.fspath(inputs)]
    return [os.fspath(i) for i in inputs]


def pii_files(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, field: str = "text",
              strict: bool = False, threads: Optional[int] = None) -> Dict[str, Any]:
    """``tokenkit corpus pii``: the report as a dict."""
    return _files("pii", _inputs(inputs), os.fspath(output), field=field, strict=strict, threads=threads)


def dedup_files(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, field: str = "text",
                strict: bool = False, near: bool = False, threads: Optional[int] = None, **minhash: Any) -> Dict[str, Any]:
    """``tokenkit corpus dedup`` (``near=True`` and :func:`clusters`' options for near duplicates)."""
    return _files("dedup", _inputs(inputs), os.fspath(output), field=field, strict=strict, near=near, threads=threads,
                  **minhash)
