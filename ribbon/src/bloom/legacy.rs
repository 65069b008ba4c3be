// Ported from RocksDB 11.8.1: util/bloom_impl.h (LegacyLocalityBloomImpl<false>, LegacyNoLocalityBloomImpl::ChooseNumProbes), table/block_based/filter_policy.cc (LegacyBloomBitsBuilder, LegacyBloomBitsReader, GetBuiltinFilterBitsReader).

//! The legacy full-filter Bloom format RocksDB writes for
//! `format_version < 5`.
//!
//! # Layout
//!
//! `num_lines` cache lines of 64 bytes (`num_lines` odd when built), then the
//! 5-byte trailer: `num_probes` (one byte, 1..=30 when built) and
//! `num_lines` as a little-endian `u32`. Readers also accept other
//! power-of-two line sizes (filters written on machines with 128- or
//! 256-byte cache lines): the line size is `len / num_lines`.
//!
//! # Probing
//!
//! A key's 32-bit `BloomHash` `h` selects line `h % num_lines`; then
//! `num_probes` times: bit `h & (line_bits - 1)` of the line is set/tested
//! (bit `p` is bit `p % 8` of byte `p / 8`) and `h += rotr(h, 17)` (the
//! delta is computed once from the original hash; arithmetic mod 2^32).
//!
//! # Sizing
//!
//! `bits_per_key` is a whole number (RocksDB's `(millibits + 500) / 1000`).
//! Total bits are `min(n * bits_per_key, 0xffff0000)`, rounded up to whole
//! 512-bit lines, plus one line if that count is even.
//! `num_probes = clamp(floor(bits_per_key * 0.69), 1, 30)`.
//!
//! This crate builds with RocksDB's x86-64 cache line size, 64 bytes
//! (RocksDB on aarch64/ppc64 builds 128-byte lines, on s390x 256); see
//! [`LegacyBloomBuilder::build_with_log2_cache_line`] for those.

use super::math::BloomMath;
use super::{rocksdb_visible, Parsed, METADATA_LEN};

/// log2 of the cache line size (bytes) this crate builds with, as RocksDB
/// on x86-64 (`CACHE_LINE_SIZE == 64`).
pub const LOG2_CACHE_LINE_BYTES: u32 = 6;

/// Cache line size in bytes this crate builds with.
pub const CACHE_LINE_BYTES: u32 = 1 << LOG2_CACHE_LINE_BYTES;

/// Cap on total filter bits (including temporary computations) RocksDB
/// keeps for compatibility with 32-bit arithmetic.
const MAX_TOTAL_BITS: u64 = 0xffff_0000;

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
        prefetch(data, offset as usize, log2_cache_line_bytes);
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

/// Prefetch hint for the first and last byte of a line inside `data`.
#[inline(always)]
fn prefetch(data: &[u8], offset: usize, log2_cache_line_bytes: u32) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T2};
        let last = 1usize
            .checked_shl(log2_cache_line_bytes)
            .and_then(|n| offset.checked_add(n - 1));
        if let (Some(first), Some(last)) = (data.get(offset), last.and_then(|l| data.get(l))) {
            let first: *const i8 = (first as *const u8).cast();
            let last: *const i8 = (last as *const u8).cast();
            // SAFETY: the `sse` target feature is statically enabled (cfg
            // above), so calling this intrinsic is sound; a prefetch only
            // hints the cache and never dereferences, and both pointers come
            // from references into `data`.
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T2>(first);
                _mm_prefetch::<_MM_HINT_T2>(last);
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = (data, offset, log2_cache_line_bytes);
}

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
        if len_with_metadata <= METADATA_LEN {
            return if keys > 0 { 1.0 } else { 0.0 };
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
        // num_probes is 1..=30.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        {
            buf[len] = self.num_probes as u8;
        }
        buf[len + 1..].copy_from_slice(&num_lines.to_le_bytes());
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

/// How many queries [`LegacyBloomReader::may_match_hashes`] prepares before
/// checking them (RocksDB's MultiGet batch size).
const QUERY_BATCH: usize = 32;

/// Queries a legacy Bloom filter (RocksDB's `LegacyBloomBitsReader`).
///
/// Usually made by [`parse_trailer`]. Keys are looked up by their 32-bit
/// `BloomHash`. (RocksDB's reader answers `false` to 64-bit hash queries,
/// since this format cannot use them; this type simply has no such method.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyBloomReader<'a> {
    data: &'a [u8],
    num_probes: i32,
    num_lines: u32,
    log2_cache_line_bytes: u32,
}

impl<'a> LegacyBloomReader<'a> {
    /// A reader over `data` (the lines, without trailer). With
    /// `num_lines == 0` or `log2_cache_line_bytes > 31` (never produced by
    /// [`parse_trailer`]) every query answers "may match"; so do queries
    /// whose line lies outside `data`. `num_probes <= 0` matches everything.
    #[must_use]
    pub fn new(data: &'a [u8], num_probes: i32, num_lines: u32, log2_cache_line_bytes: u32) -> Self {
        LegacyBloomReader {
            data,
            num_probes,
            num_lines,
            log2_cache_line_bytes,
        }
    }

    /// The filter data (without trailer).
    #[must_use]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> i32 {
        self.num_probes
    }

    /// Number of cache lines.
    #[must_use]
    pub fn num_lines(&self) -> u32 {
        self.num_lines
    }

    /// log2 of the cache line size in bytes.
    #[must_use]
    pub fn log2_cache_line_bytes(&self) -> u32 {
        self.log2_cache_line_bytes
    }

    fn degenerate(&self) -> bool {
        self.num_lines == 0 || self.log2_cache_line_bytes > 31
    }

    /// Whether the key with 32-bit hash `h` (`BloomHash`) may have been
    /// added; `false` means it definitely was not.
    #[inline]
    #[must_use]
    pub fn may_match_hash(&self, h: u32) -> bool {
        if self.degenerate() {
            return true;
        }
        LegacyLocalityBloomImpl::hash_may_match(
            h,
            self.num_lines,
            self.num_probes,
            self.data,
            self.log2_cache_line_bytes,
        )
    }

    /// Whether `key` may have been added (hashes it with
    /// [`crate::hash::bloom_hash`]).
    #[must_use]
    pub fn may_match_key(&self, key: &[u8]) -> bool {
        self.may_match_hash(crate::hash::bloom_hash(key))
    }

    /// Batched [`may_match_hash`](Self::may_match_hash) (prepare and prefetch
    /// up to 32, then check). Writes `out[i]` for
    /// `i < min(hashes.len(), out.len())`, leaving the rest unchanged.
    pub fn may_match_hashes(&self, hashes: &[u32], out: &mut [bool]) {
        if self.degenerate() {
            out.iter_mut().zip(hashes).for_each(|(o, _)| *o = true);
            return;
        }
        let mut offsets = [0u32; QUERY_BATCH];
        for (hash_chunk, out_chunk) in hashes.chunks(QUERY_BATCH).zip(out.chunks_mut(QUERY_BATCH)) {
            for (&h, offset) in hash_chunk.iter().zip(&mut offsets) {
                *offset = LegacyLocalityBloomImpl::prepare_hash_may_match(
                    h,
                    self.num_lines,
                    self.data,
                    self.log2_cache_line_bytes,
                );
            }
            for ((result, &offset), &h) in out_chunk.iter_mut().zip(&offsets).zip(hash_chunk) {
                *result = match self.data.get(offset as usize..) {
                    Some(line) => LegacyLocalityBloomImpl::hash_may_match_prepared(
                        h,
                        self.num_probes,
                        line,
                        self.log2_cache_line_bytes,
                    ),
                    None => true,
                };
            }
        }
    }
}

/// Interprets a built-in filter block's trailer with the rules of RocksDB's
/// `GetBuiltinFilterBitsReader` (the top-level dispatch for all built-in
/// filters), producing a legacy Bloom reader where the format is legacy:
///
/// 1. Only the first `len mod 2^32` bytes are considered (RocksDB's
///    `uint32_t` length).
/// 2. At most 5 bytes: [`Parsed::AlwaysFalse`] (no keys; this wins over
///    any trailer content).
/// 3. Trailer byte 0 read as `i8` (`raw`): `0` gives [`Parsed::AlwaysTrue`]
///    (zero probes); `-1` (newer Bloom, see
///    [`super::fast_local::parse_trailer`]) and `-2` (Ribbon) give
///    [`Parsed::OtherFormat`]; other negative values are reserved and give
///    [`Parsed::AlwaysTrue`].
/// 4. Otherwise `num_probes = raw` (1..=127; 31..=127 are accepted although
///    never built), `len = size - 5`, `num_lines` = trailer bytes 1..5 (LE).
///    The line size is 64 when `num_lines * 64 == len` (in wrapping `u32`
///    arithmetic, as RocksDB on x86-64 computes it). Otherwise, if
///    `num_lines == 0` or `len % num_lines != 0`: [`Parsed::AlwaysTrue`];
///    else the line size is `len / num_lines` and must be a power of two
///    (any, e.g. 128 or 256 from other platforms, or 1), else
///    [`Parsed::AlwaysTrue`].
/// 5. [`Parsed::Reader`] over the `len` bytes before the trailer.
///
/// Deviations, only for corrupt filters where RocksDB reads out of bounds:
/// when `num_lines * 64` wraps to `len`, lines outside the data answer
/// "may match"; for `len >= 2^31` the power-of-two search uses 64-bit
/// arithmetic instead of RocksDB's overflowing 32-bit shifts.
#[must_use]
pub fn parse_trailer(contents: &[u8]) -> Parsed<LegacyBloomReader<'_>> {
    let contents = rocksdb_visible(contents);
    let Some(len) = contents.len().checked_sub(METADATA_LEN).filter(|&len| len > 0) else {
        return Parsed::AlwaysFalse;
    };
    let trailer = &contents[len..];
    #[allow(clippy::cast_possible_wrap)]
    let raw_num_probes = trailer[0] as i8;
    if raw_num_probes < 1 {
        return match raw_num_probes {
            -1 | -2 => Parsed::OtherFormat,
            _ => Parsed::AlwaysTrue,
        };
    }
    let num_lines = u32::from_le_bytes([trailer[1], trailer[2], trailer[3], trailer[4]]);
    // `contents` has at most u32::MAX bytes after `rocksdb_visible`.
    #[allow(clippy::cast_possible_truncation)]
    let len32 = len as u32;
    let log2_cache_line_bytes = if num_lines.wrapping_mul(CACHE_LINE_BYTES) == len32 {
        LOG2_CACHE_LINE_BYTES
    } else if len32.checked_rem(num_lines) != Some(0) {
        // num_lines == 0, or no whole line size.
        return Parsed::AlwaysTrue;
    } else {
        let mut log2 = 0u32;
        while (u64::from(num_lines) << log2) < len as u64 {
            log2 += 1;
        }
        if (u64::from(num_lines) << log2) != len as u64 {
            return Parsed::AlwaysTrue;
        }
        log2
    };
    Parsed::Reader(LegacyBloomReader::new(
        &contents[..len],
        i32::from(raw_num_probes),
        num_lines,
        log2_cache_line_bytes,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        false_positive_rate, key, next_length, packed_matches, RawFilter, SplitMix64,
    };
    use super::*;
    use crate::hash::bloom_hash;

    fn build_keys(keys: impl IntoIterator<Item = Vec<u8>>, bits_per_key: i32) -> Vec<u8> {
        let mut hashes: Vec<u32> = Vec::new();
        for k in keys {
            let h = bloom_hash(&k);
            if hashes.last() != Some(&h) {
                hashes.push(h);
            }
        }
        build(&hashes, bits_per_key)
    }

    /// Whole bits per key as BloomLikeFilterPolicy derives them.
    fn whole_bits(bits_per_key: f64) -> i32 {
        let millibits = (bits_per_key * 1000.0 + 0.500001) as i32;
        (millibits + 500) / 1000
    }

    fn raw_matches(filter: &[u8], key: &[u8]) -> bool {
        match parse_trailer(filter) {
            Parsed::AlwaysFalse => false,
            Parsed::AlwaysTrue => true,
            Parsed::Reader(r) => r.may_match_key(key),
            Parsed::OtherFormat => panic!("not a legacy trailer"),
        }
    }

    fn reader(filter: &[u8]) -> LegacyBloomReader<'_> {
        match parse_trailer(filter) {
            Parsed::Reader(r) => r,
            other => panic!("not a legacy Bloom filter: {other:?}"),
        }
    }

    /// util/bloom_test.cc FullBloomTest.Schema, kLegacyBloom rows (values
    /// for CACHE_LINE_SIZE 64, 128 and 256 via `build_with_log2_cache_line`).
    #[test]
    fn schema() {
        // (bits/key, keys, num_probes, hash @64, hash @128, hash @256)
        let cases: [(f64, std::ops::Range<i32>, i32, [u32; 3]); 13] = [
            (2.0, 0..2087, 1, [1567096579, 1964771444, 2659542661]),
            (3.0, 0..2087, 2, [2707206547, 2571983456, 218344685]),
            (5.0, 0..2087, 3, [515748486, 94611728, 2436112214]),
            (8.0, 0..2087, 5, [1302145999, 2811644657, 756553699]),
            (9.0, 0..2087, 6, [2092755149, 661139132, 1182970461]),
            (11.0, 0..2087, 7, [3755609649, 1812694762, 1449142939]),
            (14.0, 0..2087, 9, [178861123, 379087593, 2574136516]),
            (16.0, 0..2087, 11, [1129406313, 3049154394, 1727750964]),
            (10.0, 0..2087, 6, [1478976371, 2910591341, 1182970461]),
            (10.0, 1..2087, 6, [4205696321, 1132081253, 2385981855]),
            (10.0, 1..2088, 6, [2885052954, 769447944, 4175124908]),
            (9.5, 1..2088, 6, [2885052954, 769447944, 4175124908]),
            (10.499, 1..2088, 6, [2885052954, 769447944, 4175124908]),
        ];
        for (bpk, keys, num_probes, want) in cases {
            let b = LegacyBloomBuilder::new(whole_bits(bpk));
            let hashes: Vec<u32> = keys.clone().map(|i| bloom_hash(&key(i))).collect();
            for (log2, &want_hash) in (6..=8).zip(&want) {
                let filter = b.build_with_log2_cache_line(&hashes, log2);
                let ctx = format!("bpk {bpk} keys {keys:?} log2 {log2}");
                assert_eq!(i32::from(filter[filter.len() - 5]), num_probes, "{ctx}");
                assert_eq!(bloom_hash(&filter), want_hash, "{ctx}");
                // Readable whatever the line size.
                let r = reader(&filter);
                assert_eq!(r.log2_cache_line_bytes(), log2);
                assert!(hashes.iter().all(|&h| r.may_match_hash(h)), "{ctx}");
            }
            assert_eq!(b.build(&hashes), b.build_with_log2_cache_line(&hashes, 6));
        }
        // First case of Schema: 87 keys at 5 bits/key, 3 probes.
        let filter = build_keys((0..87).map(|i| key(i).to_vec()), whole_bits(5.0));
        assert_eq!(filter[filter.len() - 5], 3);
    }

    /// util/bloom_test.cc FullBloomTest.RawSchema, legacy rows.
    #[test]
    fn raw_schema() {
        let mut raw = RawFilter::new();
        // One 256-byte line, two probes, ~50% FP rate.
        let f = raw.reset_weird_fill(256, 1, 2).to_vec();
        assert_eq!(packed_matches(|k| raw_matches(&f, k)), 11384799501900898790);
        // Two 128-byte lines.
        let f = raw.reset_weird_fill(256, 2, 2).to_vec();
        assert_eq!(packed_matches(|k| raw_matches(&f, k)), 10157853359773492589);
        // Four 64-byte lines.
        let f = raw.reset_weird_fill(256, 4, 2).to_vec();
        assert_eq!(packed_matches(|k| raw_matches(&f, k)), 7123594913907464682);
    }

    /// util/bloom_test.cc FullBloomTest.CorruptFilters, legacy part.
    #[test]
    fn corrupt_filters() {
        let mut raw = RawFilter::new();
        for fill in [false, true] {
            let mut check = |len: u32, num_lines: u32, num_probes: u32, want: bool| {
                let f = raw.reset(len, num_lines, num_probes, fill).to_vec();
                assert_eq!(
                    raw_matches(&f, b"hello"),
                    want,
                    "{len} {num_lines} {num_probes} {fill}"
                );
                assert_eq!(raw_matches(&f, b"world"), want);
            };
            // Good filter bits: same as fill.
            check(64, 1, 6, fill);
            check(64 * 3, 3, 6, fill);
            check(256 * 3, 3, 6, fill);
            check(64, 1, 30, fill);
            check(64, 1, 1, fill);
            // Zero probes: always true.
            check(64, 1, 0, true);
            // Zero size trumps everything: always false.
            check(0, 0, 6, false);
            check(0, 37, 6, false);
            check(0, 0, 0, false);
            // No solution for the line size: always true.
            check(64, 0, 6, true);
            check(4, 3, 6, true);
            check(97 * 3, 3, 6, true);
            check(65 * 3, 3, 6, true);
            // Less than 5 bytes: always false.
            check(u32::MAX, 3, 6, false);
            check((-5i32) as u32, 3, 6, false);
            // Dubious but accepted probe counts: same as fill.
            check(64, 1, 31, fill);
            check(64, 1, 127, fill);
            // Negative (reserved) probe bytes: always true.
            check(64, 1, 128, true);
            check(64, 1, 253, true);
        }
    }

    #[test]
    fn empty_and_small() {
        assert!(build(&[], 10).is_empty());
        assert_eq!(parse_trailer(&build(&[], 10)), Parsed::AlwaysFalse);
        let f = build_keys([b"hello".to_vec(), b"world".to_vec()], 10);
        // 20 bits -> 1 line (odd).
        assert_eq!(f.len(), 64 + 5);
        assert_eq!(&f[64..], &[6, 1, 0, 0, 0]);
        let r = reader(&f);
        assert!(r.may_match_key(b"hello"));
        assert!(r.may_match_key(b"world"));
        assert!(!r.may_match_key(b"x"));
        assert!(!r.may_match_key(b"foo"));
    }

    /// FullBloomTest.FullVaryingLengths at 10 bits/key.
    #[test]
    fn varying_lengths() {
        let mut mediocre = 0;
        let mut good = 0;
        let mut length = 1;
        while length <= 10_000 {
            let f = build_keys((0..length).map(|i| key(i).to_vec()), 10);
            assert!(f.len() <= (length as usize * 10 / 8) + 64 * 2 + 5);
            let r = reader(&f);
            for i in 0..length {
                assert!(r.may_match_key(&key(i)), "length {length}; key {i}");
            }
            let rate = false_positive_rate(|k| r.may_match_key(k));
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

    /// FullBloomTest.FilterSize: CalculateSpace / ApproximateNumEntries
    /// consistency and no overflow for huge counts.
    #[test]
    fn filter_size_consistency() {
        for bpk in [1, 2, 3, 4, 10, 21, 50, 100] {
            let b = LegacyBloomBuilder::new(bpk);
            let mut n = 1usize;
            let mut space = 0;
            while n < 1_000_000 {
                space = b.calculate_space(n);
                let n2 = b.approximate_num_entries(space);
                assert!(n2 >= n, "bpk {bpk} n {n}");
                assert_eq!(b.calculate_space(n2), space, "bpk {bpk} n {n}");
                n += 1 + n / 1000;
            }
            // Until usize overflow.
            while let Some(next) = n.checked_add(n / 3) {
                let space2 = b.calculate_space(n);
                assert!(space2 >= space, "bpk {bpk} n {n}");
                space = space2;
                n = next;
            }
        }
    }

    #[test]
    fn probes_space_and_estimates() {
        assert_eq!(choose_num_probes(i32::MIN), 1);
        assert_eq!(choose_num_probes(1), 1);
        assert_eq!(choose_num_probes(2), 1);
        assert_eq!(choose_num_probes(3), 2);
        assert_eq!(choose_num_probes(10), 6);
        assert_eq!(choose_num_probes(14), 9);
        assert_eq!(choose_num_probes(16), 11);
        assert_eq!(choose_num_probes(44), 30);
        assert_eq!(choose_num_probes(i32::MAX), 30);
        assert_eq!(calculate_space(0, 10), 5);
        assert_eq!(calculate_space(1, 10), 69);
        // 52 keys * 10 bits = 520 bits -> 2 lines -> 3 (odd).
        assert_eq!(calculate_space(52, 10), 3 * 64 + 5);
        // Capped total bits: 0xffff0000 -> 8388480 lines (even) -> 8388481.
        assert_eq!(calculate_space(usize::MAX / 16, 10), 8_388_481 * 64 + 5);
        assert_eq!(approximate_num_entries(0, 10), 0);
        assert_eq!(approximate_num_entries(68, 10), 0);
        assert_eq!(approximate_num_entries(69, 10), 51);
        assert_eq!(approximate_num_entries(69, 0), approximate_num_entries(69, 1));
        assert_eq!(estimated_fp_rate(0, 5, 10), 0.0);
        assert_eq!(estimated_fp_rate(1, 3, 10), 1.0);
        let n = 100_000;
        let len = calculate_space(n, 10);
        let bpk = 8.0 * (len - 5) as f64 / n as f64;
        let mut want = BloomMath::cache_local_fp_rate(bpk, 6, 512);
        want += 0.1 / (bpk * 0.75 + 22.0);
        let want = BloomMath::independent_probability_sum(want, BloomMath::fingerprint_fp_rate(n, 32));
        assert_eq!(estimated_fp_rate(n, len, 10).to_bits(), want.to_bits());
    }

    #[test]
    fn no_false_negatives_and_fp_rate() {
        let mut rng = SplitMix64(5);
        for bpk in [1, 2, 5, 10, 15, 20, 40, 100] {
            for n in [1usize, 2, 51, 52, 1000, 30_000] {
                let hashes: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
                let f = build(&hashes, bpk);
                assert_eq!(f.len(), calculate_space(n, bpk));
                let r = reader(&f);
                assert!(hashes.iter().all(|&h| r.may_match_hash(h)), "bpk {bpk} n {n}");
                let mut out = vec![false; n];
                r.may_match_hashes(&hashes, &mut out);
                assert!(out.iter().all(|&x| x));
            }
        }
        // 10 bits/key, 6 probes: RocksDB quotes ~1.14% for this design; the
        // estimate is within; 200k queries (s.e. ~0.024%) must land in
        // [1.0%, 1.3%].
        let n = 100_000;
        let hashes: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let f = build(&hashes, 10);
        let r = reader(&f);
        let fps = (0..200_000)
            .filter(|_| r.may_match_hash(rng.next_u64() as u32))
            .count();
        let rate = fps as f64 / 200_000.0;
        assert!((0.010..=0.013).contains(&rate), "{rate}");
        let est = estimated_fp_rate(n, f.len(), 10);
        // RocksDB's estimate (for warnings only) is a little pessimistic here.
        assert!(rate < est && est - rate < 0.0025, "{rate} vs {est}");
    }

    #[test]
    fn batched_equals_single_and_garbage_never_panics() {
        let mut rng = SplitMix64(17);
        let hashes: Vec<u32> = (0..400).map(|_| rng.next_u64() as u32).collect();
        let f = build(&hashes, 4);
        let r = reader(&f);
        let queries: Vec<u32> = (0..1000).map(|_| rng.next_u64() as u32).collect();
        let mut out = vec![false; 1000];
        r.may_match_hashes(&queries, &mut out);
        for (q, o) in queries.iter().zip(&out) {
            assert_eq!(r.may_match_hash(*q), *o);
        }
        for cut in 0..=f.len() {
            let _ = parse_trailer(&f[..cut]).map(|r| r.may_match_hash(hashes[0]));
            let _ = parse_trailer(&f[f.len() - cut..]).map(|r| r.may_match_hash(hashes[0]));
        }
        for len in 0..300usize {
            for _ in 0..20 {
                let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                if len >= 5 && rng.next_u64() & 1 == 0 {
                    // Plausible num_lines to reach the power-of-two search.
                    let nl = (rng.next_u64() % 8) as u32;
                    bytes[len - 4..].copy_from_slice(&nl.to_le_bytes());
                }
                if let Parsed::Reader(r) = parse_trailer(&bytes) {
                    let _ = r.may_match_hash(rng.next_u64() as u32);
                    let mut o = [false; 33];
                    r.may_match_hashes(&queries[..33], &mut o);
                }
                for (nl, log2) in [
                    (0, 6),
                    (1, 6),
                    (3, 0),
                    (u32::MAX, 6),
                    (5, 31),
                    (2, 32),
                    (1, u32::MAX),
                ] {
                    let r = LegacyBloomReader::new(&bytes, 6, nl, log2);
                    let _ = r.may_match_hash(rng.next_u64() as u32);
                    let mut d = bytes.clone();
                    LegacyLocalityBloomImpl::add_hash(rng.next_u64() as u32, nl, 6, &mut d, log2);
                }
            }
        }
        // num_lines * 64 wraps to len: RocksDB would read out of bounds; we
        // answer "may match" for lines outside the data.
        let mut wrap = vec![0u8; 64 + 5];
        wrap[64] = 6;
        wrap[65..].copy_from_slice(&(1u32 + (1 << 26)).to_le_bytes());
        let r = reader(&wrap);
        assert_eq!(r.log2_cache_line_bytes(), 6);
        let any_true = (0..1000u32).any(|h| r.may_match_hash(h.wrapping_mul(0x9e37_79b9)));
        assert!(any_true);
    }
}
