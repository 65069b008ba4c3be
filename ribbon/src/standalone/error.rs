//! Everything that can go wrong building, loading or converting a
//! standalone filter.

use crate::core::prelude::*;
use core::fmt;

/// Everything that can go wrong building, loading or converting a filter.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A [`Config`](super::Config) setting is out of range.
    InvalidConfig {
        /// The setting (field of [`Config`](super::Config)).
        setting: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// More keys (or, with the configured overhead, more slots) than a
    /// standalone filter holds ([`MAX_KEYS`](super::sizing::MAX_KEYS), [`MAX_SLOTS`](super::sizing::MAX_SLOTS)).
    TooManyKeys {
        /// Keys given.
        num_keys: u64,
        /// The limit on keys.
        max: u64,
    },
    /// Standard Ribbon: banding failed for every seed of the budget. Raise
    /// [`Config::max_seeds`](super::Config::max_seeds), pick a lower [`Config::failure_chance`](super::Config::failure_chance) or a
    /// larger [`Config::slot_overhead`](super::Config::slot_overhead), or use Homogeneous Ribbon.
    ConstructionFailed {
        /// Keys given.
        num_keys: u64,
        /// Slots they were banded into.
        num_slots: u32,
        /// The first ordinal seed tried.
        first_seed: u32,
        /// Seeds tried.
        seeds_tried: u32,
    },
    /// The bytes do not start with the standalone magic.
    BadMagic,
    /// A standalone file of another format version.
    UnsupportedVersion {
        /// The file's version.
        found: u16,
        /// The newest version this crate reads (it reads 1 to this).
        supported: u16,
    },
    /// The bytes end before the file does.
    Truncated {
        /// Bytes the file needs (as far as known).
        needed: u64,
        /// Bytes given.
        len: u64,
    },
    /// The header's checksum does not match: the header is damaged.
    HeaderChecksumMismatch,
    /// The solution's checksum does not match: the solution is damaged.
    ChecksumMismatch,
    /// The header's checksum matches but its fields are inconsistent.
    Corrupt(String),
    /// [`Ribbon::from_rocksdb`](super::Ribbon::from_rocksdb): the block is not a usable Standard128
    /// Ribbon filter.
    NotRocksDbRibbon(String),
    /// [`Ribbon::to_rocksdb`](super::Ribbon::to_rocksdb): RocksDB's format cannot express this filter.
    NotRocksDbCompatible(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig { setting, reason } => write!(f, "invalid configuration: {setting} {reason}"),
            Error::TooManyKeys { num_keys, max } => write!(
                f,
                "too many keys for a standalone Ribbon filter: {num_keys} (at most {max}, and at most 2^32 - 256 slots)"
            ),
            Error::ConstructionFailed {
                num_keys,
                num_slots,
                first_seed,
                seeds_tried,
            } => write!(
                f,
                "Ribbon construction failed: {num_keys} keys did not band into {num_slots} slots \
                 with any of {seeds_tried} seeds from {first_seed}"
            ),
            Error::BadMagic => write!(f, "not a standalone Ribbon filter (bad magic)"),
            Error::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported standalone Ribbon format version {found} (this build reads versions 1 to {supported})"
            ),
            Error::Truncated { needed, len } => {
                write!(f, "truncated standalone Ribbon filter: {len} bytes, needs {needed}")
            }
            Error::HeaderChecksumMismatch => write!(f, "standalone Ribbon header checksum mismatch"),
            Error::ChecksumMismatch => write!(f, "standalone Ribbon solution checksum mismatch"),
            Error::Corrupt(what) => write!(f, "corrupt standalone Ribbon filter: {what}"),
            Error::NotRocksDbRibbon(what) => write!(f, "not a RocksDB Standard128 Ribbon filter: {what}"),
            Error::NotRocksDbCompatible(what) => write!(f, "cannot express in RocksDB's format: {what}"),
        }
    }
}

impl core::error::Error for Error {}
