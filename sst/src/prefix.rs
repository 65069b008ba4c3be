//! The prefix extractors a table's properties can name, where this reader
//! can reproduce them.
//!
//! Ported from RocksDB's `util/slice.cc` (`FixedPrefixTransform`,
//! `CappedPrefixTransform`, `NoopTransform`: ids `rocksdb.FixedPrefix.N`,
//! `rocksdb.CappedPrefix.N`, `rocksdb.Noop`, which the table builder stores
//! through `SliceTransform::AsString()`; `nullptr` when there is none).

use core::fmt;

/// A table's prefix extractor, parsed from `rocksdb.prefix.extractor.name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixExtractor {
    /// `rocksdb.FixedPrefix.N`: the first N bytes; keys shorter than N are
    /// out of its domain.
    Fixed(usize),
    /// `rocksdb.CappedPrefix.N`: the first N bytes, or the whole key when
    /// shorter.
    Capped(usize),
    /// `rocksdb.Noop`: the whole key.
    Noop,
    /// A custom extractor this reader cannot reproduce.
    Unknown(String),
}

impl PrefixExtractor {
    /// Parses the property value; `None` for no extractor (absent, empty or
    /// `nullptr`).
    pub fn from_property(name: Option<&str>) -> Option<Self> {
        let name = name?;
        if name.is_empty() || name == "nullptr" {
            return None;
        }
        let parse_len = |s: &str| s.parse::<usize>().ok();
        Some(
            if let Some(n) = name.strip_prefix("rocksdb.FixedPrefix.").and_then(parse_len) {
                PrefixExtractor::Fixed(n)
            } else if let Some(n) = name.strip_prefix("rocksdb.CappedPrefix.").and_then(parse_len) {
                PrefixExtractor::Capped(n)
            } else if name == "rocksdb.Noop" {
                PrefixExtractor::Noop
            } else {
                PrefixExtractor::Unknown(name.to_string())
            },
        )
    }

    /// Whether the extractor is one this reader reproduces.
    pub fn is_known(&self) -> bool {
        !matches!(self, PrefixExtractor::Unknown(_))
    }

    /// The prefix of `key`, or `None` when `key` is out of the domain (or
    /// the extractor is unknown).
    pub fn transform<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match self {
            PrefixExtractor::Fixed(n) => key.get(..*n),
            PrefixExtractor::Capped(n) => Some(&key[..key.len().min(*n)]),
            PrefixExtractor::Noop => Some(key),
            PrefixExtractor::Unknown(_) => None,
        }
    }
}

impl fmt::Display for PrefixExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefixExtractor::Fixed(n) => write!(f, "rocksdb.FixedPrefix.{n}"),
            PrefixExtractor::Capped(n) => write!(f, "rocksdb.CappedPrefix.{n}"),
            PrefixExtractor::Noop => f.write_str("rocksdb.Noop"),
            PrefixExtractor::Unknown(s) => f.write_str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_transforms() {
        assert_eq!(PrefixExtractor::from_property(Some("nullptr")), None);
        assert_eq!(PrefixExtractor::from_property(None), None);
        let f = PrefixExtractor::from_property(Some("rocksdb.FixedPrefix.3")).unwrap();
        assert_eq!(f, PrefixExtractor::Fixed(3));
        assert_eq!(f.transform(b"abcd"), Some(&b"abc"[..]));
        assert_eq!(f.transform(b"ab"), None);
        let c = PrefixExtractor::from_property(Some("rocksdb.CappedPrefix.3")).unwrap();
        assert_eq!(c.transform(b"ab"), Some(&b"ab"[..]));
        assert_eq!(c.transform(b"abcdef"), Some(&b"abc"[..]));
        let u = PrefixExtractor::from_property(Some("my.Extractor")).unwrap();
        assert!(!u.is_known());
        assert_eq!(u.transform(b"abc"), None);
        assert_eq!(u.to_string(), "my.Extractor");
    }
}
