//! [`ProgressBars`]: training progress drawn as indicatif bars on standard error, one bar per
//! [`Stage`] (the `progress` feature; the CLI and the Python package's `show_progress` use it).

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use super::{Progress, Stage};

/// One indicatif bar per training stage, on standard error (hidden when it is not a terminal).
#[derive(Debug, Default)]
pub struct ProgressBars {
    current: Mutex<Option<ProgressBar>>,
}

impl ProgressBars {
    /// Bars that appear as the stages start.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Progress for ProgressBars {
    fn start(&self, stage: Stage, total: Option<u64>) {
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        let template = match stage {
            Stage::CountWords => {
                "[{elapsed_precise}] {msg:<16} {wide_bar} {binary_bytes:>9}/{binary_total_bytes:9} {binary_bytes_per_sec:>11} ETA {eta}"
            }
            _ => "[{elapsed_precise}] {msg:<16} {wide_bar} {pos:>9}/{len:9} {per_sec:>11} ETA {eta}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(stage.label());
        if let Ok(mut c) = self.current.lock() {
            *c = Some(bar);
        }
    }

    fn inc(&self, n: u64) {
        if let Ok(c) = self.current.lock() {
            if let Some(b) = c.as_ref() {
                b.inc(n);
            }
        }
    }

    fn finish(&self, _stage: Stage) {
        if let Ok(mut c) = self.current.lock() {
            if let Some(b) = c.take() {
                b.finish();
            }
        }
    }
}
