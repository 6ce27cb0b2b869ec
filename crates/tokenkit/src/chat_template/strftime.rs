//! `strftime_now(format)`: the current date formatted like Python's `datetime.now().strftime`.
//!
//! The clock is read in UTC (transformers uses the machine's local time; templates only use the
//! date, e.g. Llama 3.1's "Today Date: 26 Jul 2024"). The directives are the C ones Python
//! passes through: `%Y %y %m %d %e %H %I %M %S %p %B %b %h %A %a %j %F %T %D %%`, and glibc's
//! `%-d`-style flag that drops the padding. Unknown directives are copied as they are.

use std::time::{SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// A calendar date and time of day (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DateTime {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// 0 = Monday.
    weekday: u32,
    /// 1-based day of the year.
    yday: u32,
}

impl DateTime {
    /// The date and time `secs` seconds after 1970-01-01T00:00:00Z.
    pub(crate) fn from_unix(secs: i64) -> Self {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400) as u32;
        // Howard Hinnant's days-to-civil algorithm.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        const CUM: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
        let yday = CUM[(month - 1) as usize] + day + u32::from(leap && month > 2);
        DateTime {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem / 60 % 60,
            second: rem % 60,
            weekday: (days + 3).rem_euclid(7) as u32, // 1970-01-01 was a Thursday
            yday,
        }
    }

    /// Formats with C/Python strftime directives.
    pub(crate) fn format(&self, fmt: &str) -> String {
        let mut out = String::with_capacity(fmt.len() + 16);
        let mut chars = fmt.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let unpadded = chars.peek() == Some(&'-');
            if unpadded {
                chars.next();
            }
            let Some(d) = chars.next() else {
                out.push('%');
                break;
            };
            let num = |n: i64, width: usize| if unpadded { n.to_string() } else { format!("{n:0width$}") };
            let hour12 = match self.hour % 12 {
                0 => 12,
                h => h,
            };
            let piece = match d {
                'Y' => self.year.to_string(),
                'y' => num(self.year.rem_euclid(100), 2),
                'm' => num(self.month.into(), 2),
                'd' => num(self.day.into(), 2),
                'e' => if unpadded { self.day.to_string() } else { format!("{:2}", self.day) },
                'H' => num(self.hour.into(), 2),
                'I' => num(hour12.into(), 2),
                'M' => num(self.minute.into(), 2),
                'S' => num(self.second.into(), 2),
                'j' => num(self.yday.into(), 3),
                'p' => (if self.hour < 12 { "AM" } else { "PM" }).to_owned(),
                'B' => MONTHS[(self.month - 1) as usize].to_owned(),
                'b' | 'h' => MONTHS[(self.month - 1) as usize][..3].to_owned(),
                'A' => DAYS[self.weekday as usize].to_owned(),
                'a' => DAYS[self.weekday as usize][..3].to_owned(),
                'u' => (self.weekday + 1).to_string(),
                'w' => ((self.weekday + 1) % 7).to_string(),
                'F' => format!("{}-{:02}-{:02}", self.year, self.month, self.day),
                'T' => format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second),
                'D' => format!("{:02}/{:02}/{:02}", self.month, self.day, self.year.rem_euclid(100)),
                '%' => "%".to_owned(),
                other => {
                    if unpadded {
                        format!("%-{other}")
                    } else {
                        format!("%{other}")
                    }
                }
            };
            out.push_str(&piece);
        }
        out
    }
}

/// The current UTC time formatted with `format`.
pub(crate) fn strftime_now(format: &str) -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    DateTime::from_unix(secs).format(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        // Values from Python: datetime.fromtimestamp(ts, timezone.utc).strftime(...)
        let d = DateTime::from_unix(0);
        assert_eq!(d.format("%Y-%m-%d %H:%M:%S %A %a %B %b %j"), "1970-01-01 00:00:00 Thursday Thu January Jan 001");
        let d = DateTime::from_unix(1_721_995_200); // 2024-07-26 12:00:00 UTC
        assert_eq!(d.format("%d %b %Y"), "26 Jul 2024");
        assert_eq!(d.format("%-d %B %Y, %I %p, day %j (%A)"), "26 July 2024, 12 PM, day 208 (Friday)");
        let d = DateTime::from_unix(951_782_400); // 2000-02-29
        assert_eq!(d.format("%F %e %y %%"), "2000-02-29 29 00 %");
        let d = DateTime::from_unix(-86_400);
        assert_eq!(d.format("%F %a"), "1969-12-31 Wed");
    }
}
