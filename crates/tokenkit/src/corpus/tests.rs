use std::collections::{BTreeMap, HashSet};

use super::dedup::{self, MinHashOptions};
use super::pii::{self, PiiKind};
use super::*;

/// splitmix64: the labelled sets are the same on every run and platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn digits(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from(b'0' + self.below(10) as u8)).collect()
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

fn luhn_digit(body: &str) -> char {
    (0..10).map(|d| char::from(b'0' + d)).find(|&d| pii::luhn(&format!("{body}{d}").bytes().map(|c| c - b'0').collect::<Vec<_>>())).unwrap()
}

fn group(s: &str, sizes: &[usize], sep: &str) -> String {
    let mut out = Vec::new();
    let mut at = 0;
    for &n in sizes {
        out.push(&s[at..at + n]);
        at += n;
    }
    out.join(sep)
}

fn iban(r: &mut Rng) -> String {
    let (country, bban) = match r.below(3) {
        0 => ("DE", r.digits(18)),
        1 => ("GB", format!("{}{}", ["NWBK", "BARC", "MIDL"][r.below(3) as usize], r.digits(14))),
        _ => ("FR", r.digits(23)),
    };
    let numeric: String = format!("{bban}{country}00").chars().map(|c| c.to_digit(36).unwrap().to_string()).collect();
    let rem = numeric.bytes().fold(0u64, |a, c| (a * 10 + u64::from(c - b'0')) % 97);
    let compact = format!("{country}{:02}{bban}", 98 - rem);
    if r.below(2) == 0 {
        compact
    } else {
        compact.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(" ")
    }
}

fn cn_id(r: &mut Rng, valid: bool) -> String {
    let region = r.pick(&["110101", "310104", "440305", "510107", "330106"]);
    let (y, m, d) = (1950 + r.below(56), 1 + r.below(12), 1 + r.below(28));
    let body = format!("{region}{y}{m:02}{d:02}{}", r.digits(3));
    const W: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    let sum: u32 = body.bytes().zip(W).map(|(c, w)| u32::from(c - b'0') * w).sum();
    let mut check = b"10X98765432"[(sum % 11) as usize];
    if !valid {
        check = if check == b'0' { b'1' } else { b'0' };
    }
    format!("{body}{}", check as char)
}

fn card(r: &mut Rng) -> String {
    let (prefix, len, groups): (String, usize, &[usize]) = match r.below(4) {
        0 => ("4".into(), 16, &[4, 4, 4, 4]),
        1 => (format!("5{}", 1 + r.below(5)), 16, &[4, 4, 4, 4]),
        2 => (r.pick(&["34", "37"]).into(), 15, &[4, 6, 5]),
        _ => ("62".into(), 16, &[4, 4, 4, 4]),
    };
    let body = format!("{prefix}{}", r.digits(len - 1 - prefix.len()));
    let number = format!("{body}{}", luhn_digit(&body));
    match r.below(3) {
        0 => number,
        1 => group(&number, groups, " "),
        _ => group(&number, groups, "-"),
    }
}

fn phone(r: &mut Rng) -> String {
    let mobile = format!("1{}{}", r.pick(&["3", "5", "8", "9"]), r.digits(9));
    match r.below(8) {
        0 => format!("+1 {}{} {} {}", 2 + r.below(8), r.digits(2), r.digits(3), r.digits(4)),
        1 => format!("+44 20 {} {}", r.digits(4), r.digits(4)),
        2 => format!("+86{mobile}"),
        3 => group(&mobile, &[3, 4, 4], " "),
        4 => mobile,
        5 => format!("({}{}) {}-{}", 2 + r.below(8), r.digits(2), r.digits(3), r.digits(4)),
        6 => format!("0{}-{}", r.pick(&["10", "21", "755"]), r.digits(8)),
        _ => format!("0{} {} {}", r.digits(2), r.digits(4), r.digits(4)),
    }
}

fn ip(r: &mut Rng) -> String {
    if r.below(3) == 0 {
        let g: Vec<String> = (0..6).map(|_| format!("{:x}", r.below(65536))).collect();
        format!("2001:db8:{}", g.join(":"))
    } else {
        let o: Vec<String> = (0..4).map(|k| (if k == 0 { 1 + r.below(223) } else { r.below(256) }).to_string()).collect();
        o.join(".")
    }
}

fn isbn13(r: &mut Rng) -> String {
    let body = format!("978{}", r.digits(9));
    let sum: u32 = body.bytes().enumerate().map(|(k, c)| u32::from(c - b'0') * if k % 2 == 0 { 1 } else { 3 }).sum();
    let full = format!("{body}{}", (10 - sum % 10) % 10);
    if r.below(2) == 0 {
        full
    } else {
        group(&full, &[3, 1, 3, 5, 1], "-")
    }
}

/// A look-alike that is no personal data.
fn look_alike(r: &mut Rng) -> String {
    match r.below(15) {
        10 => format!("order no. {}", r.digits(16)),
        11 => {
            // A card number with a network prefix whose Luhn check fails.
            let body = format!("4{}", r.digits(14));
            let good = luhn_digit(&body).to_digit(10).unwrap();
            format!("{body}{}", (good + 1 + r.below(9) as u32) % 10)
        }
        12 => {
            // An IBAN with wrong check digits.
            let good = iban(r);
            let check: u32 = good[2..4].parse().unwrap();
            format!("{}{:02}{}", &good[..2], (check + 1 + r.below(90) as u32) % 100, &good[4..])
        }
        13 => format!("{}", 1_600_000_000_000 + r.below(200_000_000_000)),
        14 => format!("12{}", r.digits(9)),
        0 => format!("ISBN {}", isbn13(r)),
        1 => format!("{}-{:02}-{:02}", 1990 + r.below(35), 1 + r.below(12), 1 + r.below(28)),
        2 => format!("v{}.{}.{}", r.below(20), r.below(30), r.below(100)),
        3 => format!("10.0.{}.{}", 19000 + r.below(1000), r.below(4000)),
        4 => format!("ORD-{}-{}", 2020 + r.below(6), r.digits(7)),
        5 => format!("#{}", r.digits(9)),
        6 => format!("{}", 1_600_000_000 + r.below(200_000_000)),
        7 => format!("{}T{:02}:{:02}:{:02}Z", 20241128, r.below(24), r.below(60), r.below(60)),
        8 => cn_id(r, false),
        _ => format!("{:02}:{:02}:{:02}", r.below(24), r.below(60), r.below(60)),
    }
}

fn planted(r: &mut Rng) -> (PiiKind, String) {
    let kind = PiiKind::ALL[r.below(7) as usize];
    let user = format!("{}{}", r.pick(&["john", "li.wei", "anna_k", "m.rossi", "zhang3"]), r.below(1000));
    let value = match kind {
        PiiKind::Url => format!("https://{user}:s3cr{}t@db{}.example.com/admin", r.below(99), r.below(99)),
        PiiKind::Email => format!("{user}@{}", r.pick(&["example.com", "mail.example.org", "qq.com", "163.com"])),
        PiiKind::Iban => iban(r),
        PiiKind::Id => cn_id(r, true),
        PiiKind::Card => card(r),
        PiiKind::Phone => phone(r),
        PiiKind::Ip | PiiKind::Custom(_) => ip(r),
    };
    (kind, value)
}

/// A labelled document: text and the planted spans.
fn labelled_doc(r: &mut Rng, zh: bool) -> (String, Vec<(PiiKind, std::ops::Range<usize>)>) {
    let en = [
        "Please contact {} before Friday.",
        "The record lists {} next to the order {}.",
        "Version {} was released; see {}.",
        "Logged {} at {}",
    ];
    let cn = ["请联系{}，谢谢。", "订单{}的备注：{}", "版本{}已发布，详见{}。", "用户信息：{}（{}）"];
    let mut text = String::new();
    let mut spans = Vec::new();
    for _ in 0..3 {
        let template = if zh { r.pick(&cn) } else { r.pick(&en) };
        let parts: Vec<&str> = template.split("{}").collect();
        for (k, part) in parts.iter().enumerate() {
            text.push_str(part);
            if k + 1 < parts.len() {
                if r.below(2) == 0 {
                    let (kind, value) = planted(r);
                    spans.push((kind, text.len()..text.len() + value.len()));
                    text.push_str(&value);
                } else {
                    text.push_str(&look_alike(r));
                }
            }
        }
        text.push(if zh { '\n' } else { ' ' });
    }
    (text, spans)
}

#[test]
fn pii_precision_and_recall_on_the_labelled_set() {
    let mut r = Rng(24);
    let (mut tp, mut fp, mut planted_n) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let mut misses = Vec::new();
    for k in 0..4000 {
        let (text, spans) = labelled_doc(&mut r, k % 2 == 1);
        for (kind, _) in &spans {
            *planted_n.entry(*kind).or_insert(0u32) += 1;
        }
        let found = pii::find(&text);
        for f in &found {
            let hit = spans.iter().any(|(kind, span)| *kind == f.kind && *span == f.span);
            *(if hit { &mut tp } else { &mut fp }).entry(f.kind).or_insert(0u32) += 1;
            if !hit && misses.len() < 40 {
                misses.push(format!("false {:?} {:?} in {text:?}", f.kind, &text[f.span.clone()]));
            }
        }
        for (kind, span) in &spans {
            if !found.iter().any(|f| f.kind == *kind && f.span == *span) && misses.len() < 40 {
                misses.push(format!("missed {kind:?} {:?} in {text:?}", &text[span.clone()]));
            }
        }
    }
    let mut table = String::from("type      planted  found  precision  recall\n");
    let mut ok = true;
    for kind in PiiKind::ALL {
        let (t, f, n) = (tp.get(&kind).copied().unwrap_or(0), fp.get(&kind).copied().unwrap_or(0), planted_n[&kind]);
        let precision = f64::from(t) / f64::from((t + f).max(1));
        let recall = f64::from(t) / f64::from(n);
        table.push_str(&format!(
            "{:<9} {n:>7} {:>6} {precision:>10.4} {recall:>7.4}\n",
            kind.builtin_placeholder().unwrap_or_default(),
            t + f
        ));
        ok &= precision >= 0.98 && recall >= 0.99 && n > 100;
    }
    eprintln!("{table}");
    assert!(ok, "{table}\n{}", misses.join("\n"));
}

#[test]
fn pii_edge_cases() {
    let cases: &[(&str, &str)] = &[
        ("ip 192.168.0.1, v1.2.3.4 and 300.1.1.1", "ip [IP], v1.2.3.4 and 300.1.1.1"),
        ("::1 and fe80::1ff:fe23:4567:890a and 09:30:00", "[IP] and [IP] and 09:30:00"),
        ("身份证11010519491231002X号", "身份证[ID]号"),
        ("bad check 110105194912310021", "bad check 110105194912310021"),
        ("card 4111111111111111 luhn-bad 4111111111111112", "card [CARD] luhn-bad 4111111111111112"),
        ("IBAN DE89 3704 0044 0532 0130 00 paid", "IBAN [IBAN] paid"),
        ("IBAN DE89 3704 0044 0532 0130 01", "IBAN DE89 3704 0044 0532 0130 01"),
        ("db postgres://admin:hunter2@10.0.0.5:5432/app ok", "db [URL] ok"),
        ("a.b@c", "a.b@c"),
        (
            "setup might be:: and add:: and +2147483647 and 012 013 023 123 and +000000120",
            "setup might be:: and add:: and +2147483647 and 012 013 023 123 and +000000120",
        ),
        ("call 138-0013-8000 or (415) 555-0132", "call [PHONE] or [PHONE]"),
        ("ISBN 978-7-111-54742-6, 2024-11-28, ts 1732780800123", "ISBN 978-7-111-54742-6, 2024-11-28, ts 1732780800123"),
    ];
    for (text, want) in cases {
        let (got, _) = pii::redact(text);
        assert_eq!(got.as_deref().unwrap_or(text), *want, "{text}");
    }
}

/// Documents cut from a real corpus: `words` words each.
fn real_docs(words: usize) -> Vec<String> {
    let text =
        std::fs::read_to_string(crate::test_fixtures::corpora().join("en/botchan.txt")).expect("botchan.txt is fetched by the set-up");
    let all: Vec<&str> = text.split_whitespace().collect();
    all.chunks(words).filter(|c| c.len() == words).map(|c| c.join(" ")).collect()
}

fn shingle_set(text: &str, n: usize) -> HashSet<Vec<String>> {
    let words: Vec<String> =
        text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(String::from).collect();
    words.windows(n.min(words.len())).map(|w| w.to_vec()).collect()
}

fn jaccard(a: &HashSet<Vec<String>>, b: &HashSet<Vec<String>>) -> f64 {
    a.intersection(b).count() as f64 / a.union(b).count().max(1) as f64
}

#[test]
fn near_dedup_against_exact_jaccard_on_real_text() {
    let base = real_docs(200);
    assert!(base.len() >= 200, "{} documents", base.len());
    let mut r = Rng(7);
    // Planted near duplicates: a copy of a document with 0.2% to 20% of its words replaced.
    let mut docs: Vec<String> = base.clone();
    let mut pairs = Vec::new();
    for k in 0..base.len() {
        let src = r.below(base.len() as u64) as usize;
        let rate = [2, 5, 10, 20, 30, 50, 100, 200][k % 8];
        let mut words: Vec<String> = base[src].split(' ').map(String::from).collect();
        for w in words.iter_mut() {
            if r.below(1000) < rate {
                *w = format!("edit{}", r.below(1000));
            }
        }
        pairs.push((src, docs.len()));
        docs.push(words.join(" "));
    }
    let opts = MinHashOptions::for_threshold(0.8, 128).unwrap();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let clusters = dedup::near_clusters(&refs, &opts).unwrap();
    let sets: Vec<_> = docs.iter().map(|d| shingle_set(d, opts.n)).collect();
    // Recall by exact Jaccard similarity of the planted pairs, against the probability that
    // LSH makes a pair of that similarity candidates, 1 - (1 - J^rows)^bands.
    let p = |j: f64| 1.0 - (1.0 - j.powi(opts.rows as i32)).powi(opts.bands as i32);
    let mut buckets = [(0.0, 0usize, 0usize, 0.0f64); 5];
    for (k, lo) in [0.0, 0.7, 0.8, 0.9, 0.95].into_iter().enumerate() {
        buckets[k].0 = lo;
    }
    for &(a, b) in &pairs {
        let j = jaccard(&sets[a], &sets[b]);
        let k = buckets.iter().rposition(|bk| j >= bk.0).unwrap();
        buckets[k].1 += 1;
        buckets[k].2 += usize::from(clusters[a] == clusters[b]);
        buckets[k].3 += p(j);
    }
    for (lo, n, found, expected) in buckets {
        eprintln!("planted pairs with J >= {lo}: {found}/{n} found (LSH curve expects {expected:.1})");
        // Not below the curve by more than 4 standard deviations (the permutations are random;
        // clusters are transitive, so a pair can also be joined through a third copy).
        assert!(found as f64 >= expected - 4.0 * expected.max(1.0).sqrt() - 1.0, "J >= {lo}: {found} vs {expected:.1}");
    }
    let (n, found) = (buckets[4].1, buckets[4].2);
    assert!(n > 50 && found as f64 >= 0.97 * n as f64, "recall at J >= 0.95: {found}/{n}");
    // Precision: every removed document's exact Jaccard with its cluster's first document.
    let removed: Vec<usize> = (0..docs.len()).filter(|&k| clusters[k] as usize != k).collect();
    let true_dup = removed.iter().filter(|&&k| jaccard(&sets[k], &sets[clusters[k] as usize]) >= 0.5).count();
    eprintln!(
        "bands {} rows {}: removed {} of {}, {true_dup} of them with J >= 0.5 to their kept document",
        opts.bands,
        opts.rows,
        removed.len(),
        docs.len()
    );
    assert!(true_dup as f64 >= 0.98 * removed.len() as f64, "precision {true_dup}/{}", removed.len());
    // No distinct documents of the base corpus are merged.
    let base_clusters: HashSet<u32> = clusters[..base.len()].iter().copied().collect();
    assert_eq!(base_clusters.len(), base.len());
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tokenkit-corpus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn lines_keep_their_bytes_and_order_and_bad_lines_are_counted() {
    let d = temp_dir("frame");
    let input = d.join("in.jsonl");
    let lines: &[&[u8]] = &[
        b"{\"id\": 1,  \"text\": \"mail a.b@example.com now\", \"t\": \"x\\u00e9\"}",
        b"not json",
        b"{\"text\" : \"no pii \\\"quoted\\\"\"  , \"z\":[1,2]}",
        b"",
        b"{\"text\": \"\", \"id\": 3}",
        b"{\"text\": \"\xff\"}",
        b"{\"id\": 4}",
        b"{\"text\": \"mail a.b@example.com now\", \"id\": 5}",
    ];
    std::fs::write(&input, lines.join(&b"\n"[..])).unwrap();
    let out = d.join("out.jsonl");
    let mut opts = CorpusOptions::new(vec![input.display().to_string()], &out);
    opts.chunk_bytes = 10;
    let report = pii_files(&opts, &Default::default(), &mut |_| {}).unwrap();
    let got = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        got,
        "{\"id\": 1,  \"text\": \"mail [EMAIL] now\", \"t\": \"x\\u00e9\"}\n\
         {\"text\" : \"no pii \\\"quoted\\\"\"  , \"z\":[1,2]}\n\
         {\"text\": \"\", \"id\": 3}\n\
         {\"text\": \"mail [EMAIL] now\", \"id\": 5}\n"
    );
    assert_eq!((report.documents_in, report.documents_out, report.changed, report.empty, report.skipped), (3, 3, 2, 2, 3));
    assert_eq!(report.counts["[EMAIL]"], 2);
    assert!(report.skip_examples[0].contains("in.jsonl:2: invalid JSON"), "{:?}", report.skip_examples);
    // Exact dedup keeps the first of the two equal texts, the lines unchanged.
    let report = dedup_files(&opts, None, dedup::LSH_MEMORY, &mut |_| {}).unwrap();
    let got = std::fs::read_to_string(&out).unwrap();
    assert_eq!(got.lines().count(), 3);
    assert!(got.starts_with(std::str::from_utf8(lines[0]).unwrap()));
    assert_eq!(report.removed, 1);
    // Strict: an error, and no output file.
    std::fs::remove_file(&out).unwrap();
    opts.strict = true;
    let e = pii_files(&opts, &Default::default(), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("invalid JSON") && e.contains("--strict"), "{e}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "a temporary file was left");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn output_is_the_same_for_any_thread_count_and_chunk_size() {
    let d = temp_dir("threads");
    let input = d.join("in.jsonl");
    let mut docs = real_docs(40);
    docs.truncate(600);
    let copies: Vec<String> = docs.iter().step_by(7).map(|t| t.replacen("the", "a", 1)).collect();
    docs.extend(copies);
    let body: String = docs.iter().enumerate().map(|(k, t)| format!("{}\n", serde_json::json!({"k": k, "text": t}))).collect();
    std::fs::write(&input, body).unwrap();
    let mut outputs = Vec::new();
    // With the band keys in memory, and spilled to disk in runs of 4 KiB and 64 KiB.
    for (threads, chunk, memory, spilled) in [(1, 1 << 20, dedup::LSH_MEMORY, false), (2, 100, 4096, true), (4, 3000, 1 << 16, true)] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let out = d.join(format!("out{threads}.jsonl"));
        let mut opts = CorpusOptions::new(vec![input.display().to_string()], &out);
        opts.chunk_bytes = chunk;
        let report = pool.install(|| dedup_files(&opts, Some(&MinHashOptions::default()), memory, &mut |_| {})).unwrap();
        assert!(report.removed >= 50, "{report:?}");
        assert_eq!(report.counts.contains_key("key runs spilled"), spilled, "{report:?}");
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    // The spill directories are gone: only the input and the outputs are left.
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 4);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn clean_edge_cases() {
    use clean::{clean, CleanOptions, Cleaned};
    let html = CleanOptions { html: true, ..CleanOptions::default() };
    let cases: &[(&CleanOptions, &str, Option<&str>)] = &[
        // HTML: tags, comments, scripts and styles go, blocks leave a line break, references
        // are decoded after the tags are gone (an escaped tag stays text).
        (&html, "<p>Hello&nbsp;<b>world</b></p><p>again</p>", Some("Hello world\nagain")),
        (&html, "a < b and c > d", None),
        (&html, "x<!-- hidden <p> -->y<SCRIPT type=x>if (a<b) {}</script >z<style>p{}</style>", Some("xyz")),
        (&html, "&lt;b&gt; is a tag &amp; &#233;&#x4e2d;", Some("<b> is a tag & é中")),
        (&html, "unclosed <b", None),
        (&CleanOptions::default(), "<p>not stripped</p>", None),
        // Controls and invisible characters; joiners and variation selectors stay.
        (&CleanOptions::default(), "a\u{0}b\u{7}c\u{200b}d\u{feff}e\u{ad}f\u{202e}g", Some("abcdefg")),
        (&CleanOptions::default(), "क्\u{200d}ष \u{200c}x ❤\u{fe0f}\tend", None),
        // NFC by default, NFKC when asked.
        (&CleanOptions::default(), "e\u{301}ﬁ", Some("éﬁ")),
        (&CleanOptions { form: clean::Form::Nfkc, ..CleanOptions::default() }, "e\u{301}ﬁ", Some("éfi")),
        // Whitespace: line ends, exotic spaces, runs inside a line, indentation kept, blank
        // lines at most one, the document trimmed.
        (&CleanOptions::default(), "  a\u{a0}\u{3000}b  c \r\n\r\n\r\n\n    d\u{2028}e\t\t \n", Some("a b c\n\n    d\ne")),
        (&CleanOptions::default(), "fine text\n\nas it is", None),
        (&CleanOptions { whitespace: false, ..CleanOptions::default() }, "a  b", None),
    ];
    for (opts, text, want) in cases {
        match clean(text, opts) {
            Cleaned::Kept(got, _) => assert_eq!(got.as_deref(), *want, "{text:?}"),
            other => panic!("{text:?} removed: {other:?}"),
        }
    }
    assert!(matches!(clean(" \u{200b}\n ", &CleanOptions::default()), Cleaned::Removed("empty", _)));
}

/// An English paragraph that passes every Gopher rule.
fn good_english(r: &mut Rng) -> String {
    let words = [
        "the", "river", "carried", "small", "boats", "toward", "harbour", "and", "people", "watched", "with", "quiet", "interest", "that",
        "morning", "while", "children", "played", "near", "old", "stone", "bridge", "of", "town", "have", "seen",
    ];
    (0..120).map(|_| r.pick(&words)).collect::<Vec<_>>().join(" ")
}

#[test]
fn gopher_rules_remove_what_each_rule_names() {
    use clean::{failed_filter, Filters, Quality, Repetition};
    let f = Filters { quality: Some(Quality::default()), repetition: Some(Repetition::default()), ..Filters::default() };
    let mut r = Rng(7);
    // Random word order: no repeated 5-grams to speak of, so the good ones pass.
    let good: Vec<String> = (0..50).map(|_| good_english(&mut r)).collect();
    let passed = good.iter().filter(|t| failed_filter(t, &f).is_none()).count();
    assert_eq!(passed, 50, "{:?}", good.iter().map(|t| failed_filter(t, &f)).collect::<Vec<_>>());
    let g = &good[0];
    let lines_of = |n: usize, line: &str| vec![line; n].join("\n");
    let cases: Vec<(String, &str)> = vec![
        ("the cat and the dog".into(), "gopher_min_words"),
        (format!("{g} {}", "a b c d e f g h i j ".repeat(200)), "gopher_min_mean_word_len"),
        (format!("{g} {}", "incomprehensibilities ".repeat(400)), "gopher_max_mean_word_len"),
        (format!("{g} {}", "#tag ".repeat(30)), "gopher_symbol_word_ratio"),
        (format!("{g} {}", "and so on... ".repeat(30)), "gopher_symbol_word_ratio"),
        (format!("{g}\n{}", lines_of(20, "- the item of that list")), "gopher_bullet_lines"),
        (format!("{g}\n{}", lines_of(5, "the story goes on with that...")), "gopher_ellipsis_lines"),
        (format!("{g} {}", "1234 5678 ++ 42 ".repeat(60)), "gopher_alpha_words"),
        (
            g.split(' ').filter(|w| !["the", "and", "that", "with", "have", "of"].contains(w)).collect::<Vec<_>>().join(" "),
            "gopher_stop_words",
        ),
        (format!("{g}\n\n{g}\n\nthe end of it with that"), "gopher_dup_paragraphs"),
    ];
    for (text, rule) in &cases {
        assert_eq!(failed_filter(text, &f), Some(*rule), "{}", &text[..text.len().min(200)]);
    }
    // Repetition rules on their own.
    let rep = Filters { repetition: Some(Repetition::default()), ..Filters::default() };
    let long_line = "this line comes back again and again in the text with that";
    assert_eq!(
        failed_filter(&format!("a first line\nthen another\nand more\n{long_line}\n{long_line}"), &rep),
        Some("gopher_dup_line_chars")
    );
    let mut lines: Vec<String> = (0..10).map(|k| format!("line {k} of them")).collect();
    lines.extend(std::iter::repeat_n("ok".to_string(), 6));
    assert_eq!(failed_filter(&lines.join("\n"), &rep), Some("gopher_dup_lines"));
    assert_eq!(failed_filter(&format!("{g} {}", "buy now ".repeat(60)), &rep), Some("gopher_top_2gram"));
    let phrase = "one two three four five six seven eight nine ten eleven";
    assert_eq!(failed_filter(&format!("{g} {phrase} {g} {phrase}"), &rep), Some("gopher_dup_5gram"));
    // Chinese: each Han character is a word, so word counts mean something.
    assert_eq!(clean::words("满江红 辛弃疾x。ok"), ["满", "江", "红", "辛", "弃", "疾", "x。ok"]);
    // Real prose passes the repetition rules: botchan in 300-word documents.
    let docs = real_docs(300);
    let failed = docs.iter().filter(|t| failed_filter(t, &rep).is_some()).count();
    assert!(docs.len() > 100 && failed * 50 < docs.len(), "{failed} of {} botchan documents fail", docs.len());
}

/// Lines of at least `min_chars` characters (at most `max`) of the corpus of `lang`: the shared
/// corpora's file, else the one a fresh clone has (botchan from the registry, the built-in
/// samples for Japanese and Chinese). There is always one: no test here is skipped.
fn lang_lines(lang: &str, min_chars: usize, max: usize) -> Vec<String> {
    let files: &[&str] = match lang {
        "en" => &["en/pride_and_prejudice.txt", "en/botchan.txt"],
        "ja" => &["ja/wagahai.txt", "builtin/ja/sample.txt"],
        _ => &["zh/lunyu.txt", "builtin/zh/sample.txt"],
    };
    let path = crate::test_fixtures::corpus_file(files);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<String> = text.lines().filter(|l| l.trim().chars().count() >= min_chars).take(max).map(str::to_owned).collect();
    assert!(lines.len() >= 50, "{}: {} lines", path.display(), lines.len());
    lines
}

#[test]
fn languages_of_the_shared_corpora() {
    for (lang, code, min_chars) in [("en", "eng", 40), ("ja", "jpn", 12), ("zh", "cmn", 12)] {
        let lines = lang_lines(lang, min_chars, 2000);
        let hits = lines.iter().filter(|l| lang::detect(l).lang == code).count();
        assert!(hits as f64 >= 0.9 * lines.len() as f64, "{lang}: {hits}/{} {code}", lines.len());
    }
    assert_eq!(lang::detect("1234 5678").lang, lang::UNDETERMINED);
}

/// A JSON lines file of `(k, text)` documents: English, Japanese and Chinese lines of the
/// corpora.
fn mixed_corpus(d: &std::path::Path) -> (PathBuf, Vec<String>) {
    let mut docs = Vec::new();
    for (lang, n) in [("en", 3000), ("ja", 1000), ("zh", 600)] {
        docs.extend(lang_lines(lang, 12, n));
    }
    let input = d.join("mixed.jsonl");
    let body: String = docs.iter().enumerate().map(|(k, t)| format!("{}\n", serde_json::json!({"k": k, "text": t}))).collect();
    std::fs::write(&input, body).unwrap();
    (input, docs)
}

#[test]
fn lang_filter_label_and_proportions() {
    let d = temp_dir("lang");
    let (input, docs) = mixed_corpus(&d);
    let out = d.join("out.jsonl");
    let opts = CorpusOptions::new(vec![input.display().to_string()], &out);
    // Labels: every written line is the input line plus the two members.
    let lo = lang::LangOptions { label: Some("lang".into()), ..Default::default() };
    let report = lang_files(&opts, &lo, &mut |_| {}).unwrap();
    assert_eq!(report.documents_out as usize, docs.len());
    for (line, text) in std::fs::read_to_string(&out).unwrap().lines().zip(&docs) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["text"], serde_json::Value::from(text.as_str()));
        assert_eq!(v["lang"], serde_json::Value::from(lang::detect(text).lang));
        assert!(v["lang_score"].as_f64().unwrap() >= 0.0);
    }
    // Filter.
    let lo = lang::LangOptions { keep: vec!["jpn".into()], min_confidence: 0.5, ..Default::default() };
    let report = lang_files(&opts, &lo, &mut |_| {}).unwrap();
    let kept = docs.iter().filter(|t| lo.passes(&lang::detect(t))).count();
    assert_eq!(report.documents_out as usize, kept);
    assert!(kept as f64 >= 0.8 * lang_lines("ja", 12, 1000).len() as f64, "{kept}");
    // Proportions: eng, jpn and cmn sampled to 1:1:1 (cmn the scarcest: kept whole); within
    // 12%, or 3 standard deviations of the binomial sampling on small sets.
    let lo =
        lang::LangOptions { proportions: [("eng".into(), 1.0), ("jpn".into(), 1.0), ("cmn".into(), 1.0)].into(), ..Default::default() };
    let mut outputs = Vec::new();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let report = pool.install(|| lang_files(&opts, &lo, &mut |_| {})).unwrap();
        let kept = |l: &str| report.counts.get(&format!("kept: {l}")).copied().unwrap_or(0) as f64;
        let cmn = report.counts["detected: cmn"] as f64;
        let tolerance = 0.12f64.max(3.0 / cmn.sqrt());
        for l in ["eng", "jpn", "cmn"] {
            assert!((kept(l) / cmn - 1.0).abs() < tolerance, "{l}: {} kept for {cmn} cmn; {:?}", kept(l), report.counts);
        }
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    assert!(lang_files(&opts, &lang::LangOptions { keep: vec!["english".into()], ..Default::default() }, &mut |_| {}).is_err());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn splits_are_by_text_and_stable_when_documents_are_added() {
    let d = temp_dir("split");
    let (input, docs) = mixed_corpus(&d);
    let splits = split::Splits::parse("train=0.8,validation=0.1,test=0.1", 3).unwrap();
    let read = |dir: &std::path::Path| -> Vec<Vec<String>> {
        ["train", "validation", "test"]
            .iter()
            .map(|n| {
                std::fs::read_to_string(dir.join(format!("{n}.jsonl")))
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_owned())
                    .collect()
            })
            .collect()
    };
    let all_dir = d.join("all");
    let report = split_files(&CorpusOptions::new(vec![input.display().to_string()], &all_dir), &splits, false, &mut |_| {}).unwrap();
    let all = read(&all_dir);
    assert_eq!(all.iter().map(Vec::len).sum::<usize>(), docs.len());
    assert_eq!(report.counts["train"] as usize, all[0].len());
    // Shares within 4 standard deviations (distinct texts; a fresh clone's samples repeat lines).
    let distinct = docs.iter().collect::<HashSet<_>>().len() as f64;
    for (k, want) in [(0, 0.8), (1, 0.1), (2, 0.1)] {
        let share = all[k].len() as f64 / docs.len() as f64;
        assert!((share - want).abs() < 4.0 * (want * (1.0 - want) / distinct).sqrt() + 0.01, "split {k}: {share}");
    }
    // The first half of the corpus alone: each of its documents goes where it went before.
    let half = d.join("half.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&input).unwrap().lines().map(str::to_owned).collect();
    std::fs::write(&half, lines[..lines.len() / 2].join("\n")).unwrap();
    let half_dir = d.join("half");
    split_files(&CorpusOptions::new(vec![half.display().to_string()], &half_dir), &splits, false, &mut |_| {}).unwrap();
    for (k, texts) in read(&half_dir).iter().enumerate() {
        assert!(texts.iter().all(|t| all[k].contains(t)), "split {k} moved documents");
    }
    assert!(split::Splits::parse("train=0.9,test=0.2", 0).is_err());
    assert!(split::Splits::parse("a/b=1", 0).is_err());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn clean_output_is_the_same_for_any_thread_count_and_stats_count() {
    let d = temp_dir("clean");
    let (input, docs) = mixed_corpus(&d);
    let mut outputs = Vec::new();
    let opts_c =
        clean::CleanOptions { html: true, filters: clean::Filters { min_chars: Some(60), ..Default::default() }, ..Default::default() };
    for (threads, chunk) in [(1, 1 << 20), (2, 500)] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let out = d.join(format!("out{threads}.jsonl"));
        let mut opts = CorpusOptions::new(vec![input.display().to_string()], &out);
        opts.chunk_bytes = chunk;
        let report = pool.install(|| clean_files(&opts, &opts_c, &mut |_| {})).unwrap();
        let short = docs.iter().filter(|t| t.trim().chars().count() < 60).count() as u64;
        assert_eq!(report.counts.get("removed: min_chars").copied().unwrap_or(0), short);
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    let report = stats_files(&CorpusOptions::new(vec![input.display().to_string()], ""), true, &mut |_| {}).unwrap();
    assert_eq!(report.documents_in as usize, docs.len());
    assert_eq!(report.counts["characters"] as usize, docs.iter().map(|t| t.chars().count()).sum::<usize>());
    let mut lens: Vec<usize> = docs.iter().map(|t| t.chars().count()).collect();
    lens.sort();
    let p50 = report.counts["length p50"] as f64;
    assert!((p50 / lens[lens.len().div_ceil(2) - 1] as f64 - 1.0).abs() <= 0.011, "{p50}");
    assert_eq!(report.counts["length max"] as usize, *lens.last().unwrap());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn step_options_from_json() {
    let c: clean::CleanOptions = serde_json::from_str(
        r#"{"html": true, "normalize": "nfkc", "min_chars": 5, "quality": {"min_stop_words": 0}, "repetition": true}"#,
    )
    .unwrap();
    assert!(c.html && c.form == clean::Form::Nfkc && c.controls && c.filters.min_chars == Some(5));
    assert_eq!(c.filters.quality.as_ref().map(|q| (q.min_stop_words, q.min_words)), Some((0, 50)));
    assert!(c.filters.repetition.is_some());
    assert!(serde_json::from_str::<clean::CleanOptions>(r#"{"normalise": "nfc"}"#).is_err());
    assert!(serde_json::from_str::<clean::CleanOptions>(r#"{"quality": {"min_word": 3}}"#).is_err());
    let l: lang::LangOptions = serde_json::from_str(r#"{"keep": ["eng"], "proportions": {"eng": 1}}"#).unwrap();
    assert_eq!(l.keep, ["eng"]);
    let d: pipeline::DedupConfig = serde_json::from_str(r#"{"near": true, "memory_limit": "256M"}"#).unwrap();
    assert_eq!(d.memory_limit.0, 256 << 20);
    assert_eq!(serde_json::from_str::<pipeline::DedupConfig>(r#"{"memory_limit": 4096}"#).unwrap().memory_limit.0, 4096);
    let err = serde_json::from_str::<pipeline::DedupConfig>(r#"{"memory_limit": "lots"}"#).unwrap_err().to_string();
    assert!(err.contains("\"lots\" is not a size"), "{err}");
}

#[test]
fn pii_user_dictionaries_and_patterns() {
    let d = temp_dir("pii-user");
    std::fs::write(d.join("names.txt"), "Zhang Wei\n\n  Alice Smith  \n张伟\nAl\n").unwrap();
    std::fs::write(d.join("places.txt"), "Springfield\n北京\nWei Springs\n").unwrap();
    let opts: pii::PiiOptions = serde_json::from_value(serde_json::json!({
        "dictionaries": {"NAME": d.join("names.txt"), "PLACE": d.join("places.txt")},
        "patterns": {"STAFF_ID": "E[0-9]{6}", "EMAIL": "[a-z]+ at [a-z]+ dot com"},
    }))
    .unwrap();
    let redactor = pii::Redactor::new(&opts).unwrap();
    let cases: &[(&str, &str)] = &[
        // Whole words only in spaced scripts; the longest term first; case as written.
        ("Alice Smith met Zhang Wei in Springfield.", "[NAME] met [NAME] in [PLACE]."),
        ("Alfred, Al and Alice smith; Springfields", "Alfred, [NAME] and Alice smith; Springfields"),
        // Any match in Chinese text; a built-in type before a user entry.
        ("张伟住在北京，电话13800138000", "[NAME]住在[PLACE]，电话[PHONE]"),
        ("staff E123456: mail zw at example dot com or zw@example.com", "staff [STAFF_ID]: mail [EMAIL] or [EMAIL]"),
        // A term that is not a whole word does not hide an overlapping one that is.
        ("xZhang Wei Springs", "xZhang [PLACE]"),
    ];
    for (text, want) in cases {
        let (got, _) = redactor.redact(text);
        assert_eq!(got.as_deref().unwrap_or(text), *want, "{text}");
    }
    let (_, counts) = redactor.redact("Zhang Wei and 张伟 at E000001, 13800138000");
    let named: BTreeMap<&str, u64> = counts.iter().map(|(k, n)| (redactor.placeholder(k), n)).collect();
    assert_eq!(named, BTreeMap::from([("[NAME]", 2), ("[STAFF_ID]", 1), ("[PHONE]", 1)]));
    // Case-insensitive dictionaries.
    let ci = pii::Redactor::new(&pii::PiiOptions { ignore_case: true, ..opts.clone() }).unwrap();
    assert_eq!(ci.redact("ALICE SMITH").0.as_deref(), Some("[NAME]"));
    // Bad options are errors that name the entry.
    let bad = |json: serde_json::Value| pii::Redactor::new(&serde_json::from_value(json).unwrap()).unwrap_err().to_string();
    assert!(bad(serde_json::json!({"patterns": {"X": "("}})).contains("PII pattern X"));
    assert!(bad(serde_json::json!({"patterns": {"X": "a*"}})).contains("empty string"));
    assert!(bad(serde_json::json!({"patterns": {"A B": "x"}})).contains("PII label"));
    assert!(bad(serde_json::json!({"dictionaries": {"N": d.join("missing.txt")}})).contains("cannot read"));
    std::fs::write(d.join("empty.txt"), "\n \n").unwrap();
    assert!(bad(serde_json::json!({"dictionaries": {"N": d.join("empty.txt")}})).contains("no terms"));
    // The step: the same replacements through the files frame, counts in the report.
    let input = d.join("in.jsonl");
    std::fs::write(&input, "{\"id\":1,\"text\":\"Zhang Wei, E000042\"}\n{\"id\":2,\"text\":\"nobody\"}\n").unwrap();
    let out = d.join("out.jsonl");
    let report = pii_files(&CorpusOptions::new(vec![input.display().to_string()], &out), &opts, &mut |_| {}).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"id\":1,\"text\":\"[NAME], [STAFF_ID]\"}\n{\"id\":2,\"text\":\"nobody\"}\n");
    assert_eq!((report.counts["[NAME]"], report.counts["[STAFF_ID]"], report.changed), (1, 1, 1));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn line_and_paragraph_dedup_across_the_corpus() {
    fn seg(t: &str, u: dedup::Unit) -> Vec<(&str, bool)> {
        dedup::segments(t, u, 3).into_iter().map(|(r, h)| (&t[r], h.is_some())).collect()
    }
    assert_eq!(seg("\n\nabc\ndef\n\n\nxy\nghi", dedup::Unit::Paragraph), [("\n\n", false), ("abc\ndef\n\n\n", true), ("xy\nghi", true)]);
    assert_eq!(seg("abc\n \nxy\n", dedup::Unit::Line), [("abc\n", true), (" \n", false), ("xy\n", false)]);
    let d = temp_dir("units");
    let input = d.join("in.jsonl");
    let docs = [
        "Copyright 2024 Example Corp.\nFirst story begins here.\nok\n",
        "Menu: home | about | contact\nSecond story, all new.\nok\n",
        "Copyright 2024 Example Corp.\nMenu: home | about | contact\nok\n",
        "Second story, all new.\n   Copyright 2024 Example Corp.   \n",
    ];
    let lines: String = docs.iter().enumerate().map(|(k, t)| format!("{}\n", serde_json::json!({"id": k, "text": t}))).collect();
    std::fs::write(&input, lines).unwrap();
    let out = d.join("out.jsonl");
    let opts = CorpusOptions::new(vec![input.display().to_string()], &out);
    let report = dedup_units_files(&opts, dedup::Unit::Line, 3, dedup::LSH_MEMORY, &mut |_| {}).unwrap();
    let got: Vec<(u64, String)> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_u64().unwrap(), v["text"].as_str().unwrap().to_owned())
        })
        .collect();
    // Short lines ("ok") stay; the fourth document is all repeats and goes.
    assert_eq!(got, [(0, docs[0].to_owned()), (1, docs[1].to_owned()), (2, "ok\n".to_owned()),]);
    assert_eq!((report.counts["duplicate lines"], report.counts["documents emptied"], report.changed, report.removed), (4, 1, 1, 1));
    // Paragraph units: the blank lines after a removed paragraph go with it.
    std::fs::write(
        &input,
        format!(
            "{}\n{}\n",
            serde_json::json!({"text": "Intro para.\n\nShared footer text.\n"}),
            serde_json::json!({"text": "Shared footer text.\n\n\nOther body."})
        ),
    )
    .unwrap();
    dedup_units_files(&opts, dedup::Unit::Paragraph, 3, dedup::LSH_MEMORY, &mut |_| {}).unwrap();
    let second: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&out).unwrap().lines().nth(1).unwrap()).unwrap();
    assert_eq!(second["text"], "Other body.");
    std::fs::remove_dir_all(&d).unwrap();
}

/// LSH clusters, with the keys in memory and spilled in runs of every size, are the connected
/// components of "shares a key in some band" found pair by pair, each named by its smallest
/// document.
#[test]
fn lsh_clusters_are_the_components_of_shared_band_keys() {
    let opts = MinHashOptions { bands: 4, rows: 2, ..MinHashOptions::default() };
    let mut r = Rng(11);
    let keys: Vec<Vec<u64>> = (0..400).map(|_| (0..4).map(|_| r.below(8000)).collect()).collect();
    let n = keys.len();
    let mut want: Vec<u32> = (0..n as u32).collect();
    for i in 0..n {
        // The smallest document reachable from i, by a walk over pairs that share a band key.
        let mut seen = vec![false; n];
        let mut stack = vec![i];
        seen[i] = true;
        while let Some(x) = stack.pop() {
            want[i] = want[i].min(x as u32);
            for y in 0..n {
                if !seen[y] && (0..4).any(|b| keys[x][b] == keys[y][b]) {
                    seen[y] = true;
                    stack.push(y);
                }
            }
        }
    }
    assert!(dedup::clusters_of_several(&want) > 20, "the keys make clusters");
    let d = temp_dir("lsh-spill");
    for memory in [12, 100, 5000, u64::MAX] {
        let mut lsh = dedup::Lsh::new(&opts, memory, &d);
        for k in &keys {
            lsh.add(k).unwrap();
        }
        let spilled = lsh.runs() > 0;
        assert_eq!(spilled, memory < u64::MAX, "{memory}");
        assert_eq!(lsh.cluster_ids().unwrap(), want, "memory {memory}");
    }
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "a spill directory was left");
    std::fs::remove_dir_all(&d).unwrap();
}

/// JSON lines that no Parquet schema holds (a member that is a number on one line and an
/// object on the next): an error that names the JSON lines file, which is kept, complete; no
/// Parquet file is left.
#[test]
fn a_failed_parquet_conversion_keeps_the_json_lines() {
    let d = temp_dir("parquet-fail");
    let input = d.join("in.jsonl");
    std::fs::write(&input, "{\"text\": \"one\", \"meta\": 1}\n{\"text\": \"two\", \"meta\": {\"k\": 2}}\n").unwrap();
    let out = d.join("out.parquet");
    let opts = CorpusOptions::new(vec![input.display().to_string()], &out);
    let err = dedup_files(&opts, None, dedup::LSH_MEMORY, &mut |_| {}).unwrap_err().to_string();
    let kept = d.join("out.parquet.jsonl");
    assert!(err.contains("converting to Parquet") && err.contains(&kept.display().to_string()), "{err}");
    assert_eq!(std::fs::read(&kept).unwrap(), std::fs::read(&input).unwrap());
    assert!(!out.exists());
    std::fs::remove_dir_all(&d).unwrap();
}

/// Exact deduplication of documents, lines and paragraphs past its memory limit (the input read
/// twice, hashes spilled in sorted runs) writes the same bytes as in memory, at 1 and 2 threads;
/// the documents kept are the first of each text, found by comparing the texts themselves.
#[test]
fn exact_dedup_past_the_memory_limit_writes_the_same() {
    let d = temp_dir("exact-spill");
    let input = d.join("in.jsonl");
    let mut docs = real_docs(30);
    docs.truncate(400);
    let copies: Vec<String> = docs.iter().step_by(3).cloned().collect();
    docs.extend(copies);
    // Lines repeated across documents, for the line and paragraph units.
    let footer = "Shared footer line, long enough to count.\n\nAnd a second paragraph of it.";
    for t in docs.iter_mut().step_by(5) {
        t.push_str("\n\n");
        t.push_str(footer);
    }
    let body: String = docs.iter().enumerate().map(|(k, t)| format!("{}\n", serde_json::json!({"k": k, "text": t}))).collect();
    std::fs::write(&input, body).unwrap();
    let mut seen = std::collections::HashSet::new();
    let want: Vec<&String> = docs.iter().filter(|t| seen.insert(t.as_str())).collect();
    for unit in [dedup::Unit::Document, dedup::Unit::Line, dedup::Unit::Paragraph] {
        let mut outputs = Vec::new();
        // In memory; past the limit at once (no set at all); spilled in runs of 1 KiB and 4 KiB.
        for (threads, memory, spilled) in [(1, dedup::LSH_MEMORY, false), (2, 0, true), (1, 2048, true), (2, 8192, true)] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let out = d.join("out.jsonl");
            let mut opts = CorpusOptions::new(vec![input.display().to_string()], &out);
            opts.chunk_bytes = 5000;
            let report = pool.install(|| dedup_units_files(&opts, unit, 20, memory, &mut |_| {})).unwrap();
            assert_eq!(report.counts.get("passes").copied(), spilled.then_some(2), "{unit:?} {memory} {report:?}");
            assert_eq!(report.counts.contains_key("hash runs spilled"), spilled, "{unit:?} {memory} {report:?}");
            assert_eq!(report.documents_in, docs.len() as u64);
            outputs.push(std::fs::read(&out).unwrap());
            // Only the input and the output: no spill directory, no temporary file.
            assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{unit:?}");
        if unit == dedup::Unit::Document {
            let got: Vec<String> = String::from_utf8(outputs.pop().unwrap())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(got.iter().collect::<Vec<_>>(), want);
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}
