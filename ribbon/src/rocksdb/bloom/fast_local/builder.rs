//! Sizing and construction (RocksDB's `FastLocalBloomBitsBuilder`,
//! `table/block_based/filter_policy.cc`).

use super::{trailer, FastLocalBloomImpl, MAX_DATA_LEN};
use crate::core::math::{lower32of64, upper32of64};
use crate::core::prelude::*;
use crate::rocksdb::trailer::METADATA_LEN;

/// How many entries the builder keeps prepared (prefetched) ahead.
const ADD_BATCH: usize = 8;

/// Clamps to the smallest millibits/key RocksDB's builder accepts (it
/// asserts `>= 1000`; its filter policy never passes less).
fn sanitize_millibits(millibits_per_key: i32) -> i32 {
    millibits_per_key.max(1000)
}

/// FastLocalBloom builder settings: RocksDB's `FastLocalBloomBitsBuilder`
/// expressed on 64-bit key hashes (without cache charging or
/// construction-corruption checks, which do not change the bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastLocalBloomBuilder {
    millibits_per_key: i32,
    optimize_filters_for_memory: bool,
}

impl FastLocalBloomBuilder {
    /// A builder for `millibits_per_key` thousandths of a bit per key, with
    /// `optimize_filters_for_memory` off (how bloom_test.cc's schema tests
    /// run). Values below 1000 are raised to 1000 (RocksDB asserts
    /// `>= 1000`).
    #[must_use]
    pub fn new(millibits_per_key: i32) -> Self {
        FastLocalBloomBuilder {
            millibits_per_key: sanitize_millibits(millibits_per_key),
            optimize_filters_for_memory: false,
        }
    }

    /// Mirrors `BlockBasedTableOptions::optimize_filters_for_memory`
    /// (RocksDB's default is `true`). With `ROCKSDB_MALLOC_USABLE_SIZE`
    /// undefined it never changes the filter size, but when on, `num_probes`
    /// is chosen from the *actual* millibits per key of the rounded-up size
    /// (`(len - 5) * 8000 / num_entries`) instead of the configured
    /// millibits per key, which can give a different `num_probes` and hence
    /// different bytes.
    #[must_use]
    pub fn with_optimize_filters_for_memory(mut self, on: bool) -> Self {
        self.optimize_filters_for_memory = on;
        self
    }

    /// The (sanitized) millibits per key.
    #[must_use]
    pub fn millibits_per_key(&self) -> i32 {
        self.millibits_per_key
    }

    /// Whether `optimize_filters_for_memory` is on.
    #[must_use]
    pub fn optimize_filters_for_memory(&self) -> bool {
        self.optimize_filters_for_memory
    }

    /// Filter size in bytes, including the 5-byte trailer, for
    /// `num_entries` (deduplicated) keys: `ceil(n * millibits / 8000)`
    /// (with RocksDB's wrapping 64-bit arithmetic) capped at
    /// [`MAX_DATA_LEN`], rounded up to a multiple of 64, plus 5.
    /// (Zero entries give 5 here although [`build`](Self::build) then
    /// returns an empty filter, as in RocksDB.)
    #[must_use]
    pub fn calculate_space(&self, num_entries: usize) -> usize {
        let millibits = i64::from(self.millibits_per_key) as u64;
        let raw = (num_entries as u64).wrapping_mul(millibits).wrapping_add(7999) / 8000;
        let raw = raw.min(MAX_DATA_LEN as u64) as usize;
        ((raw + 63) & !63) + METADATA_LEN
    }

    /// RocksDB's `RoundDownUsableSpace`: the largest valid filter size
    /// (with trailer) not above `available_size` (which must be >= 5).
    fn round_down_usable_space(available_size: usize) -> usize {
        let rv = (available_size - METADATA_LEN).min(MAX_DATA_LEN) & !63;
        rv + METADATA_LEN
    }

    /// How many keys fit in a filter of `bytes` bytes (trailer included):
    /// `8000 * usable_data_bytes / millibits_per_key`, where the usable data
    /// length is `bytes - 5` rounded down to a multiple of 64 and capped
    /// (0 when `bytes < 5`).
    #[must_use]
    pub fn approximate_num_entries(&self, bytes: usize) -> usize {
        let bytes_no_meta = if bytes >= METADATA_LEN {
            Self::round_down_usable_space(bytes) - METADATA_LEN
        } else {
            0
        };
        let millibits = i64::from(self.millibits_per_key) as u64;
        (8000u64.wrapping_mul(bytes_no_meta as u64) / millibits) as usize
    }

    /// `num_probes` the builder writes for `keys` keys in a filter of
    /// `len_with_metadata` bytes (see
    /// [`with_optimize_filters_for_memory`](Self::with_optimize_filters_for_memory)).
    #[must_use]
    pub fn num_probes(&self, keys: usize, len_with_metadata: usize) -> i32 {
        let millibits_per_key = if self.optimize_filters_for_memory {
            let millibits = (len_with_metadata.saturating_sub(METADATA_LEN) as u64).wrapping_mul(8000);
            // RocksDB truncates the quotient to `int`.
            #[allow(clippy::cast_possible_truncation)]
            let actual = (millibits / keys.max(1) as u64) as i32;
            actual
        } else {
            self.millibits_per_key
        };
        FastLocalBloomImpl::choose_num_probes(millibits_per_key)
    }

    /// Estimated FP rate of a filter of `len_with_metadata` bytes holding
    /// `keys` keys with 64-bit hashes. Trailer-only sizes (`<= 5`) give 1.0
    /// with keys and 0.0 without.
    #[must_use]
    pub fn estimated_fp_rate(&self, keys: usize, len_with_metadata: usize) -> f64 {
        if let Some(rate) = crate::rocksdb::trailer::trailer_only_fp_rate(keys, len_with_metadata) {
            return rate;
        }
        let num_probes = self.num_probes(keys, len_with_metadata);
        FastLocalBloomImpl::estimated_fp_rate(keys, len_with_metadata - METADATA_LEN, num_probes, 64)
    }

    /// The filter block contents RocksDB's builder `Finish` produces for
    /// these key hashes (already deduplicated by the caller, in insertion
    /// order; the order does not change the result).
    ///
    /// Zero hashes give an empty vector (RocksDB's "always false" filter).
    /// Otherwise the result is [`calculate_space`](Self::calculate_space)
    /// bytes: the bit array, then `[0xFF, 0x00, num_probes, 0x00, 0x00]`.
    #[must_use]
    pub fn build(&self, hashes: &[u64]) -> Vec<u8> {
        if hashes.is_empty() {
            return Vec::new();
        }
        let len_with_metadata = self.calculate_space(hashes.len());
        let num_probes = self.num_probes(hashes.len(), len_with_metadata);
        let len = len_with_metadata - METADATA_LEN;
        let mut buf = vec![0u8; len_with_metadata];
        // `len <= MAX_DATA_LEN < 2^32`.
        #[allow(clippy::cast_possible_truncation)]
        add_all(&mut buf[..len], len as u32, num_probes, hashes);
        buf[len..].copy_from_slice(&trailer::encode(num_probes));
        buf
    }
}

/// Adds every hash, keeping [`ADD_BATCH`] cache lines prefetched ahead of use.
fn add_all(data: &mut [u8], len: u32, num_probes: i32, hashes: &[u64]) {
    let mut offsets = [0u32; ADD_BATCH];
    let mut h2s = [0u32; ADD_BATCH];
    for (i, &h) in hashes.iter().enumerate() {
        let slot = i % ADD_BATCH;
        if i >= ADD_BATCH {
            if let Some(line) = data.get_mut(offsets[slot] as usize..) {
                FastLocalBloomImpl::add_hash_prepared(h2s[slot], num_probes, line);
            }
        }
        offsets[slot] = FastLocalBloomImpl::prepare_hash(lower32of64(h), len, data);
        h2s[slot] = upper32of64(h);
    }
    for i in hashes.len().saturating_sub(ADD_BATCH)..hashes.len() {
        let slot = i % ADD_BATCH;
        if let Some(line) = data.get_mut(offsets[slot] as usize..) {
            FastLocalBloomImpl::add_hash_prepared(h2s[slot], num_probes, line);
        }
    }
}

/// Filter size in bytes (trailer included) for `num_entries` keys at
/// `millibits_per_key`; see [`FastLocalBloomBuilder::calculate_space`].
/// The `optimize_filters_for_memory` rounding of RocksDB is not modelled
/// because it needs `malloc_usable_size` (`ROCKSDB_MALLOC_USABLE_SIZE`),
/// which the reproduced RocksDB build does not define.
#[must_use]
pub fn calculate_space(num_entries: usize, millibits_per_key: i32) -> usize {
    FastLocalBloomBuilder::new(millibits_per_key).calculate_space(num_entries)
}

/// Filter block contents for these deduplicated 64-bit key hashes at
/// `millibits_per_key`, with `optimize_filters_for_memory` off; see
/// [`FastLocalBloomBuilder::build`].
#[must_use]
pub fn build(hashes: &[u64], millibits_per_key: i32) -> Vec<u8> {
    FastLocalBloomBuilder::new(millibits_per_key).build(hashes)
}

/// Keys that fit in `bytes` bytes (trailer included) at
/// `millibits_per_key`; see [`FastLocalBloomBuilder::approximate_num_entries`].
#[must_use]
pub fn approximate_num_entries(bytes: usize, millibits_per_key: i32) -> usize {
    FastLocalBloomBuilder::new(millibits_per_key).approximate_num_entries(bytes)
}

/// Estimated FP rate of a filter of `len_with_metadata` bytes with
/// `num_entries` keys at `millibits_per_key` (`optimize_filters_for_memory`
/// off); see [`FastLocalBloomBuilder::estimated_fp_rate`].
#[must_use]
pub fn estimated_fp_rate(num_entries: usize, len_with_metadata: usize, millibits_per_key: i32) -> f64 {
    FastLocalBloomBuilder::new(millibits_per_key).estimated_fp_rate(num_entries, len_with_metadata)
}
