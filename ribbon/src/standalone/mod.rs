//! Ribbon filters beyond RocksDB's format: a general-purpose filter API and a
//! standalone file format.
//!
//! RocksDB builds one Ribbon configuration (width 128, Standard Ribbon,
//! first coefficient always one, no smash) inside its SST files. This module
//! exposes the whole design space of the paper (Dillinger and Walzer, 2021)
//! on top of the same generic core ([`crate::core::alg`], [`crate::core::hasher`],
//! [`crate::core::solution`], [`crate::core::config`]):
//!
//! * ribbon width 32, 64 or 128;
//! * 1 to 32 result bits per slot, fractional through the interleaved
//!   ⌊r⌋/⌈r⌉ column mix, or a target FP rate;
//! * Standard Ribbon (exact FP rate `2^-r`, seed retries) or Homogeneous
//!   Ribbon (never fails; slots from the paper's equation 7);
//! * Balanced Ribbon (the paper's section 6, [`Config::balanced`]): soft
//!   shards with bumping between levels, under 1 % space overhead at width
//!   64, in format version 2;
//! * smash, first-coefficient-always-one, a failure-chance table, a first
//!   seed and a seed budget.
//!
//! A [`Config`] is checked at run time and dispatched to one of 24
//! monomorphised instantiations of the core ([`Settings`]), each with a
//! Standard and a Balanced query engine. [`Ribbon`] owns a
//! filter; [`RibbonRef`] borrows one zero-copy from bytes (for example a
//! memory-mapped file); both answer the same queries. The bytes are the
//! versioned, checksummed [file format](mod@file). A filter in RocksDB's format
//! converts both ways ([`Ribbon::from_rocksdb`], [`Ribbon::to_rocksdb`]) with
//! identical answers.
//!
//! Keys are hashed with RocksDB's 64-bit key hash
//! ([`crate::core::hash::get_slice_hash64`]); a caller with its own 64-bit hashes
//! uses [`Ribbon::from_hashes`] and [`Ribbon::contains_hash`]. There are no
//! false negatives: every key (hash) the filter was built from is reported
//! as contained, by both types and every query method. Duplicate keys are
//! allowed (they band as redundant equations) but count towards the size.
//!
//! See the crate's user guide for which configuration to pick.

use crate::core::prelude::*;

mod api;
pub(crate) mod balanced;
mod build;
mod config;
pub(crate) mod engine;
mod error;
pub mod file;
pub mod sharded;
pub mod sizing;

pub use config::{Config, Mode, Precision, MAX_SLOT_OVERHEAD, WIDTHS};
pub use engine::Settings;
pub use error::Error;
pub use file::has_magic;
pub use sizing::Plan;

use core::fmt;
use engine::Engine;
use file::Header;

/// What a filter knows besides its bytes: its header, decoded, and the
/// query state built from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoded {
    pub(crate) header: Header,
    pub(crate) engine: Engine,
}

/// A standalone Ribbon filter that owns its bytes (the [file format](mod@file)).
///
/// ```
/// use ribbon::standalone::{Config, Ribbon, RibbonRef};
///
/// let keys = ["apple", "banana", "cherry"];
/// let filter = Ribbon::from_keys(&keys, &Config::default())?;
/// assert!(keys.iter().all(|k| filter.contains(k)));
///
/// // Save, then query the bytes in place.
/// let bytes: Vec<u8> = filter.as_bytes().to_vec();
/// let view = RibbonRef::from_bytes(&bytes)?;
/// assert!(view.contains("banana"));
/// # Ok::<(), ribbon::standalone::Error>(())
/// ```
#[derive(Clone)]
pub struct Ribbon {
    pub(crate) decoded: Decoded,
    pub(crate) bytes: Vec<u8>,
}

/// A standalone Ribbon filter borrowed from bytes in the [file format](mod@file),
/// without copying: the zero-copy twin of [`Ribbon`], with the same queries.
///
/// The bytes need no particular alignment. To serve a filter file from
/// memory without reading it into the heap, map it with your platform's
/// `mmap` (for example with the `memmap2` crate) and pass the mapping's
/// slice; the lifetime ties the filter to the mapping.
///
/// ```
/// use ribbon::standalone::{Config, Ribbon, RibbonRef};
/// use std::io::{Read, Write};
///
/// let keys: Vec<u64> = (0..1000u64).collect();
/// let filter = Ribbon::from_keys(keys.iter().map(|k| k.to_le_bytes()), &Config::default())?;
/// let path = std::env::temp_dir().join(format!("ribbon-doc-{}.rbn", std::process::id()));
/// std::fs::File::create(&path)?.write_all(filter.as_bytes())?;
///
/// // Any byte source works; an mmap avoids the read.
/// let mut bytes = Vec::new();
/// std::fs::File::open(&path)?.read_to_end(&mut bytes)?;
/// let view = RibbonRef::from_bytes(&bytes)?;
/// assert!(keys.iter().all(|k| view.contains(&k.to_le_bytes())));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct RibbonRef<'a> {
    pub(crate) decoded: Decoded,
    bytes: &'a [u8],
    /// The payload: the solution, then a Balanced filter's thresholds.
    solution: &'a [u8],
}

impl Ribbon {
    /// Loads a filter from bytes in the [file format](mod@file), copying them
    /// (see [`RibbonRef::from_bytes`] for the checks and a zero-copy load).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        RibbonRef::from_bytes(bytes).map(|r| r.to_ribbon())
    }

    /// A zero-copy view of this filter.
    #[must_use]
    pub fn as_ribbon_ref(&self) -> RibbonRef<'_> {
        RibbonRef {
            decoded: self.decoded,
            bytes: &self.bytes,
            solution: self.solution(),
        }
    }

    /// The whole file: header, solution, padding, checksum. Its length is
    /// the exact size of the filter in bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The file bytes, for saving.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The payload: the solution, then a Balanced filter's thresholds.
    #[inline]
    pub(crate) fn solution(&self) -> &[u8] {
        &self.bytes[self.decoded.header.payload_range()]
    }
}

impl<'a> RibbonRef<'a> {
    /// Borrows a filter from bytes in the [file format](mod@file), checking the
    /// magic, the version, both checksums (which reads every byte once),
    /// the length and every header field.
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Truncated`], [`Error::HeaderChecksumMismatch`],
    /// [`Error::ChecksumMismatch`] or [`Error::Corrupt`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, true)
    }

    /// As [`RibbonRef::from_bytes`] but without the solution checksum, for an
    /// O(1) open of bytes known to be intact (the header, its checksum and
    /// the length are still checked). A damaged solution is then not
    /// detected and may give false negatives; queries never panic.
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, false)
    }

    fn parse(bytes: &'a [u8], verify: bool) -> Result<Self, Error> {
        let (header, engine) = file::parse(bytes, verify)?;
        Ok(Self {
            decoded: Decoded { header, engine },
            bytes,
            solution: &bytes[header.payload_range()],
        })
    }

    /// An owned copy.
    #[must_use]
    pub fn to_ribbon(&self) -> Ribbon {
        Ribbon {
            decoded: self.decoded,
            bytes: self.bytes.to_vec(),
        }
    }

    /// The whole file: header, solution, padding, checksum (with the
    /// borrowed lifetime). Its length is the exact size of the filter.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    #[inline]
    pub(crate) fn solution(&self) -> &'a [u8] {
        self.solution
    }
}

/// Every parameter, without the solution bytes.
fn debug_fields(f: &mut fmt::Formatter<'_>, name: &str, h: &Header, len: usize) -> fmt::Result {
    f.debug_struct(name)
        .field("width", &h.width_bits())
        .field("first_coeff_always_one", &h.shape.first_coeff_always_one)
        .field("smash", &h.shape.smash)
        .field("homogeneous", &h.shape.homogeneous)
        .field("failure_chance", &h.failure_chance)
        .field("seed", &h.seed)
        .field("num_keys", &h.num_keys)
        .field("num_blocks", &h.num_blocks)
        .field("upper_num_columns", &h.upper_num_columns)
        .field("upper_start_block", &h.upper_start_block)
        .field("target_fp_rate", &h.target_fp_rate)
        .field("balanced", &h.balanced)
        .field("solution_len", &h.solution_len)
        .field("file_len", &len)
        .finish()
}

impl fmt::Debug for Ribbon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_fields(f, "Ribbon", &self.decoded.header, self.bytes.len())
    }
}

impl fmt::Debug for RibbonRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_fields(f, "RibbonRef", &self.decoded.header, self.bytes.len())
    }
}

/// With the `serde` feature, a filter serializes as its bytes in the
/// [file format](mod@file) (`serialize_bytes`), and deserializes from them
/// with [`Ribbon::from_bytes`]'s checks (bytes or a sequence of `u8`, as
/// JSON writes them); [`RibbonRef`] deserializes zero-copy from formats
/// that lend bytes (bincode, postcard, ...).
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use ribbon::{Config, Ribbon, RibbonRef};
/// use serde::de::value::{BorrowedBytesDeserializer, Error};
/// use serde::Deserialize;
///
/// let filter = Ribbon::from_keys(["apple", "banana"], &Config::default()).unwrap();
/// let view = RibbonRef::deserialize(BorrowedBytesDeserializer::<Error>::new(filter.as_bytes())).unwrap();
/// assert!(view.contains("apple"));
/// assert!(RibbonRef::deserialize(BorrowedBytesDeserializer::<Error>::new(b"not a filter")).is_err());
/// # }
/// ```
#[cfg(feature = "serde")]
mod serde_impls {
    use super::{Ribbon, RibbonRef};
    use crate::core::prelude::*;
    use core::fmt;
    use serde::de::{self, Deserializer, SeqAccess, Visitor};
    use serde::{Deserialize, Serialize, Serializer};

    impl Serialize for Ribbon {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.as_bytes())
        }
    }

    impl Serialize for RibbonRef<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.as_bytes())
        }
    }

    /// Owned bytes from bytes or a sequence of `u8`.
    struct OwnedBytes;

    impl<'de> Visitor<'de> for OwnedBytes {
        type Value = Ribbon;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of a standalone Ribbon filter")
        }

        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Ribbon, E> {
            Ribbon::from_bytes(v).map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ribbon, A::Error> {
            // The hint is the format's word: cap what it reserves.
            let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
            while let Some(b) = seq.next_element::<u8>()? {
                bytes.push(b);
            }
            self.visit_bytes(&bytes)
        }
    }

    impl<'de> Deserialize<'de> for Ribbon {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(OwnedBytes)
        }
    }

    /// Borrowed bytes only: a zero-copy view needs the format's own bytes.
    struct BorrowedBytes;

    impl<'de> Visitor<'de> for BorrowedBytes {
        type Value = RibbonRef<'de>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("borrowed bytes of a standalone Ribbon filter")
        }

        fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<RibbonRef<'de>, E> {
            RibbonRef::from_bytes(v).map_err(E::custom)
        }
    }

    impl<'de: 'a, 'a> Deserialize<'de> for RibbonRef<'a> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(BorrowedBytes)
        }
    }
}
