//! Sizing and construction (RocksDB's `LegacyBloomBitsBuilder`,
//! `table/block_based/filter_policy.cc`).

use super::probe::MAX_TOTAL_BITS;
use super::{choose_num_probes, trailer, LegacyLocalityBloomImpl, LOG2_CACHE_LINE_BYTES};
use crate::core::prelude::*;
use crate::rocksdb::trailer::METADATA_LEN;

/// Legacy Bloom builder settings (RocksDB's `LegacyBloomBitsBuilder`)
/// expressed on 32-bit `BloomHash` key hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyBloomBuilder {
    bits_per_key: i32,
    num_probes: i32,
}

impl LegacyBloomBuilder {
    /// A builder for `bits_per_key` whole bits per key (RocksDB's filter
    /// policy passes `(millibits + 500) / 1000`, at least 1). Values below 1
    /// are raised to 1 (RocksDB asserts non-zero).
    #[must_use]
    pub fn new(bits_per_key: i32) -> Self {
        let bits_per_key = bits_per_key.max(1);
        LegacyBloomBuilder {
            bits_per_key,
            num_probes: choose_num_probes(bits_per_key),
        }
    }

    /// Whole bits per key (sanitized).
    #[must_use]
    pub fn bits_per_key(&self) -> i32 {
        self.bits_per_key
    }

    /// Probes per key the builder writes.
    #[must_use]
    pub fn num_probes(&self) -> i32 {
        self.num_probes
    }

    /// `(total_bits, num_lines)` for `num_entries` keys with lines of
    /// `2^log2_cache_line_bytes` bytes; `(0, 0)` for zero entries.
    fn geometry(&self, num_entries: usize, log2_cache_line_bytes: u32) -> (u32, u32) {
        if num_entries == 0 {
            return (0, 0);
        }
        // size_t arithmetic, wrapping like C++ (int bits_per_key converts to size_t).
        let bits = num_entries.wrapping_mul(self.bits_per_key as usize);
        // Fits: capped at MAX_TOTAL_BITS < 2^32.
        #[allow(clippy::cast_possible_truncation)]
        let total_bits = (bits as u64).min(MAX_TOTAL_BITS) as u32;
        let line_bits = 8u32 << log2_cache_line_bytes;
        let mut num_lines = total_bits.div_ceil(line_bits);
        // Odd, so that more hash bits take part in choosing the line.
        if num_lines & 1 == 0 {
            num_lines += 1;
        }
        (num_lines.wrapping_mul(line_bits), num_lines)
    }

    /// Filter size in bytes, trailer included, for `num_entries`
    /// (deduplicated) keys: `total_bits / 8 + 5` (just 5 for zero entries,
    /// although [`build`](Self::build) then returns an empty filter).
    #[must_use]
    pub fn calculate_space(&self, num_entries: usize) -> usize {
        let (total_bits, _) = self.geometry(num_entries, LOG2_CACHE_LINE_BYTES);
        (total_bits / 8) as usize + METADATA_LEN
    }

    /// Largest key count `n >= 1` with `calculate_space(n) <= bytes`, or 0
    /// if none, searching down from `min(bytes * 8, 0xffff0000) /
    /// bits_per_key + 1` as RocksDB does.
    #[must_use]
    pub fn approximate_num_entries(&self, bytes: usize) -> usize {
        // Capped below 2^32.
        #[allow(clippy::cast_possible_truncation)]
        let total_bits = (bytes.wrapping_mul(8) as u64).min(MAX_TOTAL_BITS) as u32;
        #[allow(clippy::cast_sign_loss)]
        let high = total_bits / self.bits_per_key as u32 + 1;
        let mut n = high;
        while n >= 1 {
            if self.calculate_space(n as usize) <= bytes {
                break;
            }
            n -= 1;
        }
        n as usize
    }

    /// Estimated FP rate of a filter of `len_with_metadata` bytes holding
    /// `keys` keys; trailer-only sizes (`<= 5`) give 1.0 with keys and 0.0
    /// without.
    #[must_use]
    pub fn estimated_fp_rate(&self, keys: usize, len_with_metadata: usize) -> f64 {
        if let Some(rate) = crate::rocksdb::trailer::trailer_only_fp_rate(keys, len_with_metadata) {
            return rate;
        }
        LegacyLocalityBloomImpl::estimated_fp_rate(keys, len_with_metadata - METADATA_LEN, self.num_probes)
    }

    /// The filter block contents RocksDB's legacy builder `Finish` produces
    /// (with 64-byte cache lines) for these 32-bit key hashes (already
    /// deduplicated by the caller; order does not matter).
    ///
    /// Zero hashes give an empty vector (RocksDB's "always false" filter).
    /// Otherwise [`calculate_space`](Self::calculate_space) bytes: the
    /// lines, `num_probes`, then `num_lines` as little-endian `u32`.
    #[must_use]
    pub fn build(&self, hashes: &[u32]) -> Vec<u8> {
        self.build_with_log2_cache_line(hashes, LOG2_CACHE_LINE_BYTES)
    }

    /// Like [`build`](Self::build) but with the cache line size of another
    /// RocksDB platform: `2^log2_cache_line_bytes` bytes (7 for
    /// aarch64/ppc64, 8 for s390x). Values above 8 are treated as 8.
    #[must_use]
    pub fn build_with_log2_cache_line(&self, hashes: &[u32], log2_cache_line_bytes: u32) -> Vec<u8> {
        let log2 = log2_cache_line_bytes.min(8);
        if hashes.is_empty() {
            return Vec::new();
        }
        // RocksDB passes the count through `static_cast<int>` here.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_possible_wrap,
            clippy::cast_sign_loss
        )]
        let num_entries = hashes.len() as i32 as isize as usize;
        let (total_bits, num_lines) = self.geometry(num_entries, log2);
        let len = (total_bits / 8) as usize;
        let mut buf = vec![0u8; len + METADATA_LEN];
        if total_bits != 0 && num_lines != 0 {
            for &h in hashes {
                LegacyLocalityBloomImpl::add_hash(h, num_lines, self.num_probes, &mut buf[..len], log2);
            }
        }
        buf[len..].copy_from_slice(&trailer::encode(self.num_probes, num_lines));
        buf
    }
}

/// Filter size (trailer included) for `num_entries` keys at `bits_per_key`;
/// see [`LegacyBloomBuilder::calculate_space`].
#[must_use]
pub fn calculate_space(num_entries: usize, bits_per_key: i32) -> usize {
    LegacyBloomBuilder::new(bits_per_key).calculate_space(num_entries)
}

/// Filter block contents for these deduplicated `BloomHash` key hashes at
/// `bits_per_key` whole bits per key; see [`LegacyBloomBuilder::build`].
#[must_use]
pub fn build(hashes: &[u32], bits_per_key: i32) -> Vec<u8> {
    LegacyBloomBuilder::new(bits_per_key).build(hashes)
}

/// Keys that fit in `bytes` bytes at `bits_per_key`; see
/// [`LegacyBloomBuilder::approximate_num_entries`].
#[must_use]
pub fn approximate_num_entries(bytes: usize, bits_per_key: i32) -> usize {
    LegacyBloomBuilder::new(bits_per_key).approximate_num_entries(bytes)
}

/// Estimated FP rate of a `len_with_metadata`-byte filter with
/// `num_entries` keys at `bits_per_key`; see
/// [`LegacyBloomBuilder::estimated_fp_rate`].
#[must_use]
pub fn estimated_fp_rate(num_entries: usize, len_with_metadata: usize, bits_per_key: i32) -> f64 {
    LegacyBloomBuilder::new(bits_per_key).estimated_fp_rate(num_entries, len_with_metadata)
}
