//! The stages a tokenizer encodes with, and the encode plan chosen for them.
//!
//! As in regex-automata's meta engine, the strategy is chosen once per pipeline, not per
//! call: [`EncodePlan::choose`] tries the direct paths in one fixed order and the first whose
//! shape the stages have wins. The choice lives in a cell of the [`Pipeline`], whose stages
//! can only be changed through [`Pipeline::update`], which empties that cell: a plan can
//! never outlive the stages it was chosen for. Each direct path gives exactly what the
//! general path gives, or declines (`None`) a text it cannot take, which then runs the
//! general path; `TOKENKIT_PLAN=general` in the environment (read once) or
//! [`Tokenizer::force_general_path`](super::Tokenizer::force_general_path) forces the
//! general path for every text.

use std::ops::Deref;
use std::sync::{LazyLock, OnceLock};

use super::{bert_path, byte_level_path, sp_path, AddedVocabulary, Encoding, OffsetType};
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::processors::PostProcessorWrapper;
use crate::Result;

/// What the encode plan depends on: every stage that runs before the post-processor's
/// special tokens, and the post-processor (the byte-level path makes room for its tokens).
#[derive(Debug, Clone)]
pub(crate) struct Stages {
    pub(crate) normalizer: Option<NormalizerWrapper>,
    pub(crate) pre_tokenizer: Option<PreTokenizerWrapper>,
    pub(crate) model: ModelWrapper,
    pub(crate) post_processor: Option<PostProcessorWrapper>,
    pub(crate) added_vocabulary: AddedVocabulary,
}

/// The [`Stages`] (read through `Deref`) and the plan chosen for them.
#[derive(Debug, Clone)]
pub(crate) struct Pipeline {
    stages: Stages,
    /// Chosen on first use after each change.
    plan: OnceLock<EncodePlan>,
    /// The general path is forced for this tokenizer.
    general_only: bool,
}

impl Deref for Pipeline {
    type Target = Stages;

    fn deref(&self) -> &Stages {
        &self.stages
    }
}

impl Pipeline {
    /// A pipeline of these stages.
    pub(crate) fn new(stages: Stages) -> Self {
        Self { stages, plan: OnceLock::new(), general_only: false }
    }

    /// Changes the stages: the only way to, so that the plan is chosen again afterwards.
    pub(crate) fn update<R>(&mut self, change: impl FnOnce(&mut Stages) -> R) -> R {
        self.plan = OnceLock::new();
        change(&mut self.stages)
    }

    /// Forces the general path (`true`) or lets the plan be chosen from the stages.
    pub(crate) fn set_general_only(&mut self, general_only: bool) {
        self.general_only = general_only;
        self.plan = OnceLock::new();
    }

    /// The plan for the current stages.
    #[inline]
    pub(crate) fn plan(&self) -> EncodePlan {
        *self.plan.get_or_init(
            || {
                if self.general_only || *GENERAL_FROM_ENV {
                    EncodePlan::General
                } else {
                    EncodePlan::choose(&self.stages)
                }
            },
        )
    }
}

/// `TOKENKIT_PLAN=general`: every tokenizer of the process takes the general path.
static GENERAL_FROM_ENV: LazyLock<bool> = LazyLock::new(|| match std::env::var("TOKENKIT_PLAN").as_deref() {
    Ok("general") => true,
    Ok("auto") | Ok("") | Err(_) => false,
    Ok(other) => {
        eprintln!("tokenkit: TOKENKIT_PLAN={other:?} is not \"general\" or \"auto\"; plans are chosen as with \"auto\"");
        false
    }
});

/// How a tokenizer encodes each sequence between the added-token split and the
/// post-processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodePlan {
    /// Each stage in turn: normalizer, pre-tokenizer, model on each piece (HF's pipeline).
    General,
    /// Byte-level BPE (GPT-2, Llama-3, Qwen, DeepSeek): regex pieces, BPE on raw bytes.
    ByteLevel,
    /// SentencePiece-style files (Llama-2, Mistral, XLNet, ALBERT, T5): `▁` for spaces.
    SentencePiece,
    /// BERT: `BertNormalizer`, `BertPreTokenizer` and WordPiece in one loop.
    Bert,
}

/// A direct path with the parts of the pipeline it runs.
pub(crate) enum Direct<'a> {
    ByteLevel(byte_level_path::Plan<'a>),
    SentencePiece(sp_path::Plan<'a>),
    Bert(bert_path::Plan<'a>),
}

impl EncodePlan {
    /// Every direct path, in the order they are tried.
    const DIRECT: [EncodePlan; 3] = [EncodePlan::ByteLevel, EncodePlan::SentencePiece, EncodePlan::Bert];

    /// Its name, as `tokenkit inspect` prints it.
    pub fn name(self) -> &'static str {
        match self {
            EncodePlan::General => "general",
            EncodePlan::ByteLevel => "byte-level",
            EncodePlan::SentencePiece => "sentencepiece",
            EncodePlan::Bert => "bert",
        }
    }

    /// The first direct path that applies to `stages`, else the general path.
    fn choose(stages: &Stages) -> Self {
        Self::DIRECT.into_iter().find(|p| p.direct(stages).is_some()).unwrap_or(EncodePlan::General)
    }

    /// This plan's direct path on `stages`, which borrows the parts it runs.
    #[inline(always)]
    fn direct(self, stages: &Stages) -> Option<Direct<'_>> {
        match self {
            EncodePlan::General => None,
            EncodePlan::ByteLevel => byte_level_path::plan(stages).map(Direct::ByteLevel),
            EncodePlan::SentencePiece => sp_path::plan(stages).map(Direct::SentencePiece),
            EncodePlan::Bert => bert_path::plan(stages).map(Direct::Bert),
        }
    }
}

impl Pipeline {
    /// The plan's direct path, borrowing the parts it runs; `None` for the general path.
    #[inline]
    pub(crate) fn direct(&self) -> Option<Direct<'_>> {
        self.plan().direct(&self.stages)
    }
}

impl Direct<'_> {
    /// Encodes `text` on the direct path; `None` when this text needs the general path.
    #[inline]
    pub(crate) fn encode(
        &self,
        stages: &Stages,
        text: &str,
        word_idx: Option<u32>,
        type_id: u32,
        offset_type: OffsetType,
    ) -> Option<Result<Encoding>> {
        let encoded = match self {
            Direct::ByteLevel(plan) => byte_level_path::encode(stages, *plan, text, word_idx, type_id, offset_type),
            Direct::SentencePiece(plan) => sp_path::encode(stages, *plan, text, word_idx, type_id, offset_type),
            Direct::Bert(plan) => bert_path::encode(stages, *plan, text, word_idx, type_id, offset_type),
        };
        #[cfg(test)]
        tally::count(self, encoded.is_some());
        encoded
    }
}

/// Test support: how many texts each direct path took and declined on this thread.
#[cfg(test)]
pub(crate) mod tally {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    thread_local! {
        static TALLY: RefCell<BTreeMap<&'static str, (usize, usize)>> = const { RefCell::new(BTreeMap::new()) };
    }

    pub(super) fn count(direct: &super::Direct<'_>, taken: bool) {
        let name = match direct {
            super::Direct::ByteLevel(_) => super::EncodePlan::ByteLevel,
            super::Direct::SentencePiece(_) => super::EncodePlan::SentencePiece,
            super::Direct::Bert(_) => super::EncodePlan::Bert,
        }
        .name();
        TALLY.with_borrow_mut(|t| {
            let e = t.entry(name).or_default();
            if taken {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        });
    }

    /// Texts taken and declined by each direct path on this thread so far, by plan name.
    pub(crate) fn get() -> BTreeMap<&'static str, (usize, usize)> {
        TALLY.with_borrow(Clone::clone)
    }
}
