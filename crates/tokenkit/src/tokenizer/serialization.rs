//! tokenizer.json reading and writing, field for field as HF tokenizers does it.

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::decoders::DecoderWrapper;
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::processors::PostProcessorWrapper;
use crate::tokenizer::added_vocabulary::{AddedToken, AddedTokenWithId, AddedVocabulary};
use crate::tokenizer::pipeline::{Pipeline, Stages};
use crate::tokenizer::{PaddingParams, Tokenizer, TruncationParams};

impl Serialize for Tokenizer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_struct("Tokenizer", 9)?;
        t.serialize_field("version", "1.0")?;
        t.serialize_field("truncation", &self.truncation)?;
        t.serialize_field("padding", &self.padding)?;
        t.serialize_field("added_tokens", &self.pipeline.added_vocabulary.sorted_with_ids())?;
        t.serialize_field("normalizer", &self.pipeline.normalizer)?;
        t.serialize_field("pre_tokenizer", &self.pipeline.pre_tokenizer)?;
        t.serialize_field("post_processor", &self.pipeline.post_processor)?;
        t.serialize_field("decoder", &self.decoder)?;
        t.serialize_field("model", &self.pipeline.model)?;
        t.end()
    }
}

/// The top level of a tokenizer.json. As in HF, a key it does not know is an error (unknown
/// fields are accepted inside components, not here) and `version`, when present, is "1.0".
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenizerFile {
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    truncation: Option<TruncationParams>,
    #[serde(default)]
    padding: Option<PaddingParams>,
    #[serde(default)]
    added_tokens: Vec<AddedTokenWithId>,
    #[serde(default)]
    normalizer: Option<NormalizerWrapper>,
    #[serde(default)]
    pre_tokenizer: Option<PreTokenizerWrapper>,
    #[serde(default)]
    post_processor: Option<PostProcessorWrapper>,
    #[serde(default)]
    decoder: Option<DecoderWrapper>,
    model: ModelWrapper,
}

impl<'de> Deserialize<'de> for Tokenizer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = TokenizerFile::deserialize(d)?;
        if let Some(v) = f.version.as_deref().filter(|v| *v != "1.0") {
            return Err(serde::de::Error::custom(format!("unknown tokenizer version {v:?}, expected \"1.0\"")));
        }
        if let Some(p) = &f.padding {
            p.validate().map_err(serde::de::Error::custom)?;
        }
        let mut tok = Tokenizer {
            pipeline: Pipeline::new(Stages {
                normalizer: f.normalizer,
                pre_tokenizer: f.pre_tokenizer,
                model: f.model,
                post_processor: f.post_processor,
                added_vocabulary: AddedVocabulary::new(),
            }),
            decoder: f.decoder,
            truncation: f.truncation,
            padding: f.padding,
        };
        let tokens: Vec<AddedToken> = f.added_tokens.into_iter().map(|t| t.token).collect();
        tok.add_tokens(&tokens).map_err(serde::de::Error::custom)?;
        Ok(tok)
    }
}
