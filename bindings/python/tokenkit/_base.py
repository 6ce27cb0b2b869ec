"""Shared machinery of the component classes (normalizers, pre-tokenizers, models,
post-processors, decoders).

Every component is a thin Python object holding its tokenizer.json object (a dict, exactly as
HF tokenizers writes it). The Rust library builds the real component from that JSON when the
object is attached to a :class:`~tokenkit.Tokenizer` or used on its own (``normalize_str``,
``pre_tokenize_str``, ``decode``, ...); it is compiled once and cached until an attribute changes.
"""
from __future__ import annotations

import copy
import json
from typing import Any, ClassVar, Dict, List, Optional, Tuple, Type, Union

from . import _tokenkit

__all__ = ["Regex", "Token", "Component", "pattern_json"]


class Regex:
    """A regular expression (Oniguruma syntax), to use where a pattern may be a string or a regex.

    Args:
        pattern (:obj:`str`): The regular expression.
    """

    __slots__ = ("pattern",)

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str):
            raise TypeError("Regex pattern must be a str")
        self.pattern = pattern

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(("Regex", self.pattern))


def pattern_json(pattern: Union[str, Regex]) -> Dict[str, str]:
    """The tokenizer.json form of a pattern: ``{"String": ...}`` or ``{"Regex": ...}``."""
    if isinstance(pattern, Regex):
        return {"Regex": pattern.pattern}
    if isinstance(pattern, str):
        return {"String": pattern}
    raise TypeError(f"pattern must be a str or a tokenkit.Regex, got {type(pattern).__name__}")


class Token:
    """A token produced by a model.

    Args:
        id (:obj:`int`): Its id.
        value (:obj:`str`): Its string.
        offsets (:obj:`Tuple[int, int]`): Byte offsets into the piece given to the model.
    """

    __slots__ = ("id", "value", "offsets")

    def __init__(self, id: int, value: str, offsets: Tuple[int, int]) -> None:
        self.id = id
        self.value = value
        self.offsets = tuple(offsets)

    def as_tuple(self) -> Tuple[int, str, Tuple[int, int]]:
        """``(id, value, offsets)``."""
        return (self.id, self.value, self.offsets)

    def __repr__(self) -> str:
        return f"Token(id={self.id}, value={self.value!r}, offsets={self.offsets})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token) and other.as_tuple() == self.as_tuple()


class Component:
    """Base of every component class: holds the component's tokenizer.json object.

    Attributes of the JSON object can be read and written as Python attributes
    (``pre_tokenizer.add_prefix_space = False``). A component read from a tokenizer
    (``tokenizer.pre_tokenizer``) is a copy: assign it back to change the tokenizer.
    """

    #: The library kind: "normalizer", "pre_tokenizer", "model", "processor", "decoder".
    _kind: ClassVar[str] = ""
    #: Python attribute → JSON key where they differ.
    _aliases: ClassVar[Dict[str, str]] = {}
    #: JSON key holding the children of a Sequence.
    _children_key: ClassVar[Optional[str]] = None

    _json: Dict[str, Any]
    _compiled: Optional[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"cannot create '{type(self).__module__}.{type(self).__name__}' instances")

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def _new(cls, obj: Dict[str, Any]) -> "Component":
        inst = object.__new__(cls)
        inst._set(obj)
        return inst

    def _set(self, obj: Dict[str, Any]) -> None:
        object.__setattr__(self, "_json", obj)
        object.__setattr__(self, "_compiled", None)

    def _tk_json(self) -> str:
        """The component's tokenizer.json object, as a JSON string (used by the Rust side)."""
        return json.dumps(self._json, ensure_ascii=False)

    def _rust(self) -> Any:
        """The compiled component (built on first use)."""
        if self._compiled is None:
            object.__setattr__(self, "_compiled", _tokenkit.Component(self._kind, self._tk_json()))
        return self._compiled

    # -- attributes ----------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        key = type(self)._aliases.get(name, name)
        obj = self.__dict__.get("_json")
        if obj is not None and key in obj and key != "type":
            value = obj[key]
            return copy.deepcopy(value)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        key = type(self)._aliases.get(name, name)
        if key == "type" or key not in self._json:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if isinstance(value, Component):
            value = value._json
        elif isinstance(value, tuple):
            value = list(value)
        self._json[key] = value
        object.__setattr__(self, "_compiled", None)

    # -- sequences -----------------------------------------------------------------------------
    def __getitem__(self, index: int) -> "Component":
        key = type(self)._children_key
        if key is None:
            raise TypeError(f"'{type(self).__name__}' object is not subscriptable")
        return _REGISTRIES[self._kind](json.dumps(self._json[key][index]))

    def __setitem__(self, index: int, value: "Component") -> None:
        key = type(self)._children_key
        if key is None:
            raise TypeError(f"'{type(self).__name__}' object does not support item assignment")
        self._json[key][index] = _child_json(value, self._kind)
        object.__setattr__(self, "_compiled", None)

    def __len__(self) -> int:
        key = type(self)._children_key
        if key is None:
            raise TypeError(f"object of type '{type(self).__name__}' has no len()")
        return len(self._json[key])

    # -- pickling, comparison, display ---------------------------------------------------------
    def __getstate__(self) -> str:
        return self._tk_json()

    def __setstate__(self, state: Union[str, bytes]) -> None:
        if isinstance(state, bytes):
            state = state.decode("utf-8")
        self._set(json.loads(state))

    def __copy__(self) -> "Component":
        return type(self)._new(copy.deepcopy(self._json))

    def __deepcopy__(self, memo: Any) -> "Component":
        return type(self)._new(copy.deepcopy(self._json))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Component) and other._kind == self._kind and other._json == self._json

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        args = []
        for k, v in self._json.items():
            if k == "type":
                continue
            if isinstance(v, (dict, list)) and len(v) > 8:
                v = f"<{len(v)} entries>"
                args.append(f"{k}={v}")
            else:
                args.append(f"{k}={v!r}")
        return f"{self._json.get('type', type(self).__name__)}({', '.join(args)})"

    __str__ = __repr__


#: kind → function building the right Python class from a JSON string (filled by each module).
_REGISTRIES: Dict[str, Any] = {}


def _child_json(value: Any, kind: str) -> Dict[str, Any]:
    if isinstance(value, Component) and value._kind == kind:
        return copy.deepcopy(value._json)
    raise TypeError(f"expected a tokenkit {kind}, got {type(value).__name__}")


def make_from_json(base: Type[Component], classes: Dict[str, Type[Component]]):
    """The ``_from_json`` of a component module: builds the class named by the JSON's ``type``."""

    def _from_json(s: str) -> Component:
        obj = json.loads(s)
        cls = classes.get(obj.get("type", ""), base)
        return cls._new(obj)

    _REGISTRIES[base._kind] = _from_json
    return _from_json


def children_json(items: Any, kind: str) -> List[Dict[str, Any]]:
    """The JSON objects of a list of components of one kind."""
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise TypeError(f"expected a list of {kind}s")
    return [_child_json(x, kind) for x in items]
