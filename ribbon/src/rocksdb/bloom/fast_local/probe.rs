//! The FastLocalBloom probing primitives (RocksDB's `FastLocalBloomImpl`,
//! `util/bloom_impl.h`).

use super::CACHE_LINE_BYTES;
use crate::core::arch::{self, BloomKernel};
use crate::core::math::fast_range32;
use crate::rocksdb::bloom::math::BloomMath;

/// The FastLocalBloom probing primitives (all associated functions).
///
/// `data` slices are the filter data without trailer; `len_bytes` is its
/// length as RocksDB sees it (`u32`). Cache lines are 64 bytes; `len_bytes`
/// need not be a multiple of 64 (the tail is unused) but should be at least
/// 64. Where RocksDB would touch memory outside `data` (contract violations
/// such as `len_bytes > data.len()` or `len_bytes < 64`) these functions
/// stay inside `data`: adds skip such bits and queries treat them as set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FastLocalBloomImpl;

impl FastLocalBloomImpl {
    /// Estimated FP rate for `keys` keys in `bytes` bytes of filter data
    /// (without trailer) with `num_probes` probes and `hash_bits`-bit key
    /// hashes: cache-local Bloom rate (512-bit lines) combined with the
    /// fingerprint-collision rate. Only meant for user feedback.
    #[must_use]
    pub fn estimated_fp_rate(keys: usize, bytes: usize, num_probes: i32, hash_bits: i32) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let bits_per_key = 8.0 * bytes as f64 / keys as f64;
        BloomMath::independent_probability_sum(
            BloomMath::cache_local_fp_rate(bits_per_key, num_probes, 512),
            BloomMath::fingerprint_fp_rate(keys, hash_bits),
        )
    }

    /// Number of probes RocksDB uses for a given budget in thousandths of a
    /// bit per key: the empirically most accurate choice for this
    /// implementation, from 1 (≤ 2080) up to 24 (> 50000). Any input is
    /// accepted (≤ 2080, including negative, gives 1).
    #[must_use]
    pub fn choose_num_probes(millibits_per_key: i32) -> i32 {
        match millibits_per_key {
            i32::MIN..=2080 => 1,
            2081..=3580 => 2,
            3581..=5100 => 3,
            5101..=6640 => 4,
            6641..=8300 => 5,
            8301..=10070 => 6,
            10071..=11720 => 7,
            11721..=14001 => 8,
            14002..=16050 => 9,
            16051..=18300 => 10,
            18301..=22001 => 11,
            22002..=25501 => 12,
            50001..=i32::MAX => 24,
            // 25502..=50000: roughly optimal, e.g. 28000 -> 12, 28001 -> 13.
            m => (m - 1) / 2000 - 1,
        }
    }

    /// Byte offset of the 64-byte cache line that `h1` selects in a filter
    /// of `len_bytes` bytes: `fast_range32(h1, len_bytes / 64) * 64`.
    #[inline]
    #[must_use]
    pub fn cache_line_offset(h1: u32, len_bytes: u32) -> u32 {
        fast_range32(h1, len_bytes >> 6) << 6
    }

    /// Adds a key hash `(h1, h2)` to the filter `data` of `len_bytes` bytes.
    #[inline]
    pub fn add_hash(h1: u32, h2: u32, len_bytes: u32, num_probes: i32, data: &mut [u8]) {
        let offset = Self::cache_line_offset(h1, len_bytes) as usize;
        if let Some(line) = data.get_mut(offset..) {
            Self::add_hash_prepared(h2, num_probes, line);
        }
    }

    /// Sets the `num_probes` bits `h2` selects in the cache line starting at
    /// `data_at_line[0]` (normally 64 bytes; bits beyond a shorter slice are
    /// skipped). `num_probes <= 0` sets nothing.
    #[inline]
    pub fn add_hash_prepared(h2: u32, num_probes: i32, data_at_line: &mut [u8]) {
        if let Some(line) = data_at_line.first_chunk_mut::<CACHE_LINE_BYTES>() {
            for bit in arch::probe_bits(h2, num_probes) {
                line[bit >> 3] |= 1u8 << (bit & 7);
            }
        } else {
            for bit in arch::probe_bits(h2, num_probes) {
                if let Some(byte) = data_at_line.get_mut(bit >> 3) {
                    *byte |= 1u8 << (bit & 7);
                }
            }
        }
    }

    /// First half of a two-step query or add: returns the byte offset of the
    /// cache line `h1` selects (see
    /// [`cache_line_offset`](Self::cache_line_offset)) and hints the CPU to
    /// prefetch that line, so that many keys can be prepared before any is
    /// checked.
    #[inline]
    #[must_use]
    pub fn prepare_hash(h1: u32, len_bytes: u32, data: &[u8]) -> u32 {
        let offset = Self::cache_line_offset(h1, len_bytes);
        arch::prefetch_range(data, offset as usize, CACHE_LINE_BYTES);
        offset
    }

    /// Whether a key hash `(h1, h2)` may be in the filter `data` of
    /// `len_bytes` bytes (false means definitely not added).
    #[inline]
    #[must_use]
    pub fn hash_may_match(h1: u32, h2: u32, len_bytes: u32, num_probes: i32, data: &[u8]) -> bool {
        Self::hash_may_match_with(BloomKernel::detected(), h1, h2, len_bytes, num_probes, data)
    }

    /// [`hash_may_match`](Self::hash_may_match) with a given kernel.
    #[inline]
    #[must_use]
    pub fn hash_may_match_with(
        kernel: BloomKernel,
        h1: u32,
        h2: u32,
        len_bytes: u32,
        num_probes: i32,
        data: &[u8],
    ) -> bool {
        let offset = Self::cache_line_offset(h1, len_bytes) as usize;
        match data.get(offset..) {
            Some(line) => Self::hash_may_match_prepared_with(kernel, h2, num_probes, line),
            None => true,
        }
    }

    /// Second half of a query: whether all `num_probes` bits `h2` selects
    /// are set in the cache line starting at `data_at_line[0]`. Bits beyond
    /// a slice shorter than 64 bytes count as set; `num_probes <= 0` gives
    /// true. Uses the fastest kernel this CPU runs
    /// ([`BloomKernel::detected`]).
    #[inline]
    #[must_use]
    pub fn hash_may_match_prepared(h2: u32, num_probes: i32, data_at_line: &[u8]) -> bool {
        Self::hash_may_match_prepared_with(BloomKernel::detected(), h2, num_probes, data_at_line)
    }

    /// [`hash_may_match_prepared`](Self::hash_may_match_prepared) with a
    /// given kernel (every kernel gives the same answers).
    #[inline(always)]
    #[must_use]
    pub fn hash_may_match_prepared_with(
        kernel: BloomKernel,
        h2: u32,
        num_probes: i32,
        data_at_line: &[u8],
    ) -> bool {
        if let Some(line) = data_at_line.first_chunk::<CACHE_LINE_BYTES>() {
            return kernel.line_may_match(h2, num_probes, line);
        }
        // A corrupt filter shorter than one line: missing bits count as set.
        arch::probe_bits(h2, num_probes).all(|bit| {
            data_at_line
                .get(bit >> 3)
                .is_none_or(|byte| byte & (1u8 << (bit & 7)) != 0)
        })
    }
}
