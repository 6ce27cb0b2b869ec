//! Sizes in bytes as users write them: `512M`, `2G`, `1.5GiB`, `1000000`.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// A number of bytes, read from `N`, `N[KMGT]`, `N[KMGT]B` or `N[KMGT]iB` (binary multiples in
/// every spelling, as memory limits are meant) with an optional fraction (`1.5G`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::invalid(format!("{s:?} is not a size (write e.g. 512M, 2G or a number of bytes)"));
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
            "" => 0,
            "K" => 10,
            "M" => 20,
            "G" => 30,
            "T" => 40,
            _ => return Err(bad()),
        };
        let value: f64 = number.parse().map_err(|_| bad())?;
        let bytes = value * (1u64 << shift) as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(bad());
        }
        Ok(ByteSize(bytes as u64))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(40, "T"), (30, "G"), (20, "M"), (10, "K")];
        match units.iter().find(|(shift, _)| self.0 >= 1 << shift && self.0.is_multiple_of(1 << shift)) {
            Some((shift, unit)) => write!(f, "{}{unit}", self.0 >> shift),
            None => write!(f, "{}", self.0),
        }
    }
}

impl<'de> serde::Deserialize<'de> for ByteSize {
    /// A number of bytes, or a string as [`FromStr`] reads it.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bytes(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bytes(b) => Ok(ByteSize(b)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl serde::Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
#[test]
fn sizes_parse_and_print() {
    for (text, bytes) in
        [("0", 0), ("1000", 1000), ("512M", 512 << 20), ("2G", 2 << 30), ("2gib", 2 << 30), ("1.5GB", 3 << 29), ("64 K", 64 << 10)]
    {
        assert_eq!(text.parse::<ByteSize>().unwrap(), ByteSize(bytes), "{text}");
    }
    for bad in ["", "G", "2X", "-1G", "1e30T", "1.2.3M"] {
        assert!(bad.parse::<ByteSize>().is_err(), "{bad}");
    }
    assert_eq!(ByteSize(2 << 30).to_string(), "2G");
    assert_eq!(ByteSize(1000).to_string(), "1000");
    assert_eq!(serde_json::from_str::<ByteSize>("\"3M\"").unwrap(), ByteSize(3 << 20));
    assert_eq!(serde_json::from_str::<ByteSize>("4096").unwrap(), ByteSize(4096));
}
