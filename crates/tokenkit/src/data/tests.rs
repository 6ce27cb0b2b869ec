use std::path::PathBuf;

use super::*;
use crate::Tokenizer;

/// A word-level tokenizer over a few words, with `</s>` (the default separator) and `[UNK]`.
fn tokenizer() -> Tokenizer {
    let vocab: serde_json::Map<String, Value> = ["[UNK]", "</s>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran"]
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), json!(i)))
        .collect();
    Tokenizer::from_json(
        &json!({
            "version": "1.0",
            "added_tokens": [{"id": 1, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
            "normalizer": null,
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null,
            "decoder": null,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
        })
        .to_string(),
    )
    .unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tokenkit-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 500 documents of 1 to 12 words, with bad lines and blank lines among them.
fn corpus(dir: &Path) -> (PathBuf, Vec<String>) {
    let words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "zebra"];
    let mut lines = String::new();
    let mut docs = Vec::new();
    for i in 0..500usize {
        let n = 1 + (i * 7) % 12;
        let text: Vec<&str> = (0..n).map(|k| words[(i * 31 + k * 17) % words.len()]).collect();
        let text = text.join(" ");
        lines.push_str(&serde_json::to_string(&json!({"text": text, "id": i})).unwrap());
        lines.push('\n');
        docs.push(text);
        if i % 97 == 5 {
            lines.push_str("{not json\n\n");
        }
    }
    let path = dir.join("c.jsonl");
    std::fs::write(&path, lines).unwrap();
    (path, docs)
}

fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

fn expected_ids(tok: &Tokenizer, docs: &[String]) -> Vec<u32> {
    let mut out = Vec::new();
    for d in docs {
        out.extend_from_slice(tok.encode(d.as_str(), true).unwrap().get_ids());
        out.push(1);
    }
    out
}

#[test]
fn bin_output_is_the_documents_ids_and_the_same_for_any_thread_count() {
    let d = temp_dir("bin");
    let (input, docs) = corpus(&d);
    let tok = tokenizer();
    let enc = DocEncoder::tokenizer(&tok, true).unwrap();
    let want = expected_ids(&tok, &docs);
    let mut outputs = Vec::new();
    for threads in [1, 2, 3] {
        let mut opts = TokenizeOptions::new(vec![input.display().to_string()], d.join(format!("out{threads}")), "test");
        opts.chunk_bytes = 300;
        let s = in_pool(threads, || tokenize_files(&enc, &opts, &mut |_| {})).unwrap();
        assert_eq!((s.train.documents, s.train.tokens, s.skipped, s.empty), (500, want.len() as u64, 6, 6));
        assert!(s.skip_examples[0].contains("c.jsonl:7: invalid JSON"), "{:?}", s.skip_examples);
        let bytes = std::fs::read(d.join(format!("out{threads}.bin"))).unwrap();
        let ids: Vec<u32> = bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u32).collect();
        assert_eq!(ids, want, "threads {threads}");
        let meta: Value = serde_json::from_slice(&std::fs::read(d.join(format!("out{threads}.json"))).unwrap()).unwrap();
        assert_eq!(
            (meta["dtype"].as_str(), meta["documents"].as_u64(), meta["tokens"].as_u64()),
            (Some("uint16"), Some(500), Some(want.len() as u64))
        );
        assert_eq!(meta["sha256"].as_str().unwrap(), output::sha256_file(&d.join(format!("out{threads}.bin"))).unwrap());
        outputs.push(bytes);
        // Nothing but the outputs is left beside them.
        assert!(!journal_path(&d.join(format!("out{threads}"))).exists());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    let mut names: Vec<String> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["c.jsonl", "out1.bin", "out1.json", "out2.bin", "out2.json", "out3.bin", "out3.json"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn megatron_index_has_megatron_layout() {
    let d = temp_dir("megatron");
    let (input, docs) = corpus(&d);
    let tok = tokenizer();
    let enc = DocEncoder::tokenizer(&tok, true).unwrap();
    let mut opts = TokenizeOptions::new(vec![input.display().to_string()], d.join("m"), "test");
    opts.format = OutputFormat::Megatron;
    opts.chunk_bytes = 1000;
    tokenize_files(&enc, &opts, &mut |_| {}).unwrap();
    let idx = std::fs::read(d.join("m.idx")).unwrap();
    assert_eq!(&idx[..9], b"MMIDIDX\x00\x00");
    let u64_at = |o: usize| u64::from_le_bytes(idx[o..o + 8].try_into().unwrap());
    assert_eq!((u64_at(9), idx[17], u64_at(18), u64_at(26)), (1, 8, 500, 501));
    let sizes: Vec<i32> = idx[34..34 + 4 * 500].chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect();
    let ptr_at = 34 + 4 * 500;
    let pointers: Vec<i64> = idx[ptr_at..ptr_at + 8 * 500].chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect();
    let doc_idx: Vec<i64> = idx[ptr_at + 8 * 500..].chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(doc_idx, (0..=500).collect::<Vec<i64>>());
    let bin = std::fs::read(d.join("m.bin")).unwrap();
    for (k, doc) in docs.iter().enumerate() {
        let mut want = tok.encode(doc.as_str(), true).unwrap().get_ids().to_vec();
        want.push(1);
        let start = pointers[k] as usize;
        let got: Vec<u32> =
            bin[start..start + 2 * sizes[k] as usize].chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u32).collect();
        assert_eq!(got, want, "document {k}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn parquet_output_keeps_columns_and_reads_back() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt32Type;
    let d = temp_dir("parquet");
    let (input, docs) = corpus(&d);
    let tok = tokenizer();
    let enc = DocEncoder::tokenizer(&tok, true).unwrap();
    let mut opts = TokenizeOptions::new(vec![input.display().to_string()], d.join("p"), "test");
    opts.format = OutputFormat::Parquet;
    opts.read.keep = vec!["id".into()];
    opts.chunk_bytes = 2000;
    opts.val_fraction = 0.2;
    let s = tokenize_files(&enc, &opts, &mut |_| {}).unwrap();
    let val = s.val.unwrap();
    assert_eq!(s.train.documents + val.documents, 500);
    // By text hash: the corpus repeats texts, so count what the rule sends to validation.
    let want = docs.iter().filter(|t| super::is_val(t, 0.2)).count();
    assert!(0 < want && want < 500, "{want}");
    assert_eq!(val.documents, want as u64);
    let mut got = Vec::new();
    for name in ["p.parquet", "p.val.parquet"] {
        let f = std::fs::File::open(d.join(name)).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            let ids = batch.column_by_name("input_ids").unwrap().as_list::<i32>();
            let kept = batch.column_by_name("id").unwrap().as_string::<i32>();
            for r in 0..batch.num_rows() {
                let row: Vec<u32> = ids.value(r).as_primitive::<UInt32Type>().values().to_vec();
                got.push((kept.value(r).parse::<usize>().unwrap(), row, name));
            }
        }
    }
    got.sort_by_key(|g| g.0);
    assert_eq!(got.len(), 500);
    for (k, row, name) in got {
        let mut want = tok.encode(docs[k].as_str(), true).unwrap().get_ids().to_vec();
        want.push(1);
        assert_eq!(row, want, "document {k}");
        assert_eq!(name == "p.val.parquet", is_val(&docs[k], 0.2), "document {k}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

#[test]
fn strict_fails_on_the_first_bad_record_and_leaves_no_output() {
    let d = temp_dir("strict");
    let (input, _) = corpus(&d);
    let enc = DocEncoder::tokenizer(&tokenizer(), true).unwrap();
    let mut opts = TokenizeOptions::new(vec![input.display().to_string()], d.join("s"), "test");
    opts.strict = true;
    let e = tokenize_files(&enc, &opts, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("c.jsonl:7: invalid JSON") && e.contains("--strict"), "{e}");
    assert!(!d.join("s.bin").exists() && !d.join("s.json").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn separators_follow_the_tokenizer_or_the_choice() {
    let enc = DocEncoder::tokenizer(&tokenizer(), true).unwrap();
    assert_eq!(enc.separator(&SeparatorChoice::Default).unwrap(), Some(("</s>".into(), 1)));
    assert_eq!(enc.separator(&SeparatorChoice::Token("dog".into())).unwrap(), Some(("dog".into(), 8)));
    assert_eq!(enc.separator(&SeparatorChoice::None).unwrap(), None);
    let e = enc.separator(&SeparatorChoice::Token("<eos>".into())).unwrap_err().to_string();
    assert!(e.contains("not a token"), "{e}");
}

#[test]
fn validation_split_takes_its_fraction_of_distinct_texts() {
    for fraction in [0.01, 0.2, 0.5] {
        let n = 20_000;
        let val = (0..n).filter(|i| super::is_val(&format!("document number {i}"), fraction)).count();
        let got = val as f64 / n as f64;
        assert!((got - fraction).abs() < 0.01 + fraction * 0.05, "fraction {fraction}: {got}");
    }
}
