//! Normalizers: one file per family; [`NormalizerWrapper`] is the closed set tokenizer.json uses.
//!
//! Every normalizer serializes to exactly the JSON HF tokenizers 0.23 writes, `"type"` first
//! (e.g. `{"type":"NFC"}`, `{"type":"Strip","strip_left":true,"strip_right":true}`), and
//! reads back the forms HF reads, including the legacy objects without a `"type"` field.

pub mod bert;
pub mod byte_level;
pub mod precompiled;
pub mod prepend;
pub mod replace;
pub mod sentencepiece;
pub mod strip;
pub mod unicode;
pub mod utils;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use bert::BertNormalizer;
pub use byte_level::ByteLevel;
pub use precompiled::Precompiled;
pub use prepend::Prepend;
pub use replace::{Replace, ReplacePattern};
pub use strip::{Strip, StripAccents};
pub use unicode::{Nmt, NFC, NFD, NFKC, NFKD};
pub use utils::{Lowercase, Sequence};

use crate::base::{NormalizedString, Normalizer};
use crate::Result;

/// Implements serde for a normalizer without parameters: it serializes as `{"type":"<Name>"}`
/// and deserializes from such an object (other fields are ignored, a different `"type"` is an
/// error) or from a unit/null.
macro_rules! impl_unit_serde {
    ($($name:ident),* $(,)?) => {$(
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let mut s = serializer.serialize_struct(stringify!($name), 1)?;
                s.serialize_field("type", stringify!($name))?;
                s.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
                deserializer
                    .deserialize_any($crate::normalizers::UnitVisitor(stringify!($name)))
                    .map(|()| $name)
            }
        }
    )*};
}
pub(crate) use impl_unit_serde;

/// Accepts `{"type": name, ...}` (ignoring other fields) or a unit for a parameterless
/// normalizer called `name`.
pub(crate) struct UnitVisitor(pub(crate) &'static str);

impl<'de> serde::de::Visitor<'de> for UnitVisitor {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an object {{\"type\":\"{}\"}}", self.0)
    }

    fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "type" {
                let ty: std::borrow::Cow<'de, str> = map.next_value()?;
                if ty != self.0 {
                    return Err(A::Error::custom(format!("expected \"type\":\"{}\", found {ty:?}", self.0)));
                }
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// Serializes a [`Replace`] with `"type":"Replace"` first: the struct is shared with the decoder,
/// whose wrapper writes the type, while this wrapper is untagged (each normalizer writes its own).
fn replace_with_type<S: serde::Serializer>(value: &Replace, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Typed<'a> {
        r#type: &'static str,
        #[serde(flatten)]
        value: &'a Replace,
    }
    Typed { r#type: "Replace", value }.serialize(serializer)
}

/// Every normalizer tokenizer.json can name, dispatched statically.
///
/// Serializes as the inner normalizer (each writes its own `"type"`). Deserializes by the
/// `"type"` field (`"Bert"` is accepted for `BertNormalizer`, as HF does); an object without
/// `"type"` is read as the first of BertNormalizer, Strip, Sequence, Precompiled, Replace,
/// Prepend whose fields it has (HF's legacy untagged form).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum NormalizerWrapper {
    /// See [`BertNormalizer`].
    BertNormalizer(BertNormalizer),
    /// See [`Strip`].
    Strip(Strip),
    /// See [`StripAccents`].
    StripAccents(StripAccents),
    /// See [`NFC`].
    NFC(NFC),
    /// See [`NFD`].
    NFD(NFD),
    /// See [`NFKC`].
    NFKC(NFKC),
    /// See [`NFKD`].
    NFKD(NFKD),
    /// See [`Sequence`].
    Sequence(Sequence),
    /// See [`Lowercase`].
    Lowercase(Lowercase),
    /// See [`Nmt`].
    Nmt(Nmt),
    /// See [`Precompiled`].
    Precompiled(Precompiled),
    /// See [`Replace`] (the struct is also the decoder's, which is written without the type).
    #[serde(serialize_with = "replace_with_type")]
    Replace(Replace),
    /// See [`Prepend`].
    Prepend(Prepend),
    /// See [`ByteLevel`].
    ByteLevel(ByteLevel),
}

impl Normalizer for NormalizerWrapper {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        match self {
            NormalizerWrapper::BertNormalizer(x) => x.normalize(n),
            NormalizerWrapper::Strip(x) => x.normalize(n),
            NormalizerWrapper::StripAccents(x) => x.normalize(n),
            NormalizerWrapper::NFC(x) => x.normalize(n),
            NormalizerWrapper::NFD(x) => x.normalize(n),
            NormalizerWrapper::NFKC(x) => x.normalize(n),
            NormalizerWrapper::NFKD(x) => x.normalize(n),
            NormalizerWrapper::Sequence(x) => x.normalize(n),
            NormalizerWrapper::Lowercase(x) => x.normalize(n),
            NormalizerWrapper::Nmt(x) => x.normalize(n),
            NormalizerWrapper::Precompiled(x) => x.normalize(n),
            NormalizerWrapper::Replace(x) => x.normalize(n),
            NormalizerWrapper::Prepend(x) => x.normalize(n),
            NormalizerWrapper::ByteLevel(x) => x.normalize(n),
        }
    }
}

macro_rules! impl_from {
    ($($variant:ident),* $(,)?) => {$(
        impl From<$variant> for NormalizerWrapper {
            fn from(n: $variant) -> Self {
                NormalizerWrapper::$variant(n)
            }
        }
    )*};
}

impl_from!(BertNormalizer, Strip, StripAccents, NFC, NFD, NFKC, NFKD, Sequence, Lowercase, Nmt, Precompiled, Replace, Prepend, ByteLevel,);

/// Deserializes `value` as `T` and wraps it.
fn parse<T>(value: Value) -> std::result::Result<NormalizerWrapper, serde_json::Error>
where
    T: serde::de::DeserializeOwned + Into<NormalizerWrapper>,
{
    T::deserialize(value).map(Into::into)
}

type Parser = fn(Value) -> std::result::Result<NormalizerWrapper, serde_json::Error>;

/// The normalizers HF can read from an object without `"type"`, in the order it tries them,
/// each with the fields it requires.
const LEGACY_FORMS: [(&str, &[&str], Parser); 6] = [
    ("BertNormalizer", &["clean_text", "handle_chinese_chars", "lowercase"], parse::<BertNormalizer>),
    ("Strip", &["strip_left", "strip_right"], parse::<Strip>),
    ("Sequence", &["normalizers"], parse::<Sequence>),
    ("Precompiled", &["precompiled_charsmap"], parse::<Precompiled>),
    ("Replace", &["pattern", "content"], parse::<Replace>),
    ("Prepend", &["prepend"], parse::<Prepend>),
];

impl NormalizerWrapper {
    /// Reads a normalizer from its tokenizer.json object (see the type's docs for the forms);
    /// an [`Error::Invalid`](crate::Error::Invalid) naming the normalizer and the field otherwise.
    pub fn from_value(value: Value) -> Result<Self> {
        Self::from_value_inner(value).map_err(crate::Error::Invalid)
    }

    fn from_value_inner(value: Value) -> std::result::Result<Self, String> {
        let Some(object) = value.as_object() else {
            return Err(format!("a normalizer must be a JSON object, found {value}"));
        };
        match object.get("type") {
            Some(Value::String(ty)) => {
                let ty = ty.clone();
                let parser: Parser = match ty.as_str() {
                    "BertNormalizer" | "Bert" => parse::<BertNormalizer>,
                    "Strip" => parse::<Strip>,
                    "StripAccents" => parse::<StripAccents>,
                    "NFC" => parse::<NFC>,
                    "NFD" => parse::<NFD>,
                    "NFKC" => parse::<NFKC>,
                    "NFKD" => parse::<NFKD>,
                    "Sequence" => parse::<Sequence>,
                    "Lowercase" => parse::<Lowercase>,
                    "Nmt" => parse::<Nmt>,
                    "Precompiled" => parse::<Precompiled>,
                    "Replace" => parse::<Replace>,
                    "Prepend" => parse::<Prepend>,
                    "ByteLevel" => parse::<ByteLevel>,
                    _ => {
                        return Err(format!(
                            "unknown normalizer type {ty:?}, expected one of BertNormalizer, Strip, \
                             StripAccents, NFC, NFD, NFKC, NFKD, Sequence, Lowercase, Nmt, \
                             Precompiled, Replace, Prepend, ByteLevel"
                        ))
                    }
                };
                // `"Bert"` is HF's internal spelling; the struct itself expects its own name.
                let value = if ty == "Bert" {
                    let mut object = object.clone();
                    object.insert("type".into(), Value::String("BertNormalizer".into()));
                    Value::Object(object)
                } else {
                    value
                };
                parser(value).map_err(|e| format!("normalizer {ty}: {e}"))
            }
            Some(other) => Err(format!("normalizer \"type\" must be a string, found {other}")),
            None => {
                let mut first_error = None;
                for (name, fields, parser) in LEGACY_FORMS {
                    if fields.iter().all(|f| object.contains_key(*f)) {
                        match parser(value.clone()) {
                            Ok(n) => return Ok(n),
                            Err(e) => {
                                first_error.get_or_insert_with(|| format!("normalizer {name} (no \"type\" field): {e}"));
                            }
                        }
                    }
                }
                Err(first_error.unwrap_or_else(|| {
                    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
                    format!("normalizer without a \"type\" field matches no known normalizer (fields: {keys:?})")
                }))
            }
        }
    }
}

impl<'de> Deserialize<'de> for NormalizerWrapper {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        NormalizerWrapper::from_value(value).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests;
