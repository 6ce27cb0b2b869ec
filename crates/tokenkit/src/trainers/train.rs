//! `Tokenizer::train*`: count words through the tokenizer's normalizer and pre-tokenizer,
//! train its model, add the trainer's special tokens (HF's `Tokenizer.train`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::counts::{
    merge_count_files, read_count_info, write_count_file, BoundedCounts, CountInfo, Counted, InputPrint, MemoryLimit, Pruned,
};
use super::input::{add_counts, count_batches, total_size, with_stage, LineReader};
use super::{count_words, InputStats, NoProgress, Progress, Stage, TrainInput, TrainerWrapper, WordCounts};
use crate::models::bpe::trainer::rebuild_bpe;
use crate::models::ModelWrapper;
use crate::pre_tokenizers::byte_level::{cutter, Cutter};
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::tokenizer::{Normalizer, PreTokenizedString, PreTokenizer, Tokenizer};
use crate::utils::byte_level::BYTES_CHAR;
use crate::{Error, NormalizedString, Result};

/// What a training run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainReport {
    /// What was read.
    pub input: InputStats,
    /// Distinct words counted.
    pub distinct_words: usize,
    /// Vocabulary size of the trained model.
    pub vocab_size: usize,
    /// Wall time of counting, in seconds.
    pub count_seconds: f64,
    /// Wall time of model training, in seconds.
    pub train_seconds: f64,
}

/// How a tokenizer cuts a sequence into words while counting.
enum WordSplitter<'t> {
    /// No normalizer, a regex split (or DeepSeek's three) then the ByteLevel mapping: pieces
    /// are mapped byte by byte without building a `NormalizedString`.
    ByteLevel(Cutter<'t>),
    /// No normalizer and a pre-tokenizer that only cuts the text into ranges.
    Ranges(&'t PreTokenizerWrapper),
    /// The full pipeline.
    General,
}

impl Tokenizer {
    fn word_splitter(&self) -> WordSplitter<'_> {
        if self.pipeline.normalizer.is_some() {
            return WordSplitter::General;
        }
        match &self.pipeline.pre_tokenizer {
            Some(pt) if pt.has_split_ranges() => WordSplitter::Ranges(pt),
            Some(pt) => cutter(pt).map_or(WordSplitter::General, WordSplitter::ByteLevel),
            None => WordSplitter::General,
        }
    }

    /// Calls `f` on every word of `sequence` as the trainer sees it: normalized, then
    /// pre-tokenized (HF's `Tokenizer.train` does not cut out added tokens).
    pub fn for_each_training_word(&self, sequence: &str, f: &mut dyn FnMut(&str)) -> Result<()> {
        self.split_words(&self.word_splitter(), sequence, f)
    }

    fn split_words(&self, how: &WordSplitter, s: &str, f: &mut dyn FnMut(&str)) -> Result<()> {
        match how {
            WordSplitter::ByteLevel(cutter) => {
                let mut buf = String::new();
                let mut piece = |p: &str| {
                    buf.clear();
                    buf.extend(p.bytes().map(|b| BYTES_CHAR[b as usize]));
                    f(&buf);
                };
                cutter.for_each_piece(s, |a, b| {
                    if b > a {
                        piece(&s[a..b]);
                    }
                })?;
            }
            WordSplitter::Ranges(pt) => {
                let mut ranges = Vec::new();
                pt.split_ranges(s, &mut ranges)?;
                for &(a, b) in &ranges {
                    if a < b {
                        f(&s[a..b]);
                    }
                }
            }
            WordSplitter::General => {
                let mut n = NormalizedString::from(s);
                if let Some(norm) = &self.pipeline.normalizer {
                    norm.normalize(&mut n)?;
                }
                let mut pre = PreTokenizedString::from(n);
                if let Some(pt) = &self.pipeline.pre_tokenizer {
                    pt.pre_tokenize(&mut pre)?;
                }
                for split in pre.splits() {
                    f(split.normalized.get());
                }
            }
        }
        Ok(())
    }

    /// Counts the words of `sequences` (parallel, streamed).
    pub fn count_words_from_iterator<I, S>(&self, sequences: I, progress: &dyn Progress) -> Result<(WordCounts, u64)>
    where
        I: Iterator<Item = S>,
        S: AsRef<str> + Send + Sync,
    {
        let how = self.word_splitter();
        let split = |s: &str, f: &mut dyn FnMut(&str)| self.split_words(&how, s, f);
        with_stage(progress, Stage::CountWords, None, || count_words(sequences.map(Ok), &split, progress))
    }

    /// Counts the words of files (lines with their endings, or a JSONL field).
    pub fn count_words(&self, input: &TrainInput, progress: &dyn Progress) -> Result<(WordCounts, InputStats)> {
        let mut counts = WordCounts::default();
        let stats = self.count_input(input, progress, |batch| {
            add_counts(&mut counts, batch);
            Ok(())
        })?;
        Ok((counts, stats))
    }

    /// Reads `input`, handing each batch's word counts to `add`.
    fn count_input(&self, input: &TrainInput, progress: &dyn Progress, add: impl FnMut(WordCounts) -> Result<()>) -> Result<InputStats> {
        let total = total_size(input.files())?;
        with_stage(progress, Stage::CountWords, Some(total), || self.count_lines(input, progress, add))
    }

    /// [`count_input`](Self::count_input) inside a counting stage already started.
    fn count_lines(&self, input: &TrainInput, progress: &dyn Progress, add: impl FnMut(WordCounts) -> Result<()>) -> Result<InputStats> {
        let mut stats = InputStats::default();
        let how = self.word_splitter();
        let split = |s: &str, f: &mut dyn FnMut(&str)| self.split_words(&how, s, f);
        count_batches(LineReader::new(input, &mut stats), &split, progress, add)?;
        Ok(stats)
    }

    /// [`count_words`](Self::count_words) within `limit`: the counts are spilled to disk and
    /// merged when they do not fit, and the words kept for training are those whose training
    /// fits in the limit (an error past it, or with [`MemoryLimit::prune`] the rarest dropped,
    /// as the returned [`Pruned`] says).
    pub fn count_words_within(
        &self,
        input: &TrainInput,
        limit: &MemoryLimit,
        progress: &dyn Progress,
    ) -> Result<(WordCounts, InputStats, Pruned)> {
        let (counted, stats) = self.count_bounded(input, limit, progress)?;
        let (counts, pruned) = counted.into_word_counts(limit)?;
        Ok((counts, stats, pruned))
    }

    /// Counts the words of `input` (spilling past `limit`) into a count file at `output`
    /// (`tokenkit count`); returns what it records, what was read, and how many parts an
    /// interrupted run had left.
    ///
    /// Several input files are counted in parts (each file, or consecutive files in at most
    /// [`MAX_PARTS`] groups), each written as a count file to `<output>.parts/` when complete,
    /// then merged into `output`, and the parts removed. A run that was interrupted leaves its
    /// complete parts: the next run with the same inputs (paths, sizes and modification times)
    /// and the same normalizer and pre-tokenizer takes them instead of counting those files again.
    pub fn write_word_counts(
        &self,
        input: &TrainInput,
        limit: &MemoryLimit,
        output: &Path,
        progress: &dyn Progress,
    ) -> Result<(CountInfo, InputStats, usize)> {
        let files = input.files();
        let prints = files.iter().map(|p| InputPrint::of(p)).collect::<Result<Vec<_>>>()?;
        if files.len() < 2 {
            let (counted, stats) = self.count_bounded(input, limit, progress)?;
            let info = self.word_count_info(prints, stats.sequences)?;
            return Ok((write_count_file(output, info, counted.into_sorted())?, stats, 0));
        }
        let dir = parts_dir(output);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
        let mut stats = InputStats::default();
        let mut resumed = 0;
        let mut parts = Vec::new();
        let total = prints.iter().map(|p| p.bytes).sum();
        with_stage(progress, Stage::CountWords, Some(total), || -> Result<()> {
            for (k, range) in part_groups(&prints).into_iter().enumerate() {
                let part = dir.join(format!("part-{k:04}.counts"));
                let want = self.word_count_info(prints[range.clone()].to_vec(), 0)?;
                let bytes: u64 = want.inputs.iter().map(|p| p.bytes).sum();
                match read_count_info(&part) {
                    Ok((done, _)) if done.inputs == want.inputs && done.same_cutting(&want) => {
                        stats.add(InputStats { sequences: done.sequences, bytes, ..Default::default() });
                        progress.inc(bytes);
                        resumed += 1;
                    }
                    _ => {
                        let mut counts = BoundedCounts::new(limit);
                        let read = self.count_lines(&input.with_files(files[range].to_vec()), progress, |b| counts.add(b))?;
                        let info = CountInfo { sequences: read.sequences, ..want };
                        write_count_file(&part, info, counts.finish()?.into_sorted())?;
                        stats.add(read);
                    }
                }
                parts.push(part);
            }
            Ok(())
        })?;
        let (info, counted) = merge_count_files(&parts)?;
        let info = write_count_file(output, info, counted.into_sorted())?;
        std::fs::remove_dir_all(&dir).map_err(|source| Error::Io { path: dir, source })?;
        Ok((info, stats, resumed))
    }

    /// The information of word counts of `inputs` (`sequences` of them) made by this tokenizer:
    /// its normalizer and pre-tokenizer, which training from the counts must use too.
    pub fn word_count_info(&self, inputs: Vec<InputPrint>, sequences: u64) -> Result<CountInfo> {
        let (normalizer, pre_tokenizer) = self.word_cutting()?;
        Ok(CountInfo::new(normalizer, pre_tokenizer, inputs, sequences))
    }

    /// Checks that words counted as `info` (a count file's) were cut as this tokenizer cuts them.
    pub fn check_word_cutting(&self, info: &CountInfo) -> Result<()> {
        let (normalizer, pre_tokenizer) = self.word_cutting()?;
        for (what, here, there) in [("normalizer", &normalizer, &info.normalizer), ("pre-tokenizer", &pre_tokenizer, &info.pre_tokenizer)] {
            if here != there {
                return Err(Error::invalid(format!(
                    "the counts were made with another {what} ({there}) than this training's ({here}): count with the \
                     same normalizer and pre-tokenizer (tokenkit count's --preset and --normalizer)"
                )));
            }
        }
        Ok(())
    }

    /// The normalizer and pre-tokenizer as tokenizer.json writes them (`null` for none).
    fn word_cutting(&self) -> Result<(serde_json::Value, serde_json::Value)> {
        let json = |v: serde_json::Result<serde_json::Value>| v.map_err(|e| Error::invalid(format!("pipeline as JSON: {e}")));
        Ok((json(serde_json::to_value(self.get_normalizer()))?, json(serde_json::to_value(self.get_pre_tokenizer()))?))
    }

    fn count_bounded(&self, input: &TrainInput, limit: &MemoryLimit, progress: &dyn Progress) -> Result<(Counted, InputStats)> {
        let mut counts = BoundedCounts::new(limit);
        let stats = self.count_input(input, progress, |batch| counts.add(batch))?;
        Ok((counts.finish()?, stats))
    }

    /// Trains the model on word counts and adds the trainer's special tokens. The model must
    /// be of the trainer's kind; its options that training does not learn are kept (see each
    /// trainer).
    pub fn train_from_counts(&mut self, trainer: &TrainerWrapper, counts: &WordCounts, progress: &dyn Progress) -> Result<()> {
        self.train_on_counts(trainer, Cow::Borrowed(counts), progress)
    }

    /// [`train_from_counts`](Self::train_from_counts) on counts it may free once they are
    /// read: the BPE and WordPiece trainers drop owned counts before building their pair tables.
    fn train_on_counts(&mut self, trainer: &TrainerWrapper, counts: Cow<'_, WordCounts>, progress: &dyn Progress) -> Result<()> {
        let model = match (trainer, &self.pipeline.model) {
            (TrainerWrapper::BpeTrainer(t), ModelWrapper::BPE(old)) => {
                let result = t.train_words(counts, progress)?;
                ModelWrapper::BPE(rebuild_bpe(old, t, result)?)
            }
            (TrainerWrapper::WordPieceTrainer(t), ModelWrapper::WordPiece(old)) => {
                ModelWrapper::WordPiece(t.train_model(old, counts, progress)?)
            }
            (TrainerWrapper::WordLevelTrainer(t), ModelWrapper::WordLevel(old)) => ModelWrapper::WordLevel(t.train_model(old, &counts)?),
            (TrainerWrapper::UnigramTrainer(t), ModelWrapper::Unigram(_)) => ModelWrapper::Unigram(t.train_model(&counts, progress)?),
            (t, m) => return Err(Error::invalid(format!("cannot train a {} model with a {}", m.type_name(), trainer_kind(t)))),
        };
        self.pipeline.update(|s| s.model = model);
        let specials: Vec<_> = trainer.special_tokens().to_vec();
        self.add_special_tokens(&specials)?;
        Ok(())
    }

    /// Trains on `input` with progress reported to `progress`; returns what was done.
    /// An input with no words at all is an error.
    pub fn train_with_progress(&mut self, trainer: &TrainerWrapper, input: &TrainInput, progress: &dyn Progress) -> Result<TrainReport> {
        let t0 = Instant::now();
        let (counts, stats) = self.count_words(input, progress)?;
        let count_seconds = t0.elapsed().as_secs_f64();
        let mut report = TrainReport { input: stats, count_seconds, ..Default::default() };
        self.train_from_word_counts(trainer, counts, progress, &mut report)?;
        Ok(report)
    }

    /// Trains on text files, one sequence per line (HF's `Tokenizer.train(files, trainer)`).
    pub fn train_from_files<P: AsRef<Path>>(&mut self, trainer: &TrainerWrapper, files: &[P]) -> Result<TrainReport> {
        let files: Vec<PathBuf> = files.iter().map(|p| p.as_ref().to_owned()).collect();
        self.train_with_progress(trainer, &TrainInput::Files(files), &NoProgress)
    }

    /// Trains on sequences from an iterator (HF's `train_from_iterator`); the iterator is
    /// consumed in batches, so it may be larger than memory.
    pub fn train_from_iterator<I, S>(&mut self, trainer: &TrainerWrapper, sequences: I) -> Result<TrainReport>
    where
        I: Iterator<Item = S>,
        S: AsRef<str> + Send + Sync,
    {
        self.train_from_iterator_with_progress(trainer, sequences, &NoProgress)
    }

    /// [`train_from_iterator`](Self::train_from_iterator) with progress reporting.
    pub fn train_from_iterator_with_progress<I, S>(
        &mut self,
        trainer: &TrainerWrapper,
        sequences: I,
        progress: &dyn Progress,
    ) -> Result<TrainReport>
    where
        I: Iterator<Item = S>,
        S: AsRef<str> + Send + Sync,
    {
        let t0 = Instant::now();
        let mut bytes = 0u64;
        let sequences = sequences.inspect(|s| bytes += s.as_ref().len() as u64);
        let (counts, n) = self.count_words_from_iterator(sequences, progress)?;
        let input = InputStats { sequences: n, bytes, ..Default::default() };
        let mut report = TrainReport { input, count_seconds: t0.elapsed().as_secs_f64(), ..Default::default() };
        self.train_from_word_counts(trainer, counts, progress, &mut report)?;
        Ok(report)
    }

    /// The second half of [`train_with_progress`](Self::train_with_progress): trains on word
    /// counts made by [`count_words`](Self::count_words) and fills in `report`'s training
    /// fields. A caller that owns the allocator can release its caches in between (the CLI
    /// does, to lower its peak memory). The counts are freed as soon as training no longer
    /// needs them. An input with no words at all is an error.
    pub fn train_from_word_counts(
        &mut self,
        trainer: &TrainerWrapper,
        counts: WordCounts,
        progress: &dyn Progress,
        report: &mut TrainReport,
    ) -> Result<()> {
        if counts.keys().all(|w| w.is_empty()) {
            return Err(Error::invalid(format!(
                "the training corpus has no words ({} sequences read{})",
                report.input.sequences,
                if report.input.skipped > 0 { format!(", {} lines skipped", report.input.skipped) } else { String::new() }
            )));
        }
        let t1 = Instant::now();
        report.distinct_words = counts.len();
        self.train_on_counts(trainer, Cow::Owned(counts), progress)?;
        report.train_seconds = t1.elapsed().as_secs_f64();
        report.vocab_size = self.get_vocab_size(true);
        Ok(())
    }
}

/// The most parts [`Tokenizer::write_word_counts`] writes (their merge holds a file open each).
pub const MAX_PARTS: usize = 200;

/// Where the parts of the count file `output` go: `<output>.parts`.
pub fn parts_dir(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(".parts");
    output.with_file_name(name)
}

/// The inputs of each part: one file each, or with more than [`MAX_PARTS`] files, consecutive
/// files of about `1 / MAX_PARTS` of the bytes each.
fn part_groups(inputs: &[InputPrint]) -> Vec<std::ops::Range<usize>> {
    let target = if inputs.len() > MAX_PARTS { inputs.iter().map(|p| p.bytes).sum::<u64>().div_ceil(MAX_PARTS as u64) } else { 0 };
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, p) in inputs.iter().enumerate() {
        bytes += p.bytes;
        if bytes >= target || i + 1 == inputs.len() {
            groups.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    groups
}

fn trainer_kind(t: &TrainerWrapper) -> &'static str {
    match t {
        TrainerWrapper::BpeTrainer(_) => "BpeTrainer",
        TrainerWrapper::WordPieceTrainer(_) => "WordPieceTrainer",
        TrainerWrapper::WordLevelTrainer(_) => "WordLevelTrainer",
        TrainerWrapper::UnigramTrainer(_) => "UnigramTrainer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One part per file up to MAX_PARTS files; past it, consecutive groups covering every file
    /// once, at most MAX_PARTS of them, even with one file much larger than the rest.
    #[test]
    fn parts_cover_the_inputs_in_order() {
        let prints = |sizes: &[u64]| -> Vec<InputPrint> {
            sizes.iter().enumerate().map(|(i, &bytes)| InputPrint { path: format!("f{i}"), bytes, modified: None }).collect()
        };
        assert_eq!(part_groups(&prints(&[5, 0, 7])), vec![0..1, 1..2, 2..3]);
        for sizes in [vec![10u64; 450], (0..1000).map(|i| if i == 17 { 1 << 30 } else { i % 7 }).collect()] {
            let groups = part_groups(&prints(&sizes));
            assert!(groups.len() <= MAX_PARTS, "{} parts", groups.len());
            assert_eq!(groups.first().unwrap().start, 0);
            assert_eq!(groups.last().unwrap().end, sizes.len());
            assert!(groups.windows(2).all(|w| w[0].end == w[1].start && w[0].start < w[0].end));
        }
        assert_eq!(parts_dir(Path::new("/x/all.counts")), Path::new("/x/all.counts.parts"));
    }
}
