//! Tests of the sentencepiece trainer that need no Python: the result does not depend on the
//! thread count.

use super::*;

/// The first lines of the first corpus of `candidates` this machine has, up to `max_bytes`.
fn corpus_lines(candidates: &[&str], max_bytes: usize) -> Vec<String> {
    let path = crate::test_fixtures::corpus_file(candidates);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut total = 0;
    text.lines()
        .take_while(|l| {
            total += l.len() + 1;
            total <= max_bytes
        })
        .map(str::to_owned)
        .collect()
}

/// The `.model` bytes trained on `lines` with `args` and `num_threads` (recorded in the
/// trainer spec as 1, whatever it was, so that the bytes compare).
fn model_with_threads(lines: &[String], args: &str, threads: usize) -> Vec<u8> {
    let spec = SpmTrainerSpec::parse_args(&format!("{args} --num_threads={threads}")).unwrap();
    let (mut proto, report) = train(&spec, lines.iter().cloned().map(Ok)).unwrap();
    assert_eq!(report.sentences as usize, lines.iter().filter(|l| keep_sentence(&spec, l)).count());
    let trainer = proto.trainer_spec.as_mut().expect("the trainer spec is written");
    assert_eq!(trainer.num_threads, Some(threads as i32));
    trainer.num_threads = Some(1);
    model_bytes(&proto)
}

#[test]
fn models_do_not_depend_on_the_thread_count() {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut compared = 0;
    // A fresh clone has botchan (from the sentencepiece sdist) but only the built-in Chinese sample
    // (200 lines).
    for (rel, bytes) in [(&["en/botchan.txt"][..], 120_000), (&["zh/lunyu.txt", "builtin/zh/sample.txt"][..], 65_163)] {
        let lines = corpus_lines(rel, bytes);
        assert!(lines.len() >= 200, "{rel:?}: {} lines", lines.len());
        for model in ["bpe", "unigram"] {
            let args = format!("--model_type={model} --vocab_size=2000 --character_coverage=0.995 --hard_vocab_limit=false");
            let one = model_with_threads(&lines, &args, 1);
            for threads in [2, 3] {
                let many = model_with_threads(&lines, &args, threads);
                assert!(one == many, "{rel:?} {model}: 1 thread and {threads} give different models ({available} cores)");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 8);
}
