//! Mutations of tokenizer files, as an attacker or a careless user makes them: byte-level
//! edits for any format, and edits that know the format's shape (lines of a rank file, a
//! vocab.txt or a merges.txt; nodes of a JSON document; fields of a protobuf message), so
//! that most mutants still parse and reach the validation behind the parser.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::{Map, Value};

/// The shape of a file, which picks the structured mutations that apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// tokenizer.json, vocab.json.
    Json,
    /// `.tiktoken` rank files, vocab.txt, merges.txt.
    Lines,
    /// SentencePiece `.model` (protobuf `ModelProto`).
    Proto,
}

/// Applies one to three mutations to `data`. `donors` are other seeds of the same kind, whose
/// components a JSON mutation may splice in.
pub fn mutate(rng: &mut StdRng, data: &[u8], kind: Kind, donors: &[&Value]) -> Vec<u8> {
    let mut out = data.to_vec();
    // Most byte edits make JSON unparseable, which only tests the parser: JSON gets mostly
    // structured edits, so that most mutants reach the validation behind it.
    let p_structured = if kind == Kind::Json { 0.9 } else { 0.7 };
    let n = if rng.gen_bool(0.6) { 1 } else { rng.gen_range(2..=3) };
    for _ in 0..n {
        let structured = if rng.gen_bool(p_structured) {
            match kind {
                Kind::Json => json_mutation(rng, &out, donors),
                Kind::Lines => Some(line_mutation(rng, &out)),
                Kind::Proto => proto_mutation(rng, &out),
            }
        } else {
            None
        };
        match structured {
            Some(m) => out = m,
            None => byte_mutation(rng, &mut out),
        }
    }
    out
}

/// Texts that often sit on a validation boundary: non-finite and out-of-range numbers, ids
/// past `u32`, empty and NUL-holding strings, a lone surrogate, empty containers.
const INTERESTING_JSON: &[&str] = &[
    "NaN",
    "Infinity",
    "-Infinity",
    "-1",
    "0",
    "1",
    "2",
    "255",
    "65536",
    "2147483647",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1e309",
    "-1e309",
    "3.4028235e38",
    "-3.4028235e38",
    "3.4028234e38",
    "1.7976931348623157e308",
    "-1.7976931348623157e308",
    "1e-45",
    "0.5",
    "null",
    "true",
    "false",
    "[]",
    "{}",
    "[[]]",
    "[0]",
    "[\"\", \"\"]",
    "\"\"",
    "\" \"",
    "\"\\u0000\"",
    "\"a\\u0000b\"",
    "\"\\ud800\"",
    "\"(\"",
    "\"[\"",
    "\"\\\\\"",
    "\"\\\\s+\"",
    "\"\\\\p{L}+\"",
    "\"(?i)a\"",
    "\"▁\"",
    "\"##\"",
    "\"Isolated\"",
    "\"Removed\"",
    "\"MergedWithPrevious\"",
    "\"MergedWithNext\"",
    "\"Contiguous\"",
    "\"first\"",
    "\"never\"",
    "\"always\"",
    "\"Left\"",
    "\"Right\"",
    "\"LongestFirst\"",
    "\"OnlyFirst\"",
    "\"OnlySecond\"",
    "\"BatchLongest\"",
    "{\"Fixed\": 5}",
    "{\"Fixed\": 0}",
    "{\"String\": \"a\"}",
    "{\"Regex\": \"\\\\s\"}",
    "{\"Regex\": \"(\"}",
    "{\"SpecialToken\": {\"id\": \"[CLS]\", \"type_id\": 0}}",
    "{\"Sequence\": {\"id\": \"A\", \"type_id\": 1}}",
];

/// Component type names, so a mutation can turn a component into another with the wrong fields.
const TYPE_NAMES: &[&str] = &[
    "BertNormalizer",
    "Strip",
    "StripAccents",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Sequence",
    "Lowercase",
    "Nmt",
    "Precompiled",
    "Replace",
    "Prepend",
    "ByteLevel",
    "BertPreTokenizer",
    "CharDelimiterSplit",
    "Metaspace",
    "Whitespace",
    "WhitespaceSplit",
    "Split",
    "Punctuation",
    "Digits",
    "UnicodeScripts",
    "FixedLength",
    "RobertaProcessing",
    "BertProcessing",
    "TemplateProcessing",
    "BPEDecoder",
    "WordPiece",
    "CTC",
    "Fuse",
    "ByteFallback",
    "BPE",
    "WordLevel",
    "Unigram",
];

/// Field names the components read, for a mutation that adds a field with an odd value.
const FIELD_NAMES: &[&str] = &[
    "type",
    "pattern",
    "content",
    "behavior",
    "invert",
    "prepend_scheme",
    "split",
    "replacement",
    "max_length",
    "stride",
    "pad_to_multiple_of",
    "left",
    "right",
    "individual_digits",
    "vocab",
    "merges",
    "unk_id",
    "unk_token",
    "cls",
    "sep",
    "single",
    "pair",
    "special_tokens",
    "precompiled_charsmap",
    "add_prefix_space",
    "trim_offsets",
    "use_regex",
    "prefix",
    "suffix",
    "delimiter",
    "pad_token",
    "word_delimiter_token",
    "cleanup",
    "max_input_chars_per_word",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "dropout",
    "byte_fallback",
    "fuse_unk",
    "id",
    "ids",
    "tokens",
    "type_id",
    "length",
    "direction",
    "strategy",
    "pad_id",
    "pad_type_id",
    "normalizers",
    "pretokenizers",
    "processors",
    "decoders",
    "single_word",
    "lstrip",
    "rstrip",
    "normalized",
    "special",
];

/// A placeholder a JSON mutation stores where it wants raw text (`NaN`, `1e309`) that a
/// `serde_json::Value` cannot hold; replaced after serialising.
const RAW: &str = "@@tokenkit-fuzz-raw@@";

fn byte_mutation(rng: &mut StdRng, data: &mut Vec<u8>) {
    if data.is_empty() {
        data.extend_from_slice(INTERESTING_JSON.choose(rng).unwrap().as_bytes());
        return;
    }
    let pos = rng.gen_range(0..data.len());
    match rng.gen_range(0..8) {
        0 => data[pos] ^= 1 << rng.gen_range(0..8),
        1 => {
            const BYTES: &[u8] = b"\0\xff\xc3\x80\"\\\n {}[],:-9=\r\t";
            data[pos] = *BYTES.choose(rng).unwrap();
        }
        2 => {
            let end = (pos + rng.gen_range(1..=64)).min(data.len());
            data.drain(pos..end);
        }
        3 => {
            // A duplicated chunk: repeated entries, repeated keys, repeated lines.
            let end = (pos + rng.gen_range(1..=4096)).min(data.len());
            let chunk = data[pos..end].to_vec();
            let at = rng.gen_range(0..=data.len());
            data.splice(at..at, chunk);
        }
        4 => {
            let text = INTERESTING_JSON.choose(rng).unwrap().as_bytes();
            data.splice(pos..pos, text.iter().copied());
        }
        5 => data.truncate(pos),
        6 => {
            // Replace the next number with an interesting one.
            let Some(start) = data[pos..].iter().position(u8::is_ascii_digit).map(|i| pos + i) else { return };
            let len = data[start..].iter().take_while(|b| b.is_ascii_digit() || b".eE+-".contains(b)).count();
            let text = INTERESTING_JSON[..23].choose(rng).unwrap().as_bytes();
            data.splice(start..start + len, text.iter().copied());
        }
        _ => {
            let n = rng.gen_range(1..=16);
            let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            data.splice(pos..pos, bytes);
        }
    }
}

fn line_mutation(rng: &mut StdRng, data: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let n = lines.len();
    let i = rng.gen_range(0..n);
    match rng.gen_range(0..9) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let end = (i + rng.gen_range(1..=50)).min(n);
            let chunk = lines[i..end].to_vec();
            let at = rng.gen_range(0..=lines.len());
            lines.splice(at..at, chunk);
        }
        2 => {
            let j = rng.gen_range(0..n);
            lines.swap(i, j);
        }
        3 => {
            const GARBAGE: &[&[u8]] =
                &[b"", b"garbage", b"a", b"a b c", b"a  b", b" a b", b"\0", b"#version: 0.2", b"\xff\xfe", b"==== 5", b"#"];
            lines[i] = GARBAGE.choose(rng).unwrap().to_vec();
        }
        4 => lines.insert(i, Vec::new()),
        5 => lines.truncate(if rng.gen_bool(0.5) { rng.gen_range(1..=3) } else { i + 1 }),
        6 => {
            // A far, negative, or non-numeric rank (or id, for a vocab.txt line).
            const RANKS: &[&str] = &[
                "-1",
                "abc",
                "4294967295",
                "4294967296",
                "99999999",
                "50000001",
                "1e3",
                "",
                "00",
                "0",
                "+5",
                "3000",
                "18446744073709551616",
            ];
            let line = &mut lines[i];
            let cut = line.iter().rposition(|&b| b == b' ').map_or(line.len(), |p| p + 1);
            line.truncate(cut);
            line.extend_from_slice(RANKS.choose(rng).unwrap().as_bytes());
        }
        7 => {
            // Bad base64 (or a mangled first word).
            let line = &mut lines[i];
            let end = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
            let at = rng.gen_range(0..=end);
            match rng.gen_range(0..5) {
                0 => line.insert(at, b'!'),
                1 => line.insert(at, b'='),
                2 if end > 0 => {
                    line.remove(at.min(end - 1));
                }
                3 => line.splice(0..end, b"====".iter().copied()).for_each(drop),
                _ => line.insert(at, 0),
            }
        }
        _ => {
            // A new entry: a token of random bytes with a rank past the others.
            let len = rng.gen_range(1..=64);
            let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            lines.insert(i, format!("{b64} {}", n + rng.gen_range(0..4)).into_bytes());
        }
    }
    lines.join(&b'\n')
}

// ---------------------------------------------------------------------------------------------
// JSON

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Paths of the nodes a mutation may pick. Large objects and arrays (vocabularies, merges)
/// contribute a sample of their children, so the small component objects are picked often.
fn collect_paths(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>, rng: &mut StdRng) {
    out.push(path.clone());
    match v {
        Value::Object(m) => {
            let keys: Vec<&String> =
                if m.len() > 32 { m.keys().collect::<Vec<_>>().choose_multiple(rng, 4).copied().collect() } else { m.keys().collect() };
            for k in keys {
                path.push(Seg::Key(k.clone()));
                collect_paths(&m[k], path, out, rng);
                path.pop();
            }
        }
        Value::Array(a) => {
            let idx: Vec<usize> = if a.len() > 32 {
                (0..a.len()).collect::<Vec<_>>().choose_multiple(rng, 4).copied().collect()
            } else {
                (0..a.len()).collect()
            };
            for i in idx {
                path.push(Seg::Index(i));
                collect_paths(&a[i], path, out, rng);
                path.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(mut v: &'a mut Value, path: &[Seg]) -> &'a mut Value {
    for s in path {
        v = match s {
            Seg::Key(k) => &mut v[k.as_str()],
            Seg::Index(i) => &mut v[*i],
        };
    }
    v
}

fn json_mutation(rng: &mut StdRng, data: &[u8], donors: &[&Value]) -> Option<Vec<u8>> {
    let mut doc: Value = serde_json::from_slice(data).ok()?;
    let mut paths = Vec::new();
    collect_paths(&doc, &mut Vec::new(), &mut paths, rng);
    let path = paths.choose(rng)?.clone();
    let mut raws: Vec<&str> = Vec::new();
    let mut raw = |rng: &mut StdRng| {
        raws.push(INTERESTING_JSON.choose(rng).unwrap());
        Value::String(RAW.to_owned())
    };
    let last_key = match path.last() {
        Some(Seg::Key(k)) => Some(k.clone()),
        _ => None,
    };
    let node = node_mut(&mut doc, &path);
    match rng.gen_range(0..8) {
        0 | 1 => *node = raw(rng),
        2 => match node {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(rng.gen_range(0..m.len())).unwrap().clone();
                m.remove(&k);
            }
            Value::Array(a) if !a.is_empty() => {
                a.remove(rng.gen_range(0..a.len()));
            }
            _ => *node = Value::Null,
        },
        3 => match node {
            Value::Object(m) => {
                let k = FIELD_NAMES.choose(rng).unwrap();
                let v = raw(rng);
                m.insert((*k).to_owned(), v);
            }
            Value::Array(a) if !a.is_empty() => {
                let i = rng.gen_range(0..a.len());
                let copies = if rng.gen_bool(0.8) { 1 } else { rng.gen_range(2..200) };
                for _ in 0..copies {
                    a.insert(i, a[i].clone());
                }
            }
            _ => *node = raw(rng),
        },
        4 => {
            // Another component type, keeping this one's fields.
            if let Value::Object(m) = node {
                m.insert("type".into(), Value::String((*TYPE_NAMES.choose(rng).unwrap()).to_owned()));
            } else if last_key.as_deref() == Some("type") {
                *node = Value::String((*TYPE_NAMES.choose(rng).unwrap()).to_owned());
            } else {
                *node = raw(rng);
            }
        }
        5 => {
            // Splice a component (or any node) of another seed in.
            let donor = donors.choose(rng)?;
            let mut dp = Vec::new();
            collect_paths(donor, &mut Vec::new(), &mut dp, rng);
            let p = dp.choose(rng)?;
            let mut d = (*donor).clone();
            *node = std::mem::take(node_mut(&mut d, p));
        }
        6 => match node {
            Value::String(s) => match rng.gen_range(0..5) {
                0 => s.clear(),
                1 => s.push('\0'),
                2 => *s = s.repeat(rng.gen_range(2..8)),
                3 => s.insert(0, ' '),
                _ => *s = "a".repeat(rng.gen_range(1..1000)),
            },
            Value::Number(_) => *node = raw(rng),
            Value::Bool(b) => *b = !*b,
            Value::Array(a) => a.truncate(rng.gen_range(0..=1)),
            Value::Object(m) => {
                let keep = rng.gen_range(0..=m.len().min(1));
                let keys: Vec<String> = m.keys().skip(keep).cloned().collect();
                for k in keys {
                    m.remove(&k);
                }
            }
            Value::Null => *node = Value::Object(Map::new()),
        },
        _ => {
            // Wrap the node in a list or an object, or move it into a Sequence.
            let inner = std::mem::take(node);
            *node = match rng.gen_range(0..3) {
                0 => Value::Array(vec![inner]),
                1 => {
                    serde_json::json!({"type": "Sequence", "normalizers": [inner.clone()], "pretokenizers": [inner.clone()], "processors": [inner.clone()], "decoders": [inner]})
                }
                _ => serde_json::json!({ "type": inner }),
            };
        }
    }
    let mut text = if rng.gen_bool(0.5) { serde_json::to_string(&doc) } else { serde_json::to_string_pretty(&doc) }.ok()?;
    let quoted = format!("\"{RAW}\"");
    for r in raws {
        text = text.replacen(&quoted, r, 1);
    }
    Some(text.into_bytes())
}

// ---------------------------------------------------------------------------------------------
// Protobuf (wire format; the fields are those of sentencepiece_model.proto)

/// One field of a protobuf message: its number, wire type and payload (the raw bytes of a
/// length-delimited field or a fixed-size value, the value of a varint).
#[derive(Clone, Debug)]
struct Field {
    tag: u64,
    wire: u8,
    bytes: Vec<u8>,
    varint: u64,
}

fn read_varint(buf: &[u8], i: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*i)?;
        *i += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

fn parse_message(buf: &[u8]) -> Option<Vec<Field>> {
    let mut i = 0;
    let mut out = Vec::new();
    while i < buf.len() {
        let key = read_varint(buf, &mut i)?;
        let (tag, wire) = (key >> 3, (key & 7) as u8);
        let mut f = Field { tag, wire, bytes: Vec::new(), varint: 0 };
        match wire {
            0 => f.varint = read_varint(buf, &mut i)?,
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                f.bytes = buf.get(i..i + n)?.to_vec();
                i += n;
            }
            2 => {
                let n = usize::try_from(read_varint(buf, &mut i)?).ok()?;
                f.bytes = buf.get(i..i.checked_add(n)?)?.to_vec();
                i += n;
            }
            _ => return None,
        }
        out.push(f);
    }
    Some(out)
}

fn write_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn write_message(fields: &[Field]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        write_varint(&mut out, (f.tag << 3) | u64::from(f.wire));
        match f.wire {
            0 => write_varint(&mut out, f.varint),
            2 => {
                write_varint(&mut out, f.bytes.len() as u64);
                out.extend_from_slice(&f.bytes);
            }
            _ => out.extend_from_slice(&f.bytes),
        }
    }
    out
}

/// Keeps the first `n` pieces of a `.model` (and every other field), to make a small seed.
pub fn proto_keep_pieces(data: &[u8], n: usize) -> Option<Vec<u8>> {
    let mut seen = 0;
    let fields: Vec<Field> = parse_message(data)?
        .into_iter()
        .filter(|f| {
            f.tag != 1 || {
                seen += 1;
                seen <= n
            }
        })
        .collect();
    Some(write_message(&fields))
}

const INTERESTING_FLOATS: &[f32] =
    &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, -f32::MAX, f32::MIN_POSITIVE, 1e-45, 0.0, -0.0, 1e30, -1e30, -1e9, 100.0];

const INTERESTING_INTS: &[i64] = &[-1, 0, 1, 2, 3, 4, 7, 255, 256, 999, 1000, 7999, 8000, 65535, 2147483647, -2147483648, 4294967296];

fn proto_mutation(rng: &mut StdRng, data: &[u8]) -> Option<Vec<u8>> {
    let mut fields = parse_message(data)?;
    let pieces: Vec<usize> = fields.iter().enumerate().filter(|(_, f)| f.tag == 1 && f.wire == 2).map(|(i, _)| i).collect();
    match rng.gen_range(0..6) {
        0 | 1 => {
            // One piece: its string, score or type.
            let &i = pieces.choose(rng)?;
            let mut sub = parse_message(&fields[i].bytes)?;
            match rng.gen_range(0..4) {
                0 => {
                    let score = INTERESTING_FLOATS.choose(rng).unwrap().to_le_bytes().to_vec();
                    sub.retain(|f| f.tag != 2);
                    sub.push(Field { tag: 2, wire: 5, bytes: score, varint: 0 });
                }
                1 => {
                    let t = INTERESTING_INTS[..8].choose(rng).unwrap();
                    sub.retain(|f| f.tag != 3);
                    sub.push(Field { tag: 3, wire: 0, bytes: Vec::new(), varint: *t as u64 });
                }
                2 => {
                    let other = pieces.choose(rng).and_then(|&j| parse_message(&fields[j].bytes));
                    let piece = sub.iter_mut().find(|f| f.tag == 1)?;
                    match rng.gen_range(0..6) {
                        0 => piece.bytes.clear(),
                        1 => piece.bytes.push(0),
                        2 => piece.bytes.push(0xff),
                        3 => piece.bytes.insert(0, 0xc3),
                        4 => piece.bytes = other?.into_iter().find(|f| f.tag == 1)?.bytes,
                        _ => piece.bytes = b"a".repeat(rng.gen_range(1..500)),
                    }
                }
                _ => {
                    sub.remove(rng.gen_range(0..sub.len().max(1)).min(sub.len().saturating_sub(1)));
                }
            }
            fields[i].bytes = write_message(&sub);
        }
        2 => {
            // Remove, duplicate or move pieces.
            let &i = pieces.choose(rng)?;
            match rng.gen_range(0..3) {
                0 => {
                    fields.remove(i);
                }
                1 => {
                    let f = fields[i].clone();
                    fields.insert(*pieces.choose(rng)?, f);
                }
                _ => {
                    let &j = pieces.choose(rng)?;
                    fields.swap(i, j);
                }
            }
        }
        3 => {
            // trainer_spec: model type, vocabulary size, special ids, byte fallback, pieces.
            let i = fields.iter().position(|f| f.tag == 2)?;
            let mut sub = parse_message(&fields[i].bytes)?;
            const TAGS: &[u64] = &[3, 4, 24, 25, 35, 40, 41, 42, 43, 44, 45, 46, 47, 48];
            let tag = *TAGS.choose(rng).unwrap();
            sub.retain(|f| f.tag != tag);
            if tag >= 44 {
                let s: &[u8] = [&b""[..], b"\0", b"<unk>", b"<s>", b"\xff"].choose(rng).unwrap();
                sub.push(Field { tag, wire: 2, bytes: s.to_vec(), varint: 0 });
            } else {
                let v = *INTERESTING_INTS.choose(rng).unwrap();
                sub.push(Field { tag, wire: 0, bytes: Vec::new(), varint: v as u64 });
            }
            fields[i].bytes = write_message(&sub);
        }
        4 => {
            // normalizer_spec: the charsmap's bytes, the flags.
            let i = fields.iter().position(|f| f.tag == 3)?;
            let mut sub = parse_message(&fields[i].bytes)?;
            if let Some(map) = sub.iter_mut().find(|f| f.tag == 2).filter(|_| rng.gen_bool(0.7)) {
                let b = &mut map.bytes;
                if b.is_empty() {
                    b.extend_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
                } else {
                    let pos = rng.gen_range(0..b.len());
                    match rng.gen_range(0..4) {
                        0 => b[pos] ^= 1 << rng.gen_range(0..8),
                        1 => b.truncate(pos),
                        2 => {
                            let end = (pos + 4).min(b.len());
                            b[pos..end].fill(0xff);
                        }
                        _ => b.splice(pos..pos, [0u8, 0, 0, 0x40]).for_each(drop),
                    }
                }
            } else {
                let tag = rng.gen_range(3..=5);
                sub.retain(|f| f.tag != tag);
                sub.push(Field { tag, wire: 0, bytes: Vec::new(), varint: rng.gen_range(0..2) });
            }
            fields[i].bytes = write_message(&sub);
        }
        _ => {
            // Drop a top-level field other than a piece.
            let others: Vec<usize> = (0..fields.len()).filter(|i| fields[*i].tag != 1).collect();
            fields.remove(*others.choose(rng)?);
        }
    }
    Some(write_message(&fields))
}
