"""tokenkit.corpus and `tokenkit corpus pii|dedup` on real text: the CLI against the Python
functions, dedup against Python references (first occurrence of each text; exact Jaccard of
word shingles), bad lines counted, other fields untouched."""
from __future__ import annotations

import json
import random
import re
import subprocess

import pytest
from data_corpus import BAD_LINES, corpus_file, documents, tokenkit_bin

import tokenkit.corpus as tc


def cli(*args, check=True):
    p = subprocess.run([str(tokenkit_bin()), "corpus", *map(str, args), "-q", "--json"], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"tokenkit corpus failed ({p.returncode}): {p.stderr}")
    return p


PLANTED = {
    "[EMAIL]": ["wei.zhang@example.com", "a_b+c@mail.example.org"],
    "[PHONE]": ["+1 415 555 0132", "13800138000", "138 0013 8000", "(415) 555-0132", "+86 13912345678"],
    "[ID]": ["11010519491231002X", "440305198001010013"],
    "[CARD]": ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005"],
    "[IP]": ["192.168.10.1", "2001:db8:85a3::8a2e:370:7334"],
    "[IBAN]": ["DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432"],
    "[URL]": ["https://admin:hunter2@db.example.com/x"],
}
LOOK_ALIKES = ["ISBN 978-7-111-54742-6", "2024-11-28", "v3.11.4", "10.0.19045.3693", "ORD-2024-0012345",
               "1732780800123", "09:30:00", "4111111111111112", "110105194912310021", "order no. 4111111111111111"]


def test_pii_replaces_planted_values_and_keeps_look_alikes():
    rng = random.Random(24)
    texts, expected = [], []
    for k in range(400):
        kind = rng.choice(sorted(PLANTED))
        value = rng.choice(PLANTED[kind])
        alike = rng.choice(LOOK_ALIKES)
        t = (f"用户信息：{value}，备注{alike}。" if k % 2 else f"Contact {value} (ref {alike}) today.")
        texts.append(t)
        expected.append(t.replace(value, kind))
    out, counts = tc.pii(texts)
    same = sum(a == b for a, b in zip(out, expected))
    assert same == len(texts), [(a, b) for a, b in zip(out, expected) if a != b][:5]
    assert sum(counts.values()) == len(texts)
    # find_pii gives character offsets of the same values.
    for t, e in zip(texts[:50], expected[:50]):
        spans = tc.find_pii(t)
        assert len(spans) == 1
        kind, s, end = spans[0]
        assert t[:s] + kind + t[end:] == e


def test_cli_pii_matches_the_python_function_on_real_text_and_keeps_other_fields(tmp_path):
    docs = documents(3000)
    # Real text plus planted values, some lines bad.
    rng = random.Random(7)
    docs = [d + (f" mail {rng.choice(PLANTED['[EMAIL]'])}" if k % 5 == 0 else "") for k, d in enumerate(docs)]
    path = tmp_path / "in.jsonl"
    lines, n_bad = [], 0
    for k, d in enumerate(docs):
        lines.append(json.dumps({"id": k, "text": d, "meta": {"k": [k, "x"]}}, ensure_ascii=k % 2 == 0))
        if k % 500 == 499:
            lines.append(BAD_LINES[n_bad % len(BAD_LINES)])
            n_bad += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    report = json.loads(cli("pii", "-o", out, path).stdout)
    want, counts = tc.pii(docs)
    got = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]
    assert len(got) == len(docs)
    identical = sum(g["text"] == w and g["id"] == k and g["meta"] == {"k": [k, "x"]} for k, (g, w) in enumerate(zip(got, want)))
    assert identical == len(docs), f"{identical}/{len(docs)} identical"
    assert report["skipped"] == n_bad > 0 and len(report["skip_examples"]) == min(n_bad, 5)
    assert report["counts"] == counts and counts["[EMAIL]"] >= len(docs) // 5
    assert report["changed"] == sum(a != b for a, b in zip(docs, want))
    # Unchanged documents keep their line byte for byte.
    good = [l for l in lines if l not in BAD_LINES]
    raw = out.read_text(encoding="utf-8").splitlines()
    assert sum(r == l for r, l, d, w in zip(raw, good, docs, want) if d == w) == sum(d == w for d, w in zip(docs, want))
    # --strict: an error, no output.
    out2 = tmp_path / "strict.jsonl"
    p = cli("pii", "--strict", "-o", out2, path, check=False)
    assert p.returncode != 0 and "--strict" in p.stderr and not out2.exists()


def test_exact_dedup_matches_first_occurrence_on_real_lines(tmp_path):
    lines = [l for l in corpus_file("en").read_text(encoding="utf-8").splitlines() if l.strip()]
    rng = random.Random(3)
    lines = lines + [rng.choice(lines) for _ in range(len(lines) // 4)]
    rng.shuffle(lines)
    seen, want = set(), []
    for l in lines:
        if l not in seen:
            seen.add(l)
            want.append(l)
    assert tc.dedup(lines) == want
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"text": l, "n": k}) + "\n" for k, l in enumerate(lines)), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    report = json.loads(cli("dedup", "-o", out, path).stdout)
    got = [json.loads(l)["text"] for l in out.read_text(encoding="utf-8").splitlines()]
    assert got == want, f"{sum(a == b for a, b in zip(got, want))}/{len(want)} identical"
    assert report["removed"] == len(lines) - len(want) > 0
    assert "passes" not in report["counts"]
    # Past the memory limit (the input read twice, the hashes sorted in runs on disk), and to a
    # pipe (which cannot be taken back, so two passes from the start): the same bytes.
    report = json.loads(cli("dedup", "--memory-limit", "4K", "-o", tmp_path / "out2.jsonl", path).stdout)
    assert report["counts"]["passes"] == 2 and report["counts"]["hash runs spilled"] > 10, report
    assert report["counts"]["duplicates"] == len(lines) - len(want)
    report = tc.dedup_files(path, tmp_path / "out3.jsonl", memory_limit="64K")
    assert report["counts"]["passes"] == 2, report
    piped = subprocess.run([str(tokenkit_bin()), "corpus", "dedup", "-q", "-o", "/dev/stdout", path], capture_output=True, check=True)
    for got in ((tmp_path / "out2.jsonl").read_bytes(), (tmp_path / "out3.jsonl").read_bytes(), piped.stdout):
        assert got == out.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl", "out2.jsonl", "out3.jsonl"]


def shingles(text, n=5):
    words = [w for w in re.split(r"[^\w]|_", text.lower()) if w]
    n = min(n, len(words))
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_near_dedup_against_exact_jaccard(tmp_path):
    words = corpus_file("en").read_text(encoding="utf-8").split()
    base = [" ".join(words[i:i + 150]) for i in range(0, len(words) - 150, 150)][:300]
    rng = random.Random(11)
    docs, pairs = list(base), []
    for k in range(300):
        src = rng.randrange(len(base))
        w = base[src].split(" ")
        rate = [0.002, 0.005, 0.01, 0.03, 0.1][k % 5]
        w = [f"edit{rng.randrange(999)}" if rng.random() < rate else x for x in w]
        pairs.append((src, len(docs)))
        docs.append(" ".join(w))
    cl = tc.clusters(docs, near=True, threshold=0.8)
    sets = [shingles(d) for d in docs]
    jac = lambda a, b: len(sets[a] & sets[b]) / max(1, len(sets[a] | sets[b]))
    high = [(a, b) for a, b in pairs if jac(a, b) >= 0.95]
    found = sum(cl[a] == cl[b] for a, b in high)
    assert len(high) > 50 and found >= 0.97 * len(high), f"{found}/{len(high)}"
    removed = [k for k in range(len(docs)) if cl[k] != k]
    true_dups = sum(jac(k, cl[k]) >= 0.5 for k in removed)
    assert true_dups == len(removed), f"{true_dups}/{len(removed)}"
    assert len(set(cl[:len(base)])) == len(base)
    # The CLI keeps the same documents.
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    cli("dedup", "--near", "--threshold", "0.8", "-o", out, path)
    got = [json.loads(l)["text"] for l in out.read_text(encoding="utf-8").splitlines()]
    assert got == [d for k, d in enumerate(docs) if cl[k] == k]
    # And the file function.
    report = tc.dedup_files(path, tmp_path / "out2.jsonl", near=True, threshold=0.8)
    assert (tmp_path / "out2.jsonl").read_bytes() == out.read_bytes() and report["removed"] == len(removed)
    assert "key runs spilled" not in report["counts"]
    # With the band keys spilled to disk in runs of 4 KiB (CLI) and 10,000 bytes (Python): the
    # same documents, and no spill directory left beside the output.
    cli("dedup", "--near", "--threshold", "0.8", "--memory-limit", "4K", "-o", tmp_path / "out3.jsonl", path)
    report = tc.dedup_files(path, tmp_path / "out4.jsonl", near=True, threshold=0.8, memory_limit=10_000)
    assert report["counts"]["key runs spilled"] == 600 * 9 * 12 // 10_000, report  # 600 documents, 9 bands, 12 bytes
    for name in ("out3.jsonl", "out4.jsonl"):
        assert (tmp_path / name).read_bytes() == out.read_bytes(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl", "out2.jsonl", "out3.jsonl", "out4.jsonl"]


def test_clean_cli_matches_python_and_references_on_real_text(tmp_path):
    import html as py_html
    import unicodedata

    docs = documents(3000)
    rng = random.Random(5)
    # Real text with planted controls, HTML and spacing.
    dirty = []
    for k, d in enumerate(docs):
        if k % 3 == 0:
            d = f"<p>{py_html.escape(d)}</p><script>var a = 1 < 2;</script>"
        if k % 4 == 0:
            d = d.replace(" ", "\u200b ", 3) + "\x07\r\n\r\n\r\nend\u00a0\u00a0here  "
        if k % 7 == 0:
            d = unicodedata.normalize("NFD", d)
        dirty.append(d)
    cleaned, reasons = tc.clean(dirty, html=True, min_chars=30)
    for d, c, r in zip(dirty, cleaned, reasons):
        assert (c is None) == (r is not None)
        if c is None:
            continue
        # What the rules promise, checked with Python's own functions.
        assert unicodedata.is_normalized("NFC", c)
        assert not any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in c)
        assert "\u200b" not in c and "<script>" not in c and "<p>" not in c and "\n\n\n" not in c and c == c.strip()
        assert len(c) >= 30
    assert set(reasons) - {None} <= {"min_chars", "empty"}
    # Escaped text comes back: an HTML-wrapped document cleans to the plain one cleaned.
    plain, _ = tc.clean(docs[:300:3])
    wrapped, _ = tc.clean(dirty[:300:3], html=True)
    same = sum(a == b for a, b, k in zip(plain, wrapped, range(0, 300, 3)) if k % 4 and k % 7)
    assert same == sum(1 for k in range(0, 300, 3) if k % 4 and k % 7), same
    # The CLI writes the same texts, counts each change and each removal.
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": d}) + "\n" for k, d in enumerate(dirty)), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    report = json.loads(cli("clean", "--html", "--min-chars", "30", "-o", out, path).stdout)
    got = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]
    want = [(k, c) for k, c in enumerate(cleaned) if c is not None]
    assert [(g["id"], g["text"]) for g in got] == want, f"{len(got)} vs {len(want)}"
    assert report["removed"] == sum(c is None for c in cleaned)
    assert report["counts"]["changed: html"] >= len(docs) // 3
    assert tc.clean_files(path, tmp_path / "out2.jsonl", html=True, min_chars=30)["documents_out"] == len(want)
    assert (tmp_path / "out2.jsonl").read_bytes() == out.read_bytes()
    with pytest.raises(ValueError, match="normalise"):
        tc.clean(["x"], normalise="nfc")


def test_lang_split_stats_and_a_pipeline_into_train(tmp_path):
    docs = documents(3000)
    langs = tc.detect_lang(docs)
    assert len(langs) == len(docs) and all(0.0 <= c <= 1.0 for _, c in langs)
    # Each corpus file's lines mostly get its language.
    for lang, code in [("en", "eng"), ("ja", "jpn"), ("zh", "cmn")]:
        lines = [l for l in corpus_file(lang).read_text(encoding="utf-8").splitlines() if len(l) >= 30][:500]
        hits = sum(c == code for c, _ in tc.detect_lang(lines))
        assert hits >= 0.9 * len(lines), f"{lang}: {hits}/{len(lines)}"
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"text": d, "k": k}) + "\n" for k, d in enumerate(docs)), encoding="utf-8")
    # Lang filter and label, CLI vs Python.
    out = tmp_path / "eng.jsonl"
    cli("lang", "--keep", "eng", "--label", "lang", "-o", out, path)
    got = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]
    assert [g["k"] for g in got] == [k for k, (c, _) in enumerate(langs) if c == "eng"]
    assert all(g["lang"] == "eng" and abs(g["lang_score"] - langs[g["k"]][1]) < 1e-4 for g in got)
    # Split: the same as split_of, every document once.
    report = tc.split_files(path, tmp_path / "splits", fractions="train=0.8,test=0.2")
    names = tc.split_of(docs, "train=0.8,test=0.2")
    for name in ("train", "test"):
        ks = [json.loads(l)["k"] for l in (tmp_path / "splits" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert ks == [k for k, n in enumerate(names) if n == name]
        assert report["counts"][name] == len(ks)
    # Stats.
    stats = tc.stats_files(path, lang=True)
    assert stats["documents_in"] == len(docs)
    assert stats["counts"]["characters"] == sum(len(d) for d in docs)
    assert stats["counts"]["language: eng"] == sum(c == "eng" for c, _ in langs)
    # A pipeline from the README's shape, then training on its train split.
    pipeline = {"steps": [{"step": "clean", "min_chars": 20}, {"step": "pii"}, {"step": "dedup"},
                          {"step": "split", "fractions": "train=0.9,validation=0.1"}]}
    (tmp_path / "pipeline.json").write_text(json.dumps(pipeline))
    reports = tc.run_pipeline(tmp_path / "pipeline.json", path, tmp_path / "prepared")
    assert [r["step"] for r in reports] == ["clean", "pii", "dedup", "split"]
    assert reports[-1]["documents_in"] == reports[2]["documents_out"] <= reports[0]["documents_out"]
    p = subprocess.run([str(tokenkit_bin()), "corpus", "run", str(tmp_path / "pipeline.json"), "-q", "-o",
                        str(tmp_path / "prepared2"), str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "prepared2" / "train.jsonl").read_bytes() == (tmp_path / "prepared" / "train.jsonl").read_bytes()
    model = tmp_path / "tok.json"
    p = subprocess.run([str(tokenkit_bin()), "train", "--model", "bpe", "--vocab-size", "500", "-q", "--jsonl-field", "text",
                        "-o", str(model), str(tmp_path / "prepared" / "train.jsonl")], capture_output=True, text=True)
    assert p.returncode == 0 and model.exists(), p.stderr


def test_user_dictionaries_and_patterns_against_a_python_reference(tmp_path):
    """Names and places from dictionaries and a staff-id pattern planted in real text: the CLI and
    Python replace exactly what a plain-Python reference does (whole words, longest first)."""
    names = ["Zhang Wei", "Li Na", "Alice Smith", "张伟", "王芳"]
    places = ["Springfield", "Hangzhou", "北京"]
    (tmp_path / "names.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    (tmp_path / "places.txt").write_text("\n".join(places) + "\n\n", encoding="utf-8")
    rng = random.Random(11)
    docs, want = [], []
    for k, d in enumerate(documents(600)):
        name, place, staff = rng.choice(names), rng.choice(places), f"E{rng.randrange(10**6):06d}"
        t = f"{d} {name} of {place}, badge {staff}." if k % 3 else d
        docs.append(t)
        if k % 3:
            # The planted values are the only matches when the document itself has none.
            w = t.replace(f" {name} of {place}, badge {staff}.", " [NAME] of [PLACE], badge [STAFF].")
            # (and no built-in type, which the first test checks on its own).
            if (not any(re.search(rf"(?<!\w){re.escape(x)}(?!\w)", d) for x in names + places)
                    and not re.search("E[0-9]{6}", d) and not tc.find_pii(d)):
                want.append((k, w))
    assert len(want) > 300
    options = {"dictionaries": {"NAME": tmp_path / "names.txt", "PLACE": tmp_path / "places.txt"}, "patterns": {"STAFF": "E[0-9]{6}"}}
    out, counts = tc.pii(docs, **options)
    assert sum(out[k] == w for k, w in want) == len(want), [(out[k], w) for k, w in want if out[k] != w][:3]
    assert counts["[NAME]"] >= len(want) and counts["[PLACE]"] >= len(want) and counts["[STAFF]"] >= len(want)
    spans = tc.find_pii("call 张伟 at 13800138000", **options)
    assert spans == [("[NAME]", 5, 7), ("[PHONE]", 11, 22)]
    # The CLI, the files function and a pipeline give the same texts.
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": t}, ensure_ascii=False) + "\n" for k, t in enumerate(docs)), encoding="utf-8")
    cli("pii", "--dict", f"NAME={tmp_path / 'names.txt'}", "--dict", f"PLACE={tmp_path / 'places.txt'}",
        "--pattern", "STAFF=E[0-9]{6}", "-o", tmp_path / "cli.jsonl", path)
    tc.pii_files(path, tmp_path / "py.jsonl", **options)
    for name in ("cli.jsonl", "py.jsonl"):
        got = [json.loads(l)["text"] for l in (tmp_path / name).read_text(encoding="utf-8").splitlines()]
        assert got == out, name
    # Bad options are errors naming the entry.
    with pytest.raises(Exception, match="PII pattern STAFF"):
        tc.pii(["x"], patterns={"STAFF": "("})
    p = cli("pii", "--dict", f"NAME={tmp_path / 'missing.txt'}", "-o", tmp_path / "x.jsonl", path, check=False)
    assert p.returncode != 0 and "missing.txt" in p.stderr and not (tmp_path / "x.jsonl").exists()


def test_line_and_paragraph_dedup_against_a_python_reference(tmp_path):
    """Documents of real paragraphs with repeats planted across them: `dedup --unit line|paragraph`
    removes exactly the lines / paragraphs a plain-Python pass over the corpus has seen before."""
    # Paragraphs without blank lines inside (a line of spaces also ends a paragraph).
    paras = ["\n".join(l for l in p.splitlines() if l.strip()) for p in corpus_file("en").read_text(encoding="utf-8").split("\n\n")]
    paras = [p for p in paras if len(p) >= 20]
    rng = random.Random(5)
    docs = ["\n\n".join(rng.choice(paras[:400]) for _ in range(rng.randint(1, 6))) for _ in range(500)]

    def reference(unit):
        seen, out = set(), []
        for d in docs:
            pieces = re.split(r"(?<=\n)", d) if unit == "line" else re.split(r"(?<=\n\n)(?=[^\n])", d)
            kept = []
            for piece in pieces:
                key = piece.strip()
                if len(key) < 20:
                    kept.append(piece)
                elif key not in seen:
                    seen.add(key)
                    kept.append(piece)
            text = "".join(kept)
            out.append(text if text.strip() else None)
        return out

    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"k": k, "text": d}) + "\n" for k, d in enumerate(docs)), encoding="utf-8")
    for unit in ("line", "paragraph"):
        want = reference(unit)
        out = tmp_path / f"{unit}.jsonl"
        report = json.loads(cli("dedup", "--unit", unit, "-o", out, path).stdout)
        got = {json.loads(l)["k"]: json.loads(l)["text"] for l in out.read_text(encoding="utf-8").splitlines()}
        same = sum(got.get(k) == w for k, w in enumerate(want))
        assert same == len(docs), f"{unit}: {same}/{len(docs)} identical"
        assert report["removed"] == want.count(None) and report["counts"][f"duplicate {unit}s"] > 0
        assert report["changed"] == sum(w is not None and w != d for w, d in zip(want, docs)) > 0
        assert tc.dedup_files(path, tmp_path / f"py-{unit}.jsonl", unit=unit)["counts"] == report["counts"]
        # Past the memory limit (below what the distinct units take: hundreds of lines, a few
        # dozen paragraphs here): the same bytes, in two passes.
        limit = "16K" if unit == "line" else "0"
        spilled = json.loads(cli("dedup", "--unit", unit, "--memory-limit", limit, "-o", tmp_path / "spilled.jsonl", path).stdout)
        assert spilled["counts"].pop("passes") == 2 and spilled["counts"].pop("hash runs spilled") > 0, spilled
        assert spilled["counts"] == report["counts"]
        assert (tmp_path / "spilled.jsonl").read_bytes() == out.read_bytes()
    with pytest.raises(ValueError, match="unit"):
        tc.clusters(docs, unit="line")


def test_parquet_output_holds_the_same_records(tmp_path):
    pa = pytest.importorskip("pyarrow.parquet")
    docs = documents(300)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": d + (" a.b@example.com" if k % 4 == 0 else ""), "n": [k]}) + "\n"
                            for k, d in enumerate(docs)), encoding="utf-8")
    cli("pii", "-o", tmp_path / "out.jsonl", path)
    report = json.loads(cli("pii", "-o", tmp_path / "out.parquet", path).stdout)
    want = [json.loads(l) for l in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    got = pa.read_table(tmp_path / "out.parquet").to_pylist()
    assert got == want and len(got) == len(docs)
    assert report["output_bytes"] == (tmp_path / "out.parquet").stat().st_size
    assert not (tmp_path / "out.parquet.jsonl").exists()
    # Splits as Parquet: the same records as the JSON lines splits, from the CLI and from Python.
    cli("split", "--fractions", "train=0.8,test=0.2", "-o", tmp_path / "jsonl", tmp_path / "out.jsonl")
    cli("split", "--fractions", "train=0.8,test=0.2", "--parquet", "-o", tmp_path / "pq", tmp_path / "out.jsonl")
    tc.split_files(tmp_path / "out.jsonl", tmp_path / "pq2", fractions="train=0.8,test=0.2", parquet=True)
    for name in ("train", "test"):
        want = [json.loads(l) for l in (tmp_path / "jsonl" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert 0 < len(want) < len(docs)
        for d in ("pq", "pq2"):
            assert pa.read_table(tmp_path / d / f"{name}.parquet").to_pylist() == want, (d, name)
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == ["test.parquet", "train.parquet"]
