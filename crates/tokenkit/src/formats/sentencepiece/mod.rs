//! SentencePiece `.model` files (protobuf `ModelProto`): reading them, encoding and decoding
//! exactly as the `sentencepiece` library does, and converting them to HF tokenizer.json.
//!
//! A `.model` loads as a [`Tokenizer`] with no normalizer and no pre-tokenizer, a
//! [`SentencePiece`] model that normalizes and segments the whole input itself, and a
//! [`SentencePieceDecoder`]: sentencepiece's normalization (leftmost-longest charsmap,
//! whitespace removal decided on normalized output) cannot be expressed as HF stages.

pub mod charsmaps;
pub mod convert;
// The runtime model, normalizer and decoder are components; their old paths stay valid.
pub use crate::decoders::sentencepiece as decoder;
pub use crate::models::sentencepiece::{bpe, model, proto};
pub use crate::normalizers::sentencepiece as normalizer;

use std::path::Path;

pub use crate::decoders::sentencepiece::SentencePieceDecoder;
pub use crate::models::sentencepiece::SentencePiece;

use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// Whether the first bytes of a file look like a `ModelProto`: field 1 (`pieces`),
/// length-delimited, holding a piece message that starts with its `piece` string (field 1).
pub fn looks_like_model_proto(head: &[u8]) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    // Skip the varint length of the first piece message.
    let Some(len_end) = head.iter().skip(1).take(5).position(|&b| b & 0x80 == 0) else {
        return false;
    };
    head.get(len_end + 2) == Some(&0x0a)
}

/// Reads a `.model` file into a [`SentencePiece`] model.
pub fn read_model(path: &Path) -> Result<SentencePiece> {
    let raw = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    SentencePiece::from_bytes(raw, &path.display().to_string())
}

/// Loads a `.model` file as a tokenizer that encodes and decodes as sentencepiece does.
pub fn from_model_file(path: &Path) -> Result<Tokenizer> {
    let model = read_model(path)?;
    let decoder = SentencePieceDecoder::from_model(&model);
    let mut tok = Tokenizer::new(model);
    tok.with_decoder(Some(decoder.into()));
    Ok(tok)
}

/// What `tokenkit inspect` prints for a `.model`: the model type and piece counts, the
/// special pieces, the trainer, normalizer and denormalizer specs as stored (the charsmap by
/// its size, never its bytes), and what the load did with the table cache (its entry read,
/// or built and stored, and where).
pub fn summary(model: &SentencePiece) -> String {
    use proto::PieceType;
    use std::fmt::Write as _;
    let proto = model.proto();
    let mut s = String::new();
    let count = |k: PieceType| proto.pieces.iter().filter(|p| p.kind() == k).count();
    let _ = writeln!(
        s,
        "sentencepiece:  {:?} model, {} pieces ({} normal, {} control, {} unknown, {} user-defined, {} byte, {} unused)",
        proto.model_type(),
        proto.pieces.len(),
        count(PieceType::Normal),
        count(PieceType::Control),
        count(PieceType::Unknown),
        count(PieceType::UserDefined),
        count(PieceType::Byte),
        count(PieceType::Unused)
    );
    let special: Vec<String> = proto
        .pieces
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.kind(), PieceType::Control | PieceType::Unknown | PieceType::UserDefined))
        .map(|(i, p)| format!("{i}={:?}", p.piece.as_deref().unwrap_or("")))
        .collect();
    let _ = writeln!(s, "special pieces: {}", super::list(&special, 24));
    let mut fields: Vec<String> = Vec::new();
    let mut field = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            fields.push(format!("{name}={v}"));
        }
    };
    if let Some(t) = &proto.trainer_spec {
        field("model_type", Some(format!("{:?}", proto.model_type())));
        field("vocab_size", t.vocab_size.map(|v| v.to_string()));
        field("input", (!t.input.is_empty()).then(|| format!("{:?}", t.input)));
        field("model_prefix", t.model_prefix.as_ref().map(|v| format!("{v:?}")));
        field("character_coverage", t.character_coverage.map(|v| v.to_string()));
        field("input_sentence_size", t.input_sentence_size.map(|v| v.to_string()));
        field("shrinking_factor", t.shrinking_factor.map(|v| v.to_string()));
        field("num_sub_iterations", t.num_sub_iterations.map(|v| v.to_string()));
        field("max_sentencepiece_length", t.max_sentencepiece_length.map(|v| v.to_string()));
        field("split_by_unicode_script", t.split_by_unicode_script.map(|v| v.to_string()));
        field("split_by_whitespace", t.split_by_whitespace.map(|v| v.to_string()));
        field("split_by_number", t.split_by_number.map(|v| v.to_string()));
        field("split_digits", t.split_digits.map(|v| v.to_string()));
        field("treat_whitespace_as_suffix", t.treat_whitespace_as_suffix.map(|v| v.to_string()));
        field("byte_fallback", t.byte_fallback.map(|v| v.to_string()));
        field("control_symbols", (!t.control_symbols.is_empty()).then(|| format!("{:?}", t.control_symbols)));
        field("user_defined_symbols", (!t.user_defined_symbols.is_empty()).then(|| format!("{:?}", t.user_defined_symbols)));
        for (name, id, piece) in [
            ("unk", t.unk_id, &t.unk_piece),
            ("bos", t.bos_id, &t.bos_piece),
            ("eos", t.eos_id, &t.eos_piece),
            ("pad", t.pad_id, &t.pad_piece),
        ] {
            field(&format!("{name}_id"), id.map(|v| v.to_string()));
            field(&format!("{name}_piece"), piece.as_ref().map(|v| format!("{v:?}")));
        }
        field("unk_surface", t.unk_surface.as_ref().map(|v| format!("{v:?}")));
    }
    let _ = writeln!(s, "trainer_spec:   {}", if fields.is_empty() { "none".into() } else { fields.join(" ") });
    for (name, spec) in [("normalizer_spec:", &proto.normalizer_spec), ("denormalizer:  ", &proto.denormalizer_spec)] {
        let text = spec.as_ref().map_or_else(
            || "none".to_owned(),
            |n| {
                format!(
                    "name={:?} precompiled_charsmap=<{} bytes> add_dummy_prefix={} remove_extra_whitespaces={} escape_whitespaces={}",
                    n.name.as_deref().unwrap_or(""),
                    n.precompiled_charsmap.as_ref().map_or(0, Vec::len),
                    n.add_dummy_prefix(),
                    n.remove_extra_whitespaces(),
                    n.escape_whitespaces()
                )
            },
        );
        let _ = writeln!(s, "{name} {text}");
    }
    let _ = writeln!(s, "table cache:    {}", model.cache_status());
    s
}

#[cfg(test)]
mod tests;
