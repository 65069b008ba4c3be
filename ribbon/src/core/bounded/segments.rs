//! Standard Ribbon in bounded memory, by segments of a fixed `2^k` slots:
//! the equations sorted by the segment of their start, banded segment
//! after segment in a window of two segments; the last segments' rows kept
//! (up to a budget), the others banded again from their carry during
//! back-substitution ([`super`] has the mechanism and why it gives the
//! bytes of one full banding).
//!
//! The window of two segments is always enough (segments are at least `w`
//! slots): segment `k`'s carry rows lie below `p_k + b` (they were stored
//! in the previous window) with coefficients below `p_k + b + w - 1`, and
//! segment `k`'s equations start below `p_k + b`, so every row the
//! elimination forms has its coefficients, and so its pivot, below
//! `p_k + b + w - 1 <= p_k + 2b`. Should a row still reach past the
//! window, the seed falls back to the full banding of
//! [`band_with_seeds`] (same bytes) rather than trust that argument.

use super::{BackSubstBySegment, Carries};
use crate::core::alg::{CoeffRow, RibbonSettings};
use crate::core::hasher::{band_with_seeds, Hasher};
use crate::core::prelude::*;
use crate::core::solution::InterleavedLayout;

/// Filters with fewer slots (about 250,000 keys) are built with one full
/// banding: it takes at most 5 MB, and banding every key once is faster.
pub const MIN_SLOTS: u32 = 1 << 18;

/// How the slots are cut into segments, and the budget of kept rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    num_slots: u32,
    num_starts: u32,
    /// Segments of `2^seg_shift` slots (the last one takes the `w - 1`
    /// slots past the last start as well).
    seg_shift: u32,
    /// Equations are sorted by `start >> bucket_shift` (`<= seg_shift`).
    bucket_shift: u32,
    /// Bytes of kept rows allowed, per key hash.
    kept_bytes_per_hash: usize,
}

impl Geometry {
    /// The geometry used for `num_slots` slots: segments of about
    /// `sqrt(64 * num_slots)` slots (the window and the carries then cost
    /// about the same, a few bits per key), at least a few blocks.
    fn for_num_slots<S: RibbonSettings>(num_slots: u32) -> Self {
        let log2 = 31 - num_slots.max(1).leading_zeros();
        let log2_w = S::CoeffRow::BITS.trailing_zeros();
        let seg_shift = (log2 / 2 + 3).clamp(log2_w + 2, 15);
        let bucket_shift = seg_shift.saturating_sub(6).max(log2_w);
        Self::with_shifts::<S>(num_slots, seg_shift, bucket_shift, 8)
    }

    fn with_shifts<S: RibbonSettings>(
        num_slots: u32,
        seg_shift: u32,
        bucket_shift: u32,
        kept_bytes_per_hash: usize,
    ) -> Self {
        debug_assert!(bucket_shift <= seg_shift);
        assert!(S::CoeffRow::BITS.is_power_of_two() && seg_shift >= S::CoeffRow::BITS.trailing_zeros());
        Self {
            num_slots,
            num_starts: num_slots - S::CoeffRow::BITS + 1,
            seg_shift,
            bucket_shift,
            kept_bytes_per_hash,
        }
    }

    fn segment_len(&self) -> usize {
        1 << self.seg_shift
    }
    fn num_segments(&self) -> usize {
        ((self.num_starts - 1) >> self.seg_shift) as usize + 1
    }
    fn segment_start(&self, k: usize) -> usize {
        k << self.seg_shift
    }
    fn segment_end(&self, k: usize) -> usize {
        if k + 1 == self.num_segments() {
            self.num_slots as usize
        } else {
            (k + 1) << self.seg_shift
        }
    }
}

/// The equation of one key hash, its start made relative to `base`.
#[inline(always)]
fn equation<S: RibbonSettings>(
    hasher: &Hasher<S>,
    key_hash: u64,
    num_starts: u32,
    base: usize,
) -> (usize, S::CoeffRow, u32) {
    let h = hasher.hash(key_hash);
    let start = hasher.start(h, num_starts) as usize - base;
    (start, hasher.coeff_row(h), hasher.result_row(h))
}

/// Rows of a window of slots: coefficient and result rows, zero when empty.
struct Window<C> {
    coeff: Vec<C>,
    result: Vec<u32>,
}

/// What adding one equation to a window did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Added {
    /// Stored in an empty slot, or reduced to `0 = 0`.
    Ok,
    /// Reduced to `0 = 1`: the seed fails.
    Contradiction,
    /// Reached a slot past the window.
    Beyond,
}

impl<C: CoeffRow> Window<C> {
    fn new(len: usize) -> Self {
        Self {
            coeff: vec![C::ZERO; len],
            result: vec![0; len],
        }
    }

    /// On-the-fly elimination of `equations` (start relative to the
    /// window, coefficient row, result row) in the first `len` slots, as
    /// [`crate::core::alg::Banding::add`], except that an add reaching a slot at
    /// or past `len` stops ([`Added::Beyond`]) instead of being impossible;
    /// nothing is written for an add unless its equation is stored.
    ///
    /// Three adds are in flight: each elimination step reads the slot the
    /// step before computed, so one add is a chain of dependent loads, and
    /// independent chains overlap in the CPU (as
    /// [`crate::core::alg::Banding::add_all_interleaved`]; one add at a time took
    /// 1.33 times as long at 10^6 keys, 1.2 at 10^7). `on_end` gets the
    /// outcome of each add as it ends, and stops the adds by returning
    /// `false` (then this returns `false`). Every add that ended left the
    /// window as if the adds had been made one after the other in the
    /// order in which they ended: a row is only stored at an empty slot and
    /// never changed, so an add meets only rows that were there, unchanged,
    /// in that order too. The order does not change the solution (see the
    /// module docs of [`crate::core::alg`]).
    #[inline(always)]
    fn add_interleaved(
        &mut self,
        len: usize,
        mut equations: impl Iterator<Item = (usize, C, u32)>,
        mut on_end: impl FnMut(Added) -> bool,
    ) -> bool {
        let coeff = &mut self.coeff[..len];
        let result = &mut self.result[..len];
        // The next equation that needs a step, normalized (its first
        // coefficient one); those that end at once go to `on_end`.
        macro_rules! next {
            () => {
                loop {
                    let Some((i, cr, rr)) = equations.next() else {
                        break None;
                    };
                    if cr == C::ZERO {
                        if !on_end(if rr == 0 {
                            Added::Ok
                        } else {
                            Added::Contradiction
                        }) {
                            return false;
                        }
                        continue;
                    }
                    let tz = cr.trailing_zeros();
                    break Some((i + tz as usize, cr >> tz, rr));
                }
            };
        }
        // One elimination step of an add: its outcome when it ends.
        macro_rules! step {
            ($i:ident, $cr:ident, $rr:ident) => {
                match coeff.get($i) {
                    None => Some(Added::Beyond),
                    Some(&at_i) if at_i == C::ZERO => {
                        coeff[$i] = $cr;
                        result[$i] = $rr;
                        Some(Added::Ok)
                    }
                    Some(&at_i) => {
                        $cr ^= at_i;
                        $rr ^= result[$i];
                        if $cr == C::ZERO {
                            Some(if $rr == 0 {
                                Added::Ok
                            } else {
                                Added::Contradiction
                            })
                        } else {
                            let tz = $cr.trailing_zeros();
                            $i += tz as usize;
                            $cr = $cr >> tz;
                            None
                        }
                    }
                }
            };
        }
        macro_rules! finish {
            ($i:ident, $cr:ident, $rr:ident) => {
                loop {
                    if let Some(outcome) = step!($i, $cr, $rr) {
                        if !on_end(outcome) {
                            return false;
                        }
                        break;
                    }
                }
            };
        }
        let Some((mut ia, mut cra, mut rra)) = next!() else {
            return true;
        };
        let Some((mut ib, mut crb, mut rrb)) = next!() else {
            finish!(ia, cra, rra);
            return true;
        };
        let Some((mut ic, mut crc, mut rrc)) = next!() else {
            finish!(ia, cra, rra);
            finish!(ib, crb, rrb);
            return true;
        };
        // One step of the add in lane (`i`, `cr`, `rr`); when it ends, the
        // next equation takes the lane, or, when there is none, the other
        // two lanes are finished.
        macro_rules! lane {
            (($i:ident, $cr:ident, $rr:ident), ($i1:ident, $cr1:ident, $rr1:ident), ($i2:ident, $cr2:ident, $rr2:ident)) => {
                if let Some(outcome) = step!($i, $cr, $rr) {
                    if !on_end(outcome) {
                        return false;
                    }
                    match next!() {
                        Some(row) => ($i, $cr, $rr) = row,
                        None => {
                            finish!($i1, $cr1, $rr1);
                            finish!($i2, $cr2, $rr2);
                            return true;
                        }
                    }
                }
            };
        }
        loop {
            lane!((ia, cra, rra), (ib, crb, rrb), (ic, crc, rrc));
            lane!((ib, crb, rrb), (ia, cra, rra), (ic, crc, rrc));
            lane!((ic, crc, rrc), (ia, cra, rra), (ib, crb, rrb));
        }
    }

    fn clear(&mut self, len: usize) {
        self.coeff[..len].fill(C::ZERO);
        self.result[..len].fill(0);
    }
}

/// The final rows of slots `first_slot..num_slots`, kept in the words of
/// the sort's other buffer (already resident, and free between sorts):
/// coefficient rows as `ceil(w / 64)` little-endian words each, then the
/// result rows cut to `result_bytes` bytes each (enough for every result
/// column), packed little-endian into the following words.
struct Kept<'a, C> {
    first_slot: usize,
    len: usize,
    /// The first word of the result rows.
    results_at: usize,
    words: &'a mut [u64],
    result_bytes: usize,
    _coeff: core::marker::PhantomData<C>,
}

impl<'a, C: CoeffRow> Kept<'a, C> {
    /// Words per coefficient row.
    const COEFF_WORDS: usize = C::BYTES.div_ceil(8);

    /// Words `slots` kept rows take.
    fn words_for(slots: usize, result_bytes: usize) -> usize {
        slots * Self::COEFF_WORDS + (slots * result_bytes).div_ceil(8)
    }

    fn new(first_slot: usize, slots: usize, words: &'a mut [u64], result_bytes: usize) -> Self {
        debug_assert!(Self::words_for(slots, result_bytes) <= words.len());
        Self {
            first_slot,
            len: 0,
            results_at: slots * Self::COEFF_WORDS,
            words,
            result_bytes,
            _coeff: core::marker::PhantomData,
        }
    }

    fn push(&mut self, coeff: &[C], result: &[u32]) {
        let cw = Self::COEFF_WORDS;
        let rb = self.result_bytes;
        let results = self.results_at;
        for (&c, &r) in coeff.iter().zip(result) {
            let mut bytes = [0u8; 32];
            c.store_le(&mut bytes);
            for (k, word) in self.words[self.len * cw..(self.len + 1) * cw]
                .iter_mut()
                .enumerate()
            {
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes[k * 8..k * 8 + 8]);
                *word = u64::from_le_bytes(b);
            }
            let bit = self.len * rb * 8;
            let mask = if rb == 4 {
                u64::from(u32::MAX)
            } else {
                (1u64 << (8 * rb)) - 1
            };
            let word = &mut self.words[results + bit / 64];
            *word = (*word & !(mask << (bit % 64))) | ((u64::from(r) & mask) << (bit % 64));
            self.len += 1;
        }
    }

    #[inline(always)]
    fn row(&self, slot: usize) -> (C, u32) {
        let i = slot - self.first_slot;
        let cw = Self::COEFF_WORDS;
        let rb = self.result_bytes;
        let mut bytes = [0u8; 32];
        for (k, &word) in self.words[i * cw..(i + 1) * cw].iter().enumerate() {
            bytes[k * 8..k * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
        let bit = i * rb * 8;
        let mask = if rb == 4 {
            u64::from(u32::MAX)
        } else {
            (1u64 << (8 * rb)) - 1
        };
        let r = (self.words[self.results_at + bit / 64] >> (bit % 64)) & mask;
        (C::load_le(&bytes), r as u32)
    }
}

/// What a successful first pass leaves for the second.
type FirstPass<'k, C> = (Carries<C>, Kept<'k, C>);

/// Why a first pass gave up on a seed.
enum Failed {
    /// The system has no solution for this seed.
    Contradiction,
    /// A row left the window: band this seed in full instead.
    Overflow,
}

/// Writes `hashes` into `sorted` (of the same length) ordered by bucket of
/// their start under `hasher` (buckets nest in segments, see [`Geometry`])
/// and returns each segment's first index (`num_segments + 1` entries).
#[inline(never)]
fn sort_by_bucket<S: RibbonSettings>(
    hashes: &[u64],
    sorted: &mut [u64],
    hasher: &Hasher<S>,
    g: &Geometry,
) -> Vec<usize> {
    let num_buckets = ((g.num_starts - 1) >> g.bucket_shift) as usize + 1;
    let bucket = |k: u64| (hasher.start(hasher.hash(k), g.num_starts) >> g.bucket_shift) as usize;
    let mut next = vec![0usize; num_buckets + 1];
    for &k in hashes {
        next[bucket(k) + 1] += 1;
    }
    crate::core::math::prefix_sums(&mut next);
    let per_segment = 1usize << (g.seg_shift - g.bucket_shift);
    let mut firsts: Vec<usize> = (0..g.num_segments()).map(|k| next[k * per_segment]).collect();
    firsts.push(hashes.len());
    for &k in hashes {
        let b = bucket(k);
        sorted[next[b]] = k;
        next[b] += 1;
    }
    firsts
}

/// The first pass: adds every equation, segment after segment, in a window
/// of two segments. Returns the carries and the kept rows (segments from
/// `keep_from` on).
#[inline(never)]
fn first_pass<'k, S: RibbonSettings>(
    hashes: &[u64],
    firsts: &[usize],
    hasher: &Hasher<S>,
    g: &Geometry,
    keep_from: usize,
    mut kept: Kept<'k, S::CoeffRow>,
    window: &mut Window<S::CoeffRow>,
) -> Result<FirstPass<'k, S::CoeffRow>, Failed> {
    let b = g.segment_len();
    let num_segments = g.num_segments();
    let mut carries = Carries::new();
    window.clear(2 * b);
    for k in 0..num_segments {
        let base = g.segment_start(k);
        if k > 0 {
            // Segment k - 1's rows are final; the window moves up by one
            // segment, and what is left in it is segment k's carry.
            if k > keep_from {
                kept.push(&window.coeff[..b], &window.result[..b]);
            }
            window.coeff.copy_within(b..2 * b, 0);
            window.result.copy_within(b..2 * b, 0);
            window.coeff[b..2 * b].fill(S::CoeffRow::ZERO);
            window.result[b..2 * b].fill(0);
        }
        // (Segment 0's window is all empty: no carry.)
        carries.push_segment(
            window.coeff[..b]
                .iter()
                .zip(&window.result[..b])
                .enumerate()
                .filter(|&(_, (&c, _))| c != S::CoeffRow::ZERO)
                .map(|(i, (&c, &r))| (i as u32, c, r)),
        );
        let len = (2 * b).min(g.num_slots as usize - base);
        let equations = hashes[firsts[k]..firsts[k + 1]]
            .iter()
            .map(|&key| equation(hasher, key, g.num_starts, base));
        let mut failed = None;
        window.add_interleaved(len, equations, |outcome| match outcome {
            Added::Ok => true,
            Added::Contradiction => {
                failed = Some(Failed::Contradiction);
                false
            }
            // Past the end of all slots is impossible (the storage
            // invariant of `Banding`); past the window is too far.
            Added::Beyond => {
                failed = Some(Failed::Overflow);
                false
            }
        });
        if let Some(failed) = failed {
            return Err(failed);
        }
    }
    let last = num_segments - 1;
    if last >= keep_from {
        let len = g.num_slots as usize - g.segment_start(last);
        kept.push(&window.coeff[..len], &window.result[..len]);
    }
    Ok((carries, kept))
}

/// The second pass: back-substitutes every segment, last first, rebuilding
/// the rows of those below `keep_from` from their carry.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn second_pass<S: RibbonSettings>(
    hashes: &[u64],
    firsts: &[usize],
    hasher: &Hasher<S>,
    g: &Geometry,
    keep_from: usize,
    carries: &Carries<S::CoeffRow>,
    kept: &Kept<'_, S::CoeffRow>,
    window: &mut Window<S::CoeffRow>,
    layout: &InterleavedLayout<S>,
    out: &mut [u8],
) {
    let mut subst = BackSubstBySegment::new(layout, g.num_slots, out);
    for k in (0..g.num_segments()).rev() {
        let (base, end) = (g.segment_start(k), g.segment_end(k));
        if k >= keep_from {
            subst.segment(base as u32, |i| kept.row(i as usize));
            continue;
        }
        let len = end - base;
        window.clear(len);
        for (at, c, r) in carries.segment(k) {
            window.coeff[at as usize] = c;
            window.result[at as usize] = r;
        }
        let equations = hashes[firsts[k]..firsts[k + 1]]
            .iter()
            .map(|&key| equation(hasher, key, g.num_starts, base));
        // Rows past the segment are not needed; the first pass saw no
        // contradiction, so none can appear in a part of its work.
        window.add_interleaved(len, equations, |outcome| {
            debug_assert_ne!(outcome, Added::Contradiction);
            true
        });
        subst.segment(base as u32, |i| {
            let at = i as usize - base;
            (window.coeff[at], window.result[at])
        });
    }
    subst.finish();
}

/// Bytes a result row needs for `columns` result columns.
fn result_bytes_for(columns: u32) -> usize {
    match columns {
        0..=8 => 1,
        9..=16 => 2,
        _ => 4,
    }
}

/// Builds the solution of `hashes` in `num_slots` slots, trying the ordinal
/// `seeds` in order, into a zeroed buffer of `buf_len` bytes laid out by
/// `layout` (which must be for `num_slots`). Returns the seed and the
/// buffer, or the hashes (reordered) when every seed fails. Same bytes as
/// [`band_with_seeds`] followed by [`InterleavedLayout::back_subst`].
/// Precondition: `num_slots >= 2 * w`, not homogeneous.
pub fn build<S: RibbonSettings>(
    hashes: Vec<u64>,
    num_slots: u32,
    seeds: impl IntoIterator<Item = u32>,
    layout: &InterleavedLayout<S>,
    buf_len: usize,
) -> Result<(u32, Vec<u8>), Vec<u64>> {
    build_with(
        hashes,
        Geometry::for_num_slots::<S>(num_slots),
        seeds,
        layout,
        buf_len,
    )
}

fn build_with<S: RibbonSettings>(
    mut hashes: Vec<u64>,
    g: Geometry,
    seeds: impl IntoIterator<Item = u32>,
    layout: &InterleavedLayout<S>,
    buf_len: usize,
) -> Result<(u32, Vec<u8>), Vec<u64>> {
    assert!(!S::HOMOGENEOUS, "segmented construction is for standard Ribbon");
    let result_bytes = result_bytes_for(layout.upper_num_columns());
    let num_segments = g.num_segments();
    // The sort's other buffer holds the kept rows: as many of the last
    // segments as fit, at most the budget.
    let budget_words = hashes.len().min(hashes.len() * g.kept_bytes_per_hash / 8);
    let keep_from = (0..num_segments)
        .find(|&k| {
            let slots = g.num_slots as usize - g.segment_start(k);
            Kept::<S::CoeffRow>::words_for(slots, result_bytes) <= budget_words
        })
        .unwrap_or(num_segments);
    let kept_slots = (g.num_slots as usize).saturating_sub(g.segment_start(keep_from));
    let mut window = Window::<S::CoeffRow>::new(2 * g.segment_len());
    let mut other = vec![0u64; hashes.len()];
    let mut seeds = seeds.into_iter();
    while let Some(seed) = seeds.next() {
        let hasher = Hasher::<S>::with_ordinal_seed(seed);
        let firsts = sort_by_bucket(&hashes, &mut other, &hasher, &g);
        core::mem::swap(&mut hashes, &mut other);
        let kept = Kept::new(g.segment_start(keep_from), kept_slots, &mut other, result_bytes);
        match first_pass(&hashes, &firsts, &hasher, &g, keep_from, kept, &mut window) {
            Ok((carries, kept)) => {
                let mut buf = vec![0u8; buf_len];
                second_pass(
                    &hashes,
                    &firsts,
                    &hasher,
                    &g,
                    keep_from,
                    &carries,
                    &kept,
                    &mut window,
                    layout,
                    &mut buf,
                );
                return Ok((seed, buf));
            }
            Err(Failed::Contradiction) => {}
            Err(Failed::Overflow) => {
                drop((window, other));
                let rest = core::iter::once(seed).chain(seeds);
                return match band_with_seeds::<S>(&mut hashes, g.num_slots, rest) {
                    Some((seed, banding)) => {
                        drop(hashes);
                        let mut buf = vec![0u8; buf_len];
                        layout.back_subst(&banding, &mut buf);
                        Ok((seed, buf))
                    }
                    None => Err(hashes),
                };
            }
        }
    }
    Err(hashes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alg::Standard128;
    use crate::core::hash::split_mix64;

    type S = Standard128;

    fn hashes(n: usize, seed: u64) -> Vec<u64> {
        let mut state = seed;
        (0..n).map(|_| split_mix64(&mut state)).collect()
    }

    /// The reference: one full banding, then back-substitution.
    fn full(mut hashes: Vec<u64>, num_slots: u32, seeds: &[u32], len: usize) -> Option<(u32, Vec<u8>)> {
        let layout = InterleavedLayout::<S>::for_num_slots(num_slots, len);
        let (seed, banding) = band_with_seeds::<S>(&mut hashes, num_slots, seeds.iter().copied())?;
        let mut buf = vec![0u8; len];
        layout.back_subst(&banding, &mut buf);
        Some((seed, buf))
    }

    fn check(n: usize, num_slots: u32, len: usize, g: Geometry, seeds: &[u32]) {
        let keys = hashes(n, n as u64 ^ u64::from(num_slots));
        let layout = InterleavedLayout::<S>::for_num_slots(num_slots, len);
        let want = full(keys.clone(), num_slots, seeds, len);
        let got = build_with(keys.clone(), g, seeds.iter().copied(), &layout, len);
        match (want, got) {
            (Some(w), Ok(g)) => {
                let d = w.1.iter().zip(&g.1).position(|(a, b)| a != b);
                assert!(
                    w == g,
                    "n {n} slots {num_slots}: seeds {} {} len {} {} first diff {d:?} of {len}",
                    w.0,
                    g.0,
                    w.1.len(),
                    g.1.len()
                )
            }
            (None, Err(mut back)) => {
                let mut keys = keys;
                keys.sort_unstable();
                back.sort_unstable();
                assert_eq!(keys, back, "the hashes come back on failure");
            }
            (w, g) => panic!("n {n}: full {:?} segmented {:?}", w.is_some(), g.is_ok()),
        }
    }

    /// Same bytes and seed as the full banding, over segment sizes, kept
    /// budgets (none, some, all), column counts and loads, including loads
    /// where seeds fail.
    #[test]
    fn same_bytes_as_the_full_banding() {
        let seeds: Vec<u32> = (0..8).collect();
        for (n, num_slots) in [
            (3000u32, 3200u32),
            (3000, 3072),
            (9000, 9600),
            (500, 1024),
            (20_000, 20_480),
        ] {
            for bytes_per_slot in [1usize, 2, 3] {
                let len = num_slots as usize * bytes_per_slot + 5;
                for (seg_shift, bucket_shift) in [(7, 7), (8, 7), (9, 8), (10, 7), (12, 12)] {
                    for kept in [0, 4, 8, 100] {
                        let g = Geometry::with_shifts::<S>(num_slots, seg_shift, bucket_shift, kept);
                        check(n as usize, num_slots, len, g, &seeds);
                    }
                }
            }
        }
    }

    /// Many columns (result rows wider than a byte) and an overloaded
    /// system where every seed fails.
    #[test]
    fn wide_results_and_failures() {
        let g = |slots, kept| Geometry::with_shifts::<S>(slots, 8, 7, kept);
        for kept in [0, 8, 100] {
            check(4000, 4096, 4096 * 2, g(4096, kept), &[0, 1, 2, 3]);
            check(4000, 4096, 4096 * 4, g(4096, kept), &[5, 6]);
            check(5000, 4096, 4096, g(4096, kept), &[0, 1]);
        }
    }

    /// Segments of one block: rows often travel past the window, which
    /// falls back to the full banding for the same bytes.
    #[test]
    fn the_default_geometry_matches_on_a_large_filter() {
        let num_slots = 1 << 17;
        let g = Geometry::for_num_slots::<S>(num_slots);
        assert!(g.num_segments() > 4, "{g:?}");
        check(127_000, num_slots, num_slots as usize + 5, g, &[9, 10, 11]);
    }
}
