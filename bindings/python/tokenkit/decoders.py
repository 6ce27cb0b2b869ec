"""Decoders: turn token strings back into text, with the class names and constructor arguments
of ``tokenizers.decoders``; plus :class:`DecodeStream` for streaming decoding."""
from __future__ import annotations

from typing import List, Union

from ._base import Component, Regex, children_json, make_from_json, pattern_json
from ._tokenkit import DecodeStream

__all__ = [
    "Decoder", "BPEDecoder", "ByteFallback", "ByteLevel", "CTC", "DecodeStream", "Fuse", "Metaspace", "Replace",
    "Sequence", "Strip", "WordPiece",
]


class Decoder(Component):
    """Base class of all decoders (not instantiable; use one of the subclasses)."""

    _kind = "decoder"

    def decode(self, tokens: List[str]) -> str:
        """Decodes a list of token strings.

        Args:
            tokens (:obj:`List[str]`): The tokens.

        Returns:
            :obj:`str`: The text.
        """
        return self._rust().decode(list(tokens))


class ByteLevel(Decoder):
    """Maps GPT-2's byte-level characters back to bytes, then UTF-8 text."""

    def __init__(self, **_kwargs) -> None:
        self._set({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True})


class ByteFallback(Decoder):
    """Turns ``<0xXX>`` byte tokens back into bytes (invalid UTF-8 becomes U+FFFD)."""

    def __init__(self) -> None:
        self._set({"type": "ByteFallback"})


class Fuse(Decoder):
    """Concatenates all tokens into one string."""

    def __init__(self) -> None:
        self._set({"type": "Fuse"})


class BPEDecoder(Decoder):
    """Replaces the end-of-word ``suffix`` with spaces.

    Args:
        suffix (:obj:`str`, defaults to ``"</w>"``): The end-of-word suffix.
    """

    def __init__(self, suffix: str = "</w>") -> None:
        self._set({"type": "BPEDecoder", "suffix": suffix})


class CTC(Decoder):
    """CTC output: collapses repeats, removes ``pad_token``, ``word_delimiter_token`` becomes a space.

    Args:
        pad_token (:obj:`str`, defaults to ``"<pad>"``)
        word_delimiter_token (:obj:`str`, defaults to ``"|"``)
        cleanup (:obj:`bool`, defaults to :obj:`True`): Tidy spaces around punctuation.
    """

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self._set({"type": "CTC", "pad_token": pad_token, "word_delimiter_token": word_delimiter_token,
                   "cleanup": cleanup})


class Metaspace(Decoder):
    """Turns ``replacement`` back into spaces (and drops the prepended one).

    Args:
        replacement (:obj:`str`, defaults to ``"▁"``)
        prepend_scheme (:obj:`str`, defaults to ``"always"``): ``"always"``, ``"never"`` or ``"first"``.
        split (:obj:`bool`, defaults to :obj:`True`)
    """

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ValueError("expected a string of length 1")
        if prepend_scheme not in ("always", "never", "first"):
            raise ValueError(f"{prepend_scheme} is an unknown variant, should be one of ['first', 'never', 'always']")
        self._set({"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split})


class Replace(Decoder):
    """Replaces ``pattern`` with ``content`` in each token.

    Args:
        pattern (:obj:`str` or :class:`~tokenkit.Regex`)
        content (:obj:`str`)
    """

    def __init__(self, pattern: Union[str, Regex], content: str) -> None:
        self._set({"type": "Replace", "pattern": pattern_json(pattern), "content": content})


class Strip(Decoder):
    """Removes up to ``left`` leading and ``right`` trailing ``content`` characters of each token.

    Args:
        content (:obj:`str`, defaults to ``" "``): One character.
        left (:obj:`int`, defaults to 0)
        right (:obj:`int`, defaults to 0)
    """

    def __init__(self, content: str = " ", left: int = 0, right: int = 0) -> None:
        self._set({"type": "Strip", "content": content, "start": left, "stop": right})


class WordPiece(Decoder):
    """Joins WordPiece subwords (drops ``prefix``) and optionally tidies spaces.

    Args:
        prefix (:obj:`str`, defaults to ``"##"``)
        cleanup (:obj:`bool`, defaults to :obj:`True`): Tidy spaces around punctuation and contractions.
    """

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self._set({"type": "WordPiece", "prefix": prefix, "cleanup": cleanup})


class Sequence(Decoder):
    """Applies several decoders in order.

    Args:
        decoders (:obj:`List[Decoder]`): The decoders.
    """

    _children_key = "decoders"

    def __init__(self, decoders: List[Decoder]) -> None:
        self._set({"type": "Sequence", "decoders": children_json(decoders, "decoder")})


_CLASSES = {"BPEDecoder": BPEDecoder, "ByteFallback": ByteFallback, "ByteLevel": ByteLevel, "CTC": CTC, "Fuse": Fuse,
            "Metaspace": Metaspace, "Replace": Replace, "Sequence": Sequence, "Strip": Strip, "WordPiece": WordPiece}
_from_json = make_from_json(Decoder, _CLASSES)
