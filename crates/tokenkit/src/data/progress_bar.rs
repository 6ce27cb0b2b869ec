//! A dataset job's progress drawn as an indicatif bar on standard error (the `progress`
//! feature): input bytes read of the total, bytes/s, tokens/s (documents/s for corpus steps) and
//! the time left.

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use super::Progress;

/// The bar, hidden when standard error is not a terminal.
pub struct DataProgressBar {
    bar: ProgressBar,
    start: Instant,
    tokens_before: Option<u64>,
}

impl Default for DataProgressBar {
    fn default() -> Self {
        Self::new()
    }
}

impl DataProgressBar {
    /// A bar that appears at the first update.
    pub fn new() -> Self {
        let bar = ProgressBar::new(0);
        let template = "[{elapsed_precise}] {wide_bar} {binary_bytes:>9}/{binary_total_bytes:9} {binary_bytes_per_sec} {msg} ETA {eta}";
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        DataProgressBar { bar, start: Instant::now(), tokens_before: None }
    }

    /// Shows `p`.
    pub fn update(&mut self, p: &Progress) {
        // Tokens written by an earlier run (resumed) do not count towards this run's rate.
        let before = *self.tokens_before.get_or_insert(p.tokens);
        self.bar.set_length(p.total_bytes);
        self.bar.set_position(p.read_bytes.min(p.total_bytes));
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        // Corpus steps count documents only.
        self.bar.set_message(match p.tokens {
            0 => format!("{} docs, {:.0} docs/s", p.documents, p.documents as f64 / secs),
            _ => format!("{} docs, {:.2} M tokens/s", p.documents, (p.tokens - before) as f64 / secs / 1e6),
        });
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
