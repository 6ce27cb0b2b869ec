//! `strftime_now(format)`: the current local date and time formatted like Python's
//! `datetime.now().strftime(format)` (what transformers gives templates such as Llama 3.1's
//! "Today Date: 26 Jul 2024"). Formatting is chrono's, which reads the C directives as glibc
//! does, `%-d`-style padding flags included; a directive chrono does not know is copied as it
//! is, as glibc does.

use std::fmt::Write as _;

use chrono::format::StrftimeItems;
use chrono::{DateTime, Local, TimeZone};

/// The current local time formatted with `format`.
pub(crate) fn strftime_now(format: &str) -> String {
    strftime(&Local::now(), format)
}

/// `t` formatted with the strftime directives of `format`.
fn strftime<Tz: TimeZone>(t: &DateTime<Tz>, format: &str) -> String
where
    Tz::Offset: std::fmt::Display,
{
    let mut out = String::with_capacity(format.len() + 16);
    if write!(out, "{}", t.format_with_items(StrftimeItems::new(format))).is_ok() {
        return out;
    }
    // Some directive is unknown to chrono: format directive by directive, copying the unknown
    // ones literally.
    out.clear();
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let flag = tail[1..].starts_with(['-', '_', '0']) as usize;
        let len = 1 + flag + tail[1 + flag..].chars().next().map_or(0, char::len_utf8);
        let directive = &tail[..len.min(tail.len())];
        let start = out.len();
        if write!(out, "{}", t.format_with_items(StrftimeItems::new(directive))).is_err() {
            out.truncate(start);
            out.push_str(directive);
        }
        rest = &tail[directive.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, 0).single().expect("valid timestamp")
    }

    #[test]
    fn known_dates() {
        // Values from Python: datetime.fromtimestamp(ts, timezone.utc).strftime(...)
        let d = at(0);
        assert_eq!(strftime(&d, "%Y-%m-%d %H:%M:%S %A %a %B %b %j"), "1970-01-01 00:00:00 Thursday Thu January Jan 001");
        let d = at(1_721_995_200); // 2024-07-26 12:00:00 UTC
        assert_eq!(strftime(&d, "%d %b %Y"), "26 Jul 2024");
        assert_eq!(strftime(&d, "%-d %B %Y, %I %p, day %j (%A)"), "26 July 2024, 12 PM, day 208 (Friday)");
        let d = at(951_782_400); // 2000-02-29
        assert_eq!(strftime(&d, "%F %e %y %%"), "2000-02-29 29 00 %");
        let d = at(-86_400);
        assert_eq!(strftime(&d, "%F %a"), "1969-12-31 Wed");
        // Python (glibc) copies unknown directives and a trailing '%': "%Q" -> "%Q".
        assert_eq!(strftime(&at(0), "%Y %Q %"), "1970 %Q %");
    }
}
