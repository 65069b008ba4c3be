//! The legacy cache-local Bloom probing primitives (RocksDB's
//! `LegacyLocalityBloomImpl<false>` and `LegacyNoLocalityBloomImpl::ChooseNumProbes`,
//! `util/bloom_impl.h`).

use crate::core::arch;
use crate::rocksdb::bloom::math::BloomMath;

/// log2 of the cache line size (bytes) this crate builds with, as RocksDB
/// on x86-64 (`CACHE_LINE_SIZE == 64`).
pub const LOG2_CACHE_LINE_BYTES: u32 = 6;

/// Cache line size in bytes this crate builds with.
pub const CACHE_LINE_BYTES: u32 = 1 << LOG2_CACHE_LINE_BYTES;

/// Cap on total filter bits (including temporary computations) RocksDB
/// keeps for compatibility with 32-bit arithmetic.
pub(super) const MAX_TOTAL_BITS: u64 = 0xffff_0000;

/// Number of probes for a legacy Bloom filter at `bits_per_key` whole bits
/// per key (RocksDB's `LegacyNoLocalityBloomImpl::ChooseNumProbes`, used by
/// the legacy builder): `floor(bits_per_key * 0.69)` clamped to `1..=30`.
#[must_use]
pub fn choose_num_probes(bits_per_key: i32) -> i32 {
    // Truncation toward zero, as C++'s static_cast<int>.
    #[allow(clippy::cast_possible_truncation)]
    let probes = (f64::from(bits_per_key) * 0.69) as i32;
    probes.clamp(1, 30)
}

/// Mask selecting a bit address within a line of `2^log2_cache_line_bytes`
/// bytes (all bits for lines of 2^29 bytes or more).
fn bit_mask(log2_cache_line_bytes: u32) -> u32 {
    1u32.checked_shl(log2_cache_line_bytes.saturating_add(3))
        .map_or(u32::MAX, |b| b.wrapping_sub(1))
}

/// The legacy cache-local Bloom primitives (RocksDB's
/// `LegacyLocalityBloomImpl<ExtraRotates = false>`), all associated
/// functions.
///
/// Never touch memory outside the given slices: bits that would fall
/// outside (contract violations, or corrupt filters where RocksDB reads out
/// of bounds) are skipped when adding and count as set when querying;
/// `num_lines == 0` selects line 0 instead of dividing by zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LegacyLocalityBloomImpl;

impl LegacyLocalityBloomImpl {
    /// Estimated FP rate for `keys` keys in `bytes` bytes of filter data
    /// (without trailer) and `num_probes` probes: cache-local rate
    /// (512-bit lines) plus `0.1 / (bits_per_key * 0.75 + 22)` for the
    /// zero-delta flaw, combined with 32-bit fingerprint collisions.
    #[must_use]
    pub fn estimated_fp_rate(keys: usize, bytes: usize, num_probes: i32) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let bits_per_key = 8.0 * bytes as f64 / keys as f64;
        let mut filter_rate = BloomMath::cache_local_fp_rate(bits_per_key, num_probes, 512);
        filter_rate += 0.1 / (bits_per_key * 0.75 + 22.0);
        let fingerprint_rate = BloomMath::fingerprint_fp_rate(keys, 32);
        BloomMath::independent_probability_sum(filter_rate, fingerprint_rate)
    }

    /// Line selected by hash `h`: `h % num_lines` (0 if `num_lines == 0`).
    #[inline]
    #[must_use]
    pub fn get_line(h: u32, num_lines: u32) -> u32 {
        h.checked_rem(num_lines).unwrap_or(0)
    }

    /// Byte offset of the line `h` selects (`u32` arithmetic, wrapping like
    /// RocksDB's shift).
    #[inline]
    fn line_offset(h: u32, num_lines: u32, log2_cache_line_bytes: u32) -> u32 {
        Self::get_line(h, num_lines)
            .checked_shl(log2_cache_line_bytes)
            .unwrap_or(0)
    }

    /// Adds hash `h` to `data` (`num_lines` lines of
    /// `2^log2_cache_line_bytes` bytes).
    pub fn add_hash(h: u32, num_lines: u32, num_probes: i32, data: &mut [u8], log2_cache_line_bytes: u32) {
        let offset = Self::line_offset(h, num_lines, log2_cache_line_bytes) as usize;
        let Some(line) = data.get_mut(offset..) else {
            return;
        };
        let mask = bit_mask(log2_cache_line_bytes);
        let delta = h.rotate_right(17);
        let mut h = h;
        for _ in 0..num_probes {
            let bitpos = (h & mask) as usize;
            if let Some(byte) = line.get_mut(bitpos / 8) {
                *byte |= 1u8 << (bitpos % 8);
            }
            h = h.wrapping_add(delta);
        }
    }

    /// First half of a two-step query: byte offset of the line `h` selects,
    /// with a prefetch hint for it.
    #[inline]
    #[must_use]
    pub fn prepare_hash_may_match(h: u32, num_lines: u32, data: &[u8], log2_cache_line_bytes: u32) -> u32 {
        let offset = Self::line_offset(h, num_lines, log2_cache_line_bytes);
        if let Some(line_bytes) = 1usize.checked_shl(log2_cache_line_bytes) {
            arch::prefetch_range(data, offset as usize, line_bytes);
        }
        offset
    }

    /// Whether hash `h` may be in `data` (false means definitely not added).
    #[inline]
    #[must_use]
    pub fn hash_may_match(
        h: u32,
        num_lines: u32,
        num_probes: i32,
        data: &[u8],
        log2_cache_line_bytes: u32,
    ) -> bool {
        let offset = Self::line_offset(h, num_lines, log2_cache_line_bytes) as usize;
        match data.get(offset..) {
            Some(line) => Self::hash_may_match_prepared(h, num_probes, line, log2_cache_line_bytes),
            None => true,
        }
    }

    /// Second half of a query: whether all probed bits of `h` are set in the
    /// line starting at `data_at_offset[0]`. `num_probes <= 0` gives true.
    #[inline]
    #[must_use]
    pub fn hash_may_match_prepared(
        h: u32,
        num_probes: i32,
        data_at_offset: &[u8],
        log2_cache_line_bytes: u32,
    ) -> bool {
        let mask = bit_mask(log2_cache_line_bytes);
        let delta = h.rotate_right(17);
        let mut h = h;
        for _ in 0..num_probes {
            let bitpos = (h & mask) as usize;
            if let Some(byte) = data_at_offset.get(bitpos / 8) {
                if byte & (1u8 << (bitpos % 8)) == 0 {
                    return false;
                }
            }
            h = h.wrapping_add(delta);
        }
        true
    }
}
