//! RocksDB's Standard128 Ribbon filter format: sizing, construction with seed
//! search, the trailer, and queries.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`Standard128RibbonBitsBuilder`, `Standard128RibbonBitsReader`,
//! `GetRibbonBitsReader`).
//!
//! # Byte format
//!
//! ```text
//!   [ ICML solution: num_segments × 16 bytes ][ 0xFE ][ seed ][ num_blocks: u24 LE ]
//! ```
//!
//! The solution uses `num_slots = num_blocks × 128` slots. The number of
//! result columns per Ribbon block (the FP rate) follows from the solution's
//! length, see [`crate::core::solution`]. The seed byte is the ordinal seed that
//! made the banding succeed; the search starts at 8 bits of key-set entropy
//! and tries all 256 seeds. The trailer is written ([`RibbonTrailer::encode`])
//! and parsed ([`parse_trailer`]) here only.
//!
//! # Configuration
//!
//! The settings are [`Standard128`] (width 128, first coefficient always
//! one, no smash, Standard Ribbon) and the slot tables are looked up for
//! [`BANDING`] ([`BandingConfig::STANDARD128_RIBBON`]), both defined once.

use crate::core::alg::Banding;
pub use crate::core::alg::Standard128;
#[cfg(target_arch = "x86_64")]
use crate::core::arch::x86_64;
pub use crate::core::arch::RibbonKernel;
use crate::core::bounded;
use crate::core::config::{BandingConfig, ConstructionFailureChance};
#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::hasher::{band_with_seeds, Hasher};
use crate::core::prelude::*;
use crate::core::solution::{self, InterleavedLayout};
use crate::rocksdb::trailer::{self, Marker, Parsed};
pub use crate::rocksdb::trailer::{METADATA_LEN, RIBBON_MARKER};

/// Above this many keys RocksDB builds a FastLocalBloom instead.
pub const MAX_RIBBON_ENTRIES: usize = 950_000_000;
/// RocksDB's banding configuration for this format: [`Standard128`] and the
/// failure chance the slot tables are looked up for.
pub const BANDING: BandingConfig = BandingConfig::STANDARD128_RIBBON;
/// The failure chance the slot tables are looked up for.
pub const FAILURE_CHANCE: ConstructionFailureChance = BANDING.failure_chance;
/// The most Ribbon blocks the trailer's 24-bit count holds.
pub const MAX_BLOCKS: u32 = (1 << 24) - 1;

/// What a Standard128 Ribbon trailer stores besides its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RibbonTrailer {
    /// The ordinal seed that banded (one byte).
    pub seed: u8,
    /// Ribbon blocks of 128 slots (24 bits).
    pub num_blocks: u32,
}

impl RibbonTrailer {
    /// The trailer bytes `[0xFE, seed, num_blocks: u24 LE]`. Precondition:
    /// `num_blocks <= MAX_BLOCKS` (higher bits are dropped).
    #[must_use]
    pub fn encode(self) -> [u8; METADATA_LEN] {
        debug_assert!(self.num_blocks <= MAX_BLOCKS);
        let b = self.num_blocks.to_le_bytes();
        [RIBBON_MARKER, self.seed, b[0], b[1], b[2]]
    }

    /// The fields of a trailer whose marker is Standard128 Ribbon's.
    #[must_use]
    pub fn decode(trailer: &[u8; METADATA_LEN]) -> Option<Self> {
        (Marker::of(trailer[0]) == Marker::Standard128Ribbon).then(|| RibbonTrailer {
            seed: trailer[1],
            num_blocks: u32::from_le_bytes([trailer[2], trailer[3], trailer[4], 0]),
        })
    }
}

/// Interprets a filter block whose trailer may be a Standard128 Ribbon one,
/// with the rules of RocksDB's `GetRibbonBitsReader`:
///
/// 1. Only the first `len mod 2^32` bytes are considered, and at most 5
///    bytes are [`Parsed::AlwaysFalse`]: the rules of every format, see
///    [`crate::rocksdb::trailer`].
/// 2. A marker other than `0xFE`: [`Parsed::OtherFormat`].
/// 3. Fewer than 2 blocks: [`Parsed::AlwaysTrue`].
/// 4. Otherwise a [`Parsed::Reader`] over the bytes before the trailer
///    (segments past the data, which only a corrupt block has, answer "may
///    match").
#[must_use]
pub fn parse_trailer(contents: &[u8]) -> Parsed<Standard128Reader<'_>> {
    let (data, t) = match trailer::claim(contents, |m| m == Marker::Standard128Ribbon) {
        Ok(split) => split,
        Err(other) => return other,
    };
    match RibbonTrailer::decode(t) {
        Some(RibbonTrailer { seed, num_blocks }) if num_blocks >= 2 => {
            Parsed::Reader(Standard128Reader::new(data, num_blocks, u32::from(seed)))
        }
        _ => Parsed::AlwaysTrue,
    }
}

/// Slots for `num_entries` keys: the slot table's count, rounded up to whole
/// Ribbon blocks of 128 (at least two).
pub fn num_entries_to_num_slots(num_entries: u32) -> u32 {
    solution::round_up_num_slots::<Standard128>(BANDING.num_slots(num_entries))
}

/// The key-set entropy RocksDB sizes with: `Upper32of64` of the first key
/// hash added (0 when no key was added). It biases the rounding of the
/// fractional column count, so that sizes are unbiased on average.
#[must_use]
pub fn entropy(hashes: &[u64]) -> u32 {
    hashes.first().map_or(0, |&h| (h >> 32) as u32)
}

/// The first ordinal seed the search tries: `Lower32of64` of the first key
/// hash added, modulo 256 (0 when no key was added).
#[must_use]
pub fn start_seed(hashes: &[u64]) -> u32 {
    hashes.first().map_or(0, |&h| h as u32 & 255)
}

/// How RocksDB sizes a Ribbon filter (`CalculateSpaceAndSlots`).
///
/// Returns `(len_with_metadata, num_slots)`; `num_slots == 0` means the
/// filter falls back to FastLocalBloom with `bloom_len_with_metadata` bytes
/// (given by the caller's Bloom sizing, so the two stay one rule): above
/// [`MAX_RIBBON_ENTRIES`] keys, or below 1024 slots where the Bloom filter
/// is smaller. `entropy` is [`entropy`] of the key hashes.
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
/// or 256 failed seeds; see [`space_and_slots`]). An empty `hashes` gives
/// the empty (always-false) filter. The hashes are freed before the
/// solution is allocated, as RocksDB frees its hash entries, so they do not
/// add to peak memory.
pub fn build(
    mut hashes: Vec<u64>,
    desired_one_in_fp_rate: f64,
    bloom_len_with_metadata: impl Fn(usize) -> usize,
) -> Result<Vec<u8>, Vec<u64>> {
    if hashes.is_empty() {
        return Ok(Vec::new());
    }
    let (len_with_metadata, num_slots) = space_and_slots(
        hashes.len(),
        desired_one_in_fp_rate,
        entropy(&hashes),
        bloom_len_with_metadata,
    );
    if num_slots == 0 {
        return Err(hashes);
    }
    let start = start_seed(&hashes) & 255;
    // RocksDB lays the solution out over the whole buffer, metadata included;
    // the 5 extra bytes never make a whole segment.
    let layout = InterleavedLayout::<Standard128>::for_num_slots(num_slots, len_with_metadata);
    let (seed, mut buf) = if num_slots >= bounded::MIN_SLOTS {
        // Large filters: bounded memory (the hashes, part of the banding
        // and the filter), see `bounded`.
        let seeds = (0..256).map(|i| (start + i) & 255);
        bounded::build(hashes, num_slots, seeds, &layout, len_with_metadata)?
    } else {
        let Some((seed, banding)) = find_seed(&mut hashes, num_slots, start) else {
            return Err(hashes);
        };
        drop(hashes);
        let mut buf = vec![0u8; len_with_metadata];
        layout.back_subst(&banding, &mut buf);
        (seed, buf)
    };
    let t = len_with_metadata - METADATA_LEN;
    // The seed search tries ordinals 0..=255, and at most
    // `MAX_RIBBON_ENTRIES` keys need fewer than 2^24 blocks.
    #[allow(clippy::cast_possible_truncation)]
    let trailer = RibbonTrailer {
        seed: seed as u8,
        num_blocks: layout.num_blocks(),
    };
    buf[t..].copy_from_slice(&trailer.encode());
    Ok(buf)
}

/// The expected FP rate of a filter of `len_with_metadata` bytes for
/// `num_entries` keys (RocksDB's `EstimatedFpRate` for this builder):
/// [`crate::rocksdb::trailer::trailer_only_fp_rate`] for trailer-only sizes,
/// `bloom_estimate(num_entries, len_with_metadata)` above
/// [`MAX_RIBBON_ENTRIES`] (the Bloom fallback's), else the Ribbon layout's.
pub fn estimated_fp_rate(
    num_entries: usize,
    len_with_metadata: usize,
    bloom_estimate: impl Fn(usize, usize) -> f64,
) -> f64 {
    if let Some(rate) = trailer::trailer_only_fp_rate(num_entries, len_with_metadata) {
        return rate;
    }
    if num_entries > MAX_RIBBON_ENTRIES {
        return bloom_estimate(num_entries, len_with_metadata);
    }
    let num_slots = num_entries_to_num_slots(num_entries as u32);
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
    let max_ribbon_slots = BANDING.num_slots(MAX_RIBBON_ENTRIES as u32);
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
    let num_entries = BANDING.num_to_add(slots) as usize;
    if slots < 1024 {
        bloom_approximate(bytes).max(num_entries)
    } else {
        num_entries.min(MAX_RIBBON_ENTRIES)
    }
}

/// The largest solution whose batched queries are not prefetched: in the
/// caches a prefetch only costs instructions. Issue 37's kernel report
/// (`cargo bench -p rocks-ribbon --bench kernels`, shared AMD EPYC, AVX2):
/// at 16 and 256 KiB, 14.4 and 14.3 ns/query pipelined with prefetches
/// against 12.7 and 13.0 one query after another (batched then measured
/// 12.5 and 13.0); at 8 MiB, 15.1 against 33.3 (unchanged: pipelined).
pub const NO_PREFETCH_BYTES: usize = 256 << 10;

/// A reader over a Standard128 Ribbon filter's solution bytes.
///
/// The reader computes a query's result columns with the fastest
/// [`RibbonKernel`] the CPU runs, detected when it is made;
/// [`with_kernel`](Self::with_kernel) picks another (every kernel answers
/// the same).
#[derive(Debug, Clone, Copy)]
pub struct Standard128Reader<'a> {
    data: &'a [u8],
    layout: InterleavedLayout<Standard128>,
    hasher: Hasher<Standard128>,
    seed: u32,
    kernel: RibbonKernel,
    /// Sites whose first segment starts below this byte offset have at most
    /// eight columns and `16 * 8 + 128` bytes of solution from there on:
    /// the AVX2 short kernel answers them (0 when the layout has more
    /// columns or the solution is too short).
    lanes8_bytes: usize,
}

impl<'a> Standard128Reader<'a> {
    /// A reader for `data` (the solution, trailer excluded) of `num_blocks`
    /// Ribbon blocks and ordinal `seed`. Precondition (checked by
    /// [`parse_trailer`]): `num_blocks >= 2`.
    pub fn new(data: &'a [u8], num_blocks: u32, seed: u32) -> Self {
        let layout = InterleavedLayout::for_num_blocks(num_blocks, data.len());
        let lanes8_bytes = if layout.upper_num_columns() <= 8 {
            (data.len() + 1).saturating_sub(16 * 8 + 128)
        } else {
            0
        };
        Self {
            data,
            layout,
            hasher: Hasher::with_ordinal_seed(seed),
            seed,
            kernel: RibbonKernel::detected(),
            lanes8_bytes,
        }
    }

    /// The same reader, computing result columns with `kernel`, which must
    /// be one of [`RibbonKernel::available`] (another falls back to the
    /// portable kernel).
    #[must_use]
    pub fn with_kernel(mut self, kernel: RibbonKernel) -> Self {
        self.kernel = if RibbonKernel::available().contains(&kernel) {
            kernel
        } else {
            RibbonKernel::Portable
        };
        self
    }

    /// The kernel that computes result columns.
    pub fn kernel(&self) -> RibbonKernel {
        self.kernel
    }

    /// The solution layout (Ribbon blocks, columns).
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
        #[cfg(target_arch = "x86_64")]
        if self.kernel == RibbonKernel::Avx2 && x86_64::avx2_detected() {
            // SAFETY: `avx2_detected` just confirmed that this CPU has AVX2.
            return unsafe { self.may_match_hash_avx2(key_hash) };
        }
        let h = self.hasher.hash(key_hash);
        let site = self.layout.prepare_query(&self.hasher, h);
        self.answer_prepared((h, site))
    }

    /// The first half of a batched query of `key_hash`: the rehashed
    /// value and the site it reads, the site's cache lines prefetched.
    #[inline(always)]
    pub(crate) fn prepare_hash(&self, key_hash: u64) -> (u64, solution::QuerySite) {
        self.layout.prepare_prefetched(&self.hasher, self.data, key_hash)
    }

    /// The second half: the answer of [`Self::may_match_hash`] for what
    /// [`Self::prepare_hash`] returned.
    #[inline(always)]
    pub(crate) fn answer_prepared(&self, (h, site): (u64, solution::QuerySite)) -> bool {
        self.layout
            .filter_query_with(self.kernel, &self.hasher, h, site, self.data)
    }

    /// Batched queries: each site is computed (and its cache lines
    /// prefetched) 16 queries before it is read; on a filter of at most
    /// [`NO_PREFETCH_BYTES`] (in the core's caches) one query after
    /// another, which the CPU overlaps by itself.
    /// Answers `min(key_hashes.len(), out.len())` hashes; the rest of `out`
    /// is left unchanged.
    pub fn may_match_hashes(&self, key_hashes: &[u64], out: &mut [bool]) {
        #[cfg(target_arch = "x86_64")]
        if self.kernel == RibbonKernel::Avx2 && x86_64::avx2_detected() {
            // SAFETY: `avx2_detected` just confirmed that this CPU has AVX2.
            return unsafe { self.may_match_hashes_avx2(key_hashes, out) };
        }
        if self.data.len() <= NO_PREFETCH_BYTES {
            for (o, &h) in out.iter_mut().zip(key_hashes) {
                *o = self.may_match_hash(h);
            }
            return;
        }
        crate::core::batch::answer_pipelined(
            key_hashes,
            out,
            |k| self.prepare_hash(k),
            |prepared| self.answer_prepared(prepared),
        );
    }
}

/// The AVX2 query. A site of at most eight columns (every FP rate down to
/// 1/256) whose words lie inside the solution (all but the last blocks' sites)
/// is answered by [`x86_64::site128_lanes8_avx2`]; any other site by the
/// core's query with the eight-columns-at-a-time kernel, or the portable
/// one where that cannot read (see [`RibbonKernel`]).
///
/// A single query keeps the rehash and the site arithmetic in the caller
/// (code compiled without AVX2) and calls the site kernel with its
/// pointers and rows in registers; the batch loops are compiled for AVX2,
/// so the kernel is inlined into them.
#[cfg(target_arch = "x86_64")]
impl Standard128Reader<'_> {
    /// The answer for rehashed value `h` at `site`, the parities of its
    /// columns computed by `lanes8` (which must compute
    /// [`x86_64::site128_lanes8_avx2`]'s bits).
    ///
    /// # Safety
    ///
    /// `lanes8` must be safe to call with two pointers to 128 readable
    /// bytes each (for the AVX2 kernel: the CPU has AVX2).
    #[inline(always)]
    unsafe fn answer_lanes8(
        &self,
        h: u64,
        site: solution::QuerySite,
        lanes8: impl Fn(*const u8, *const u8, u128, u32) -> u32,
    ) -> bool {
        let first = site.segment_num as usize * 16;
        if first >= self.lanes8_bytes {
            return self.answer_general(h);
        }
        let n = site.num_columns;
        let left = self.data.as_ptr().wrapping_add(first);
        // SAFETY: `first < lanes8_bytes` means that the layout has at most
        // eight columns (`n <= 8`) and that `data` has `16 * 8 + 128` bytes
        // from `first` on (`Self::new`): 128 at `left` and at `right`
        // (read even for `start_bit == 0`, with a zero right row);
        // `start_bit < 128`.
        let lanes = lanes8(
            left,
            left.wrapping_add(16 * n as usize),
            self.hasher.coeff_row(h),
            site.start_bit,
        );
        x86_64::lanes_match(lanes, &x86_64::LANES_TO_COLUMNS, n, self.hasher.result_row(h))
    }

    /// A site [`x86_64::site128_lanes8_avx2`] does not answer: the core's
    /// query with this reader's kernel, out of line (the site computed
    /// again here, so that the hot loop does not keep it for this call).
    #[cold]
    #[inline(never)]
    fn answer_general(&self, h: u64) -> bool {
        let site = self.layout.prepare_query(&self.hasher, h);
        self.layout
            .filter_query_with(self.kernel, &self.hasher, h, site, self.data)
    }

    /// [`Self::may_match_hash`] with AVX2, from code compiled without it.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[inline(always)]
    unsafe fn may_match_hash_avx2(&self, key_hash: u64) -> bool {
        let h = self.hasher.hash(key_hash);
        let site = self.layout.prepare_query(&self.hasher, h);
        // SAFETY: the caller guarantees AVX2, and `answer_lanes8` gives the
        // kernel 128 readable bytes at each pointer.
        let lanes8 = |l, r, a, b| unsafe { x86_64::site128_lanes8_avx2(l, r, a, b) };
        // SAFETY: `lanes8` is the AVX2 kernel, on a CPU with AVX2.
        unsafe { self.answer_lanes8(h, site, lanes8) }
    }

    /// [`Self::may_match_hashes`] with AVX2: the same two loops, compiled
    /// for AVX2 with the site kernel inlined.
    #[target_feature(enable = "avx2")]
    fn may_match_hashes_avx2(&self, key_hashes: &[u64], out: &mut [bool]) {
        // SAFETY: this function runs only where the CPU has AVX2 (its
        // caller checks), and `answer_lanes8` gives the kernel 128 readable
        // bytes at each pointer.
        let lanes8 = |l, r, a, b| unsafe { x86_64::site128_lanes8_avx2(l, r, a, b) };
        // SAFETY: as above.
        let rotated = |l, r, a, b| unsafe { x86_64::site128_lanes8_rotated_avx2(l, r, a, b) };
        if self.data.len() <= NO_PREFETCH_BYTES {
            // In the caches: the rotation kernel (measured faster there).
            // SAFETY: `rotated` is an AVX2 kernel, on a CPU with AVX2.
            let answer = |h: u64, site: solution::QuerySite| unsafe { self.answer_lanes8(h, site, rotated) };
            for (o, &k) in out.iter_mut().zip(key_hashes) {
                let h = self.hasher.hash(k);
                *o = answer(h, self.layout.prepare_query(&self.hasher, h));
            }
            return;
        }
        // Out of the caches, the shift kernel (no table reads: measured
        // faster there).
        crate::core::batch::answer_pipelined(
            key_hashes,
            out,
            |k| self.prepare_hash(k),
            // SAFETY: `lanes8` is the AVX2 kernel, on a CPU with AVX2.
            |(h, site)| unsafe { self.answer_lanes8(h, site, lanes8) },
        );
    }
}

#[cfg(test)]
mod kernel_tests {
    use super::*;
    use crate::core::hash::split_mix64;

    /// The core's tables are checked at RocksDB's filter limit.
    #[test]
    fn the_core_checks_its_tables_at_the_filter_limit() {
        assert_eq!(
            crate::core::config::tests::MAX_RIBBON_ENTRIES as usize,
            MAX_RIBBON_ENTRIES
        );
    }

    /// Every kernel computes the portable parities (`phsf_query`) of every
    /// site it answers, and every reader answers as the portable one, over
    /// random solutions of 1 to 32 columns (fractional column counts
    /// included, so both column counts of a layout; up to 8 the reader's
    /// AVX2 query runs the short kernel, above it the core's), every start
    /// offset, and the last blocks, where a kernel that would read past the
    /// data hands the query back.
    #[test]
    fn every_kernel_answers_as_the_portable_one() {
        let kernels = RibbonKernel::available();
        // Without std, only compile-time target features pick a kernel.
        if cfg!(all(target_arch = "x86_64", feature = "std"))
            && std::env::var_os("RIBBON_REQUIRE_AVX2").is_some()
        {
            assert!(
                kernels.contains(&RibbonKernel::Avx2),
                "RIBBON_REQUIRE_AVX2 is set but AVX2 is not detected"
            );
        }
        let mut state = 7u64;
        let (rounds, queries) = if cfg!(miri) { (3, 20) } else { (300, 2_000) };
        let (mut answered, mut yes) = (0u64, 0u64);
        for round in 0..rounds {
            let density = round % 3;
            let (data, num_blocks) = random_solution(&mut state, 40, 1 + round % 32, |r| match density {
                0 => r as u8,
                1 => 0,
                _ => 0xFF,
            });
            let seed = (split_mix64(&mut state) % 256) as u32;
            let portable =
                Standard128Reader::new(&data, num_blocks, seed).with_kernel(RibbonKernel::Portable);
            for _ in 0..queries {
                let key_hash = split_mix64(&mut state);
                let want = portable.may_match_hash(key_hash);
                yes += u64::from(want);
                let h = portable.hasher.hash(key_hash);
                let site = portable.layout.prepare_query(&portable.hasher, h);
                let cr = portable.hasher.coeff_row(h);
                let first = site.segment_num as usize * 16;
                for &kernel in &kernels {
                    let reader = portable.with_kernel(kernel);
                    assert_eq!(reader.kernel(), kernel);
                    assert_eq!(reader.may_match_hash(key_hash), want, "{kernel:?} round {round}");
                    if let Some(parities) = kernel.site_parities(
                        data.get(first..).unwrap_or(&[]),
                        site.num_columns,
                        site.start_bit,
                        cr,
                    ) {
                        answered += 1;
                        let columns = u32::MAX >> (32 - site.num_columns.clamp(1, 32));
                        let want_parities = portable.layout.phsf_query(&portable.hasher, h, &data);
                        assert_eq!(
                            parities & columns,
                            want_parities & columns,
                            "{kernel:?} round {round}"
                        );
                    }
                }
            }
            let hashes: Vec<u64> = (0..100).map(|_| split_mix64(&mut state)).collect();
            let mut want = vec![false; 100];
            portable.may_match_hashes(&hashes, &mut want);
            for &kernel in &kernels {
                let mut got = vec![false; 100];
                portable.with_kernel(kernel).may_match_hashes(&hashes, &mut got);
                assert_eq!(got, want, "{kernel:?} batch, round {round}");
            }
        }
        // Both answers occur (dense solutions answer "yes" often), and the
        // vector kernel answered most sites where it runs.
        assert!(yes > 0);
        if kernels.len() > 1 {
            assert!(answered > u64::from(rounds) * queries as u64 / 2, "{answered}");
        }
    }

    /// Random solution bytes of `columns` columns over `2 + random %
    /// more_blocks` blocks, plus a random number of 16-byte columns fewer
    /// than a block's worth (so that some blocks have one column fewer),
    /// each byte `byte` of a random word: the bytes and the block count.
    fn random_solution(
        state: &mut u64,
        more_blocks: u64,
        columns: u32,
        mut byte: impl FnMut(u64) -> u8,
    ) -> (Vec<u8>, u32) {
        let num_blocks = 2 + (split_mix64(state) % more_blocks) as u32;
        let extra = (split_mix64(state) % u64::from(num_blocks)) as usize * 16;
        let len = num_blocks as usize * columns as usize * 16 + extra;
        ((0..len).map(|_| byte(split_mix64(state))).collect(), num_blocks)
    }

    /// Batches of every length (0 to 13: every length mod 4, for any loop
    /// that answers queries in groups, such as the four-query loop tried for
    /// issue 37) answer as single queries of the portable reader, over small
    /// filters of 1 to 10 columns (fractional counts included), where the
    /// sites of the last blocks go to the core's query and the others to the
    /// short kernel: a batch mixes both. An `out` longer than the hashes
    /// keeps its tail; a shorter one gets the first answers.
    #[test]
    fn batches_of_every_length_answer_as_single_queries() {
        let mut state = 17u64;
        let rounds = if cfg!(miri) { 2 } else { 120 };
        let (mut mixed, mut yes) = (0u64, 0u64);
        for round in 0..rounds {
            let (data, num_blocks) = random_solution(&mut state, 6, 1 + round % 10, |r| {
                if round % 3 == 1 {
                    (r | (r >> 8)) as u8
                } else {
                    r as u8
                }
            });
            let seed = (split_mix64(&mut state) % 256) as u32;
            let portable =
                Standard128Reader::new(&data, num_blocks, seed).with_kernel(RibbonKernel::Portable);
            for batch in 0..14 {
                let hashes: Vec<u64> = (0..batch).map(|_| split_mix64(&mut state)).collect();
                let want: Vec<bool> = hashes.iter().map(|&k| portable.may_match_hash(k)).collect();
                yes += want.iter().filter(|&&w| w).count() as u64;
                let short = hashes
                    .iter()
                    .filter(|&&k| {
                        let h = portable.hasher.hash(k);
                        let site = portable.layout.prepare_query(&portable.hasher, h);
                        (site.segment_num as usize * 16) < portable.lanes8_bytes
                    })
                    .count();
                mixed += u64::from(short > 0 && short < batch);
                for kernel in RibbonKernel::available() {
                    let reader = portable.with_kernel(kernel);
                    let mut got = vec![true; batch + 3];
                    got[batch..].fill(false);
                    reader.may_match_hashes(&hashes, &mut got);
                    assert_eq!(
                        &got[..batch],
                        &want[..],
                        "{kernel:?} round {round}, batch {batch}"
                    );
                    assert!(
                        got[batch..].iter().all(|&g| !g),
                        "{kernel:?}: the tail was written"
                    );
                    // Fewer answers than hashes: the first `batch / 2`.
                    let mut half = vec![false; batch / 2];
                    reader.may_match_hashes(&hashes, &mut half);
                    assert_eq!(&half[..], &want[..batch / 2], "{kernel:?} round {round}");
                }
            }
        }
        assert!(yes > 0);
        // Under Miri (two rounds of one and two columns) no batch need mix
        // both kinds of site; the full run has 120 rounds.
        assert!(cfg!(miri) || mixed > 0, "no batch mixed short and general sites");
    }
}
