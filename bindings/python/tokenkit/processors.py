"""Post-processors: add special tokens, set type ids, trim offsets, with the class names and
constructor arguments of ``tokenizers.processors``."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _tokenkit
from ._base import Component, children_json, make_from_json

__all__ = ["PostProcessor", "BertProcessing", "ByteLevel", "RobertaProcessing", "Sequence", "TemplateProcessing"]


class PostProcessor(Component):
    """Base class of all post-processors (not instantiable; use one of the subclasses)."""

    _kind = "processor"

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens this adds to a single sequence (``is_pair=False``) or a pair."""
        return self._rust().num_special_tokens_to_add(is_pair)

    def process(self, encoding: Any, pair: Any = None, add_special_tokens: bool = True) -> Any:
        """Applies the post-processor to an :class:`~tokenkit.Encoding` (and its pair).

        Returns:
            :class:`~tokenkit.Encoding`: The final encoding.
        """
        return self._rust().process(encoding, pair, add_special_tokens)


def _token_pair(t: Any, name: str) -> List[Any]:
    if isinstance(t, (tuple, list)) and len(t) == 2 and isinstance(t[0], str) and isinstance(t[1], int):
        return [t[0], t[1]]
    raise TypeError(f"`{name}` must be a (str, int) tuple")


class BertProcessing(PostProcessor):
    """BERT's ``[CLS] A [SEP] B [SEP]`` with type ids 0 for A and 1 for B.

    Args:
        sep (:obj:`Tuple[str, int]`): The SEP token and its id.
        cls (:obj:`Tuple[str, int]`): The CLS token and its id.
    """

    def __init__(self, sep: Tuple[str, int], cls: Optional[Tuple[str, int]] = None, *,
                 cls_token: Optional[Tuple[str, int]] = None) -> None:
        cls = cls if cls is not None else cls_token
        self._set({"type": "BertProcessing", "sep": _token_pair(sep, "sep"), "cls": _token_pair(cls, "cls")})


class RobertaProcessing(PostProcessor):
    """RoBERTa's ``<s> A </s></s> B </s>``; optionally trims the offsets of ByteLevel spaces.

    Args:
        sep (:obj:`Tuple[str, int]`): The SEP token and its id.
        cls (:obj:`Tuple[str, int]`): The CLS token and its id.
        trim_offsets (:obj:`bool`, defaults to :obj:`True`): Trim whitespace from the offsets.
        add_prefix_space (:obj:`bool`, defaults to :obj:`True`): Whether the pre-tokenizer added a prefix space.
    """

    def __init__(self, sep: Tuple[str, int], cls: Optional[Tuple[str, int]] = None, trim_offsets: bool = True,
                 add_prefix_space: bool = True, *, cls_token: Optional[Tuple[str, int]] = None) -> None:
        cls = cls if cls is not None else cls_token
        self._set({"type": "RobertaProcessing", "sep": _token_pair(sep, "sep"), "cls": _token_pair(cls, "cls"),
                   "trim_offsets": trim_offsets, "add_prefix_space": add_prefix_space})


class ByteLevel(PostProcessor):
    """Trims the offsets of byte-level tokens so they do not include the leading space.

    Args:
        add_prefix_space (:obj:`bool`, defaults to :obj:`True`)
        trim_offsets (:obj:`bool`, defaults to :obj:`True`): Trim whitespace from the offsets.
        use_regex (:obj:`bool`, defaults to :obj:`True`)
    """

    def __init__(self, add_prefix_space: Optional[bool] = None, trim_offsets: Optional[bool] = None,
                 use_regex: Optional[bool] = None, **_kwargs: Any) -> None:
        self._set({"type": "ByteLevel",
                   "add_prefix_space": True if add_prefix_space is None else add_prefix_space,
                   "trim_offsets": True if trim_offsets is None else trim_offsets,
                   "use_regex": True if use_regex is None else use_regex})


def _special_token(t: Any) -> Dict[str, Any]:
    if isinstance(t, (tuple, list)) and len(t) == 2:
        a, b = t
        if isinstance(a, str) and isinstance(b, int):
            return {"id": a, "ids": [b], "tokens": [a]}
        if isinstance(a, int) and isinstance(b, str):
            return {"id": b, "ids": [a], "tokens": [b]}
    if isinstance(t, dict) and {"id", "ids", "tokens"} <= set(t):
        return {"id": t["id"], "ids": list(t["ids"]), "tokens": list(t["tokens"])}
    raise ValueError("Expected Union[Tuple[str, int], Tuple[int, str], dict] for a special token")


class TemplateProcessing(PostProcessor):
    """Places special tokens and type ids with templates.

    ``$A``/``$B`` (or ``$``) stand for the sequences, any other word is a special token; each
    piece may end with ``:<type_id>``, e.g. ``"[CLS] $A [SEP] $B:1 [SEP]:1"``.

    Args:
        single (:obj:`str` or :obj:`List[str]`, `optional`): Template of a single sequence.
        pair (:obj:`str` or :obj:`List[str]`, `optional`): Template of a pair.
        special_tokens (:obj:`List`, `optional`): ``(token, id)`` tuples or
            ``{"id": ..., "ids": [...], "tokens": [...]}`` dicts for every special token used.
    """

    def __init__(self, single: Optional[Union[str, List[str]]] = None, pair: Optional[Union[str, List[str]]] = None,
                 special_tokens: Optional[List[Any]] = None) -> None:
        specials = [_special_token(t) for t in (special_tokens or [])]
        self._set(json.loads(_tokenkit.template_processing_json(single, pair, json.dumps(specials))))


class Sequence(PostProcessor):
    """Applies several post-processors in order.

    Args:
        processors (:obj:`List[PostProcessor]`): The post-processors.
    """

    _children_key = "processors"

    def __init__(self, processors: List[PostProcessor]) -> None:
        self._set({"type": "Sequence", "processors": children_json(processors, "processor")})


_CLASSES = {"BertProcessing": BertProcessing, "RobertaProcessing": RobertaProcessing, "ByteLevel": ByteLevel,
            "TemplateProcessing": TemplateProcessing, "Sequence": Sequence}
_from_json = make_from_json(PostProcessor, _CLASSES)
