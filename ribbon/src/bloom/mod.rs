// Ported from RocksDB 11.8.1: util/bloom_impl.h, table/block_based/filter_policy.cc (Bloom parts).

//! RocksDB's two Bloom filter formats for block-based tables, bit for bit.
//!
//! * **FastLocalBloom** ([`fast_local`]), written when the table's
//!   `format_version >= 5` and the policy is a Bloom filter (and as the
//!   Ribbon builder's fallback). Keys are hashed with the 64-bit
//!   `GetSliceHash64` ([`crate::hash::get_slice_hash64`]); the low 32 bits
//!   pick a 64-byte block with `fast_range32`, the high 32 bits generate
//!   the bit positions inside the block by repeated multiplication with
//!   `0x9e3779b9`. The size is chosen from *milli*bits per key.
//! * **Legacy Bloom** ([`legacy`]), written when `format_version < 5`. Keys
//!   are hashed with the 32-bit `BloomHash` ([`crate::hash::bloom_hash`]);
//!   the hash modulo an odd number of 64-byte cache lines picks the line and
//!   double hashing (delta = hash rotated right by 17) picks up to 30 bits
//!   inside it. The size comes from *whole* bits per key
//!   (`(millibits + 500) / 1000`).
//!
//! Both formats end with a 5-byte trailer ([`METADATA_LEN`]); its first
//! byte, read as `i8`, tells the formats apart (`-2` is the Standard128
//! Ribbon filter, handled elsewhere):
//!
//! | offset from trailer start | legacy Bloom             | FastLocalBloom                           |
//! |---------------------------|--------------------------|------------------------------------------|
//! | 0                         | `num_probes` (1..=127)   | `0xFF` (`-1`, newer-Bloom marker)        |
//! | 1                         | `num_lines` (u32, LE)    | sub-implementation, `0` = FastLocalBloom |
//! | 2                         | ″                        | bits 5..8: log2(block bytes) − 6 (only 0 is supported); bits 0..5: `num_probes` (1..=30) |
//! | 3..5                      | ″                        | reserved, must be `0`                    |
//!
//! A filter of at most 5 bytes (in particular the empty filter both
//! builders produce for zero keys) matches nothing; a trailer byte 0 of `0`
//! or of any negative value other than `-1`/`-2` matches everything. The
//! `parse_trailer` functions in each module state the full rules and return
//! a [`Parsed`]: [`legacy::parse_trailer`] applies RocksDB's top-level
//! dispatch (and answers [`Parsed::OtherFormat`] for `-1`/`-2`), and
//! [`fast_local::parse_trailer`] handles the `-1` family.
//!
//! Readers accept any bytes: corrupt or truncated filters never panic and
//! never read outside the given slice. Where RocksDB itself would read
//! outside the filter (it trusts the trailer), these readers answer "may
//! match" instead; each such case is documented where it occurs.

pub mod fast_local;
pub mod legacy;
pub mod math;

pub use fast_local::{FastLocalBloomBuilder, FastLocalBloomImpl, FastLocalBloomReader};
pub use legacy::{LegacyBloomBuilder, LegacyBloomReader, LegacyLocalityBloomImpl};
pub use math::BloomMath;

/// Length in bytes of the trailer ("metadata") that ends every non-empty
/// built-in filter block.
pub const METADATA_LEN: usize = 5;

/// What a filter block's trailer says about how to answer queries.
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
    /// The trailer's marker byte belongs to a different filter
    /// implementation; ask that implementation's parser.
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

/// RocksDB reads a filter's length as `uint32_t`, so for contents of 4 GiB
/// or more it sees only the first `len mod 2^32` bytes. Reproduce that, so
/// the trailer is looked for where RocksDB looks for it.
fn rocksdb_visible(contents: &[u8]) -> &[u8] {
    // Truncation is the point here.
    #[allow(clippy::cast_possible_truncation)]
    let visible = contents.len() as u32 as usize;
    &contents[..visible.min(contents.len())]
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers shared by the Bloom tests (ports of util/bloom_test.cc helpers).

    /// `Key(i, buffer)` from bloom_test.cc: `i` as fixed 32-bit little endian.
    pub fn key(i: i32) -> [u8; 4] {
        i.to_le_bytes()
    }

    /// Tiny deterministic PRNG (SplitMix64) for randomized tests.
    pub struct SplitMix64(pub u64);

    impl SplitMix64 {
        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// `FirstFPs(count)` from bloom_test.cc: indexes `i` of the first
    /// `count` keys `Key(i + 1000000)` that match, comma-separated.
    pub fn first_fps(count: usize, mut matches: impl FnMut(&[u8]) -> bool) -> String {
        let mut found = Vec::new();
        for i in 0..1_000_000 {
            if matches(&key(i + 1_000_000)) {
                found.push(i.to_string());
                if found.len() == count {
                    break;
                }
            }
        }
        found.join(",")
    }

    /// `PackedMatches()` from bloom_test.cc: bit `i` set when
    /// `Key(i + 12345)` matches, for `i` in `0..64`.
    pub fn packed_matches(mut matches: impl FnMut(&[u8]) -> bool) -> u64 {
        (0..64).fold(0u64, |acc, i| {
            if matches(&key(i + 12345)) {
                acc | (1u64 << i)
            } else {
                acc
            }
        })
    }

    /// `FalsePositiveRate()` from bloom_test.cc: fraction of
    /// `Key(i + 1000000000)`, `i` in `0..10000`, that match.
    pub fn false_positive_rate(mut matches: impl FnMut(&[u8]) -> bool) -> f64 {
        let hits = (0..10_000).filter(|&i| matches(&key(i + 1_000_000_000))).count();
        hits as f64 / 10_000.0
    }

    /// `NextLength` from bloom_test.cc.
    pub fn next_length(length: i32) -> i32 {
        if length < 10 {
            length + 1
        } else if length < 100 {
            length + 10
        } else if length < 1000 {
            length + 100
        } else {
            length + 1000
        }
    }

    /// `RawFilterTester` from bloom_test.cc: a 3000-byte buffer whose last 5
    /// bytes are the trailer; returns the tail of the requested length.
    pub struct RawFilter {
        pub data: [u8; 3000],
    }

    impl RawFilter {
        pub fn new() -> Self {
            RawFilter { data: [0; 3000] }
        }

        /// `ResetNoFill`: writes `num_probes` byte and `num_lines` (LE) into
        /// the trailer; `len_without_metadata` wraps like the C++ `uint32_t`.
        pub fn reset_no_fill(&mut self, len_without_metadata: u32, num_lines: u32, num_probes: u32) -> &[u8] {
            let n = self.data.len();
            self.data[n - 5] = num_probes as u8;
            self.data[n - 4..].copy_from_slice(&num_lines.to_le_bytes());
            let len = len_without_metadata.wrapping_add(5) as usize;
            &self.data[n - len..]
        }

        /// `Reset`: fill with all-zero or all-one bits, then `reset_no_fill`.
        pub fn reset(
            &mut self,
            len_without_metadata: u32,
            num_lines: u32,
            num_probes: u32,
            fill_ones: bool,
        ) -> &[u8] {
            self.data.fill(if fill_ones { 0xff } else { 0 });
            self.reset_no_fill(len_without_metadata, num_lines, num_probes)
        }

        /// `ResetWeirdFill`: byte `i` is `0x7b7b >> (i % 7)` (as `char`).
        pub fn reset_weird_fill(
            &mut self,
            len_without_metadata: u32,
            num_lines: u32,
            num_probes: u32,
        ) -> &[u8] {
            for (i, b) in self.data.iter_mut().enumerate() {
                *b = (0x7b7bu32 >> (i % 7)) as u8;
            }
            self.reset_no_fill(len_without_metadata, num_lines, num_probes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_prefix_is_identity_below_4gib() {
        let v = [1u8, 2, 3];
        assert_eq!(rocksdb_visible(&v), &v[..]);
        assert_eq!(rocksdb_visible(&[]), &[] as &[u8]);
    }

    #[test]
    fn dispatch_matches_rocksdb_marker_rules() {
        // A FastLocalBloom filter is "other format" to the legacy parser and
        // vice versa; too-short contents are always-false for both.
        let fast = fast_local::build(&[1, 2, 3], 10_000);
        assert!(matches!(legacy::parse_trailer(&fast), Parsed::OtherFormat));
        assert!(matches!(fast_local::parse_trailer(&fast), Parsed::Reader(_)));
        let old = legacy::build(&[1, 2, 3], 10);
        assert!(matches!(fast_local::parse_trailer(&old), Parsed::OtherFormat));
        assert!(matches!(legacy::parse_trailer(&old), Parsed::Reader(_)));
        for short in 0..=METADATA_LEN {
            let v = vec![0xFFu8; short];
            assert_eq!(legacy::parse_trailer(&v), Parsed::AlwaysFalse);
            assert_eq!(fast_local::parse_trailer(&v), Parsed::AlwaysFalse);
        }
        // Ribbon marker (-2) is someone else's.
        let ribbon = [0u8, 0, 0, 0, 0xFE, 0, 2, 0, 0];
        assert_eq!(legacy::parse_trailer(&ribbon), Parsed::OtherFormat);
        assert_eq!(fast_local::parse_trailer(&ribbon), Parsed::OtherFormat);
    }
}
