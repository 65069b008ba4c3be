//! The interleaved column-major ("ICML") solution: layout, back-substitution
//! into bytes, queries, and sizing for a fractional number of result columns.
//!
//! Ported from RocksDB's `util/ribbon_impl.h` (`SerializableInterleavedSolution`)
//! and `util/ribbon_alg.h` (`InterleavedBackSubst`, `InterleavedPrepareQuery`,
//! `InterleavedFilterQuery`).
//!
//! # Layout
//!
//! The `num_slots = num_blocks * w` slots are grouped into blocks of `w`
//! slots. A block stores one `w`-bit *segment* per result column: bit `k` of
//! the segment for column `j` is column `j` of the solution at slot
//! `block * w + k`. Segments are little-endian words, block after block.
//!
//! To reach a fractional number of bits per key, the first
//! `upper_start_block` blocks have `upper_num_columns - 1` columns and the
//! remaining blocks `upper_num_columns`:
//!
//! ```text
//!   block:     0      1     ...  usb-1 |  usb   ...  num_blocks-1
//!   columns:  u-1    u-1    ...  u-1   |   u    ...     u
//! ```
//!
//! Both numbers follow from the byte length and the number of blocks alone,
//! which is how a reader recovers them.
//!
//! Internal to the formats (see the crate docs): public for tests, tools
//! and experiments; its API may change with any release.

use crate::core::alg::{Banding, CoeffRow, RibbonSettings};
use crate::core::arch::{self, RibbonKernel};
use crate::core::batch::answer_in_batches;
#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::hasher::Hasher;
use core::marker::PhantomData;

/// The shape of an interleaved solution: blocks, segments and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterleavedLayout<S: RibbonSettings> {
    num_starts: u32,
    num_segments: u32,
    upper_num_columns: u32,
    upper_start_block: u32,
    _settings: PhantomData<S>,
}

impl<S: RibbonSettings> InterleavedLayout<S> {
    /// The layout for `num_blocks` blocks stored in `data_len` bytes (bytes
    /// past the last whole segment are ignored), as RocksDB's
    /// `ConfigureForNumBlocks`. Columns are capped at 32; the segment count is
    /// then reduced to fit.
    pub fn for_num_blocks(num_blocks: u32, data_len: usize) -> Self {
        let w = S::CoeffRow::BITS;
        let num_starts = if num_blocks == 0 {
            0
        } else {
            num_blocks.wrapping_mul(w).wrapping_sub(w).wrapping_add(1)
        };
        let mut num_segments = (data_len / S::CoeffRow::BYTES).min(u32::MAX as usize) as u32;
        let (mut upper_num_columns, mut upper_start_block) = (0, 0);
        if num_blocks != 0 {
            upper_num_columns = u64::from(num_segments).div_ceil(u64::from(num_blocks)) as u32;
            upper_start_block = upper_num_columns
                .wrapping_mul(num_blocks)
                .wrapping_sub(num_segments);
            if upper_num_columns > 32 {
                upper_num_columns = 32;
                upper_start_block = 0;
                num_segments = num_blocks.wrapping_mul(32);
            }
        }
        Self {
            num_starts,
            num_segments,
            upper_num_columns,
            upper_start_block,
            _settings: PhantomData,
        }
    }

    /// The layout for `num_slots` slots (a multiple of the ribbon width).
    pub fn for_num_slots(num_slots: u32, data_len: usize) -> Self {
        Self::for_num_blocks(num_slots / S::CoeffRow::BITS, data_len)
    }

    /// Number of valid starts, `num_blocks * w - w + 1`.
    pub fn num_starts(&self) -> u32 {
        self.num_starts
    }
    /// Number of blocks of `w` slots.
    pub fn num_blocks(&self) -> u32 {
        if self.num_starts == 0 {
            0
        } else {
            self.num_starts.div_ceil(S::CoeffRow::BITS)
        }
    }
    /// Number of `w`-bit segments stored.
    pub fn num_segments(&self) -> u32 {
        self.num_segments
    }
    /// Bytes of solution data: `num_segments * w / 8`.
    pub fn data_len(&self) -> usize {
        self.num_segments as usize * S::CoeffRow::BYTES
    }
    /// Columns of the upper (later) blocks; lower blocks have one fewer.
    pub fn upper_num_columns(&self) -> u32 {
        self.upper_num_columns
    }
    /// First block with `upper_num_columns` columns.
    pub fn upper_start_block(&self) -> u32 {
        self.upper_start_block
    }

    /// The FP rate a non-member key sees, averaged over starts, as RocksDB's
    /// `ExpectedFpRate`. For an empty layout (no starts) this is NaN, as in
    /// RocksDB's Standard128 configuration, which does not allow zero starts.
    pub fn expected_fp_rate(&self) -> f64 {
        let lower_portion =
            (f64::from(self.upper_start_block) * f64::from(S::CoeffRow::BITS)) / f64::from(self.num_starts);
        // The column counts are unsigned in RocksDB: with no columns at all,
        // `upper - 1` wraps and its power of one half is 0.
        lower_portion * pow_half(self.upper_num_columns.wrapping_sub(1))
            + (1.0 - lower_portion) * pow_half(self.upper_num_columns)
    }

    /// Back-substitutes `banding` into `out`, which must hold at least
    /// `data_len()` bytes. Precondition: `banding.num_starts()` equals
    /// `self.num_starts()`.
    pub fn back_subst(&self, banding: &Banding<S>, out: &mut [u8]) {
        let mut state = BackSubstState::default();
        self.back_subst_blocks(
            &mut state,
            0..self.num_blocks(),
            |i| banding.load_row(i, true),
            out,
        );
    }

    /// Back-substitutes the blocks `blocks` (block `b` holds slots `b * w ..
    /// (b + 1) * w`), from the last down to the first, writing their segments
    /// into `out` (which must hold at least `data_len()` bytes). `row(i)` is
    /// the banding's row at slot `i`, `(coeff_row, result_row)`, zero for an
    /// empty slot; `state` carries the solution of the slots above the range
    /// between calls, so that calls over consecutive ranges, highest range
    /// first and starting from [`BackSubstState::default`], write what
    /// [`back_subst`](Self::back_subst) writes in one call. Blocks past
    /// `num_blocks()` are ignored.
    pub fn back_subst_blocks(
        &self,
        state: &mut BackSubstState<S>,
        blocks: core::ops::Range<u32>,
        row: impl Fn(u32) -> (S::CoeffRow, u32),
        out: &mut [u8],
    ) {
        #[cfg(target_arch = "x86_64")]
        if arch::x86_64::popcnt_detected() {
            // SAFETY: the CPU has POPCNT, just checked.
            unsafe { self.back_subst_blocks_popcnt(state, blocks, row, out) };
            return;
        }
        self.back_subst_blocks_portable(state, blocks, row, out);
    }

    /// [`back_subst_blocks`](Self::back_subst_blocks) compiled with POPCNT
    /// (the parities are most of the work; the x86-64 baseline computes
    /// them with shifts and masks).
    ///
    /// # Safety
    ///
    /// The CPU must support POPCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    unsafe fn back_subst_blocks_popcnt(
        &self,
        state: &mut BackSubstState<S>,
        blocks: core::ops::Range<u32>,
        row: impl Fn(u32) -> (S::CoeffRow, u32),
        out: &mut [u8],
    ) {
        self.back_subst_blocks_portable(state, blocks, row, out);
    }

    #[inline(always)]
    fn back_subst_blocks_portable(
        &self,
        state: &mut BackSubstState<S>,
        blocks: core::ops::Range<u32>,
        row: impl Fn(u32) -> (S::CoeffRow, u32),
        out: &mut [u8],
    ) {
        let w = S::CoeffRow::BITS;
        let bytes = S::CoeffRow::BYTES;
        let upper = self.upper_num_columns;
        if upper == 0 {
            return;
        }
        let end = blocks.end.min(self.num_blocks());
        for block in (blocks.start..end).rev() {
            let num_columns = if block < self.upper_start_block {
                upper - 1
            } else {
                upper
            } as usize;
            let columns = &mut state.0[..num_columns];
            for i in (block * w..block * w + w).rev() {
                let (cr, rr) = row(i);
                for (j, s) in columns.iter_mut().enumerate() {
                    let mut tmp = *s << 1;
                    if ((tmp & cr).parity() ^ (rr >> j)) & 1 != 0 {
                        tmp |= S::CoeffRow::ONE;
                    }
                    *s = tmp;
                }
            }
            let segment = (block * upper - block.min(self.upper_start_block)) as usize;
            for (i, s) in columns.iter().enumerate() {
                s.store_le(&mut out[(segment + i) * bytes..]);
            }
        }
    }

    /// Where a query for rehashed value `h` reads: the first segment, the
    /// number of columns and the bit offset of the start within its block.
    #[inline(always)]
    pub fn prepare_query(&self, hasher: &Hasher<S>, h: u64) -> QuerySite {
        let w = S::CoeffRow::BITS;
        let start_slot = hasher.start(h, self.num_starts);
        let start_block = start_slot / w;
        let mut num_columns = self.upper_num_columns;
        let segment_num = start_block
            .wrapping_mul(num_columns)
            .wrapping_sub(start_block.min(self.upper_start_block));
        if start_block < self.upper_start_block {
            num_columns -= 1;
        }
        QuerySite {
            segment_num,
            num_columns,
            start_bit: start_slot % w,
        }
    }

    /// Whether rehashed value `h` may be in the set, reading segments from
    /// `data`, with the fastest [`RibbonKernel`] this CPU runs. Segments
    /// past the end of `data` (only possible for a layout that does not
    /// match `data`) make the answer `true`.
    #[inline(always)]
    pub fn filter_query(&self, hasher: &Hasher<S>, h: u64, site: QuerySite, data: &[u8]) -> bool {
        self.filter_query_with(RibbonKernel::detected(), hasher, h, site, data)
    }

    /// [`Self::filter_query`] through the short AVX2 site kernels where
    /// they apply ([`crate::core::arch::short_site_answer`]: widths 64 and
    /// 128, at most 8 columns, not the last blocks, a CPU with AVX2), the
    /// core's query elsewhere. The same answer either way.
    #[inline(always)]
    pub(crate) fn filter_query_short(
        &self,
        hasher: &Hasher<S>,
        h: u64,
        site: QuerySite,
        data: &[u8],
    ) -> bool {
        crate::core::arch::short_site_answer(
            data,
            site.segment_num,
            site.num_columns,
            site.start_bit,
            hasher.coeff_row(h),
            hasher.result_row(h),
        )
        .unwrap_or_else(|| self.filter_query(hasher, h, site, data))
    }

    /// [`Self::filter_query`] with `kernel` computing the result columns
    /// where it can (widths 64 and 128, see [`RibbonKernel`]), the
    /// portable code (one column at a time, stopping at the first that
    /// differs) elsewhere. Every kernel gives the same answer.
    #[inline(always)]
    pub fn filter_query_with(
        &self,
        kernel: RibbonKernel,
        hasher: &Hasher<S>,
        h: u64,
        site: QuerySite,
        data: &[u8],
    ) -> bool {
        let w = S::CoeffRow::BITS;
        let bytes = S::CoeffRow::BYTES;
        let cr = hasher.coeff_row(h);
        let expected = hasher.result_row(h);
        let first = site.segment_num as usize * bytes;
        if let Some(parities) = data
            .get(first..)
            .and_then(|words| kernel.site_parities(words, site.num_columns, site.start_bit, cr))
        {
            let columns = u32::MAX >> (32 - site.num_columns.clamp(1, 32));
            return site.num_columns == 0 || parities & columns == expected & columns;
        }
        let words = if site.start_bit == 0 {
            site.num_columns as usize
        } else {
            2 * site.num_columns as usize
        };
        let Some(seg) = data.get(first..first + words * bytes) else {
            return true;
        };
        if site.start_bit == 0 {
            for i in 0..site.num_columns as usize {
                let s = S::CoeffRow::load_le(&seg[i * bytes..]);
                if (s & cr).parity() != (expected >> i) & 1 {
                    return false;
                }
            }
        } else {
            let cr_left = cr << site.start_bit;
            let cr_right = cr >> (w - site.start_bit);
            let n = site.num_columns as usize;
            for i in 0..n {
                let left = S::CoeffRow::load_le(&seg[i * bytes..]);
                let right = S::CoeffRow::load_le(&seg[(n + i) * bytes..]);
                if ((left & cr_left) ^ (right & cr_right)).parity() != (expected >> i) & 1 {
                    return false;
                }
            }
        }
        true
    }

    /// Batched filter queries of 64-bit key hashes (not yet rehashed) over
    /// `solution`: every site of a batch of 32 is computed and its cache
    /// lines prefetched ([`Self::prefetch_site`]) before any is read, as in
    /// RocksDB's MultiGet path. (Standard128's reader and the batch across
    /// partitions prefetch 16 queries ahead instead,
    /// `crate::core::batch::answer_pipelined`; for this batch, used by standalone
    /// filters, that measured 8.7 against 9.5 ns/query at 10^6 keys, width
    /// 128, but 15.4 to 18.2 against 15.6 at 3·10^7, so it was not
    /// changed.) Answers
    /// `min(key_hashes.len(), out.len())` hashes; the rest of `out` is left
    /// unchanged.
    #[inline]
    pub fn filter_query_batch(
        &self,
        hasher: &Hasher<S>,
        solution: &[u8],
        key_hashes: &[u64],
        out: &mut [bool],
    ) {
        answer_in_batches(
            key_hashes,
            out,
            |k| self.prepare_prefetched(hasher, solution, k),
            |(h, site)| self.filter_query(hasher, h, site, solution),
        );
    }

    /// The first half of a batched filter query of `key_hash`: the
    /// rehashed value and the site it reads, the site's cache lines in
    /// `solution` prefetched ([`Self::filter_query`] is the second half).
    #[inline(always)]
    pub fn prepare_prefetched(&self, hasher: &Hasher<S>, solution: &[u8], key_hash: u64) -> (u64, QuerySite) {
        let h = hasher.hash(key_hash);
        let site = self.prepare_query(hasher, h);
        self.prefetch_site(site, solution);
        (h, site)
    }

    /// Hints the CPU to fetch the cache lines a query of `site` reads from
    /// `solution`, as RocksDB's `InterleavedPrepareQuery` prefetches its
    /// segment range: a batch that prefetched only the first line would
    /// wait on the others (up to 5 lines at width 128) once the filter
    /// outgrows the caches. The span is the longest a site of this layout
    /// reads (`2 * upper_num_columns` words), the same for every query, so
    /// the loop over its lines takes the same branches every time: a span
    /// fitted to each site (half as long for a start at a block's first
    /// slot) mispredicted its loop exit and, with the vector kernels,
    /// measured 16.6 against 16.4 ns in the caches and 28.2 against 23.7
    /// ns on a 256 MB filter (Standard128, AVX-512, random hashes, before
    /// the kernels took their rows in registers).
    #[inline(always)]
    pub fn prefetch_site(&self, site: QuerySite, solution: &[u8]) {
        let bytes = S::CoeffRow::BYTES;
        arch::prefetch_lines(
            solution,
            site.segment_num as usize * bytes,
            (2 * self.upper_num_columns as usize * bytes).max(1),
        );
    }

    /// The result value stored for rehashed value `h` (the PHSF query).
    pub fn phsf_query(&self, hasher: &Hasher<S>, h: u64, data: &[u8]) -> u32 {
        let w = S::CoeffRow::BITS;
        let bytes = S::CoeffRow::BYTES;
        let site = self.prepare_query(hasher, h);
        let cr = hasher.coeff_row(h);
        let load = |seg: u32| {
            let at = seg as usize * bytes;
            data.get(at..at + bytes)
                .map_or(S::CoeffRow::ZERO, S::CoeffRow::load_le)
        };
        let mut sr = 0u32;
        let cr_left = cr << site.start_bit;
        for i in 0..site.num_columns {
            sr ^= (load(site.segment_num + i) & cr_left).parity() << i;
        }
        if site.start_bit > 0 {
            let cr_right = cr >> (w - site.start_bit);
            for i in 0..site.num_columns {
                sr ^= (load(site.segment_num + site.num_columns + i) & cr_right).parity() << i;
            }
        }
        sr
    }
}

#[inline]
fn pow_half(n: u32) -> f64 {
    0.5f64.powf(f64::from(n))
}

/// The solution columns of the `w` slots above the blocks back-substituted
/// so far (one `w`-bit window per result column), carried between calls of
/// [`InterleavedLayout::back_subst_blocks`].
#[derive(Debug, Clone, Copy)]
pub struct BackSubstState<S: RibbonSettings>([S::CoeffRow; 32]);

impl<S: RibbonSettings> Default for BackSubstState<S> {
    fn default() -> Self {
        Self([S::CoeffRow::ZERO; 32])
    }
}

/// Where one query reads in an interleaved solution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuerySite {
    /// First segment read.
    pub segment_num: u32,
    /// Result columns at the start's block.
    pub num_columns: u32,
    /// Offset of the start slot within its block.
    pub start_bit: u32,
}

/// Rounds a slot count up to what an interleaved solution supports: a whole
/// number of blocks, and without smash at least two blocks.
pub fn round_up_num_slots<S: RibbonSettings>(num_slots: u32) -> u32 {
    let w = S::CoeffRow::BITS;
    let mut corrected = num_slots.wrapping_add(w - 1) / w * w;
    if !S::USE_SMASH && corrected == w {
        corrected += w;
    }
    corrected
}

/// Rounds a slot count down to a supported one (0 when none fits).
pub fn round_down_num_slots<S: RibbonSettings>(num_slots: u32) -> u32 {
    let w = S::CoeffRow::BITS;
    let mut corrected = num_slots / w * w;
    if !S::USE_SMASH && corrected == w {
        corrected = 0;
    }
    corrected
}

/// Solution bytes for `num_slots` slots (0 for 0 slots) (a supported count, see
/// [`round_up_num_slots`]) targeting an FP rate of 1 in
/// `desired_one_in_fp_rate`, mixing ⌊log2⌋ and ⌊log2⌋+1 columns. The
/// `rounding_bias32` (RocksDB passes 32 bits of key-set entropy) decides how
/// the fractional block boundary rounds, so that on average the sizes are
/// unbiased.
pub fn bytes_for_one_in_fp_rate<S: RibbonSettings>(
    num_slots: u32,
    desired_one_in_fp_rate: f64,
    rounding_bias32: u32,
) -> usize {
    internal_bytes_for_fp_rate::<S>(
        num_slots,
        1.0 / desired_one_in_fp_rate,
        desired_one_in_fp_rate,
        rounding_bias32,
    )
}

/// As [`bytes_for_one_in_fp_rate`], given the FP rate itself.
pub fn bytes_for_fp_rate<S: RibbonSettings>(
    num_slots: u32,
    desired_fp_rate: f64,
    rounding_bias32: u32,
) -> usize {
    internal_bytes_for_fp_rate::<S>(num_slots, desired_fp_rate, 1.0 / desired_fp_rate, rounding_bias32)
}

fn internal_bytes_for_fp_rate<S: RibbonSettings>(
    num_slots: u32,
    desired_fp_rate: f64,
    desired_one_in_fp_rate: f64,
    rounding_bias32: u32,
) -> usize {
    let w = S::CoeffRow::BITS;
    let bytes = S::CoeffRow::BYTES;
    if num_slots == 0 {
        return 0;
    }
    if desired_one_in_fp_rate > 1.0 && desired_fp_rate < 1.0 {
        if desired_one_in_fp_rate <= f64::from(u32::MAX) {
            let rounded = desired_one_in_fp_rate as u32;
            let lower_columns = 31 - rounded.leading_zeros();
            let lower_columns_fp_rate = 2.0f64.powi(-(lower_columns as i32));
            let upper_columns_fp_rate = 2.0f64.powi(-(lower_columns as i32 + 1));
            let lower_portion =
                (desired_fp_rate - upper_columns_fp_rate) / (lower_columns_fp_rate - upper_columns_fp_rate);
            let rounding_bias = (f64::from(rounding_bias32) + 0.5) / 4_294_967_296.0;
            let num_starts = num_slots.wrapping_sub(w).wrapping_add(1);
            let upper_start_block =
                ((lower_portion * f64::from(num_starts) + rounding_bias) / f64::from(w)) as u32;
            let num_blocks = num_slots / w;
            let num_segments = num_blocks
                .wrapping_mul(lower_columns)
                .wrapping_add(num_blocks.wrapping_sub(upper_start_block));
            num_segments as usize * bytes
        } else {
            num_slots as usize * 4
        }
    } else {
        // An FP rate of 1 or more needs no columns, but a solution without
        // zero starts keeps one segment.
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alg::Standard128;
    use crate::core::hash::split_mix64;
    use crate::core::hasher::band_with_seeds;
    use crate::core::prelude::*;

    /// The dispatched back-substitution (POPCNT where the CPU has it) writes
    /// what the portable one writes, in one call or range by range.
    #[test]
    fn every_back_substitution_writes_the_same_bytes() {
        let mut state = 3u64;
        let mut keys: Vec<u64> = (0..3000).map(|_| split_mix64(&mut state)).collect();
        let num_slots = 3200;
        let (_, banding) = band_with_seeds::<Standard128>(&mut keys, num_slots, 0..8).unwrap();
        for len in [
            num_slots as usize + 5,
            num_slots as usize * 3 / 2,
            num_slots as usize * 4,
        ] {
            let layout = InterleavedLayout::<Standard128>::for_num_slots(num_slots, len);
            let row = |i| banding.load_row(i, true);
            let mut whole = vec![0u8; len];
            layout.back_subst(&banding, &mut whole);
            let mut portable = vec![0u8; len];
            layout.back_subst_blocks_portable(
                &mut BackSubstState::default(),
                0..layout.num_blocks(),
                row,
                &mut portable,
            );
            assert_eq!(whole, portable);
            let mut pieces = vec![0u8; len];
            let mut st = BackSubstState::default();
            let nb = layout.num_blocks();
            for r in [(nb - 3)..nb, 7..(nb - 3), 0..7] {
                layout.back_subst_blocks(&mut st, r, row, &mut pieces);
            }
            assert_eq!(whole, pieces);
            assert!(whole.iter().any(|&b| b != 0));
        }
    }

    /// Every kernel answers every query as the portable code, for every
    /// coefficient width (the vector kernels run at 64 and 128 bits, the
    /// others hand back), Standard and Homogeneous settings, 1 to 33
    /// columns (more than 32 hands back too), every start offset, and the
    /// last blocks, where a kernel would read past the data and hands back.
    fn kernels_answer_as_portable<S: RibbonSettings>(seed: u64) -> (u64, u64) {
        let kernels = RibbonKernel::available();
        let mut state = seed;
        let rounds = if cfg!(miri) { 3 } else { 200 };
        let (mut yes, mut queries) = (0u64, 0u64);
        for round in 0..rounds {
            let num_blocks = 2 + (split_mix64(&mut state) % 30) as u32;
            let columns = 1 + round % 33;
            let extra = (split_mix64(&mut state) % u64::from(num_blocks)) as usize * S::CoeffRow::BYTES;
            let len = num_blocks as usize * columns as usize * S::CoeffRow::BYTES + extra;
            let density = round % 3;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    let r = split_mix64(&mut state);
                    match density {
                        0 => r as u8,
                        1 => 0,
                        _ => 0xFF,
                    }
                })
                .collect();
            let layout = InterleavedLayout::<S>::for_num_blocks(num_blocks, len);
            let hasher = Hasher::<S>::with_ordinal_seed((split_mix64(&mut state) % 256) as u32);
            for _ in 0..(if cfg!(miri) { 10 } else { 500 }) {
                let h = hasher.hash(split_mix64(&mut state));
                let site = layout.prepare_query(&hasher, h);
                let want = layout.filter_query_with(RibbonKernel::Portable, &hasher, h, site, &data);
                yes += u64::from(want);
                queries += 1;
                for &kernel in &kernels {
                    assert_eq!(
                        layout.filter_query_with(kernel, &hasher, h, site, &data),
                        want,
                        "{kernel:?}, width {}, {columns} columns, round {round}",
                        S::CoeffRow::BITS
                    );
                }
            }
        }
        (yes, queries)
    }

    #[test]
    fn every_kernel_answers_as_the_portable_one_at_every_width() {
        use crate::core::alg::{Settings, SmallRow};
        let mut results = vec![
            kernels_answer_as_portable::<Standard128>(1),
            kernels_answer_as_portable::<Settings<u128, false, false, true>>(2),
            kernels_answer_as_portable::<Settings<u64, false, false, false>>(3),
            kernels_answer_as_portable::<Settings<u64, true, true, true>>(4),
            kernels_answer_as_portable::<Settings<u32, false, false, false>>(5),
        ];
        results.push(kernels_answer_as_portable::<
            Settings<SmallRow<12>, false, false, false>,
        >(6));
        // Both answers occur at every width (zero and all-ones solutions
        // answer "yes" for some keys).
        for (yes, queries) in results {
            assert!(yes > 0 && yes < queries, "{yes} of {queries}");
        }
    }

    /// The short AVX2 kernels (`arch::short_site_answer`, which
    /// [`InterleavedLayout::filter_query_short`] asks first) answer as the portable query
    /// (`filter_query_with(Portable)`), on random solutions of 1 to 8
    /// columns (both column counts of a layout), sparse, dense and random
    /// bytes, widths 128 and 64, starts at a block's first slot and inside
    /// it, and the last blocks, where they hand the query back; and they
    /// answer most sites where AVX2 runs.
    #[test]
    fn short_kernels_answer_as_the_portable_query() {
        fn check<S: crate::core::alg::RibbonSettings>(state: &mut u64, rounds: usize) -> (u64, u64) {
            use crate::core::alg::CoeffRow;
            let bytes = S::CoeffRow::BYTES;
            let (mut answered, mut yes) = (0, 0);
            for round in 0..rounds {
                let num_blocks = 2 + (split_mix64(state) % 30) as u32;
                let columns = 1 + round % 8;
                let extra = (split_mix64(state) % u64::from(num_blocks)) as usize * bytes;
                let mut data = vec![0u8; num_blocks as usize * columns * bytes + extra];
                for b in &mut data {
                    let r = split_mix64(state);
                    *b = match round % 4 {
                        0 => 0,
                        1 => 0xFF,
                        2 => (r | (r >> 8)) as u8,
                        _ => r as u8,
                    };
                }
                let layout = InterleavedLayout::<S>::for_num_blocks(num_blocks, data.len());
                let hasher = Hasher::<S>::with_ordinal_seed((split_mix64(state) % 256) as u32);
                for _ in 0..200 {
                    let h = hasher.hash(split_mix64(state));
                    let site = layout.prepare_query(&hasher, h);
                    let want = layout.filter_query_with(RibbonKernel::Portable, &hasher, h, site, &data);
                    assert_eq!(
                        layout.filter_query_short(&hasher, h, site, &data),
                        want,
                        "round {round}, {site:?}"
                    );
                    if let Some(got) = arch::short_site_answer(
                        &data,
                        site.segment_num,
                        site.num_columns,
                        site.start_bit,
                        hasher.coeff_row(h),
                        hasher.result_row(h),
                    ) {
                        assert_eq!(got, want, "round {round}, {site:?}");
                        answered += 1;
                        yes += u64::from(got);
                    }
                }
            }
            (answered, yes)
        }
        let mut state = 5u64;
        let rounds = if cfg!(miri) { 4 } else { 400 };
        let wide = check::<crate::core::alg::Standard128>(&mut state, rounds);
        let narrow = check::<crate::core::alg::Settings<u64, true, false, false>>(&mut state, rounds);
        if cfg!(target_arch = "x86_64") && RibbonKernel::detected() != RibbonKernel::Portable {
            for (answered, yes) in [wide, narrow] {
                assert!(answered > rounds as u64 * 200 / 2 && yes > 0, "{answered} {yes}");
            }
        }
    }
}
