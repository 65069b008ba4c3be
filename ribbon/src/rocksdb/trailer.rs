//! The 5-byte metadata trailer that ends every built-in filter block, and
//! the rules that hold for every format: where the trailer is, what its
//! first byte (the marker) says, and what a block too short for one means.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`kMetadataLen`, `GetBuiltinFilterBitsReader`).
//!
//! ```text
//!   [ format data: len - 5 bytes ][ marker ][ 4 bytes the format owns ]
//! ```
//!
//! | marker (as `i8`) | format                        | trailer owner                          |
//! |------------------|-------------------------------|----------------------------------------|
//! | 1..=127          | legacy Bloom, that many probes | [`crate::rocksdb::bloom::legacy`]              |
//! | -1 (`0xFF`)      | "newer Bloom": FastLocalBloom | [`crate::rocksdb::bloom::fast_local`]           |
//! | -2 (`0xFE`)      | Standard128 Ribbon            | [`crate::rocksdb::standard128`]                 |
//! | 0                | zero probes: always true      |                                        |
//! | other negative   | reserved: always true         |                                        |
//!
//! [`crate::rocksdb::format`] dispatches on the marker (RocksDB's one dispatcher);
//! each format module writes and parses the rest of its own trailer.
//!
//! # Blocks of 4 GiB or more: one rule
//!
//! RocksDB reads a filter block's length as `uint32_t`, so for contents of
//! 4 GiB or more it sees only the first `len mod 2^32` bytes and looks for
//! the trailer there. Every reader in this crate does the same, through
//! [`split`] ([`rocksdb_visible`]): answers equal RocksDB's for any bytes.
//! RocksDB never writes such a block (FastLocalBloom caps its data below
//! 2^32 bytes, Standard128 Ribbon falls back to Bloom above
//! [`crate::rocksdb::standard128::MAX_RIBBON_ENTRIES`] keys), and
//! [`crate::rocksdb::format::FilterReader::parse`] rejects one.

use crate::core::prelude::*;

/// Length in bytes of the trailer ("metadata") that ends every non-empty
/// built-in filter block.
pub const METADATA_LEN: usize = 5;

/// The marker of a FastLocalBloom ("newer Bloom") trailer, `-1` as `i8`.
pub const NEWER_BLOOM_MARKER: u8 = 0xFF;

/// The marker of a Standard128 Ribbon trailer, `-2` as `i8`.
pub const RIBBON_MARKER: u8 = 0xFE;

/// What a trailer's first byte says the block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// 1..=127: legacy Bloom with this many probes.
    LegacyBloom {
        /// Probes per key (1..=127; RocksDB builds at most 30).
        num_probes: i32,
    },
    /// `-1`: the newer Bloom family (FastLocalBloom).
    NewerBloom,
    /// `-2`: Standard128 Ribbon.
    Standard128Ribbon,
    /// `0`: zero probes; every key may match.
    ZeroProbes,
    /// Another negative value: reserved; every key may match.
    Reserved(i8),
}

impl Marker {
    /// Classifies a trailer's first byte.
    #[must_use]
    pub const fn of(byte: u8) -> Self {
        // The marker is a signed byte in RocksDB.
        #[allow(clippy::cast_possible_wrap)]
        let signed = byte as i8;
        match signed {
            0 => Marker::ZeroProbes,
            -1 => Marker::NewerBloom,
            -2 => Marker::Standard128Ribbon,
            n if n > 0 => Marker::LegacyBloom { num_probes: n as i32 },
            n => Marker::Reserved(n),
        }
    }

    /// What the marker names, for messages: "a FastLocalBloom filter", "a
    /// legacy Bloom filter", ...
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Marker::LegacyBloom { .. } => "a legacy Bloom filter".into(),
            Marker::NewerBloom => "a FastLocalBloom filter".into(),
            Marker::Standard128Ribbon => "a Standard128 Ribbon filter".into(),
            Marker::ZeroProbes => "an unknown filter (marker 0)".into(),
            Marker::Reserved(n) => format!("an unknown filter (marker {n})"),
        }
    }
}

/// The prefix of `contents` RocksDB sees: its `uint32_t` length keeps only
/// the first `len mod 2^32` bytes (see the module docs).
#[must_use]
pub fn rocksdb_visible(contents: &[u8]) -> &[u8] {
    // Truncation is the point here.
    #[allow(clippy::cast_possible_truncation)]
    let visible = contents.len() as u32 as usize;
    &contents[..visible.min(contents.len())]
}

/// Splits filter block contents into the format data and the trailer, as
/// RocksDB's readers see them (after [`rocksdb_visible`]). `None` for 5
/// bytes or fewer: a filter of zero keys, which matches nothing whatever
/// the bytes say.
#[must_use]
pub fn split(contents: &[u8]) -> Option<(&[u8], &[u8; METADATA_LEN])> {
    let contents = rocksdb_visible(contents);
    if contents.len() <= METADATA_LEN {
        return None;
    }
    let (data, trailer) = contents.split_at(contents.len() - METADATA_LEN);
    Some((data, trailer.try_into().ok()?))
}

/// The marker of `contents`, if it has a trailer (see [`split`]).
#[must_use]
pub fn marker(contents: &[u8]) -> Option<Marker> {
    split(contents).map(|(_, trailer)| Marker::of(trailer[0]))
}

/// The FP-rate estimate every builder gives for a size that holds only the
/// trailer (`len_with_metadata <= 5`): 1.0 with keys (nothing can be told
/// apart), 0.0 without (the empty filter matches nothing). `None` for sizes
/// with data, whose estimate is the format's.
#[must_use]
pub fn trailer_only_fp_rate(num_entries: usize, len_with_metadata: usize) -> Option<f64> {
    (len_with_metadata <= METADATA_LEN).then_some(if num_entries > 0 { 1.0 } else { 0.0 })
}

/// What a format's trailer parser makes of a filter block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed<R> {
    /// Empty or too short to hold a trailer: treated as a filter built from
    /// zero keys, every query answers "no".
    AlwaysFalse,
    /// Zero probes, a reserved setting or an inconsistent trailer: every
    /// query answers "may match".
    AlwaysTrue,
    /// A filter that is queried with the given reader.
    Reader(R),
    /// The trailer's marker byte belongs to a different format; the
    /// dispatcher ([`crate::rocksdb::format::FilterReader::new`]) asks that format.
    OtherFormat,
}

impl<R> Parsed<R> {
    /// Maps the reader of a [`Parsed::Reader`], keeping the other variants.
    pub fn map<S>(self, f: impl FnOnce(R) -> S) -> Parsed<S> {
        match self {
            Parsed::AlwaysFalse => Parsed::AlwaysFalse,
            Parsed::AlwaysTrue => Parsed::AlwaysTrue,
            Parsed::Reader(r) => Parsed::Reader(f(r)),
            Parsed::OtherFormat => Parsed::OtherFormat,
        }
    }
}

/// The first step of every format's trailer parser: the data and trailer of
/// `contents` when its marker is one `is_mine` accepts, else the
/// [`Parsed`] answer (`AlwaysFalse` without a trailer, `OtherFormat` for
/// another format's marker).
pub(crate) fn claim<R>(
    contents: &[u8],
    is_mine: impl FnOnce(Marker) -> bool,
) -> Result<(&[u8], &[u8; METADATA_LEN]), Parsed<R>> {
    match split(contents) {
        None => Err(Parsed::AlwaysFalse),
        Some((data, trailer)) if is_mine(Marker::of(trailer[0])) => Ok((data, trailer)),
        Some(_) => Err(Parsed::OtherFormat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_classified_as_rocksdb_dispatches() {
        assert_eq!(Marker::of(0), Marker::ZeroProbes);
        assert_eq!(Marker::of(1), Marker::LegacyBloom { num_probes: 1 });
        assert_eq!(Marker::of(127), Marker::LegacyBloom { num_probes: 127 });
        assert_eq!(Marker::of(0xFF), Marker::NewerBloom);
        assert_eq!(Marker::of(0xFE), Marker::Standard128Ribbon);
        assert_eq!(Marker::of(0xFD), Marker::Reserved(-3));
        assert_eq!(Marker::of(0x80), Marker::Reserved(-128));
        assert_eq!(Marker::of(NEWER_BLOOM_MARKER), Marker::NewerBloom);
        assert_eq!(Marker::of(RIBBON_MARKER), Marker::Standard128Ribbon);
    }

    #[test]
    fn split_needs_more_than_a_trailer() {
        for len in 0..=METADATA_LEN {
            assert_eq!(split(&vec![0xFF; len]), None);
            assert_eq!(marker(&vec![0xFF; len]), None);
        }
        let (data, trailer) = split(&[9, 0xFE, 1, 2, 3, 4]).unwrap();
        assert_eq!(data, &[9]);
        assert_eq!(trailer, &[0xFE, 1, 2, 3, 4]);
        assert_eq!(rocksdb_visible(&[1, 2, 3]), &[1, 2, 3]);
    }

    #[test]
    fn trailer_only_sizes_have_a_fixed_estimate() {
        assert_eq!(trailer_only_fp_rate(0, 0), Some(0.0));
        assert_eq!(trailer_only_fp_rate(3, 5), Some(1.0));
        assert_eq!(trailer_only_fp_rate(3, 6), None);
    }

    /// RocksDB's `uint32_t` length: a block of 2^32 + 70 bytes reads as its
    /// first 70. The zeroed allocation is lazily mapped, so this touches one
    /// page.
    #[test]
    #[cfg(all(target_pointer_width = "64", not(miri)))]
    fn blocks_of_4_gib_or_more_are_read_as_rocksdb_truncates_them() {
        let mut big = vec![0u8; (1usize << 32) + 70];
        big[65] = NEWER_BLOOM_MARKER;
        big[67] = 6;
        assert_eq!(rocksdb_visible(&big).len(), 70);
        let (data, trailer) = split(&big).unwrap();
        assert_eq!(data.len(), 65);
        assert_eq!(trailer, &[0xFF, 0, 6, 0, 0]);
    }
}
