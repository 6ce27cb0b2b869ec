"""Corpus preparation: the steps of ``tokenkit corpus`` over lists of strings and over files.

- :func:`clean` cleans texts (control and invisible characters, Unicode normalisation,
  whitespace, optionally HTML) and filters them (length, the Gopher quality and repetition rules).
- :func:`pii` replaces personal data by typed placeholders (``[EMAIL]``, ``[PHONE]``, ``[ID]``,
  ``[CARD]``, ``[IP]``, ``[IBAN]``, ``[URL]``, and ``[LABEL]`` for the user's dictionaries and
  patterns) and counts them; :func:`find_pii` lists them.
- :func:`clusters` gives each text's duplicate cluster (exact, or near with MinHash + LSH) and
  :func:`dedup` the texts without duplicates (the first of each cluster, in order);
  :func:`band_keys` and :func:`components` are the two halves of the same near dedup for Ray Data
  or Spark (keys in map tasks, a group-by on ``(band, key)``, components of the linked ids).
- :func:`detect_lang` gives each text's language (whatlang, ISO 639-3 codes) and confidence.
- :func:`split_of` gives each text's split (by a hash of the text: stable as the corpus grows).
- :func:`clean_files`, :func:`pii_files`, :func:`dedup_files`, :func:`lang_files`,
  :func:`split_files`, :func:`stats_files` and :func:`run_pipeline` are ``tokenkit corpus ...``
  as calls; each returns the step's report as a dict (a list of them for a pipeline).

Options are those of the CLI, with ``_`` for ``-`` (``min_chars=200``, ``quality=True`` or a dict
of Gopher thresholds such as ``{"min_stop_words": 0}``); a pipeline is the same JSON as a
``tokenkit corpus run`` file. The functions over lists are plain per-batch functions, usable as map
functions in Ray Data or Spark (exact ``dedup`` is global, so it needs all texts or a groupby on a
hash).
"""
import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ._tokenkit import corpus_band_keys as _band_keys
from ._tokenkit import corpus_clean as _clean
from ._tokenkit import corpus_clusters as _clusters
from ._tokenkit import corpus_detect_lang as _detect_lang
from ._tokenkit import corpus_files as _files
from ._tokenkit import corpus_find_pii as _find_pii
from ._tokenkit import corpus_pii as _pii
from ._tokenkit import corpus_split_of as _split_of

__all__ = ["clean", "pii", "find_pii", "clusters", "band_keys", "components", "dedup", "detect_lang", "split_of", "clean_files", "pii_files",
           "dedup_files", "lang_files", "split_files", "stats_files", "run_pipeline"]

PathLike = Union[str, "os.PathLike[str]"]


def _pii_options(dictionaries: Optional[Dict[str, PathLike]], patterns: Optional[Dict[str, str]], ignore_case: bool) -> str:
    return json.dumps({"dictionaries": {k: os.fspath(v) for k, v in (dictionaries or {}).items()},
                       "patterns": dict(patterns or {}), "ignore_case": ignore_case})


def pii(texts: Sequence[str], *, dictionaries: Optional[Dict[str, PathLike]] = None,
        patterns: Optional[Dict[str, str]] = None, ignore_case: bool = False) -> Tuple[List[str], Dict[str, int]]:
    """The texts with their personal data replaced, and the count per placeholder.

    ``dictionaries`` maps a label to a file of terms (one per line: names, places), ``patterns`` a
    label to a regular expression (Rust ``regex`` syntax); their matches become ``[LABEL]``.
    ``ignore_case`` matches dictionary terms whatever their ASCII case."""
    out, counts = _pii(list(texts), _pii_options(dictionaries, patterns, ignore_case))
    return out, {k: n for k, n in counts if n}


def find_pii(text: str, *, dictionaries: Optional[Dict[str, PathLike]] = None,
             patterns: Optional[Dict[str, str]] = None, ignore_case: bool = False) -> List[Tuple[str, int, int]]:
    """The personal data of ``text`` as ``(placeholder, start, end)``, in characters (options as
    :func:`pii`)."""
    return _find_pii(text, _pii_options(dictionaries, patterns, ignore_case))


def clean(texts: Sequence[str], **options: Any) -> Tuple[List[Optional[str]], List[Optional[str]]]:
    """Each text cleaned (``None`` when removed) and the rule that removed it (``None`` when kept).

    Options: ``html``, ``controls``, ``normalize`` (``"nfc"``, ``"nfkc"``, ``"none"``), ``whitespace``,
    ``min_chars``, ``max_chars``, ``quality`` and ``repetition`` (``True`` or a dict of thresholds)."""
    pairs = _clean(list(texts), json.dumps(options))
    return [t for t, _ in pairs], [r for _, r in pairs]


def clusters(texts: Sequence[str], *, near: bool = False, **minhash: Any) -> List[int]:
    """The cluster of each text: the index of the first text of its cluster. With ``near``, MinHash
    options: ``threshold``, ``num_perm``, ``bands``, ``rows``, ``shingle`` (``"word"``, ``"char"``),
    ``ngram``, ``seed``."""
    return _clusters(list(texts), json.dumps({"near": near, **minhash}))


def band_keys(texts: Sequence[str], **minhash: Any) -> List[List[int]]:
    """Each text's LSH bucket key in every band (MinHash options as :func:`clusters`), as signed
    64-bit integers: ``keys[i][b]``. Texts that share the key of some band are near duplicates
    (one cluster, transitively), exactly as :func:`clusters` with ``near=True`` finds them. For a
    corpus spread over machines: compute the keys in map tasks, group the ``(band, key, id)`` rows
    by ``(band, key)``, link each group's ids to its smallest and take :func:`components`."""
    return _band_keys(list(texts), json.dumps({"near": True, **minhash}))


def components(pairs: Iterable[Tuple[int, int]]) -> Dict[int, int]:
    """The connected components of the linked ``(a, b)`` id pairs: each id that appears in a pair,
    mapped to the smallest id of its component. With ids in input order, a document is kept by
    near dedup when it maps to itself or appears in no pair."""
    parent: Dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in list(parent)}


def detect_lang(texts: Sequence[str]) -> List[Tuple[str, float]]:
    """The language of each text (ISO 639-3 such as ``"eng"``, ``"cmn"``; ``"und"`` when unknown)
    and the confidence, from 0 to 1."""
    return _detect_lang(list(texts))


def split_of(texts: Sequence[str], fractions: str = "train=0.98,validation=0.01,test=0.01", seed: int = 0) -> List[str]:
    """The split of each text, by a hash of the text (the same as :func:`split_files`)."""
    return _split_of(list(texts), fractions, seed)


def dedup(texts: Sequence[str], **kwargs: Any) -> List[str]:
    """The texts without duplicates: the first of each cluster, in order (options as :func:`clusters`)."""
    texts = list(texts)
    return [t for k, (t, c) in enumerate(zip(texts, clusters(texts, **kwargs))) if c == k]


def _inputs(inputs: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    if isinstance(inputs, (str, os.PathLike)):
        return [os.fspath(inputs)]
    return [os.fspath(i) for i in inputs]


def _step(step: str, inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, field: str, strict: bool,
          threads: Optional[int], options: Dict[str, Any]) -> Dict[str, Any]:
    return _files(json.dumps({"step": step, **options}), _inputs(inputs), os.fspath(output), field=field, strict=strict,
                  threads=threads)[0]


def clean_files(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, field: str = "text",
                strict: bool = False, threads: Optional[int] = None, **options: Any) -> Dict[str, Any]:
    """``tokenkit corpus clean`` (options as :func:`clean`): the report as a dict."""
    return _step("clean", inputs, output, field, strict, threads, options)


def pii_files(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, field: str = "text",
              strict: bool = False, threads: Optional[int] = None, dictionaries: Optional[Dict[str, PathLike]] = None,
              patterns: Optional[Dict[str, str]] = None, ignore_case: bool = False) -> Dict[str, Any]:
    """``tokenkit corpus pii`` (options as :func:`pii`): the report as a dict."""
    return _step("pii", inputs, output, field, strict, threads, json.loads(_pii_options(dictionaries, patterns, ignore_case)))


def dedup_files(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, field: str = "text",
                strict: bool = False, near: bool = False, threads: Optional[int] = None, **minhash: Any) -> Dict[str, Any]:
    """``tokenkit corpus dedup`` (``near=True`` and :func:`clusters`' options for near duplicates;
    ``unit="line"`` or ``"paragraph"`` to remove lines or paragraphs seen earlier in the corpus, with
    ``unit_min_chars``). At most ``memory_limit`` (``"1G"`` by default, a size such as ``"512M"``
    or a number of bytes) of hashes or band keys are held in memory; past it the input is read
    twice and the rest spilled to a temporary directory beside ``output``, with the same result."""
    return _step("dedup", inputs, output, field, strict, threads, {"near": near, **minhash})


def lang_files(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, *, field: str = "text",
               strict: bool = False, threads: Optional[int] = None, **options: Any) -> Dict[str, Any]:
    """``tokenkit corpus lang``: options ``keep`` (a list of codes), ``min_confidence``, ``label`` (a
    field name), ``proportions`` (a dict of code to share), ``seed``."""
    return _step("lang", inputs, output, field, strict, threads, options)


def split_files(inputs: Union[PathLike, Sequence[PathLike]], output_dir: PathLike, *,
                fractions: str = "train=0.98,validation=0.01,test=0.01", seed: int = 0, parquet: bool = False,
                field: str = "text", strict: bool = False, threads: Optional[int] = None) -> Dict[str, Any]:
    """``tokenkit corpus split``: ``output_dir/NAME.jsonl`` per split (``NAME.parquet`` with ``parquet=True``)."""
    return _step("split", inputs, output_dir, field, strict, threads,
                 {"fractions": fractions, "seed": seed, "parquet": parquet})


def stats_files(inputs: Union[PathLike, Sequence[PathLike]], *, lang: bool = False, field: str = "text",
                strict: bool = False, threads: Optional[int] = None) -> Dict[str, Any]:
    """``tokenkit corpus stats``: the counts are in the report's ``counts``."""
    return _step("stats", inputs, "", field, strict, threads, {"lang": lang})


def run_pipeline(pipeline: Union[PathLike, Dict[str, Any]], inputs: Union[PathLike, Sequence[PathLike]],
                 output: PathLike, *, field: str = "text", strict: bool = False,
                 threads: Optional[int] = None) -> List[Dict[str, Any]]:
    """``tokenkit corpus run``: a pipeline file, or the same as a dict (``{"steps": [...]}``); one report
    per step."""
    if not isinstance(pipeline, dict):
        with open(pipeline, encoding="utf-8") as f:
            pipeline = json.load(f)
    return _files(json.dumps(pipeline), _inputs(inputs), os.fspath(output), field=field, strict=strict, threads=threads)
