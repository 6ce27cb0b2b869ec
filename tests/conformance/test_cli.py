"""The command line tells the truth: flags that do not apply are errors, `--jsonl` reports bad
lines and keeps the rest, `inspect` summarises every format, `save` writes the format its
output's extension names (or says it cannot), `--split-special-tokens` is HF's
`encode_special_tokens`, each error cause is said once, and `--help` names every format and
subcommand."""
from __future__ import annotations

import base64
import json
import re

from pathlib import Path

import pytest

import harness as h

GROUP = "cli"

BERT = "registry/bert_uncased/tokenizer.json"
BERT_VOCAB = "registry/bert_uncased/vocab.txt"
GPT2_VOCAB = "registry/gpt2/vocab.json"
SP_UNIGRAM = "registry/sentencepiece/botchan_en_unigram_1000.model"
SP_BPE = "registry/sentencepiece/botchan_en_bpe_1000.model"
ALBERT = "registry/albert/spiece.model"
CL100K = "tiktoken/cl100k_base.tiktoken"


def fx(rel: str) -> str:
    p = h.fixture_path(rel)
    if p is None:
        pytest.skip(f"fixture {rel} missing")
    return str(p)


def check(name: str, ok: bool, detail: str):
    o = h.Outcome(identical=int(ok), total=1, mismatches=[] if ok else [f"  {detail}"])
    h._finish(GROUP, name, "-", "cli", o)


def run(args, stdin=b""):
    r = h.run_cli(args, stdin, check=False, timeout=120)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


# --------------------------------------------------------------------------------------------
# Flags that do not apply


# (source, args, what stderr must say). Sources: "bert" (tokenizer.json), "tiktoken" (-e
# cl100k_base), "sp-bpe" (a SentencePiece BPE .model), "unigram" (a SentencePiece Unigram .model).
NOT_APPLICABLE = [
    ("bert", ["encode", "--count", "hi"], "--count does not apply to this tokenizer: it is a tiktoken option"),
    ("bert", ["encode", "--allowed-special", "all", "hi"], "--allowed-special does not apply"),
    ("bert", ["encode", "--disallowed-special", "none", "hi"], "--disallowed-special does not apply"),
    ("bert", ["decode", "--errors", "strict", "101"], "--errors does not apply to this tokenizer"),
    ("bert", ["encode", "--nbest", "2", "hi"], "--nbest needs a SentencePiece Unigram .model file; this tokenizer's model is WordPiece"),
    ("bert", ["encode", "--sample-alpha", "0.1", "hi"], "--sample-alpha needs a SentencePiece Unigram"),
    ("sp-bpe", ["encode", "--nbest", "2", "hi"], "--nbest needs a SentencePiece Unigram model; this .model is Bpe"),
    ("tiktoken", ["encode", "--full", "hi"], "--full does not apply in tiktoken mode"),
    ("tiktoken", ["encode", "--no-special", "hi"], "--no-special does not apply in tiktoken mode"),
    ("tiktoken", ["encode", "--split-special-tokens", "hi"], "--disallowed-special none encodes special-token text as plain text"),
    ("tiktoken", ["encode", "--jsonl", "--pretokenized"], "--pretokenized does not apply in tiktoken mode"),
    ("tiktoken", ["encode", "--nbest", "2", "hi"], "--nbest does not apply in tiktoken mode"),
    ("tiktoken", ["decode", "--skip-special", "1"], "--skip-special does not apply in tiktoken mode"),
    ("tiktoken", ["decode", "--stream", "1"], "--stream does not apply in tiktoken mode"),
    ("tiktoken", ["encode", "--errors", "strict", "hi"], "unexpected argument '--errors'"),
    ("tiktoken", ["decode", "--count", "1"], "unexpected argument '--count'"),
    ("unigram", ["encode", "--nbest", "2", "--full", "hi"], "cannot be used with '--full'"),
    ("unigram", ["encode", "--nbest", "2", "--sample-alpha", "0.1", "hi"], "cannot be used with"),
    ("unigram", ["encode", "--sample-alpha", "0.1", "--no-special", "hi"], "cannot be used with"),
    ("unigram", ["encode", "--seed", "3", "hi"], "--sample-alpha"),
    ("unigram", ["encode", "--nbest-size", "3", "hi"], "--sample-alpha"),
    ("unigram", ["encode", "--nbest", "0", "hi"], "--nbest"),
    ("bert", ["encode", "--pretokenized", "hi"], "cannot be used with"),
    ("bert", ["encode", "--pretokenized"], "--jsonl"),
    ("bert", ["encode", "--jsonl", "hi"], "cannot be used with"),
    ("bert", ["decode", "--jsonl", "101"], "cannot be used with"),
    ("bert", ["encode", "--batch-size", "0", "hi"], "--batch-size"),
    ("bert", ["save", "-o", "{tmp}/x.tiktoken.json.tiktoken", "--pretty"], "--pretty does not apply to a .tiktoken or .model output"),
]


def _source(kind: str) -> list[str]:
    return {"bert": ["-t", fx(BERT)], "tiktoken": ["-e", "cl100k_base"], "sp-bpe": ["-t", fx(SP_BPE)],
            "unigram": ["-t", fx(SP_UNIGRAM)]}[kind]


@pytest.mark.parametrize("source,args,needle", NOT_APPLICABLE, ids=[f"{s}:{' '.join(a)}" for s, a, _ in NOT_APPLICABLE])
def test_flag_that_does_not_apply_is_an_error(source, args, needle, tmp_path):
    if source == "tiktoken":
        fx(CL100K)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    rc, out, err = run([args[0], *_source(source), *args[1:]])
    ok = rc != 0 and needle in err and not out and "panicked" not in err
    check(f"not-applicable {source}: {' '.join(args)}", ok, f"exit {rc}, stdout {out[:100]!r}, stderr {err[-400:]!r}")


def test_applicable_flags_still_work():
    """The same flags where they apply (so the errors above are not a blanket refusal)."""
    fx(CL100K)
    rc1, out1, _ = run(["encode", "-e", "cl100k_base", "--count", "hello world"])
    rc2, out2, _ = run(["encode", "-t", fx(SP_UNIGRAM), "--sample-alpha", "0.1", "--nbest-size", "3", "--seed", "4", "hello"])
    rc3, out3, _ = run(["decode", "-e", "cl100k_base", "--errors", "strict", "15339"])
    ok = (rc1, rc2, rc3) == (0, 0, 0) and json.loads(out1) == {"count": 2} and "ids" in json.loads(out2) and out3 == "hello\n"
    check("applicable flags", ok, f"{rc1} {out1!r} / {rc2} {out2!r} / {rc3} {out3!r}")


# --------------------------------------------------------------------------------------------
# --jsonl: bad lines are reported, the rest is kept, exit 1


def test_encode_jsonl_bad_lines_reported_and_rest_kept():
    from tokenizers import Tokenizer

    path = fx(BERT)
    lines = [b'"first line"', b'{"not": "a string"}', b'"third line"', b'"\xff bad utf8"', b"", b'["a", "pair"]', b"[1, 2"]
    rc, out, err = run(["encode", "-t", path, "--jsonl"], b"\n".join(lines) + b"\n")
    got = [json.loads(l) for l in out.splitlines()]
    hf = Tokenizer.from_file(path)
    want_ok = {0: hf.encode("first line"), 2: hf.encode("third line"), 4: hf.encode("a", "pair")}
    problems = []
    if rc != 1:
        problems.append(f"exit {rc}")
    if len(got) != 6:  # the blank line gives no output line
        problems.append(f"{len(got)} output lines")
    else:
        for k, enc in want_ok.items():
            if got[k].get("ids") != enc.ids:
                problems.append(f"output {k + 1}: {got[k]} != HF {enc.ids}")
        for k, line_no in [(1, 2), (3, 4), (5, 7)]:
            if not got[k].get("error", "").startswith(f"line {line_no}: "):
                problems.append(f"output {k + 1} should be an error for line {line_no}: {got[k]}")
    for line_no, reason in [(2, "expected a JSON string"), (4, "not valid UTF-8"), (7, "not valid JSON")]:
        if f"tokenkit: line {line_no}: {reason}" not in err:
            problems.append(f"stderr does not report line {line_no} ({reason})")
    if "3 of 6 input lines failed" not in err:
        problems.append("no final count on stderr")
    check("encode --jsonl bad lines", not problems, "; ".join(problems) + f"; stderr {err[-600:]!r}")


def test_tiktoken_jsonl_disallowed_special_names_line_and_flags():
    fx(CL100K)
    rc, out, err = run(["encode", "-e", "cl100k_base", "--jsonl"], b'"hello"\n"a <|endoftext|> b"\n"world"\n')
    got = [json.loads(l) for l in out.splitlines()]
    ok = (rc == 1 and len(got) == 3 and got[0] == {"ids": [15339]} and got[2] == {"ids": [14957]}
          and got[1]["error"].startswith("line 2: ") and "line 2:" in err
          and "--allowed-special" in err and "--disallowed-special none" in err
          and "allowed_special=" not in err and "disallowed_special=(" not in err)
    check("tiktoken --jsonl disallowed special", ok, f"exit {rc}, out {out!r}, err {err[-500:]!r}")


def test_decode_jsonl_bad_lines_and_argument_positions():
    path = fx(BERT)
    rc, out, err = run(["decode", "-t", path, "--jsonl"], b'[101, 102]\n[7592, 99999999]\n["x"]\n[7592]\n')
    got = [json.loads(l) for l in out.splitlines()]
    ok1 = (rc == 1 and len(got) == 4 and got[0] == "[CLS] [SEP]" and got[3] == "hello"
           and got[1]["error"].startswith("line 2, id 2: id 99999999 is out of range")
           and got[2]["error"].startswith("line 3: expected a JSON array of token ids"))
    rc2, out2, err2 = run(["decode", "-t", path, "101", "7592", "99999999", "102"])
    ok2 = rc2 != 0 and "argument 3: id 99999999 is out of range" in err2 and "line 1" not in err2 and not out2
    rc3, _, err3 = run(["decode", "-t", path, "--stream", "101", "99999999"])
    ok3 = rc3 != 0 and "argument 2: id 99999999" in err3
    rc4, _, err4 = run(["encode", "-t", fx(SP_UNIGRAM), "--nbest", "600", "ok", "fine"])
    ok4 = rc4 != 0 and err4.count("argument 1:") == 1
    check("decode positions", ok1 and ok2 and ok3 and ok4,
          f"{rc} {out!r} {err[-300:]!r} / {rc2} {err2!r} / {rc3} {err3!r} / {rc4} {err4!r}")


# --------------------------------------------------------------------------------------------
# --split-special-tokens: HF's encode_special_tokens


@pytest.mark.parametrize("rel", [BERT, "registry/llama3/tokenizer.json", "registry/qwen3/tokenizer.json"])
def test_split_special_tokens_matches_hf(rel):
    from tokenizers import Tokenizer

    path = fx(rel)
    hf = Tokenizer.from_file(path)
    specials = [t.content for t in hf.get_added_tokens_decoder().values() if t.special][:6]
    texts = [f"a {s} b{s}c" for s in specials] + ["no specials here", " ".join(specials)]
    hf.encode_special_tokens = True
    want = [[e.ids, e.tokens, [list(o) for o in e.offsets]] for e in hf.encode_batch(texts)]
    out = h.run_cli(["encode", "-t", path, "--jsonl", "--split-special-tokens"], h.to_jsonl(texts)).stdout
    got = [[g["ids"], g["tokens"], g["offsets"]] for g in h.parse_jsonl(out, len(texts), "encode")]
    plain = h.parse_jsonl(h.run_cli(["encode", "-t", path, "--jsonl"], h.to_jsonl(texts)).stdout, len(texts), "encode")
    o = h.Outcome(identical=sum(a == b for a, b in zip(want, got)), total=len(texts))
    o.mismatches += [f"  {t!r}: HF {a} tokenkit {b}" for t, a, b in zip(texts, want, got) if a != b][:3]
    if plain[0]["ids"] == got[0][0]:  # the flag must change something
        o.identical -= 1
        o.mismatches.append("  --split-special-tokens gave the same ids as without it")
    h._finish(GROUP, "split-special-tokens", rel, "HF encode_special_tokens=True", o)


# --------------------------------------------------------------------------------------------
# inspect


INSPECT = [
    (BERT, ["format:         HF tokenizer.json", '"type":"WordPiece"', "vocabulary:     30522 tokens",
            'special tokens: 0="[PAD]" 100="[UNK]" 101="[CLS]" 102="[SEP]" 103="[MASK]"', "post_processor: {\"type\":\"TemplateProcessing\"",
            'decoder:        {"type":"WordPiece"']),
    (BERT_VOCAB, ["format:         BERT WordPiece vocab.txt", '"vocab":"<30522 entries>"', 'normalizer:     {"type":"BertNormalizer"']),
    (GPT2_VOCAB, ["format:         GPT-2 vocab.json + merges", '"merges":"<50000 entries>"', '50256="<|endoftext|>"']),
    (ALBERT, ["format:         SentencePiece .model", "sentencepiece:  Unigram model, 30000 pieces", 'special pieces: 0="<pad>" 1="<unk>" 2="[CLS]"',
              "trainer_spec:   model_type=Unigram vocab_size=30000", "character_coverage=0.99995", 'pad_piece="<pad>"',
              'normalizer_spec: name="nmt_nfkc" precompiled_charsmap=<', '"model_proto":"<']),
    (SP_BPE, ["sentencepiece:  Bpe model, 1000 pieces", "model_type=Bpe vocab_size=1000"]),
    (CL100K, ["format:         tiktoken encoding cl100k_base (100256 ranks; n_vocab 100277, eot_token 100257)",
              "pattern:        '(?i:[sdmt]|ll|ve|re)", 'special tokens: 100257="<|endoftext|>"', "as a tokenizer.json pipeline:"]),
    ("-e o200k_base", ["format:         tiktoken encoding o200k_base", "199999=\"<|endoftext|>\""]),
    ("registry/llama3/tokenizer.model -e llama3", ["format:         tiktoken encoding llama3", '128000="<|begin_of_text|>"']),
    ("registry/qwen3/tokenizer.json", ['"vocab":"<', "special tokens: ", "(not special)"]),
]


@pytest.mark.parametrize("source,needles", INSPECT, ids=[s for s, _ in INSPECT])
def test_inspect_summarises(source, needles):
    parts = source.split()
    if parts[0] == "-e":
        fx(f"tiktoken/{parts[1]}.tiktoken")
        args = parts
    else:
        args = [fx(parts[0]), *parts[1:]]
    rc, out, err = run(["inspect", *args])
    long_lines = [l[:80] for l in out.splitlines() if len(l) > 2000]
    missing = [n for n in needles if n not in out]
    ok = rc == 0 and not missing and not long_lines
    check(f"inspect {source}", ok, f"exit {rc}, missing {missing}, lines over 2000 chars {long_lines}, err {err[-200:]!r}")


def test_inspect_reports_the_table_cache(tmp_path, monkeypatch):
    """`inspect` of a `.model` says what the load did with the table cache: built and stored
    (its path), read back, a corrupt entry rejected and rebuilt, or the cache off."""
    path = fx(SP_UNIGRAM)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOKENKIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("TOKENKIT_CACHE", raising=False)
    outs = [run(["inspect", path])]
    entries = [e for e in cache.iterdir() if e.suffix == ".bin"] if cache.is_dir() else []
    entry = next((e for e in entries if f"stored in {e}" in outs[0][1]), None)
    outs.append(run(["inspect", path]))
    if entry is not None:
        entry.write_bytes(entry.read_bytes()[:-3])
    outs.append(run(["inspect", path]))
    monkeypatch.setenv("TOKENKIT_CACHE", "0")
    outs.append(run(["inspect", path]))
    wanted = ["table cache:    miss, built, stored in ", f"table cache:    hit, read from {entry}",
              f"table cache:    stale entry rejected, built, stored in {entry}", "table cache:    off"]
    missing = [w for w, (rc, out, _) in zip(wanted, outs) if rc != 0 or w not in out]
    check("inspect .model table cache", entry is not None and not missing, f"entry {entry}, missing {missing}")


def test_inspect_model_agrees_with_the_protobuf():
    """The trainer spec inspect prints is the file's (read here with a hand-written protobuf walk)."""
    path = fx(SP_UNIGRAM)
    raw = open(path, "rb").read()
    trainer = dict((f, v) for f, w, v in h.proto_fields(next(v for f, w, v in h.proto_fields(raw) if f == 2)) if w == 0)
    rc, out, _ = run(["inspect", path])
    ok = rc == 0 and f"vocab_size={trainer[4]}" in out and f"pieces (" in out and "1000 pieces" in out
    check("inspect .model vs protobuf", ok, out[:600])


# --------------------------------------------------------------------------------------------
# save: the output's extension names the format


def test_save_model_round_trip(tmp_path):
    """A SentencePiece source saves to a .model that sentencepiece reads, byte for byte the
    original; also through tokenkit's tokenizer.json of the model (type SentencePiece)."""
    import sentencepiece as spm

    src = fx(SP_UNIGRAM)
    out = tmp_path / "copy.model"
    h.run_cli(["save", "-t", src, "-o", str(out)], b"")
    sp = spm.SentencePieceProcessor(model_file=str(out))
    same_ids = sp.encode("Hello world, this is a test.") == spm.SentencePieceProcessor(model_file=src).encode("Hello world, this is a test.")
    ok = out.read_bytes() == open(src, "rb").read() and same_ids
    check("save .model", ok, f"bytes equal {out.read_bytes() == open(src, 'rb').read()}, ids equal {same_ids}")


@pytest.mark.parametrize("src,output,needle", [
    (BERT, "out.model", "a SentencePiece .model can only be written from a SentencePiece model"),
    (BERT, "out.txt", "cannot tell the output format from the extension"),
    (BERT, "out", "cannot tell the output format from the extension"),
    (BERT, "vocab.bin", ".json (tokenizer.json), .tiktoken (tiktoken rank file), .model"),
])
def test_save_unsupported_output_is_an_error(src, output, needle, tmp_path):
    rc, _, err = run(["save", "-t", fx(src), "-o", str(tmp_path / output)])
    ok = rc != 0 and needle in err and not (tmp_path / output).exists()
    check(f"save -o {output}", ok, f"exit {rc}, err {err[-300:]!r}, written {(tmp_path / output).exists()}")


def test_save_json_from_model_is_hf_layout(tmp_path):
    """.json from a .model is transformers' conversion (loads in HF), unchanged by this work."""
    from tokenizers import Tokenizer

    out = tmp_path / "t.json"
    h.run_cli(["save", "-t", fx(SP_UNIGRAM), "-o", str(out)], b"")
    Tokenizer.from_file(str(out))
    check("save .json from .model", json.loads(out.read_text())["model"]["type"] == "Unigram", out.read_text()[:200])


# --------------------------------------------------------------------------------------------
# Errors say each cause once; --help


def test_missing_file_cause_said_once(tmp_path):
    missing = str(tmp_path / "nope.json")
    bad = []
    for args in (["encode", "-t", missing, "hi"], ["inspect", missing], ["save", "-t", missing, "-o", str(tmp_path / "o.json")],
                 ["decode", "-t", missing, "1"]):
        rc, _, err = run(args)
        if rc == 0 or err.count("No such file or directory") != 1 or "nope.json" not in err:
            bad.append(f"{args[0]}: {err.strip()!r}")
    check("missing file: cause once", not bad, "; ".join(bad))


def test_help_names_every_format_and_subcommand():
    rc, out, _ = run(["--help"])
    needles = ["tokenizer.json", "vocab.txt", "vocab.json + merges.txt", ".model", "SentencePiece", ".tiktoken",
               "cl100k_base", "o200k_base", "llama3", "Examples:"]
    needles += [f"  {c}" for c in ("encode", "decode", "inspect", "save", "chat", "train")]
    missing = [n for n in needles if n not in out]
    sub_missing = []
    for sub in ("encode", "decode", "inspect", "save", "train"):
        _, sub_out, _ = run([sub, "--help"])
        if "Examples:" not in sub_out and sub != "train":
            sub_missing.append(sub)
    _, train_help, _ = run(["train", "--help"])
    for n in ("--post-processor", "--template", "--pair-template", "bert", "roberta"):
        if n not in train_help:
            sub_missing.append(f"train {n}")
    check("--help", rc == 0 and not missing and not sub_missing, f"missing {missing} {sub_missing}")


# --------------------------------------------------------------------------------------------
# --jsonl streams: memory does not grow with the number of lines


def _peak_rss_mb(args: list[str], stdin: bytes) -> tuple[float, int]:
    """Peak RSS (MB) of the CLI run with `args` on `stdin`, and the number of output lines.

    The peak is the process's own high-water mark (VmHWM of /proc/PID/status, read every few
    milliseconds while it runs): `wait4`'s ru_maxrss would count this test process too, which the
    child is forked from (Linux carries the high-water mark across exec)."""
    import subprocess
    import threading
    import time

    cmd = [*h.cli_prefix(h.require_cli()), *args]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=h._cli_env())
    lines, hwm, done = [0], [0], threading.Event()

    def count():
        for _ in p.stdout:
            lines[0] += 1

    def poll():
        while not done.is_set():
            try:
                status = Path(f"/proc/{p.pid}/status").read_text()
            except OSError:
                return
            if status.startswith("Name:\ttokenkit") and "VmHWM:" in status:
                hwm[0] = max(hwm[0], int(status.split("VmHWM:")[1].split()[0]))
            time.sleep(0.002)

    threads = [threading.Thread(target=count), threading.Thread(target=poll)]
    for t in threads:
        t.start()
    p.stdin.write(stdin)
    p.stdin.close()
    threads[0].join()
    done.set()
    threads[1].join()
    assert p.wait() == 0, f"{args}: exit {p.returncode}"
    assert hwm[0] > 0, f"{args}: no VmHWM read from /proc/{p.pid}/status"
    return hwm[0] / 1024, lines[0]


@pytest.mark.parametrize("source", ["tiktoken", "bert", "sp-bpe"])
def test_jsonl_memory_does_not_grow_with_the_lines(source):
    """Each JSON line is read, encoded and written in batches as the input streams: 600,000
    lines more (about 30 MB of input, held whole it was 60+ MB more) leave the peak RSS within
    12 MB."""
    def lines(n: int) -> bytes:
        return "".join(json.dumps(f"Line {i}: the quick brown fox jumps over {i % 97} lazy dogs.") + "\n" for i in range(n)).encode()

    if source == "tiktoken":
        fx(CL100K)
    args = ["encode", *_source(source), "--jsonl"] + (["--no-special"] if source != "tiktoken" else [])
    (small, n_small), (large, n_large) = (_peak_rss_mb(args, lines(n)) for n in (200_000, 800_000))
    ok = (n_small, n_large) == (200_000, 800_000) and large - small < 12
    check(f"jsonl-streams-{source}", ok, f"peak RSS {small:.0f} MB for 200k lines, {large:.0f} MB for 800k ({n_small}, {n_large} output lines)")
    assert ok, f"peak RSS {small:.0f} MB for 200k lines, {large:.0f} MB for 800k ({n_small}, {n_large} output lines)"
