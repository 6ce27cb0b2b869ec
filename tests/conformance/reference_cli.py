#!/usr/bin/env python3
"""A stand-in for the `tokenkit` CLI built on HF `tokenizers`, implementing the same contract.

It exists to validate the conformance harness itself (every check must pass against it):

    TOKENKIT_BIN=tests/conformance/reference_cli.py .venv/bin/python -m pytest tests/conformance -q

(The shebang is not used; TOKENKIT_BIN pointing at a .py file runs it with this interpreter.)

REFERENCE_CLI_FAULT=<field> perturbs every 7th output line (ids, offsets, type_ids, word_ids,
overflowing, decode, stream, count) to check that the harness notices.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

FAULT = os.environ.get("REFERENCE_CLI_FAULT", "")
_n = 0


def emit(out, obj) -> None:
    global _n
    _n += 1
    if FAULT and _n % 7 == 0:
        if FAULT == "count":
            return
        if isinstance(obj, dict) and FAULT in obj and obj[FAULT]:
            v = obj[FAULT]
            if FAULT == "offsets":
                v[-1] = [v[-1][0], v[-1][1] + 1]
            elif FAULT == "overflowing":
                v.pop()
            else:
                v[0] = 1 if v[0] != 1 else 2
        elif FAULT == "decode" and isinstance(obj, str):
            obj = obj + " "
        elif FAULT == "stream" and isinstance(obj, list) and obj:
            obj[-1] = None if obj[-1] else "x"
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")


def die(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path: str):
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(path)
    except Exception as e:  # noqa: BLE001
        die(f"cannot load {path}: {e}")


def read_lines():
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        die(f"stdin is not valid UTF-8: {e}")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for i, l in enumerate(lines):
        try:
            out.append(json.loads(l))
        except json.JSONDecodeError as e:
            die(f"line {i + 1}: invalid JSON: {e}")
    return out


def enc(e, full, with_overflow=True):
    d = {"ids": e.ids, "tokens": e.tokens, "offsets": [list(o) for o in e.offsets]}
    if full:
        d.update(type_ids=e.type_ids, attention_mask=e.attention_mask,
                 special_tokens_mask=e.special_tokens_mask, word_ids=e.word_ids,
                 sequence_ids=e.sequence_ids)
        if with_overflow:
            d["overflowing"] = [enc(o, True, False) for o in e.overflowing]
    return d


def main() -> None:
    ap = argparse.ArgumentParser(prog="tokenkit")
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("encode")
    e.add_argument("-t", required=True)
    e.add_argument("--jsonl", action="store_true")
    e.add_argument("--full", action="store_true")
    e.add_argument("--no-special", action="store_true")
    e.add_argument("--pretokenized", action="store_true")
    e.add_argument("--batch-size", type=int, default=1000)
    d = sub.add_parser("decode")
    d.add_argument("-t", required=True)
    d.add_argument("--jsonl", action="store_true")
    d.add_argument("--skip-special", action="store_true")
    d.add_argument("--stream", action="store_true")
    s = sub.add_parser("save")
    s.add_argument("-t", required=True)
    s.add_argument("-o", required=True)
    a = ap.parse_args()
    tok = load(a.t)
    if a.cmd == "save":
        tok.save(a.o)
        return
    items = read_lines()
    out = sys.stdout
    if a.cmd == "encode":
        for s0 in range(0, len(items), a.batch_size):
            batch = []
            for x in items[s0:s0 + a.batch_size]:
                if a.pretokenized:
                    batch.append((x[0], x[1]) if len(x) == 2 and all(isinstance(w, list) for w in x) else x)
                else:
                    batch.append(tuple(x) if isinstance(x, list) else x)
            try:
                encs = tok.encode_batch(batch, add_special_tokens=not a.no_special, is_pretokenized=a.pretokenized)
            except Exception as ex:  # noqa: BLE001
                die(f"encode failed: {ex}")
            for en in encs:
                emit(out, enc(en, a.full))
    else:
        from tokenizers.decoders import DecodeStream

        n = tok.get_vocab_size(with_added_tokens=True)
        for ids in items:
            for i in ids:
                if tok.id_to_token(i) is None:
                    die(f"decode: token id {i} out of range (vocabulary size {n})")
            if a.stream:
                st = DecodeStream(skip_special_tokens=a.skip_special)
                res = [st.step(tok, i) for i in ids]
            else:
                res = tok.decode(ids, skip_special_tokens=a.skip_special)
            emit(out, res)


if __name__ == "__main__":
    main()
