//! RocksDB's Standard128 Ribbon filter format: sizing, construction with seed
//! search, and queries.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`Standard128RibbonBitsBuilder`, `Standard128RibbonBitsReader`).
//!
//! # Byte format
//!
//! ```text
//!   [ ICML solution: num_segments × 16 bytes ][ 0xFE ][ seed ][ num_blocks: u24 LE ]
//! ```
//!
//! The solution uses `num_slots = num_blocks × 128` slots. The number of
//! result columns per block (the FP rate) follows from the solution's length,
//! see [`crate::solution`]. The seed byte is the ordinal seed that made the
//! banding succeed; the search starts at 8 bits of key-set entropy and tries
//! all 256 seeds.

use crate::alg::{Banding, Standard128};
use crate::config::{self, ConstructionFailureChance};
use crate::solution::{self, InterleavedLayout, QuerySite};
use crate::standard::{band_with_seeds, Hasher};

/// Bytes of metadata after every built-in filter.
pub const METADATA_LEN: usize = 5;
/// The trailer's first byte for Standard128 Ribbon (-2 as a signed byte).
pub const RIBBON_MARKER: u8 = 0xFE;
/// Above this many keys RocksDB builds a FastLocalBloom instead.
pub const MAX_RIBBON_ENTRIES: usize = 950_000_000;
/// The failure chance the slot tables are looked up for.
pub const FAILURE_CHANCE: ConstructionFailureChance = ConstructionFailureChance::OneIn20;

/// Slots for `num_entries` keys: the slot table's count, rounded up to whole
/// blocks of 128 (at least two).
pub fn num_entries_to_num_slots(num_entries: u32) -> u32 {
    let slots = config::get_num_slots(FAILURE_CHANCE, 128, false, false, num_entries);
    solution::round_up_num_slots::<Standard128>(slots)
}

/// How RocksDB sizes a Ribbon filter (`CalculateSpaceAndSlots`).
///
/// Returns `(len_with_metadata, num_slots)`; `num_slots == 0` means the
/// filter falls back to FastLocalBloom with `bloom_len_with_metadata` bytes
/// (given by the caller's Bloom sizing, so the two stay one rule).
/// `entropy` is RocksDB's `Upper32of64` of the first key hash added (0 when
/// no key was added).
pub fn space_and_slots(
    num_entries: usize,
    desired_one_in_fp_rate: f64,
    entropy: u32,
    bloom_len_with_metadata: impl Fn(usize) -> usize,
) -> (usize, u32) {
    if num_entries > MAX_RIBBON_ENTRIES {
        return (bloom_len_with_metadata(num_entries), 0);
    }
    let num_slots = num_entries_to_num_slots(num_entries as u32);
    let len = solution::bytes_for_one_in_fp_rate::<Standard128>(num_slots, desired_one_in_fp_rate, entropy)
        + METADATA_LEN;
    if num_slots < 1024 {
        let bloom = bloom_len_with_metadata(num_entries);
        if bloom < len {
            return (bloom, 0);
        }
    }
    (len, num_slots)
}

/// Searches the seeds for one that bands all `hashes` into `num_slots`
/// slots, starting at ordinal `start_seed & 255` and trying all 256, as
/// RocksDB's `ResetAndFindSeedToSolve`. Returns the seed and the banding, or
/// `None` when every seed fails. Large inputs are reordered; the result does
/// not depend on their order.
pub fn find_seed(hashes: &mut [u64], num_slots: u32, start_seed: u32) -> Option<(u32, Banding<Standard128>)> {
    let start = start_seed & 255;
    band_with_seeds(hashes, num_slots, (0..256).map(|i| (start + i) & 255))
}

/// Builds the Ribbon filter bytes for `hashes` (64-bit key hashes, already
/// de-duplicated as the builder does), or gives the hashes back when RocksDB
/// would fall back to Bloom (too many keys, a Bloom filter that is smaller,
/// or 256 failed seeds). An empty `hashes` gives the empty (always-false)
/// filter. The hashes are freed before the solution is allocated, as
/// RocksDB frees its hash entries, so they do not add to peak memory.
pub fn build(
    mut hashes: Vec<u64>,
    desired_one_in_fp_rate: f64,
    bloom_len_with_metadata: impl Fn(usize) -> usize,
) -> Result<Vec<u8>, Vec<u64>> {
    if hashes.len() > MAX_RIBBON_ENTRIES {
        return Err(hashes);
    }
    let Some(&first) = hashes.first() else {
        return Ok(Vec::new());
    };
    let (len_with_metadata, num_slots) = space_and_slots(
        hashes.len(),
        desired_one_in_fp_rate,
        (first >> 32) as u32,
        bloom_len_with_metadata,
    );
    if num_slots == 0 {
        return Err(hashes);
    }
    let Some((seed, banding)) = find_seed(&mut hashes, num_slots, first as u32) else {
        return Err(hashes);
    };
    drop(hashes);
    let mut buf = vec![0u8; len_with_metadata];
    // RocksDB lays the solution out over the whole buffer, metadata included;
    // the 5 extra bytes never make a whole segment.
    let layout = InterleavedLayout::<Standard128>::for_num_slots(num_slots, len_with_metadata);
    layout.back_subst(&banding, &mut buf);
    let num_blocks = layout.num_blocks();
    let t = len_with_metadata - METADATA_LEN;
    buf[t] = RIBBON_MARKER;
    buf[t + 1] = seed as u8;
    buf[t + 2..t + 5].copy_from_slice(&num_blocks.to_le_bytes()[..3]);
    Ok(buf)
}

/// The expected FP rate of a Ribbon filter of `len_with_metadata` bytes for
/// `num_entries` keys (RocksDB's `EstimatedFpRate` for Ribbon sizes).
pub fn estimated_fp_rate(num_entries: usize, len_with_metadata: usize) -> f64 {
    let num_slots = num_entries_to_num_slots(num_entries.min(u32::MAX as usize) as u32);
    InterleavedLayout::<Standard128>::for_num_slots(num_slots, len_with_metadata).expected_fp_rate()
}

/// How many keys fit in `bytes` of Ribbon filter at this FP rate, with the
/// Bloom estimate for small sizes (RocksDB's `ApproximateNumEntries`).
/// `bloom_approximate` is FastLocalBloom's estimate for the same bytes.
pub fn approximate_num_entries(
    bytes: usize,
    desired_one_in_fp_rate: f64,
    bloom_approximate: impl Fn(usize) -> usize,
) -> usize {
    let round_down_usable = |available: usize| ((available - METADATA_LEN) & !15usize) + METADATA_LEN;
    let len_no_metadata = round_down_usable(bytes.max(METADATA_LEN)) - METADATA_LEN;
    if desired_one_in_fp_rate.is_nan() || desired_one_in_fp_rate <= 1.0 {
        return MAX_RIBBON_ENTRIES;
    }
    let min_real_bits_per_slot = if desired_one_in_fp_rate >= 1.0 + f64::from(u32::MAX) {
        32.0
    } else {
        let rounded = desired_one_in_fp_rate as u32;
        let upper_bits_per_key = 1 + (31 - rounded.leading_zeros()) as i32;
        let fp_rate_for_upper = 2.0f64.powi(-upper_bits_per_key);
        let portion_lower = (1.0 / desired_one_in_fp_rate - fp_rate_for_upper) / fp_rate_for_upper;
        f64::from(upper_bits_per_key) - portion_lower
    };
    let max_slots = len_no_metadata as f64 * 8.0 / min_real_bits_per_slot;
    let max_ribbon_slots =
        config::get_num_slots(FAILURE_CHANCE, 128, false, false, MAX_RIBBON_ENTRIES as u32);
    if max_slots.is_nan() || max_slots >= f64::from(max_ribbon_slots) {
        return MAX_RIBBON_ENTRIES;
    }
    let mut slots = solution::round_up_num_slots::<Standard128>(max_slots as u32);
    let mut i = 0;
    while slots > 0 {
        let reqd = solution::bytes_for_one_in_fp_rate::<Standard128>(slots, desired_one_in_fp_rate, 0);
        if reqd <= len_no_metadata || i >= 2 {
            break;
        }
        slots = solution::round_down_num_slots::<Standard128>(slots - 1);
        i += 1;
    }
    let num_entries = config::get_num_to_add(FAILURE_CHANCE, 128, false, false, slots) as usize;
    if slots < 1024 {
        bloom_approximate(bytes).max(num_entries)
    } else {
        num_entries.min(MAX_RIBBON_ENTRIES)
    }
}

/// A reader over a Standard128 Ribbon filter's solution bytes.
#[derive(Debug, Clone, Copy)]
pub struct Standard128Reader<'a> {
    data: &'a [u8],
    layout: InterleavedLayout<Standard128>,
    hasher: Hasher<Standard128>,
    seed: u32,
}

impl<'a> Standard128Reader<'a> {
    /// A reader for `data` (the solution, trailer excluded) of `num_blocks`
    /// blocks and ordinal `seed`. Precondition (checked by the format layer):
    /// `num_blocks >= 2`.
    pub fn new(data: &'a [u8], num_blocks: u32, seed: u32) -> Self {
        Self {
            data,
            layout: InterleavedLayout::for_num_blocks(num_blocks, data.len()),
            hasher: Hasher::with_ordinal_seed(seed),
            seed,
        }
    }

    /// The solution layout (blocks, columns).
    pub fn layout(&self) -> &InterleavedLayout<Standard128> {
        &self.layout
    }
    /// The ordinal seed.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Whether the key with 64-bit hash `key_hash` may be in the set.
    #[inline]
    pub fn may_match_hash(&self, key_hash: u64) -> bool {
        let h = self.hasher.hash(key_hash);
        let site = self.layout.prepare_query(&self.hasher, h);
        self.layout.filter_query(&self.hasher, h, site, self.data)
    }

    /// Batched queries: all sites are computed (and their cache lines
    /// prefetched) before any is read, as in RocksDB's MultiGet path.
    /// Precondition: `out.len() >= key_hashes.len()`.
    pub fn may_match_hashes(&self, key_hashes: &[u64], out: &mut [bool]) {
        const BATCH: usize = 32;
        let mut saved = [(0u64, QuerySite::default()); BATCH];
        for (hashes, out) in key_hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (slot, &k) in saved.iter_mut().zip(hashes) {
                let h = self.hasher.hash(k);
                let site = self.layout.prepare_query(&self.hasher, h);
                prefetch(self.data, site.segment_num as usize * 16);
                *slot = (h, site);
            }
            for ((o, &(h, site)), _) in out.iter_mut().zip(saved.iter()).zip(hashes) {
                *o = self.layout.filter_query(&self.hasher, h, site, self.data);
            }
        }
    }
}

/// Hints the CPU to fetch the cache line holding `data[offset]`.
#[inline(always)]
pub(crate) fn prefetch(data: &[u8], offset: usize) {
    #[cfg(target_arch = "x86_64")]
    if offset < data.len() {
        // SAFETY: the pointer is in bounds of `data`; a prefetch neither
        // reads nor writes memory architecturally and cannot fault.
        unsafe {
            core::arch::x86_64::_mm_prefetch(
                data.as_ptr().add(offset) as *const i8,
                core::arch::x86_64::_MM_HINT_T0,
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, offset);
}
