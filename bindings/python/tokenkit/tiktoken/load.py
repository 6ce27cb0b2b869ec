"""``tiktoken.load`` over tokenkit: read ``.tiktoken`` rank files into ``{token bytes: rank}``.

:func:`load_tiktoken_bpe` reads a local path (or a ``file://`` URL) and parses it in Rust, with
the same result as tiktoken. tokenkit downloads nothing: an ``http(s)://`` URL is read only when
the file is already on this machine, in tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``,
``$DATA_GYM_CACHE_DIR`` or ``<tmp>/data-gym-cache``, under the sha1 of the URL, where tiktoken
stores what it downloads) or under its file name in tokenkit's data directories
(``$TOKENKIT_TIKTOKEN_DIR``, ``~/.cache/tokenkit/tiktoken``, ``./.fixtures/tiktoken``); otherwise
the error names every place looked at.
"""
from __future__ import annotations

import base64
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from .._tokenkit import parse_rank_file, tiktoken_data_dirs, write_files

__all__ = ["read_file", "read_file_cached", "check_hash", "load_tiktoken_bpe", "dump_tiktoken_bpe"]


def _tiktoken_cache_dir() -> Optional[str]:
    """tiktoken's download cache (None when caching is disabled with an empty variable)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _local_copies(blobpath: str) -> List[Path]:
    """Where a URL's file may already be: tiktoken's cache entry, then its file name in each of
    tokenkit's data directories."""
    places = []
    cache = _tiktoken_cache_dir()
    if cache is not None:
        places.append(Path(cache) / hashlib.sha1(blobpath.encode()).hexdigest())
    name = blobpath.rstrip("/").rsplit("/", 1)[-1]
    places.extend(Path(d) / name for d in tiktoken_data_dirs())
    return places


def read_file(blobpath: str) -> bytes:
    """The bytes of a local path, a ``file://`` URL, or a URL whose file is on this machine
    (see the module documentation); nothing is downloaded."""
    if blobpath.startswith("file://"):
        blobpath = blobpath[len("file://"):]
    if "://" not in blobpath:
        with open(blobpath, "rb", buffering=0) as f:
            return f.read()
    places = _local_copies(blobpath)
    for place in places:
        if place.is_file():
            return place.read_bytes()
    raise FileNotFoundError(
        f"{blobpath}: tokenkit does not download files, and no local copy was found (looked at "
        f"{', '.join(str(p) for p in places)}); download it into $TOKENKIT_TIKTOKEN_DIR, or give its local path")


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether ``data``'s sha256 is ``expected_hash`` (hex)."""
    return hashlib.sha256(data).hexdigest() == expected_hash


def read_file_cached(blobpath: str, expected_hash: Optional[str] = None) -> bytes:
    """:func:`read_file`, checked against ``expected_hash`` when given (``ValueError`` on a
    mismatch, as tiktoken). Nothing is written to any cache."""
    data = read_file(blobpath)
    if expected_hash and not check_hash(data, expected_hash):
        raise ValueError(f"Hash mismatch for data read from {blobpath} (expected {expected_hash}, got "
                         f"{hashlib.sha256(data).hexdigest()}). This may indicate a corrupted file.")
    return data


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: Optional[str] = None) -> Dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file (``base64(token) rank`` lines): ``{token bytes: rank}``,
    as tiktoken's ``load_tiktoken_bpe``. ``ValueError`` names the file and line of a malformed
    line, or the hashes when ``expected_hash`` does not match."""
    data = read_file_cached(tiktoken_bpe_file, expected_hash)
    return parse_rank_file(data, str(tiktoken_bpe_file))


def dump_tiktoken_bpe(bpe_ranks: Dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Writes ranks as a ``.tiktoken`` file (lines in rank order) at a local path, atomically."""
    lines = (base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
             for token, rank in sorted(bpe_ranks.items(), key=lambda x: x[1]))
    write_files([(os.fspath(tiktoken_bpe_file), b"".join(lines))])
