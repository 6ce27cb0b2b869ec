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
use crate::utils::table_cache;

impl Serialize for Tokenizer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize_with_model(s, &self.pipeline.model)
    }
}

impl Tokenizer {
    /// tokenizer.json with `model` in the place of the model.
    fn serialize_with_model<S: Serializer>(&self, s: S, model: &impl Serialize) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_struct("Tokenizer", 9)?;
        t.serialize_field("version", "1.0")?;
        t.serialize_field("truncation", &self.truncation)?;
        t.serialize_field("padding", &self.padding)?;
        t.serialize_field("added_tokens", &self.pipeline.added_vocabulary.sorted_with_ids())?;
        t.serialize_field("normalizer", &self.pipeline.normalizer)?;
        t.serialize_field("pre_tokenizer", &self.pipeline.pre_tokenizer)?;
        t.serialize_field("post_processor", &self.pipeline.post_processor)?;
        t.serialize_field("decoder", &self.decoder)?;
        t.serialize_field("model", model)?;
        t.end()
    }
}

/// A tokenizer serialized without its model (`"model": null`): the part of the cached form
/// ([`Tokenizer::cached`]) that is not the model's tables.
struct WithoutModel<'a>(&'a Tokenizer);

impl Serialize for WithoutModel<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_with_model(s, &())
    }
}

/// The top level of a tokenizer.json, its model as `M` (`IgnoredAny` for the cached form,
/// whose model comes from the table cache). As in HF, a key it does not know is an error
/// (unknown fields are accepted inside components, not here) and `version`, when present, is
/// "1.0".
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenizerFile<M> {
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
    model: M,
}

impl<M> TokenizerFile<M> {
    /// These fields with `model` as the model.
    fn with_model(self, model: ModelWrapper) -> TokenizerFile<ModelWrapper> {
        TokenizerFile {
            version: self.version,
            truncation: self.truncation,
            padding: self.padding,
            added_tokens: self.added_tokens,
            normalizer: self.normalizer,
            pre_tokenizer: self.pre_tokenizer,
            post_processor: self.post_processor,
            decoder: self.decoder,
            model,
        }
    }
}

impl TokenizerFile<ModelWrapper> {
    /// The tokenizer of these fields: the added tokens are added after the model is in place,
    /// so that those in its vocabulary take its ids.
    fn into_tokenizer(self) -> crate::Result<Tokenizer> {
        if let Some(v) = self.version.as_deref().filter(|v| *v != "1.0") {
            return Err(crate::Error::invalid(format!("unknown tokenizer version {v:?}, expected \"1.0\"")));
        }
        if let Some(p) = &self.padding {
            p.validate()?;
        }
        let mut tok = Tokenizer {
            pipeline: Pipeline::new(Stages {
                normalizer: self.normalizer,
                pre_tokenizer: self.pre_tokenizer,
                model: self.model,
                post_processor: self.post_processor,
                added_vocabulary: AddedVocabulary::new(),
            }),
            decoder: self.decoder,
            truncation: self.truncation,
            padding: self.padding,
        };
        let tokens: Vec<AddedToken> = self.added_tokens.into_iter().map(|t| t.token).collect();
        tok.add_tokens(&tokens)?;
        Ok(tok)
    }
}

impl<'de> Deserialize<'de> for Tokenizer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        TokenizerFile::<ModelWrapper>::deserialize(d)?.into_tokenizer().map_err(serde::de::Error::custom)
    }
}

/// The models the cached form holds, as it tags them.
const MODEL_BPE: u32 = 0;
const MODEL_WORDPIECE: u32 = 1;

/// The cache kind of tokenizer.json content.
pub(crate) const JSON_KIND: &str = "tokenizer.json";

impl Tokenizer {
    /// The tokenizer `build` makes from `input` (the bytes of a file of kind `kind`: all it is
    /// built from), read from the [`table_cache`] when an earlier load of the same input (by
    /// the same library) stored it, else built and stored. The cache holds the built model
    /// tables of a byte-level BPE model (whose building is most of a load: parsing the
    /// vocabulary and merges, the merge table, the linear-time encoder) or a WordPiece model
    /// (vocabulary and tries), and the rest of the tokenizer as tokenizer.json; any other
    /// tokenizer is built every time.
    pub(crate) fn cached(kind: &str, input: &[u8], build: impl FnOnce() -> crate::Result<Tokenizer>) -> crate::Result<Tokenizer> {
        if table_cache::dir().is_none() {
            return build();
        }
        let key = table_cache::Key::new(kind, &[input]);
        table_cache::cached(&key, |p| Self::read_table(p.reader()), build, Self::write_table)
    }

    /// tokenizer.json content (compact) that loads fast: its cached form is stored under
    /// the key [`Tokenizer::from_json`] looks up, so that a load of it (in a worker process,
    /// from a pickle) reads the built tables instead of building them.
    pub fn to_json_cached(&self) -> crate::Result<String> {
        let json = self.to_json(false)?;
        if table_cache::dir().is_some() {
            table_cache::ensure(&table_cache::Key::new(JSON_KIND, &[json.as_bytes()]), || self.write_table());
        }
        Ok(json)
    }

    /// The cached form: the tokenizer without its model as tokenizer.json, whether special
    /// tokens are encoded as text, then the model's kind and tables; `None` for a model the
    /// cache does not hold.
    fn write_table(&self) -> Option<Vec<u8>> {
        let mut w = table_cache::Writer::default();
        w.bytes(serde_json::to_string(&WithoutModel(self)).ok()?.as_bytes());
        // Not in tokenizer.json (as in HF), set by loaders such as Tekken's.
        w.bool(self.pipeline.added_vocabulary.get_encode_special_tokens());
        let written = match &self.pipeline.model {
            ModelWrapper::BPE(bpe) => {
                w.u32(MODEL_BPE);
                bpe.write_table(&mut w)
            }
            ModelWrapper::WordPiece(wp) => {
                w.u32(MODEL_WORDPIECE);
                wp.write_table(&mut w)
            }
            _ => false,
        };
        written.then_some(w.buf)
    }

    /// Reads what [`Tokenizer::write_table`] wrote.
    fn read_table(mut r: table_cache::Reader<'_>) -> crate::Result<Tokenizer> {
        let json = r.bytes()?;
        let fields: TokenizerFile<serde::de::IgnoredAny> =
            serde_json::from_slice(json).map_err(|e| crate::Error::Json { context: "table cache".into(), message: e.to_string() })?;
        let encode_special_tokens = r.bool()?;
        let model = match r.u32()? {
            MODEL_BPE => ModelWrapper::BPE(crate::models::bpe::BPE::read_table(&mut r)?),
            MODEL_WORDPIECE => ModelWrapper::WordPiece(crate::models::wordpiece::WordPiece::read_table(&mut r)?),
            _ => return Err(crate::Error::invalid("table cache: unknown model")),
        };
        r.finish()?;
        let mut tok = fields.with_model(model).into_tokenizer()?;
        tok.set_encode_special_tokens(encode_special_tokens);
        Ok(tok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cached form of a byte-level BPE tokenizer reads back to the same tokenizer: the same
    /// tokenizer.json, ids, tokens, offsets and decoded text; a cut payload is an error.
    #[test]
    fn cached_form_reads_back_to_the_same_tokenizer() {
        let texts = [
            "Hello world, this is the first encode: 12345 héllo 你好.",
            "<|begin_of_text|>A<|eot_id|> [INST] x [/INST]</s><s> <unk>",
            "  \n\ttabs\tand  spaces  \u{1F600}!! [CLS] [SEP] [MASK] unaffable Überraschung",
            "",
        ];
        let mut n = 0;
        for (rel, build) in [
            (
                "registry/llama3/tokenizer.json",
                (|p: &std::path::Path| Tokenizer::from_json_uncached(&std::fs::read_to_string(p).unwrap()))
                    as fn(&std::path::Path) -> crate::Result<Tokenizer>,
            ),
            ("registry/tekken/tekken_240911.json", |p| crate::formats::tekken::build(&std::fs::read(p).unwrap(), "tekken")),
            ("registry/bert_uncased/tokenizer.json", |p| Tokenizer::from_json_uncached(&std::fs::read_to_string(p).unwrap())),
        ] {
            let Some(path) = crate::test_fixtures::get(rel) else { continue };
            let tok = build(&path).unwrap();
            let payload = tok.write_table().unwrap_or_else(|| panic!("{rel}: a byte-level BPE tokenizer is cached"));
            let back = Tokenizer::read_table(table_cache::Reader::new(&payload)).unwrap();
            assert_eq!(back.to_json(false).unwrap(), tok.to_json(false).unwrap(), "{rel}");
            for text in texts {
                for special in [false, true] {
                    let (a, b) = (tok.encode(text, special).unwrap(), back.encode(text, special).unwrap());
                    assert_eq!(
                        (a.get_ids(), a.get_tokens(), a.get_offsets()),
                        (b.get_ids(), b.get_tokens(), b.get_offsets()),
                        "{rel} {text:?}"
                    );
                    assert_eq!(back.decode(a.get_ids(), false).unwrap(), tok.decode(a.get_ids(), false).unwrap());
                }
            }
            for cut in (0..payload.len()).step_by(payload.len() / 50 + 1) {
                assert!(Tokenizer::read_table(table_cache::Reader::new(&payload[..cut])).is_err(), "{rel}: cut at {cut}");
            }
            n += 1;
        }
        assert!(n == 3, "fixtures missing: only {n} of 3 tested");
        // A tokenizer whose model the cache does not hold gives no payload.
        if let Some(p) = crate::test_fixtures::get("hub/llama2.model") {
            assert!(crate::formats::sentencepiece::from_model_file(&p).unwrap().write_table().is_none());
        }
    }
}
