//! The Bloom filters' tests, ports of `util/bloom_test.cc`: they build
//! through RocksDB's builder and read through its dispatcher, so they are
//! tests of this module's layers together, kept out of `bloom` (which the
//! builder and the policies use).

#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::prelude::*;

mod fast_local;
mod legacy;

pub use crate::test_support::keys::Rng;
pub use crate::test_support::stats::{assert_binomial, FREQUENT_SIGMAS};

/// Whether `key` may match `filter` as RocksDB's reader answers: through
/// the one dispatcher, [`crate::rocksdb::format::FilterReader`].
pub fn rocksdb_matches(filter: &[u8], key: &[u8]) -> bool {
    crate::rocksdb::format::FilterReader::new(filter).may_match(key)
}

/// The filter RocksDB's builder of `kind` makes of `keys` (hashed, with
/// adjacent duplicates collapsed, as FullBloomTest adds them).
pub fn build_keys(
    kind: crate::rocksdb::policy::FilterKind,
    keys: impl IntoIterator<Item = Vec<u8>>,
) -> Vec<u8> {
    let mut builder = crate::rocksdb::builder::FilterBuilder::for_kind(kind);
    for k in keys {
        builder.add_key(&k);
    }
    builder.finish()
}

/// `Key(i, buffer)` from bloom_test.cc: `i` as fixed 32-bit little endian.
pub fn key(i: i32) -> [u8; 4] {
    i.to_le_bytes()
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
    pub fn reset_weird_fill(&mut self, len_without_metadata: u32, num_lines: u32, num_probes: u32) -> &[u8] {
        for (i, b) in self.data.iter_mut().enumerate() {
            *b = (0x7b7bu32 >> (i % 7)) as u8;
        }
        self.reset_no_fill(len_without_metadata, num_lines, num_probes)
    }
}

/// FullBloomTest.FullVaryingLengths at 10 bits/key: for key counts from 1
/// to 10000, the filter `build` makes of keys `Key(0..length)` is at most
/// 10 bits per key plus two cache lines, has no false negative (read
/// through RocksDB's dispatcher), and an FP rate of at most 2%; at most one
/// length in six is "mediocre" (over 1.25%).
pub fn check_varying_lengths(build: impl Fn(&[Vec<u8>]) -> Vec<u8>) {
    let mut mediocre = 0;
    let mut good = 0;
    let mut length = 1;
    while length <= 10_000 {
        let keys: Vec<Vec<u8>> = (0..length).map(|i| key(i).to_vec()).collect();
        let filter = build(&keys);
        assert!(filter.len() <= (length as usize * 10 / 8) + 64 * 2 + 5);
        let r = crate::rocksdb::format::FilterReader::new(&filter);
        for (i, k) in keys.iter().enumerate() {
            assert!(r.may_match(k), "length {length}; key {i}");
        }
        let rate = false_positive_rate(|k| r.may_match(k));
        assert!(rate <= 0.02, "length {length}: {rate}");
        if rate > 0.0125 {
            mediocre += 1;
        } else {
            good += 1;
        }
        length = next_length(length);
    }
    assert!(mediocre <= good / 5, "{good} good, {mediocre} mediocre");
}

/// FullBloomTest.FilterSize: `approximate_num_entries(calculate_space(n))`
/// is at least `n` and gives the same space, and the space never shrinks
/// as `n` grows, up to `usize` overflow (no arithmetic overflow on the way).
pub fn check_filter_size_consistency(
    calculate_space: impl Fn(usize) -> usize,
    approximate_num_entries: impl Fn(usize) -> usize,
    what: &str,
) {
    let mut n = 1usize;
    let mut space = 0;
    while n < 1_000_000 {
        space = calculate_space(n);
        let n2 = approximate_num_entries(space);
        assert!(n2 >= n, "{what} n {n}");
        assert_eq!(calculate_space(n2), space, "{what} n {n}");
        n += 1 + n / 1000;
    }
    while let Some(next) = n.checked_add(n / 3) {
        let space2 = calculate_space(n);
        assert!(space2 >= space, "{what} n {n}");
        space = space2;
        n = next;
    }
}
