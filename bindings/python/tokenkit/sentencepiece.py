"""The ``sentencepiece`` API over tokenkit: ``from tokenkit import sentencepiece as spm`` in place of
``import sentencepiece as spm``.

:class:`SentencePieceProcessor` loads a ``.model`` (``model_file=`` or ``model_proto=``) and encodes
and decodes as sentencepiece does: the same ids, pieces, scores, n-best order and decoded text,
the same return types (``out_type=int``, ``str``, ``bytes``, ``"numpy"``, ``"proto"``,
``"serialized_proto"`` or ``"offset_mapping"``; a str gives a list, a list of str a list of lists)
and the same errors (``IndexError`` for an id out of range,
``ValueError`` for ``add_bos`` on a model without ``<s>``, ``TypeError`` for input that is not
str or bytes). Every method has sentencepiece's CamelCase and snake_case names.

Batches run in parallel in Rust with the GIL released (``num_threads=1`` keeps them on the
calling thread; any other value uses the process's thread pool). Sampling
(``enable_sampling=True``, ``sample_encode_as_*``) draws from the same distribution as
sentencepiece, for Unigram models, from tokenkit's own random generator
(:func:`set_random_generator_seed` makes it reproducible), so individual samples differ from
sentencepiece's. ``set_encode_extra_options`` takes the options string of sentencepiece's older
releases (``"bos:eos:reverse:unk"``).

``out_type="proto"`` gives ``SentencePieceText`` protobuf messages (the ``protobuf`` package is
needed, as for sentencepiece; the message classes are built from the same .proto definition and
serialize to the same bytes). ``ParallelEncode*`` returns what ``Encode`` does, as sentencepiece's
does (its chunks are joined back into the sequential result); batches are parallel already.
:class:`SentencePieceNormalizer` normalizes with a model's, a spec's or a built-in rule's
normalizer.

Not provided: BPE-dropout (sampling with a BPE model), ``ConvertToFlatbuffer`` (sentencepiece's
LiteRT model format), and a ``SentencePieceNormalizer`` from ``rule_tsv`` or ``norm_map`` or its
``Decompile``; each raises ``NotImplementedError``. ``ThreadPool`` objects are accepted as
``thread_pool=`` and use tokenkit's pool.
"""
from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Union

from ._tokenkit import SentencePieceCore, SentencePieceNormalizerCore
from ._tokenkit import sentencepiece_set_random_seed as _set_seed

__all__ = ["SentencePieceProcessor", "SentencePieceTrainer", "SentencePieceNormalizer", "SetRandomGeneratorSeed",
           "set_random_generator_seed", "SetMinLogLevel", "set_min_log_level", "SetDataDir", "set_data_dir",
           "SetNBestTimeout", "set_nbest_timeout", "ThreadPool", "ConvertToFlatbuffer", "convert_to_flatbuffer"]

_OUT_TYPES = (int, str, bytes, "proto", "serialized_proto", "numpy", "offset_mapping")
# The outputs made from a SentencePieceText, and what SentencePieceCore calls them.
_TEXT_OUTS = {"proto": "serialized", "serialized_proto": "serialized", "offset_mapping": "offsets"}
# Encode's output kinds, as SentencePieceCore names them.
_KINDS = {int: "ids", str: "pieces", bytes: "bytes"}
# The proto's piece types.
_UNKNOWN, _CONTROL, _UNUSED, _BYTE = 2, 3, 5, 6


def SetRandomGeneratorSeed(seed: int) -> None:
    """Seeds the generator that sampled encodings draw from (tokenkit's, not sentencepiece's)."""
    _set_seed(seed)


set_random_generator_seed = SetRandomGeneratorSeed


def SetMinLogLevel(v: int) -> None:
    """Accepted for compatibility: tokenkit.sentencepiece logs nothing while encoding."""
    int(v)


def SetDataDir(data_dir: str) -> None:
    """Accepted for compatibility: the built-in normalization rules are compiled into tokenkit."""
    str(data_dir)


def SetNBestTimeout(timeout_ms: int) -> None:
    """Accepted for compatibility: n-best search is bounded by ``nbest_size`` (at most 512)."""
    int(timeout_ms)


set_min_log_level = SetMinLogLevel
set_data_dir = SetDataDir
set_nbest_timeout = SetNBestTimeout


class ThreadPool:
    """sentencepiece's ``ThreadPool(num_threads)``, accepted as ``thread_pool=``: batches run on
    tokenkit's own pool."""

    def __init__(self, num_threads: int = -1):
        if not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        self._num_threads = num_threads

    def num_threads(self) -> int:
        import os
        return self._num_threads if self._num_threads > 0 else (os.cpu_count() or 1)


def ConvertToFlatbuffer(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError("ConvertToFlatbuffer (sentencepiece's LiteRT model format) is not provided by tokenkit")


convert_to_flatbuffer = ConvertToFlatbuffer

_PROTO = {}


def _proto_classes():
    """``SentencePieceText`` and ``NBestSentencePieceText`` message classes, built from the
    fields of sentencepiece.proto in a private descriptor pool (so they never clash with
    sentencepiece's own module when both are imported)."""
    if not _PROTO:
        try:
            from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
        except ImportError as e:
            raise ImportError("protobuf is required when using out_type='proto'. "
                              "Please install protobuf: pip install protobuf") from e
        F = descriptor_pb2.FieldDescriptorProto
        opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
        file = descriptor_pb2.FileDescriptorProto(name="tokenkit/sentencepiece.proto", package="sentencepiece",
                                                  syntax="proto2")
        text = file.message_type.add(name="SentencePieceText")
        piece = text.nested_type.add(name="SentencePiece")
        for name, number, kind in (("piece", 1, F.TYPE_STRING), ("id", 2, F.TYPE_UINT32), ("surface", 3, F.TYPE_STRING),
                                   ("begin", 4, F.TYPE_UINT32), ("end", 5, F.TYPE_UINT32)):
            piece.field.add(name=name, number=number, label=opt, type=kind)
        piece.extension_range.add(start=200, end=536870912)
        text.field.add(name="text", number=1, label=opt, type=F.TYPE_STRING)
        text.field.add(name="pieces", number=2, label=rep, type=F.TYPE_MESSAGE,
                       type_name=".sentencepiece.SentencePieceText.SentencePiece")
        text.field.add(name="score", number=3, label=opt, type=F.TYPE_FLOAT)
        text.extension_range.add(start=200, end=536870912)
        nbest = file.message_type.add(name="NBestSentencePieceText")
        nbest.field.add(name="nbests", number=1, label=rep, type=F.TYPE_MESSAGE,
                        type_name=".sentencepiece.SentencePieceText")
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        for name in ("SentencePieceText", "NBestSentencePieceText"):
            _PROTO[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName("sentencepiece." + name))
    return _PROTO


def _to_proto(serialized: bytes, name: str = "SentencePieceText"):
    message = _proto_classes()[name]()
    message.ParseFromString(serialized)
    return message


def _check_proto_args(add_bos, add_eos, reverse, emit_unk_piece) -> None:
    if add_bos or add_eos or reverse or emit_unk_piece:
        raise RuntimeError("add_bos, add_eos, reverse and emit_unk_piece are not supported with the proto and "
                           "offset_mapping outputs (as in sentencepiece)")


def _is_sequence(x: Any) -> bool:
    return hasattr(x, "__len__") and not isinstance(x, (str, bytes))


def _hashable(x: Any) -> bool:
    return getattr(x, "__hash__", None) is not None


def _out_kind(return_type: Any) -> str:
    return "ids" if return_type is int or return_type == "numpy" else "bytes" if return_type is bytes else "pieces"


class SentencePieceProcessor:
    """A SentencePiece model, as ``sentencepiece.SentencePieceProcessor``.

    The constructor's encode options (``out_type``, ``add_bos``, ...) are the defaults of
    :meth:`Encode`, as in sentencepiece.
    """

    def __init__(self, model_file=None, model_proto=None, out_type=None, add_bos=False, add_eos=False,
                 reverse=False, emit_unk_piece=False, enable_sampling=False, nbest_size=-1, alpha=0.1,
                 num_threads=-1, return_type=None):
        self._core: Optional[SentencePieceCore] = None
        self._return_type = self._resolve_return_type(return_type, out_type, default=int)
        self._add_bos = add_bos
        self._add_eos = add_eos
        self._reverse = reverse
        self._emit_unk_piece = emit_unk_piece
        self._enable_sampling = enable_sampling
        self._nbest_size = nbest_size
        self._alpha = alpha
        self._num_threads = num_threads
        if model_file or model_proto:
            self.Load(model_file=model_file, model_proto=model_proto)

    def _resolve_return_type(self, return_type, out_type, default=None):
        if out_type is not None:
            if return_type is not None:
                raise ValueError("Cannot specify both out_type and return_type. Use return_type instead.")
            return_type = out_type
        if return_type is None:
            return_type = default if default is not None else self._return_type
        if return_type == "immutable_proto":
            raise ValueError("immutable_proto is deprecated and no longer supported. Use return_type='proto' instead.")
        if return_type not in _OUT_TYPES:
            raise ValueError("Invalid return_type: {}. Must be one of {}".format(return_type, _OUT_TYPES))
        return return_type

    @property
    def _model(self) -> SentencePieceCore:
        if self._core is None:
            raise RuntimeError("the model is not loaded: call Load(model_file=...) first")
        return self._core

    # Loading.

    @classmethod
    def _unloaded(cls, constructor: str, kwargs: dict) -> "SentencePieceProcessor":
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise ValueError(f"model_file and model_proto cannot be passed via kwargs when using {constructor} classmethod.")
        return cls(**kwargs)

    @classmethod
    def from_file(cls, model_file, **kwargs):
        """A processor that loads a model file from disk."""
        processor = cls._unloaded("from_file", kwargs)
        processor.LoadFromFile(model_file)
        return processor

    @classmethod
    def from_proto(cls, model_proto, **kwargs):
        """A processor that loads a serialized model proto."""
        processor = cls._unloaded("from_proto", kwargs)
        processor.LoadFromSerializedProto(model_proto)
        return processor

    def Load(self, model_file=None, model_proto=None):
        if model_file and model_proto:
            raise ValueError("model_file and model_proto must be exclusive.")
        if model_proto:
            return self.LoadFromSerializedProto(model_proto)
        if model_file:
            return self.LoadFromFile(model_file)
        raise ValueError("Either model_file or model_proto must be specified.")

    def LoadFromFile(self, filename):
        self._core = SentencePieceCore.from_file(filename)
        return True

    def LoadFromSerializedProto(self, serialized):
        if hasattr(serialized, "SerializeToString"):
            serialized = serialized.SerializeToString()
        self._core = SentencePieceCore.from_bytes(bytes(serialized))
        return True

    def SetEncodeExtraOptions(self, extra_option: str) -> None:
        """sentencepiece's older ``"bos:eos:reverse:unk"`` options string: the listed options
        become the defaults of :meth:`Encode` (an empty string clears them)."""
        options = [o for o in extra_option.split(":") if o]
        unknown = [o for o in options if o not in ("bos", "eos", "reverse", "unk")]
        if unknown:
            raise ValueError(f"unknown extra_option type: {unknown[0]!r} (expected bos, eos, reverse or unk)")
        self._add_bos = "bos" in options
        self._add_eos = "eos" in options
        self._reverse = "reverse" in options
        self._emit_unk_piece = "unk" in options

    # Encoding.

    def Encode(self, input, add_bos=None, add_eos=None, reverse=None, emit_unk_piece=None, enable_sampling=None,
               nbest_size=None, alpha=None, num_threads=None, thread_pool=None, return_type=None, out_type=None,
               return_bytes=None):
        """Encodes a str (or UTF-8 bytes) to a list, a list of them to a list of lists."""
        # The common call (`encode(x)`, `encode(x, out_type=str)`) skips the argument merging,
        # which costs more than encoding a short line.
        if (add_bos is None and add_eos is None and reverse is None and emit_unk_piece is None and enable_sampling is None
                and nbest_size is None and alpha is None and num_threads is None and return_type is None
                and return_bytes is None and not self._enable_sampling):
            kind = _KINDS.get(self._return_type if out_type is None else out_type) if _hashable(out_type) else None
            if kind is not None:
                return self._model.encode(input, kind, self._add_bos, self._add_eos, self._reverse, self._emit_unk_piece,
                                          None, self._num_threads)
        return_type = self._resolve_return_type(return_type, out_type)
        if return_bytes is not None and return_type != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        add_bos = self._add_bos if add_bos is None else add_bos
        add_eos = self._add_eos if add_eos is None else add_eos
        reverse = self._reverse if reverse is None else reverse
        emit_unk_piece = self._emit_unk_piece if emit_unk_piece is None else emit_unk_piece
        enable_sampling = self._enable_sampling if enable_sampling is None else enable_sampling
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        alpha = self._alpha if alpha is None else alpha
        num_threads = self._num_threads if num_threads is None else num_threads
        if enable_sampling is True and (nbest_size is None or nbest_size == 0 or nbest_size == 1 or alpha is None):
            raise ValueError(
                'When enable_sampling is True, We must specify "nbest_size > 1" or "nbest_size = -1", '
                'and "alpha". "nbest_size" is enabled only on unigram mode ignored in BPE-dropout. '
                'when "nbest_size = -1" , this method samples from all candidates on the lattice '
                "instead of nbest segmentations."
            )
        if not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        sampling = (nbest_size, alpha) if enable_sampling else None
        if return_type in _TEXT_OUTS:
            _check_proto_args(add_bos, add_eos, reverse, emit_unk_piece)
            if return_bytes is None:
                return_bytes = isinstance(input, bytes) or bool(isinstance(input, list) and input
                                                                and isinstance(input[0], bytes))
            out = self._model.encode_text(input, _TEXT_OUTS[return_type], sampling, bool(return_bytes), num_threads)
            if return_type == "proto":
                return [_to_proto(x) for x in out] if isinstance(input, list) else _to_proto(out)
            return out
        out = self._model.encode(input, _out_kind(return_type), add_bos, add_eos, reverse, emit_unk_piece, sampling,
                                 num_threads)
        if return_type == "numpy":
            import numpy as np
            if isinstance(input, list):
                return [np.array(ids, dtype=np.int32) for ids in out]
            return np.array(out, dtype=np.int32)
        return out

    def EncodeAsPieces(self, input, **kwargs):
        return self.Encode(input=input, return_type=str, **kwargs)

    def EncodeAsIds(self, input, **kwargs):
        return self.Encode(input=input, return_type=int, **kwargs)

    def EncodeAsNumpy(self, input, **kwargs):
        return self.Encode(input=input, return_type="numpy", **kwargs)

    def EncodeAsProto(self, input, **kwargs):
        return self.Encode(input=input, return_type="proto", **kwargs)

    def EncodeAsOffsetMapping(self, input, **kwargs):
        return self.Encode(input=input, return_type="offset_mapping", **kwargs)

    def SampleEncodeAsPieces(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.Encode(input=input, nbest_size=nbest_size, alpha=alpha, return_type=str, enable_sampling=True,
                           **kwargs)

    def SampleEncodeAsIds(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.Encode(input=input, nbest_size=nbest_size, alpha=alpha, return_type=int, enable_sampling=True,
                           **kwargs)

    def SampleEncodeAsNumpy(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.Encode(input=input, nbest_size=nbest_size, alpha=alpha, return_type="numpy",
                           enable_sampling=True, **kwargs)

    def SampleEncodeAsProto(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.Encode(input=input, nbest_size=nbest_size, alpha=alpha, return_type="proto",
                           enable_sampling=True, **kwargs)

    def NBestEncode(self, input, add_bos=None, add_eos=None, reverse=None, emit_unk_piece=None, nbest_size=None,
                    return_type=None, out_type=None):
        """The ``nbest_size`` best segmentations (Unigram models), best first."""
        return_type = self._resolve_return_type(return_type, out_type)
        if return_type in ("proto", "serialized_proto"):
            add_bos = self._add_bos if add_bos is None else add_bos
            add_eos = self._add_eos if add_eos is None else add_eos
            reverse = self._reverse if reverse is None else reverse
            emit_unk_piece = self._emit_unk_piece if emit_unk_piece is None else emit_unk_piece
            _check_proto_args(add_bos, add_eos, reverse, emit_unk_piece)
            nbest_size = max(self._nbest_size if nbest_size is None else nbest_size, 1)

            def one(text):
                raw = self._model.nbest_text(text, nbest_size)
                return raw if return_type == "serialized_proto" else _to_proto(raw, "NBestSentencePieceText")

            return [one(t) for t in input] if isinstance(input, list) else one(input)
        if return_type == "offset_mapping":
            raise ValueError("unknown return_type={}".format(return_type))
        nbests = self.NBestEncodeWithScores(input, add_bos, add_eos, reverse, emit_unk_piece, nbest_size, return_type)
        if isinstance(input, list):
            return [[row for row, _ in nbest] for nbest in nbests]
        return [row for row, _ in nbests]

    def NBestEncodeWithScores(self, input, add_bos=None, add_eos=None, reverse=None, emit_unk_piece=None,
                              nbest_size=None, return_type=None, out_type=None):
        """tokenkit's addition: :meth:`NBestEncode` as ``(segmentation, score)`` pairs, the score
        being the one sentencepiece's ``NBestSentencePieceText`` reports."""
        return_type = self._resolve_return_type(return_type, out_type)
        add_bos = self._add_bos if add_bos is None else add_bos
        add_eos = self._add_eos if add_eos is None else add_eos
        reverse = self._reverse if reverse is None else reverse
        emit_unk_piece = self._emit_unk_piece if emit_unk_piece is None else emit_unk_piece
        nbest_size = max(self._nbest_size if nbest_size is None else nbest_size, 1)
        model, kind = self._model, _out_kind(return_type)

        def one(text):
            rows = model.nbest(text, nbest_size, kind, add_bos, add_eos, reverse, emit_unk_piece)
            if return_type == "numpy":
                import numpy as np
                return [(np.array(ids, dtype=np.int32), score) for ids, score in rows]
            return rows

        return [one(t) for t in input] if isinstance(input, list) else one(input)

    def NBestEncodeAsPieces(self, input, nbest_size=None, **kwargs):
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type=str, **kwargs)

    def NBestEncodeAsIds(self, input, nbest_size=None, **kwargs):
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type=int, **kwargs)

    def NBestEncodeAsNumpy(self, input, nbest_size=None, **kwargs):
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type="numpy", **kwargs)

    def NBestEncodeAsProto(self, input, nbest_size=None, **kwargs):
        return self.NBestEncode(input=input, nbest_size=nbest_size, return_type="proto", **kwargs)

    def ParallelEncode(self, input, add_bos=None, add_eos=None, reverse=None, emit_unk_piece=None, chunk_len=None,
                       num_threads=None, thread_pool=None, return_type=None, out_type=None):
        """sentencepiece's encoding of one long text in chunks: the same result as :meth:`Encode`
        (sentencepiece joins its chunks back into it)."""
        return_type = self._resolve_return_type(return_type, out_type)
        num_threads = self._num_threads if num_threads is None else num_threads
        if not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        if chunk_len is None or not isinstance(chunk_len, int) or chunk_len <= 0:
            raise ValueError("chunk_len must be positive.")
        if return_type == "offset_mapping":
            raise ValueError("unknown return_type={}".format(return_type))
        return self.Encode(input, add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
                           enable_sampling=False, num_threads=num_threads, return_type=return_type)

    def ParallelEncodeAsPieces(self, input, **kwargs):
        return self.ParallelEncode(input=input, return_type=str, **kwargs)

    def ParallelEncodeAsIds(self, input, **kwargs):
        return self.ParallelEncode(input=input, return_type=int, **kwargs)

    def ParallelEncodeAsNumpy(self, input, **kwargs):
        return self.ParallelEncode(input=input, return_type="numpy", **kwargs)

    def ParallelEncodeAsProto(self, input, **kwargs):
        return self.ParallelEncode(input=input, return_type="proto", **kwargs)

    # Decoding.

    def Decode(self, input, return_type=None, out_type=None, num_threads=None, thread_pool=None, return_bytes=None):
        """Decodes ids or pieces: one sequence (or one id or piece) to a str, a batch to a list."""
        return_type = self._resolve_return_type(return_type, out_type, default=str)
        if return_type not in (str, bytes) and return_type not in _TEXT_OUTS:
            raise ValueError("unknown return_type={} or input type".format(return_type))
        if return_bytes is not None and return_type != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        num_threads = self._num_threads if num_threads is None else num_threads
        if not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        if input is None or (isinstance(input, (str, bytes)) and len(input) == 0):
            input = []
        if not _is_sequence(input):
            input = [input]
            is_batch = False
        elif hasattr(input, "ndim"):
            is_batch = input.ndim > 1
        else:
            is_batch = len(input) > 0 and _is_sequence(input[0])
        model = self._model
        if return_type in _TEXT_OUTS:
            return self._decode_text(input, is_batch, return_type, bool(return_bytes), num_threads)
        # Pieces given as bytes decode to bytes (the first piece decides, as in sentencepiece).
        if is_batch:
            first = next((row for row in input if _is_sequence(row) and len(row) > 0), ())
            as_bytes = return_type is bytes or (_is_pieces(first) and isinstance(first[0], bytes))
            if _is_pieces(first):
                out = model.decode_pieces_batch([_pieces(row) for row in input], num_threads)
            else:
                out = model.decode_ids_batch(_ids(input), num_threads)
            return [t.encode() for t in out] if as_bytes else out
        if _is_pieces(input):
            out = model.decode_pieces(_pieces(input))
            as_bytes = return_type is bytes or isinstance(input[0], bytes)
        else:
            out, as_bytes = model.decode_ids(_ids(input)), return_type is bytes
        return out.encode() if as_bytes else out

    def _decode_text(self, input, is_batch, return_type, return_bytes, num_threads):
        """Decode into a ``SentencePieceText`` (``proto``, ``serialized_proto``) or its
        ``offset_mapping``."""
        if is_batch:
            first = next((row for row in input if _is_sequence(row) and len(row) > 0), ())
            is_pieces = _is_pieces(first)
            rows = [_pieces(row) for row in input] if is_pieces else _ids(input)
            # Pieces given as bytes give bytes, as in sentencepiece (per row).
            return_bytes = return_bytes or (is_pieces and isinstance(first[0], bytes))
        else:
            is_pieces = _is_pieces(input)
            rows = _pieces(input) if is_pieces else _ids(input)
            return_bytes = return_bytes or (is_pieces and isinstance(input[0], bytes))
        out = self._model.decode_text(rows, is_pieces, is_batch, _TEXT_OUTS[return_type], return_bytes, num_threads)
        if return_type == "proto":
            return [_to_proto(x) for x in out] if is_batch else _to_proto(out)
        return out

    def DecodeIdsAsProto(self, input, **kwargs):
        return self.Decode(input=input, return_type="proto", **kwargs)

    def DecodePiecesAsProto(self, input, **kwargs):
        return self.Decode(input=input, return_type="proto", **kwargs)

    def DecodePieces(self, input, return_type=None, **kwargs):
        return self.Decode(input=input, return_type=return_type, **kwargs)

    def DecodeIds(self, input, return_type=None, **kwargs):
        return self.Decode(input=input, return_type=return_type, **kwargs)

    def Normalize(self, input, with_offsets=None):
        """The normalized text; with ``with_offsets``, ``(text, offsets)``: per normalized char
        (byte, for bytes input) and the end, the input char (byte) it comes from."""
        model = self._model

        def one(text):
            if with_offsets:
                return model.normalize_with_offsets(text)
            return model.normalize(text)

        return [one(x) for x in input] if isinstance(input, list) else one(input)

    # The vocabulary.

    def GetPieceSize(self) -> int:
        return self._model.piece_size()

    def PieceToId(self, piece):
        model = self._model
        if isinstance(piece, (str, bytes)):
            return model.piece_to_id(_piece_str(piece))
        try:
            return [model.piece_to_id(_piece_str(p)) for p in piece]
        except TypeError:
            raise TypeError("Sequence elements must be str or bytes") from None

    def _per_id(self, ids, method):
        if isinstance(ids, int):
            return method(ids)
        ids = _ids(ids)
        if isinstance(ids, (str, bytes)):
            raise TypeError("Input must be an integer buffer, list of integers, or a sequence of integers.")
        for i in ids:
            method(i)  # every id is checked before any result is made, as sentencepiece does
        return [method(i) for i in ids]

    def IdToPiece(self, id):
        return self._per_id(id, self._model.id_to_piece)

    def GetScore(self, id):
        return self._per_id(id, self._model.score)

    def _is(self, id, kind):
        kind_of = self._model.kind
        return self._per_id(id, lambda i: kind_of(i) == kind)

    def IsUnknown(self, id):
        return self._is(id, _UNKNOWN)

    def IsControl(self, id):
        return self._is(id, _CONTROL)

    def IsUnused(self, id):
        return self._is(id, _UNUSED)

    def IsByte(self, id):
        return self._is(id, _BYTE)

    def unk_id(self) -> int:
        return self._model.special_ids()[0]

    def bos_id(self) -> int:
        return self._model.special_ids()[1]

    def eos_id(self) -> int:
        return self._model.special_ids()[2]

    def pad_id(self) -> int:
        return self._model.special_ids()[3]

    def serialized_model_proto(self) -> bytes:
        return self._model.serialized()

    piece_size = GetPieceSize
    vocab_size = GetPieceSize

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_core", None)
        state["model_proto"] = self.serialized_model_proto()
        return state

    def __setstate__(self, state):
        state = dict(state) if isinstance(state, dict) else {"model_proto": state}
        SentencePieceProcessor.__init__(self)
        self.LoadFromSerializedProto(state.pop("model_proto"))
        self.__dict__.update(state)

    def __len__(self) -> int:
        return self.GetPieceSize()

    def __getitem__(self, piece):
        return self.PieceToId(piece)


def _is_pieces(seq) -> bool:
    if len(seq) == 0 or hasattr(seq, "dtype"):
        return False
    return isinstance(seq[0], (str, bytes))


def _piece_str(p: Union[str, bytes]) -> str:
    return p.decode() if isinstance(p, bytes) else p


def _pieces(seq: Sequence) -> Sequence[str]:
    """Pieces as Rust takes them: str (bytes pieces decoded from UTF-8)."""
    return [_piece_str(p) for p in seq] if any(isinstance(p, bytes) for p in seq) else seq


def _ids(seq: Sequence) -> Sequence:
    """Ids (or rows of ids) as Rust takes them: numpy arrays as lists."""
    if hasattr(seq, "tolist"):
        return seq.tolist()
    if len(seq) > 0 and hasattr(seq[0], "tolist"):
        return [row.tolist() for row in seq]
    return seq


SentencePieceProcessor.Tokenize = SentencePieceProcessor.Encode
SentencePieceProcessor.Detokenize = SentencePieceProcessor.Decode


def _add_snake_case(cls) -> None:
    """sentencepiece's snake_case alias of every CamelCase method (``NBest`` becomes ``nbest``)."""
    for name, value in list(vars(cls).items()):
        if re.match(r"^[A-Z]+", name):
            setattr(cls, re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("n_best", "nbest"), value)


_add_snake_case(SentencePieceProcessor)


class SentencePieceNormalizer:
    """``sentencepiece.SentencePieceNormalizer``: the normalizer of a model (``model_file=``,
    ``model_proto=``), of a ``NormalizerSpec`` (``normalizer_spec=``, serialized or a message)
    or of a built-in rule (``rule_name=``: nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf, identity); the
    flags override the spec's when given."""

    def __init__(self, model_file=None, model_proto=None, normalizer_spec=None, rule_tsv=None, rule_name=None,
                 norm_map=None, add_dummy_prefix=None, escape_whitespaces=None, remove_extra_whitespaces=None):
        if model_file:
            core = SentencePieceNormalizerCore.from_model_file(model_file)
        elif model_proto:
            core = SentencePieceNormalizerCore.from_model_proto(_serialized(model_proto))
        elif normalizer_spec:
            core = SentencePieceNormalizerCore.from_normalizer_spec(_serialized(normalizer_spec))
        elif rule_tsv or norm_map:
            raise NotImplementedError("SentencePieceNormalizer from rule_tsv or norm_map is not provided by tokenkit; "
                                      "use rule_name, a model or a normalizer_spec")
        elif rule_name:
            core = SentencePieceNormalizerCore.from_rule_name(rule_name)
        else:
            raise ValueError("no model is specified")
        for name, value in (("add_dummy_prefix", add_dummy_prefix), ("escape_whitespaces", escape_whitespaces),
                            ("remove_extra_whitespaces", remove_extra_whitespaces)):
            if value is not None:
                core.set_flag(name, bool(value))
        self._core = core

    def Decompile(self):
        raise NotImplementedError("SentencePieceNormalizer.Decompile is not provided by tokenkit")

    def serialized_model_proto(self) -> bytes:
        return self._core.serialized_model_proto()

    def serialized_normalizer_spec(self) -> bytes:
        return self._core.serialized_normalizer_spec()

    def Normalize(self, input, with_offsets=None):
        core = self._core

        def one(text):
            return core.normalize_with_offsets(text) if with_offsets else core.normalize(text)

        return [one(x) for x in input] if isinstance(input, list) else one(input)

    def __getstate__(self):
        return self.serialized_normalizer_spec()

    def __setstate__(self, state):
        self._core = SentencePieceNormalizerCore.from_normalizer_spec(state)


def _serialized(message) -> bytes:
    return bytes(message.SerializeToString() if hasattr(message, "SerializeToString") else message)


_add_snake_case(SentencePieceNormalizer)


# ---- SentencePieceTrainer -------------------------------------------------------------------

from ._tokenkit import train_sentencepiece as _train_sentencepiece  # noqa: E402


def _option_text(value: Any) -> str:
    """An option value in spm_train's text form (sentencepiece's own conversion)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    return str(value)


class SentencePieceTrainer:
    """``sentencepiece.SentencePieceTrainer``: trains a model with sentencepiece's options and
    writes ``model_prefix.model`` and ``.vocab`` (or gives the model to ``model_writer``)."""

    @staticmethod
    def Train(arg: Optional[str] = None, logstream: Any = None, **kwargs: Any) -> None:
        options: List[tuple] = []
        if arg is not None:
            if not isinstance(arg, str):
                raise TypeError("SentencePieceTrainer.train: the first argument must be a string of --name=value flags")
            for flag in arg.split():
                if not flag.startswith("-"):
                    raise ValueError(f"SentencePieceTrainer.train: expected --name=value, got {flag!r}")
                name, _, value = flag.lstrip("-").partition("=")
                options.append((name, value))
        sentences = None
        writer = None
        for name, value in kwargs.items():
            if name == "sentence_iterator":
                sentences = [s.decode("utf-8") if isinstance(s, bytes) else str(s) for s in value]
            elif name == "model_writer":
                writer = value
            else:
                options.append((name, _option_text(value)))
        if sentences is not None and any(k == "input" for k, _ in options):
            raise ValueError("SentencePieceTrainer.train: give either input or sentence_iterator, not both")
        if writer is not None and any(k == "model_prefix" and v for k, v in options):
            raise ValueError("SentencePieceTrainer.train: give either model_prefix or model_writer, not both")
        model = _train_sentencepiece(options, sentences, writer is None)
        if writer is not None:
            writer.write(model)

    train = Train
