//! Oniguruma through its C API (`onig_sys`), for what the `onig` crate does not offer: a
//! match parameter kept for a whole text (the crate allocates and frees one per search), an
//! anchored match at one position with the subject's real end (a forward search limits the
//! subject to its range of start positions), and a count of the chars the engine steps over.
//!
//! The count: the regexes are compiled for a copy of Oniguruma's UTF-8 encoding whose
//! char-length function also counts its calls on the calling thread ([`steps`]). The engine
//! asks for a char's length wherever it steps over a char by class, by `.`, by a property or
//! to the next start position, so a pattern that scans far ahead of its matches (`a(?=.*z)` on
//! a long run of `a`s, `a.*z`) shows it in the count, which Oniguruma's retry counter does not
//! see (such a scan pushes nothing to backtrack to). Literal chars are compared byte by byte
//! without the call: a scan made only of literal chars is not counted.

use std::cell::Cell;
use std::os::raw::{c_int, c_uchar};
use std::ptr::null_mut;
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// Chars Oniguruma stepped over on this thread (see the module docs).
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// The chars Oniguruma has stepped over on this thread so far: the difference between two
/// readings is the count of what ran between them.
#[inline]
pub(super) fn steps() -> u64 {
    STEPS.with(Cell::get)
}

/// The length of a UTF-8 sequence by its lead byte, as Oniguruma's UTF-8 encoding has it for
/// every byte valid UTF-8 can hold (a continuation byte is 1; checked in a test).
const UTF8_LEN: [u8; 256] = {
    let mut t = [1u8; 256];
    let mut b = 0xC0;
    while b <= 0xF4 {
        t[b] = if b < 0xE0 {
            2
        } else if b < 0xF0 {
            3
        } else {
            4
        };
        b += 1;
    }
    t
};

/// The encoding's char-length function: counts, then answers as UTF-8's.
unsafe extern "C" fn counted_len(p: *const c_uchar) -> c_int {
    STEPS.with(|s| s.set(s.get() + 1));
    // SAFETY: Oniguruma passes a pointer to a byte of the subject or of the pattern.
    c_int::from(UTF8_LEN[usize::from(unsafe { *p })])
}

/// A pointer Oniguruma only reads (an encoding, a compiled regex), shareable across threads.
struct Shared<T>(*mut T);
// SAFETY: the encoding is never written after it is built; a compiled regex is only read by
// searches (the `onig` crate shares its regexes across threads the same way).
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

/// UTF-8 with the counting length function (built once, never freed).
fn encoding() -> onig_sys::OnigEncoding {
    static ENCODING: OnceLock<Shared<onig_sys::OnigEncodingType>> = OnceLock::new();
    ENCODING
        .get_or_init(|| {
            // SAFETY: a copy of the static's plain data and function pointers.
            let mut enc = unsafe { std::ptr::read(&raw const onig_sys::OnigEncodingUTF8) };
            enc.mbc_enc_len = Some(counted_len);
            Shared(Box::into_raw(Box::new(enc)))
        })
        .0
}

/// Oniguruma's message for an error code.
fn message(code: c_int, info: *const onig_sys::OnigErrorInfo) -> String {
    let mut buf = [0u8; onig_sys::ONIG_MAX_ERROR_MESSAGE_LEN as usize];
    // SAFETY: the buffer has the room the API asks for; `info` is null or filled by onig_new.
    let len = unsafe { onig_sys::onig_error_code_to_str(buf.as_mut_ptr(), code, info) };
    String::from_utf8_lossy(&buf[..usize::try_from(len).unwrap_or(0).min(buf.len())]).into_owned()
}

/// An Oniguruma error: its code and message.
#[derive(Debug)]
pub(super) struct OnigError {
    pub code: c_int,
    pub message: String,
}

impl OnigError {
    fn new(code: c_int) -> Self {
        Self { code, message: message(code, std::ptr::null()) }
    }
}

/// A compiled Oniguruma regex (Ruby syntax, the default the `onig` crate and HF use).
pub(super) struct OnigRegex(Shared<onig_sys::regex_t>);

impl Drop for OnigRegex {
    fn drop(&mut self) {
        // SAFETY: compiled by onig_new, freed once.
        unsafe { onig_sys::onig_free(self.0 .0) }
    }
}

impl OnigRegex {
    /// Compiles `pattern`; Oniguruma's message when it rejects it.
    pub(super) fn new(pattern: &str) -> Result<Self, String> {
        // onig_new is not safe to call from two threads at once (the `onig` crate locks too).
        static COMPILE: Mutex<()> = Mutex::new(());
        let _guard = COMPILE.lock().unwrap_or_else(|e| e.into_inner());
        let mut reg: onig_sys::OnigRegex = null_mut();
        let mut info = onig_sys::OnigErrorInfo { enc: null_mut(), par: null_mut(), par_end: null_mut() };
        let bytes = pattern.as_bytes();
        // SAFETY: the pattern's pointers bound its bytes; the encoding and syntax live forever.
        let r = unsafe {
            let mut enc = encoding();
            onig_sys::onig_initialize(&mut enc, 1);
            onig_sys::onig_new(
                &mut reg,
                bytes.as_ptr(),
                bytes.as_ptr().add(bytes.len()),
                onig_sys::ONIG_OPTION_NONE,
                enc,
                onig_sys::OnigDefaultSyntax,
                &mut info,
            )
        };
        if r == onig_sys::ONIG_NORMAL as c_int {
            Ok(Self(Shared(reg)))
        } else {
            Err(format!("Oniguruma error: {}", message(r, &info)))
        }
    }
}

/// What one text's searches reuse: a region for the match and a match parameter (the retry
/// limit of each search).
pub(super) struct Searcher<'r> {
    regex: &'r OnigRegex,
    region: *mut onig_sys::OnigRegion,
    param: *mut onig_sys::OnigMatchParam,
}

impl Drop for Searcher<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once.
        unsafe {
            onig_sys::onig_region_free(self.region, 1);
            onig_sys::onig_free_match_param(self.param);
        }
    }
}

impl<'r> Searcher<'r> {
    pub(super) fn new(regex: &'r OnigRegex) -> Self {
        // SAFETY: plain allocations, initialised before use.
        unsafe {
            let param = onig_sys::onig_new_match_param();
            onig_sys::onig_initialize_match_param(param);
            Self { regex, region: onig_sys::onig_region_new(), param }
        }
    }

    /// The whole match of the last successful call, as byte offsets.
    pub(super) fn span(&self) -> Option<(usize, usize)> {
        // SAFETY: the region is live; its arrays hold `num_regs` entries.
        unsafe {
            let r = &*self.region;
            if r.num_regs < 1 || *r.beg < 0 {
                return None;
            }
            Some((usize::try_from(*r.beg).ok()?, usize::try_from(*r.end).ok()?))
        }
    }

    /// Searches `text` for the leftmost match starting at `from` or after (`from` a char
    /// boundary), with at most `retry_limit` retries: `Ok(true)` when found (see
    /// [`Self::span`]), `Ok(false)` when there is none.
    pub(super) fn search(&mut self, text: &str, from: usize, retry_limit: u64) -> Result<bool, OnigError> {
        self.call(text, from, retry_limit, |reg, s, e, at, region, param| {
            // SAFETY: `s..e` bounds the text, `at` is within it.
            unsafe { onig_sys::onig_search_with_param(reg, s, e, at, e, region, onig_sys::ONIG_OPTION_NONE, param) }
        })
    }

    /// Matches at `at` only (a char boundary), against the whole text; `\G` matches there
    /// only when `begin` (the position a search would start from).
    pub(super) fn match_at(&mut self, text: &str, at: usize, begin: bool, retry_limit: u64) -> Result<bool, OnigError> {
        let option = if begin { onig_sys::ONIG_OPTION_NONE } else { onig_sys::ONIG_OPTION_NOT_BEGIN_POSITION };
        self.call(text, at, retry_limit, |reg, s, e, at, region, param| {
            // SAFETY: `s..e` bounds the text, `at` is within it.
            unsafe { onig_sys::onig_match_with_param(reg, s, e, at, region, option, param) }
        })
    }

    #[allow(clippy::type_complexity)]
    fn call(
        &mut self,
        text: &str,
        at: usize,
        retry_limit: u64,
        f: impl FnOnce(
            onig_sys::OnigRegex,
            *const c_uchar,
            *const c_uchar,
            *const c_uchar,
            *mut onig_sys::OnigRegion,
            *mut onig_sys::OnigMatchParam,
        ) -> c_int,
    ) -> Result<bool, OnigError> {
        assert!(at <= text.len());
        let bytes = text.as_bytes();
        // A limit of 0 is "no limit" to Oniguruma: an empty budget is 1 retry.
        let limit = std::os::raw::c_ulong::try_from(retry_limit.max(1)).unwrap_or(std::os::raw::c_ulong::MAX);
        // SAFETY: the parameter and region are live; the pointers bound the text.
        let r = unsafe {
            onig_sys::onig_set_retry_limit_in_search_of_match_param(self.param, limit);
            let s = bytes.as_ptr();
            f(self.regex.0 .0, s, s.add(bytes.len()), s.add(at), self.region, self.param)
        };
        match r {
            r if r >= 0 => Ok(true),
            onig_sys::ONIG_MISMATCH => Ok(false),
            code => Err(OnigError::new(code)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting length function answers as Oniguruma's UTF-8 does, on every byte valid
    /// UTF-8 can hold.
    #[test]
    fn lengths_are_utf8s() {
        // SAFETY: the static's function pointer, called on one byte.
        let original = unsafe { onig_sys::OnigEncodingUTF8.mbc_enc_len }.unwrap();
        for b in 0..=0xF4u8 {
            assert_eq!(unsafe { original(&b) }, unsafe { counted_len(&b) }, "byte {b:#x}");
        }
    }
}
