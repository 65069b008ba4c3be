//! `bloom_before_level`: the Ribbon policies' one setting that changes on
//! the live policy (`SetOptions`), as RocksDB's `ribbonfilter` names it.

/// The option's name.
pub(crate) const BLOOM_BEFORE_LEVEL: &str = "bloom_before_level";

/// A `bloom_before_level` value as `SetOptions` gives it.
pub(crate) fn parse(value: &str) -> Result<i32, String> {
    value
        .trim()
        .parse::<i32>()
        .map_err(|_| format!("{BLOOM_BEFORE_LEVEL} must be an integer, not {value:?}"))
}
