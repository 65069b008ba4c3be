//! Balanced Ribbon construction: levels banded in order into one
//! [`Banding`], each level sized for the keys that reach it, buckets of
//! primary keys taken back when they do not fit and bumped to the next
//! level, and the last shard sized for what is left.

use super::{bucket, mix, Geometry, BUCKETS, KEEP_ALL, MAX_SHARD_BITS};
use crate::core::alg::{Banding, BandingObserver, CoeffRow, Equation, NoObserver, RibbonSettings};
use crate::core::bounded::{BackSubstBySegment, Carries};
#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::hasher::Hasher;
use crate::core::math::{fast_range32, prefix_sums};
use crate::core::prelude::*;
use crate::core::solution::{self, InterleavedLayout};

/// Keys per shard the sizing aims at, by ribbon width 32, 64, 128: a shard
/// has `k` to `2k` keys. Smaller shards leave fewer slots empty but cost
/// more metadata (16 bits per shard). Chosen by measurement at 10^6 keys,
/// r = 7 (empty slots + metadata, as % of the minimum): width 64 with
/// `k` = 256: 0.56 + 0.47, 512: 0.60 + 0.23, 1024: 0.96 + 0.12; width 32
/// with 128: 2.34 + 0.94, 256: 2.19 + 0.47, 512: 3.30 + 0.24. Eight
/// buckets (8 bits) instead of 16 left 1.4 % empty at width 64.
pub(crate) const fn keys_per_shard(width: u32) -> u32 {
    match width {
        32 => 256,
        64 => 512,
        _ => 1024,
    }
}

/// The default fraction of a shard's slots left empty, by ribbon width:
/// shards get `1 + ε` slots per key they are to keep (from the
/// measurements of [`keys_per_shard`]; an error is corrected at the next
/// level, see [`ShardPlan::level_slots`]).
pub(crate) const fn default_shard_overhead(width: u32) -> f64 {
    match width {
        32 => 0.022,
        64 => 0.0055,
        _ => 0.002,
    }
}

/// What construction needs besides the keys.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShardPlan {
    /// The shards, no level sized yet.
    pub(crate) geometry: Geometry,
    /// Average keys per shard, `n / 2^b`.
    pub(crate) keys_per_shard: f64,
    /// `α`.
    pub(crate) alpha: f64,
    /// `ε`: slots per kept key and shard, minus one.
    pub(crate) overhead: f64,
}

impl ShardPlan {
    /// The starts per shard of a level whose shards receive `supply` keys
    /// on average: room for all but the `α n / 2^b` each passes on, so
    /// that the next level is overloaded as much as level 1. Sizing every
    /// level from the keys that actually reach it corrects any error in
    /// `ε` at the next level, instead of letting it double from level to
    /// level.
    pub(crate) fn level_slots(&self, supply: f64) -> u32 {
        let keep = (supply - self.alpha * self.keys_per_shard).max(1.0);
        (keep * (1.0 + self.overhead)).ceil() as u32
    }
}

/// The shards of a Balanced filter of `n >= 1` keys: `2^b` shards with
/// `n / 2^b` in `[k, 2k)` keys each (`k` from [`keys_per_shard`]; one
/// shard below `2k` keys, which is Standard Ribbon) and the paper's
/// `α = 3.5 / sqrt(n / 2^b)` (at most 1/2).
pub(crate) fn plan_shards(width: u32, n: u64, overhead: f64) -> ShardPlan {
    let k = u64::from(keys_per_shard(width));
    let mut shard_bits = 0;
    while shard_bits < MAX_SHARD_BITS && n >> (shard_bits + 1) >= k {
        shard_bits += 1;
    }
    let per_shard = n as f64 / f64::from(1u32 << shard_bits);
    let alpha = (3.5 / per_shard.sqrt()).min(0.5);
    let redirect = (alpha * 65536.0).round() as u32;
    ShardPlan {
        geometry: Geometry::new(shard_bits, redirect),
        keys_per_shard: per_shard,
        alpha: f64::from(redirect) / 65536.0,
        overhead,
    }
}

/// How construction keeps its rows (same bytes either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Memory {
    /// One banding of every slot (`w / 8 + 4` bytes per slot, next to the
    /// key hashes), back-substituted at once: the fastest.
    #[default]
    Full,
    /// A window of two shards' rows, and for back-substitution every shard
    /// banded again, last first, from what the first pass recorded: the
    /// rows that reach into it from the shards before (its *carry*) and the
    /// keys it kept. The key hashes are grouped in place
    /// and no banding of the whole filter exists, so the peak holds the
    /// hashes, the finished filter and a few bits per key.
    Low,
}

/// A banded Balanced filter, ready for back-substitution.
pub(crate) struct Banded<S: RibbonSettings> {
    pub(crate) seed: u32,
    pub(crate) geometry: Geometry,
    /// Slots of the filter: the banding may have more, all empty.
    pub(crate) num_slots: u32,
    /// One mask per shard.
    pub(crate) masks: Vec<u16>,
    rows: Rows<S>,
}

/// Where back-substitution finds the rows.
enum Rows<S: RibbonSettings> {
    /// [`Memory::Full`]: the banding of every slot.
    Full(Banding<S>),
    /// [`Memory::Low`]: what banding each shard again takes.
    Replay(Replay<S>),
}

/// What [`Memory::Low`]'s second pass bands each shard again from.
struct Replay<S: RibbonSettings> {
    hasher: Hasher<S>,
    /// The seeded hashes, grouped by primary shard.
    by_shard: Vec<u64>,
    /// Where each shard's primary keys begin in `by_shard` (and the end).
    offsets: Vec<usize>,
    record: Record<S::CoeffRow>,
}

/// What the first pass records for [`Memory::Low`], shard by shard in
/// slot order.
struct Record<C> {
    /// The seeded hashes of the keys bumped into each shard, grouped by
    /// shard: shard `u`'s are `bumped[bumped_at[u]..bumped_at[u + 1]]`.
    bumped: Vec<u64>,
    bumped_at: Vec<usize>,
    /// Each shard's carry (segment `u` is shard `u`): the rows at the slots
    /// it back-substitutes (its starts; for the last shard also the `w - 1`
    /// slots after them) once the equations of the shards before it are
    /// all added, less the rows its bumped keys stored (the second pass
    /// adds those keys again), at offsets from its first slot.
    carries: Carries<C>,
}

impl<C: CoeffRow> Record<C> {
    fn new() -> Self {
        Self {
            bumped: Vec::new(),
            bumped_at: vec![0],
            carries: Carries::new(),
        }
    }
}

impl<S: RibbonSettings> Banded<S> {
    /// Back-substitutes the filter's `num_slots` slots into `out`, laid
    /// out by `layout` (for `num_slots`), freeing the rows.
    pub(crate) fn back_subst(self, layout: &InterleavedLayout<S>, out: &mut [u8]) {
        match self.rows {
            // The banding may have more slots than the filter (room the
            // last shard did not need); every equation's coefficients name
            // slots below `num_slots`, so those rows are empty and
            // back-substituting the first `num_slots` slots is exact.
            Rows::Full(banding) => layout.back_subst(&banding, out),
            Rows::Replay(replay) => {
                replay.back_subst(&self.geometry, &self.masks, self.num_slots, layout, out)
            }
        }
    }
}

impl<S: RibbonSettings> Replay<S> {
    /// The second pass of [`Memory::Low`]: bands each shard again, last
    /// first, from its carry and the keys it kept, and back-substitutes
    /// the blocks whose rows are then all known.
    ///
    /// Why this gives the bytes of [`Memory::Full`]: take a shard with
    /// slots `a..b` (its starts; for the last shard, to the end). The
    /// first pass adds every equation that starts before `a` before the
    /// shard's primary keys, and every other equation starts at `a` or
    /// later: those of the shard, its bumped keys and, from the shard
    /// before, the keys bumped into the next shard (which start at `b` or
    /// later, so store rows only there). A row with its pivot in `a..b`
    /// is therefore a carry row, a row of the shard's bumped keys (which
    /// met only carry rows and each other) or one of its kept keys that
    /// stopped before `b` (which met only rows in `a..b`): in the span of
    /// the carry, the bumped keys and the kept keys. Banding those again
    /// (a bucket that was taken back left no trace) gives rows with the
    /// same pivots in `a..b`, each satisfied by the full solution, and
    /// back-substitution with free slots at zero, given the solution from
    /// `b` on, has one result for every such set of rows, which is why the
    /// two passes may band in different orders.
    fn back_subst(
        &self,
        geometry: &Geometry,
        masks: &[u16],
        num_slots: u32,
        layout: &InterleavedLayout<S>,
        out: &mut [u8],
    ) {
        let w = S::CoeffRow::BITS;
        let last = geometry.last_shard();
        let record = &self.record;
        let mut window = Banding::<S>::new();
        let mut subst = BackSubstBySegment::new(layout, num_slots, out);
        let mut equations: Vec<(u32, u64)> = Vec::new();
        for shard in (0..=last).rev() {
            let (first, starts) = geometry.range_of(shard);
            window.reset(starts + w - 1);
            for (offset, coeff, result) in record.carries.segment(shard as usize) {
                let stored = window.store_row(offset, coeff, result);
                debug_assert!(stored, "a carry row is one the first pass stored");
            }
            let level_first = geometry.level_first_shard(geometry.level_of(shard).min(geometry.num_levels()));
            // The shard's equations, starts relative to `first`: its bumped
            // keys, then its kept ones. Gathered first, in tight loops: an
            // iterator chain with the mask's filter was a call and a
            // mispredicted branch per key, 11 to 13 % of construction in
            // perf; gathering took the build at 10^6 keys, width 64, from
            // 64 to 59 ns/key.
            equations.clear();
            equations.extend(
                record.bumped[record.bumped_at[shard as usize]..record.bumped_at[shard as usize + 1]]
                    .iter()
                    .map(|&h| (geometry.secondary_start(level_first - 1, mix(h)) - first, h)),
            );
            let mask = masks[shard as usize];
            let primaries = &self.by_shard[self.offsets[shard as usize]..self.offsets[shard as usize + 1]];
            let mut len = equations.len();
            equations.resize(len + primaries.len(), (0, 0));
            for &h in primaries {
                // Written always, kept when the key's bucket bit is set.
                equations[len] = (geometry.start_in_shard(shard, h) - first, h);
                len += usize::from(mask >> bucket(mix(h)) & 1 == 1);
            }
            equations.truncate(len);
            // The first pass added these without a contradiction; the same
            // set cannot contradict in another order. (Sorting them by start
            // first, as the first pass's sweep does, measured no faster.)
            let added = add_all(
                &mut window,
                &self.hasher,
                equations.iter().copied(),
                &mut NoObserver,
            );
            debug_assert!(added);
            // Balanced filters are Standard Ribbon: an empty slot's result
            // is 0.
            subst.segment(first, |i| window.load_row(i - first, false));
        }
        subst.finish();
    }
}

/// Why one seed did not band.
enum SeedFailure {
    /// A key that had to fit (bumped into a shard, or of the last shard)
    /// did not: try the next seed.
    Contradiction,
    /// The filter needs this many slots, more than allocated: band the
    /// same seed again with room for them.
    NeedSlots(u64),
    /// More slots than a filter can have.
    TooLarge,
}

/// Bands `hashes` (64-bit key hashes) as a Balanced filter of `plan`,
/// trying ordinal seeds from `first_seed` until one bands or `max_seeds`
/// have failed, keeping the rows as `memory` says. `last_shard_slots(k)`
/// is the number of slots for the last shard's `k` keys (a Standard
/// Ribbon's sizing), `max_slots` the most slots a filter may have.
/// Returns the banded filter, or the number of seeds tried (`Err(None)`:
/// too many slots).
///
/// Memory: with [`Memory::Full`], the first seed groups the seeded hashes
/// by shard into a new buffer and frees `hashes` before the banding is
/// allocated, so the peak holds one copy of the hashes and the banding;
/// later seeds regroup that buffer in place. With [`Memory::Low`] every
/// seed groups in place.
pub(crate) fn band<S: RibbonSettings>(
    hashes: Vec<u64>,
    plan: &ShardPlan,
    first_seed: u32,
    max_seeds: u32,
    last_shard_slots: impl Fn(u64) -> u64,
    max_slots: u64,
    memory: Memory,
) -> Result<Banded<S>, Option<u32>> {
    let w = u64::from(S::CoeffRow::BITS);
    let s = u64::from(plan.geometry.num_shards());
    let n = hashes.len() as u64;
    // Room for the expected slots and the last shard with twice its keys
    // (more is allocated when needed).
    let expected = (n as f64 * (1.0 + plan.overhead) * 1.002) as u64;
    if expected > max_slots {
        return Err(None);
    }
    let mut allocated = expected + last_shard_slots(2 * (n / s).max(1)) + 2 * w;
    let mut banding = Banding::<S>::new();
    let (mut source, mut by_shard) = match memory {
        Memory::Full => (Some(hashes), Vec::new()),
        Memory::Low => (None, hashes),
    };
    let tries = max_seeds.max(1);
    let mut attempt = 0;
    while attempt < tries {
        let seed = first_seed.wrapping_add(attempt);
        allocated = allocated.min(max_slots);
        let mut geometry = plan.geometry;
        let hasher = Hasher::<S>::with_ordinal_seed(seed);
        let offsets = group_by_shard(&hasher, &geometry, source.take(), &mut by_shard);
        let mut record = (memory == Memory::Low).then(Record::new);
        let mut ctx = SeedRun {
            plan,
            geometry: &mut geometry,
            hasher,
            banding: &mut banding,
            by_shard: &by_shard,
            allocated: allocated as u32,
            base: 0,
            record: record.as_mut(),
        };
        let result = ctx.run(&offsets, &last_shard_slots, max_slots);
        if result.is_err() {
            // The key hashes again, for the next seed.
            let unseed = Hasher::<S>::with_ordinal_seed(seed);
            for h in by_shard.iter_mut() {
                *h = unseed.unhash(*h);
            }
        }
        match result {
            Ok((num_slots, masks)) => {
                let rows = match record {
                    None => Rows::Full(banding),
                    Some(record) => Rows::Replay(Replay {
                        hasher: Hasher::<S>::with_ordinal_seed(seed),
                        by_shard,
                        offsets,
                        record,
                    }),
                };
                return Ok(Banded {
                    seed,
                    geometry,
                    num_slots,
                    masks,
                    rows,
                });
            }
            Err(SeedFailure::Contradiction) => attempt += 1,
            Err(SeedFailure::NeedSlots(m)) => allocated = m + m / 64,
            Err(SeedFailure::TooLarge) => return Err(None),
        }
    }
    Err(Some(tries))
}

/// Rehashes the key hashes under `hasher`'s seed into `by_shard`, grouped
/// by primary shard; returns where each shard's keys begin (and the end).
/// With `source`, they are scattered from it (one counting sort) and
/// `source` is freed; without, `by_shard` holds the key hashes and is
/// regrouped in place. The shard is computed again rather than stored: a
/// multiplication is cheaper than 4 bytes per key.
fn group_by_shard<S: RibbonSettings>(
    hasher: &Hasher<S>,
    geometry: &Geometry,
    source: Option<Vec<u64>>,
    by_shard: &mut Vec<u64>,
) -> Vec<usize> {
    let shard_of = |h: u64| geometry.primary_shard(h, mix(h)) as usize;
    let mut offsets = vec![0usize; geometry.num_shards() as usize + 1];
    match source {
        Some(mut hashes) => {
            // Seeded in place (`hashes` is freed below): hashed once.
            for k in hashes.iter_mut() {
                *k = hasher.hash(*k);
                offsets[shard_of(*k) + 1] += 1;
            }
            prefix_sums(&mut offsets);
            let mut fill = offsets.clone();
            *by_shard = vec![0u64; hashes.len()];
            for h in hashes {
                let u = shard_of(h);
                by_shard[fill[u]] = h;
                fill[u] += 1;
            }
        }
        None => {
            for k in by_shard.iter_mut() {
                *k = hasher.hash(*k);
                offsets[shard_of(*k) + 1] += 1;
            }
            prefix_sums(&mut offsets);
            group_in_place(by_shard, &offsets, shard_of);
        }
    }
    offsets
}

/// Permutes `keys` so that the keys of each shard `u` (`shard_of`) lie at
/// `offsets[u]..offsets[u + 1]` (the shards' counts, summed), without a
/// second buffer: first by groups of up to 256 consecutive shards, then
/// each group by shard, so that each sort's moves go to at most 256
/// buckets' free places, and a group's second sort works within the cache.
fn group_in_place(keys: &mut [u64], offsets: &[usize], shard_of: impl Fn(u64) -> usize) {
    let num_shards = offsets.len() - 1;
    let shift = num_shards.next_power_of_two().trailing_zeros().saturating_sub(8);
    let groups: Vec<usize> = (0..=num_shards.div_ceil(1 << shift))
        .map(|g| offsets[(g << shift).min(num_shards)])
        .collect();
    sort_in_place(keys, &groups, |h| shard_of(h) >> shift);
    for g in 0..groups.len() - 1 {
        let first = g << shift;
        let last = ((g + 1) << shift).min(num_shards);
        let bounds = &offsets[first..=last];
        sort_in_place(&mut keys[bounds[0]..bounds[bounds.len() - 1]], bounds, |h| {
            shard_of(h) - first
        });
    }
}

/// Permutes `keys`, which hold the places `bounds[0]..bounds[last]`, so
/// that the keys of bucket `b` lie at `bounds[b]..bounds[b + 1]`: a
/// counting sort in place. The buckets' sizes must be the keys' counts.
///
/// In passes over the buckets not yet full (after ska_sort's byte sort): each
/// key still unplaced in bucket `b`'s range is swapped to the next free
/// place of its own bucket, and the key it displaces takes its place, to be
/// placed in a later pass. Every swap places one key for good. Unlike
/// following a cycle, where each move waits for the key the one before
/// displaced, the keys of a pass are read in order and only the free
/// places depend on each other, so the random accesses of consecutive
/// swaps overlap. Measured at 10^6 keys, width 64, in bounded memory
/// (where every seed groups in place): construction 73 to 64 ns/key.
fn sort_in_place(keys: &mut [u64], bounds: &[usize], bucket: impl Fn(u64) -> usize) {
    let base = bounds[0];
    let num_buckets = bounds.len() - 1;
    // The next free place of each bucket, and its end.
    let mut free: Vec<usize> = bounds[..num_buckets].iter().map(|b| b - base).collect();
    let end: Vec<usize> = bounds[1..].iter().map(|b| b - base).collect();
    let mut unfilled: Vec<usize> = (0..num_buckets).filter(|&b| free[b] < end[b]).collect();
    while !unfilled.is_empty() {
        for &b in &unfilled {
            for i in free[b]..end[b] {
                // `free[b] <= i` throughout: a key of bucket `b` goes to or
                // below `i`, any other key to a place of another bucket.
                let v = bucket(keys[i]);
                keys.swap(i, free[v]);
                free[v] += 1;
            }
        }
        unfilled.retain(|&b| free[b] < end[b]);
    }
}

/// One seed of [`band`].
struct SeedRun<'a, S: RibbonSettings> {
    plan: &'a ShardPlan,
    geometry: &'a mut Geometry,
    hasher: Hasher<S>,
    banding: &'a mut Banding<S>,
    /// The seeded hashes, grouped by primary shard ([`group_by_shard`]).
    by_shard: &'a [u64],
    allocated: u32,
    /// The slot of the banding's slot 0: always 0 with [`Memory::Full`];
    /// with [`Memory::Low`] the banding is a window that starts at the
    /// current shard.
    base: u32,
    /// [`Memory::Low`]: what the second pass needs.
    record: Option<&'a mut Record<S::CoeffRow>>,
}

impl<S: RibbonSettings> SeedRun<'_, S> {
    /// Bands every key: `Ok((num_slots, masks))` when each found its place.
    ///
    /// Shard by shard in slot order: the keys bumped into the shard (they
    /// must all fit; the first shard of a level adds its own, the others
    /// were added with the shard before), the keys bumped into the next
    /// shard of the same level (they must fit too), then the shard's own
    /// keys bucket by bucket. A shard's keys reach `w - 1` slots into the
    /// next shard, so the next shard's bumped keys come first: the primary
    /// buckets that would crowd them out are bumped instead (banding them
    /// after the shard's primary keys failed every seed for width 32 from
    /// 10^6 keys). No
    /// primary equation of a shard is added before those of the shards
    /// before it, which is what lets [`Memory::Low`] keep only a window.
    fn run(
        &mut self,
        offsets: &[usize],
        last_shard_slots: &impl Fn(u64) -> u64,
        max_slots: u64,
    ) -> Result<(u32, Vec<u16>), SeedFailure> {
        let w = S::CoeffRow::BITS;
        let num_shards = self.geometry.num_shards() as usize;
        let last = self.geometry.last_shard();
        let low_memory = self.record.is_some();

        self.banding.reset(if low_memory { w } else { self.allocated });
        let mut masks = vec![KEEP_ALL; num_shards];
        // Keys bumped from the previous level.
        let mut bumped: Vec<u64> = Vec::new();
        let mut next_bumped: Vec<u64> = Vec::new();
        let mut scratch = Scratch::default();
        let mut shard_keys = ShardKeys::default();
        for level in 0..self.geometry.num_levels() {
            let first = self.geometry.level_first_shard(level);
            let end = self.geometry.level_first_shard(level + 1);
            let supply = (offsets[end as usize] - offsets[first as usize]) + bumped.len();
            let slots = self.plan.level_slots(supply as f64 / f64::from(end - first));
            // The end of this level, checked before the geometry's `u32`
            // arithmetic: a level (with the window of two of its shards)
            // that does not fit is too large in either mode.
            let level_end = u64::from(self.geometry.last_first) + u64::from(slots) * u64::from(end - first);
            if level_end + 2 * u64::from(slots) + 2 * u64::from(w) > max_slots {
                return Err(SeedFailure::TooLarge);
            }
            self.geometry.set_level(level, slots);
            debug_assert_eq!(u64::from(self.geometry.last_first), level_end);
            if !low_memory && level_end + 2 * u64::from(w) > u64::from(self.allocated) {
                let m = level_end + last_shard_slots(2 * u64::from(slots)) + 2 * u64::from(w);
                return Err(if m > max_slots {
                    SeedFailure::TooLarge
                } else {
                    SeedFailure::NeedSlots(m + m / 64)
                });
            }
            // The keys bumped into this level, grouped by shard (a counting
            // sort; the shard is worked out again rather than stored):
            // `into_level[at[i]..at[i + 1]]` for shard `first + i`. With
            // `Memory::Low` they go straight to the record, which keeps them
            // for the second pass.
            let geometry = *self.geometry;
            let target = |h: u64| {
                let start = geometry.secondary_start(first - 1, mix(h));
                (geometry.shard_in_next_level(level - 1, start) - first) as usize
            };
            let mut at = vec![0usize; (end - first) as usize + 1];
            if level > 0 {
                for &h in &bumped {
                    at[target(h) + 1] += 1;
                }
            }
            prefix_sums(&mut at);
            let (into_level, base) = match self.record.as_deref_mut() {
                Some(record) => {
                    let base = record.bumped.len();
                    (&mut record.bumped, base)
                }
                None => (&mut scratch.into_level, 0),
            };
            into_level.truncate(base);
            into_level.resize(base + bumped.len(), 0);
            let mut fill = at.clone();
            for &h in &bumped {
                let t = target(h);
                into_level[base + fill[t]] = h;
                fill[t] += 1;
            }
            // Scattered: the level's own bumped keys take their room.
            bumped = Vec::new();
            next_bumped.clear();
            // The bumped keys of shard `first + i`, with their starts, into
            // `out`.
            let bumped_into = |into_level: &[u64], i: usize, out: &mut Vec<(u32, u64)>| {
                out.clear();
                out.extend(
                    into_level[base + at[i]..base + at[i + 1]]
                        .iter()
                        .map(|&h| (geometry.secondary_start(first - 1, mix(h)), h)),
                );
            };
            for shard in first..end {
                let (shard_first, starts) = geometry.range_of(shard);
                let i = (shard - first) as usize;
                // Level 1 has no bumped keys (`first - 1` is then never
                // worked out).
                let next_has_bumped = level > 0 && shard + 1 < end;
                let reach = if next_has_bumped { 2 * starts } else { starts } + w - 1;
                self.enter_shard(shard_first, reach, starts, &mut scratch.guests);
                if let Some(record) = self.record.as_deref_mut() {
                    record.bumped_at.push(base + at[i + 1]);
                }
                // The shard's own bumped keys (only the first shard of a
                // level: the others' came with the shard before), then the
                // next shard's ("guests"), whose slots `Memory::Low`'s carry
                // of the next shard leaves out.
                let own = shard == first && level > 0;
                for (wanted, j) in [(own, i), (next_has_bumped, i + 1)] {
                    if !wanted {
                        continue;
                    }
                    let into_level: &[u64] = match self.record.as_deref() {
                        Some(record) => &record.bumped,
                        None => &scratch.into_level,
                    };
                    bumped_into(into_level, j, &mut scratch.bumped_equations);
                    let keys = scratch.bumped_equations.iter().copied();
                    let added = if j > i && low_memory {
                        self.add_all(keys, &mut scratch.guests)
                    } else {
                        self.add_all(keys, &mut NoObserver)
                    };
                    if !added {
                        return Err(SeedFailure::Contradiction);
                    }
                }
                for slot in &mut scratch.guests.0 {
                    *slot += self.base;
                }
                let primaries = &self.by_shard[offsets[shard as usize]..offsets[shard as usize + 1]];
                shard_keys.fill(primaries, shard_first, starts, |h| geometry.offset_bits(h));
                let mask = self.fill_shard(at[i + 1] - at[i], primaries, &mut shard_keys, &mut scratch);
                masks[shard as usize] = mask;
                for b in (0..BUCKETS).filter(|b| mask >> b & 1 == 0) {
                    next_bumped.extend(shard_keys.rest(b).iter().map(|&(_, h)| h));
                }
            }
            core::mem::swap(&mut bumped, &mut next_bumped);
        }

        // The last shard: every key left, sized now that their number is known.
        let last_primaries = &self.by_shard[offsets[last as usize]..];
        let last_keys = (bumped.len() + last_primaries.len()) as u64;
        let before = u64::from(self.geometry.last_first);
        let wanted = before + last_shard_slots(last_keys).max(u64::from(w));
        if wanted > max_slots {
            return Err(SeedFailure::TooLarge);
        }
        let num_slots = u64::from(solution::round_up_num_slots::<S>(wanted as u32));
        if num_slots > max_slots {
            return Err(SeedFailure::TooLarge);
        }
        if !low_memory && num_slots > u64::from(self.allocated) {
            return Err(SeedFailure::NeedSlots(num_slots));
        }
        self.geometry
            .set_last_starts((num_slots - u64::from(w) + 1 - before) as u32);
        // Bumped from level `b`, the shard before the last, and the last
        // shard's own keys.
        let geometry = *self.geometry;
        // The last shard back-substitutes up to the end of the filter.
        let window = geometry.last_starts + w - 1;
        self.enter_shard(geometry.last_first, window, window, &mut scratch.guests);
        if let Some(record) = self.record.as_deref_mut() {
            record.bumped.extend_from_slice(&bumped);
            record.bumped_at.push(record.bumped.len());
        }
        let bumped_keys = bumped
            .iter()
            .map(|&h| (geometry.secondary_start(last - 1, mix(h)), h));
        let own_keys = last_primaries
            .iter()
            .map(|&h| (geometry.primary_start(h, mix(h)), h));
        if !self.add_all(bumped_keys.chain(own_keys), &mut NoObserver) {
            return Err(SeedFailure::Contradiction);
        }
        Ok((num_slots as u32, masks))
    }

    /// Makes ready to add the equations of the shard whose first start is
    /// `first`, all primary equations of earlier shards added. With [`Memory::Low`], the window moves to `first` (the rows
    /// below are final and dropped) and grows to `reach` slots, and the
    /// shard's carry is recorded: the rows in its first `carried` slots
    /// (those its second pass back-substitutes: its starts, and for the
    /// last shard the `w - 1` slots after them) except those at `guests`
    /// (absolute slots, where the shard's bumped keys were stored; the
    /// second pass adds those keys again). Rows further on have pivots in
    /// the next shard and are part of its carry.
    fn enter_shard(&mut self, first: u32, reach: u32, carried: u32, guests: &mut Stored) {
        let Some(record) = self.record.as_deref_mut() else {
            return;
        };
        debug_assert!(carried <= reach);
        self.banding.shift_down(first - self.base);
        self.base = first;
        self.banding.grow_to(reach);
        guests.0.sort_unstable();
        let banding = &self.banding;
        record.carries.push_segment((0..carried).filter_map(|i| {
            let (c, r) = banding.load_row(i, false);
            (c != S::CoeffRow::ZERO && guests.0.binary_search(&(first + i)).is_err()).then_some((i, c, r))
        }));
        guests.clear();
    }

    /// [`add_all`] for `(start, hash)` pairs whose starts are slots (not
    /// relative to the window) of the current shard.
    fn add_all<O: BandingObserver<S::CoeffRow>>(
        &mut self,
        keys: impl IntoIterator<Item = (u32, u64)>,
        observer: &mut O,
    ) -> bool {
        let base = self.base;
        add_all(
            self.banding,
            &self.hasher,
            keys.into_iter().map(|(start, h)| (start - base, h)),
            observer,
        )
    }

    /// Adds the buckets of a shard's primary keys (`primaries`, `keys`
    /// filled with them and the shard's starts) that fit, largest first,
    /// into a shard already holding `kept` keys; returns its mask.
    /// Afterwards `keys.rest(b)` holds the keys of every bucket `b` whose
    /// mask bit is clear.
    ///
    /// The largest buckets, up to [`SWEEP_FILL`] of the shard, almost
    /// always fit: they are banded together in one sweep in start order,
    /// which keeps elimination short (the slots after a start are still
    /// mostly empty); in the rare case that the sweep fails it is taken
    /// back and its buckets are tried one by one like the rest. The sweep
    /// keeps the same buckets as trying them one by one would: a set of
    /// equations that is solvable has every subset solvable, and which
    /// buckets fit depends only on which sets are solvable, not on the
    /// order of the adds (see the module doc of `balanced`).
    fn fill_shard(
        &mut self,
        mut kept: usize,
        primaries: &[u64],
        keys: &mut ShardKeys,
        scratch: &mut Scratch,
    ) -> u16 {
        let starts = keys.starts;
        let order = keys.largest_first();
        let mut mask = 0u16;
        let mut swept = 0;
        let mut sweep_keys = 0;
        while swept < order.len()
            && (kept + sweep_keys + keys.size(order[swept])) as f64 <= SWEEP_FILL * f64::from(starts)
        {
            sweep_keys += keys.size(order[swept]);
            swept += 1;
        }
        let mut sweep_mask = 0u16;
        for &b in &order[..swept] {
            sweep_mask |= 1 << b;
        }
        if swept > 0 {
            keys.split(primaries, sweep_mask);
            if self.add_all_or_none(keys.sweep().iter().copied(), &mut scratch.stored) {
                mask = sweep_mask;
                kept += sweep_keys;
            } else {
                swept = 0;
            }
        }
        if swept == 0 {
            // No sweep, or one taken back: every bucket one by one.
            keys.split(primaries, 0);
        }
        for &b in &order[swept..] {
            let size = keys.size(b);
            // A bucket with more keys than the shard has starts left is not
            // tried (its equations would crowd the next shard).
            if kept + size > starts as usize {
                continue;
            }
            // A bucket that does not fit is taken back: its keys are bumped
            // as a whole.
            let added = self.add_all_or_none(keys.rest(b).iter().copied(), &mut scratch.stored);
            if added {
                mask |= 1 << b;
                kept += size;
            }
        }
        mask
    }

    /// Adds the primary equation of every `(start, hash)`, or none of
    /// them: at the first that does not fit, those added are taken back
    /// (through `stored`, which records them).
    fn add_all_or_none(&mut self, keys: impl IntoIterator<Item = (u32, u64)>, stored: &mut Stored) -> bool {
        stored.clear();
        if self.add_all(keys, stored) {
            return true;
        }
        stored.undo(self.banding);
        false
    }
}

/// Adds to `banding` the equation under `hasher` of every `(start, hash)`,
/// three adds in flight at a time (see [`Banding::add_all_interleaved`]:
/// dense shards make long elimination chains, and independent ones
/// overlap), reporting to `observer`. Returns whether all were added; stops at the first
/// failure. Not inlined: the elimination loops keep their state in
/// registers when compiled apart from the rest of construction.
#[inline(never)]
fn add_all<S: RibbonSettings, O: BandingObserver<S::CoeffRow>>(
    banding: &mut Banding<S>,
    hasher: &Hasher<S>,
    keys: impl IntoIterator<Item = (u32, u64)>,
    observer: &mut O,
) -> bool {
    let equations = keys.into_iter().map(|(start, h)| Equation {
        start,
        coeff_row: hasher.coeff_row(h),
        result_row: hasher.result_row(h),
    });
    banding.add_all_interleaved(equations, observer)
}

/// The share of a shard's starts that its largest buckets may fill in
/// one sweep.
const SWEEP_FILL: f64 = 0.9;

/// Buffers reused from shard to shard.
#[derive(Default)]
struct Scratch {
    stored: Stored,
    /// [`Memory::Full`]: the keys bumped into the current level, grouped
    /// by shard.
    into_level: Vec<u64>,
    /// Where the keys bumped into the next shard were stored.
    guests: Stored,
    /// Keys bumped into a shard, with their starts.
    bumped_equations: Vec<(u32, u64)>,
}

/// Records the slots that successful adds stored rows at, to take a bucket
/// back.
#[derive(Default)]
struct Stored(Vec<u32>);

impl Stored {
    fn clear(&mut self) {
        self.0.clear();
    }

    /// Takes back every add recorded, the latest first.
    fn undo<S: RibbonSettings>(&self, banding: &mut Banding<S>) {
        for &slot in self.0.iter().rev() {
            banding.clear_slot(slot);
        }
    }
}

impl<C: CoeffRow> BandingObserver<C> for Stored {
    #[inline(always)]
    fn store(&mut self, slot: u32, _coeff_row: C, _result_row: u32) {
        self.0.push(slot);
    }
}

/// One shard's primary keys with their starts, split for
/// [`SeedRun::fill_shard`] into the keys of the sweep's buckets, ordered by
/// start to within 8 slots, and the rest, grouped by bucket: one loop
/// works out each key's bucket and start, a second counts the sweep's
/// keys by start, a third places every key (one counting sort for both
/// groups). (Grouping by bucket first and sorting the sweep's keys by
/// start afterwards took two scatters and twice the instructions.)
#[derive(Default)]
struct ShardKeys {
    /// The shard's first start and number of starts.
    first: u32,
    starts: u32,
    /// Each key's start, less `first`, and bucket, in input order.
    placed: Vec<(u32, u8)>,
    /// Keys per bucket.
    sizes: [usize; BUCKETS as usize],
    /// Where each bin of 8 starts (the sweep's keys), then each bucket
    /// (the others), begins in `split`, and then where it is filled to.
    cursors: Vec<usize>,
    /// `(start, hash)`: the sweep's keys, the first `sweep_len`, then the
    /// others, bucket `b`'s at `rest_at[b]..rest_at[b + 1]`.
    split: Vec<(u32, u64)>,
    sweep_len: usize,
    rest_at: [usize; BUCKETS as usize + 1],
}

impl ShardKeys {
    /// Fills with the bucket and start of each of `primaries`, the keys
    /// of a shard whose starts are `first..first + starts`, placed among
    /// them by their `offset_bits` (`Geometry::offset_bits`).
    fn fill(&mut self, primaries: &[u64], first: u32, starts: u32, offset_bits: impl Fn(u64) -> u32) {
        self.first = first;
        self.starts = starts;
        self.sizes = [0; BUCKETS as usize];
        self.placed.clear();
        self.placed.reserve(primaries.len());
        for &h in primaries {
            let b = bucket(mix(h)) as u8;
            self.sizes[usize::from(b)] += 1;
            self.placed.push((fast_range32(offset_bits(h), starts), b));
        }
    }

    fn size(&self, b: u32) -> usize {
        self.sizes[b as usize]
    }

    /// Splits `primaries` (those of the last [`fill`](Self::fill)): the
    /// keys of the buckets in `sweep_mask` to [`sweep`](Self::sweep), the
    /// others to [`rest`](Self::rest), each with its start.
    fn split(&mut self, primaries: &[u64], sweep_mask: u16) {
        debug_assert_eq!(primaries.len(), self.placed.len());
        let bins = (self.starts as usize >> 3) + 1;
        let buckets = BUCKETS as usize;
        self.cursors.clear();
        self.cursors.resize(bins + buckets + 1, 0);
        // Counts, one place on: the sweep's keys by bin, the others by
        // bucket.
        for &(offset, b) in &self.placed {
            self.cursors[(offset >> 3) as usize + 1] += usize::from(sweep_mask >> b & 1);
        }
        for b in 0..buckets {
            if sweep_mask >> b & 1 == 0 {
                self.cursors[bins + b + 1] = self.sizes[b];
            }
        }
        prefix_sums(&mut self.cursors);
        self.sweep_len = self.cursors[bins];
        self.rest_at.copy_from_slice(&self.cursors[bins..]);
        // Every place is written below: the buffer only grows.
        self.split.truncate(primaries.len());
        if self.split.len() < primaries.len() {
            self.split.resize(primaries.len(), (0, 0));
        }
        let first = self.first;
        let cursors = &mut self.cursors[..bins + buckets];
        let split = &mut self.split[..primaries.len()];
        for (&h, &(offset, b)) in primaries.iter().zip(&self.placed) {
            // Branch-free: a sweep key's bin or another key's bucket.
            let at = if sweep_mask >> b & 1 == 1 {
                (offset >> 3) as usize
            } else {
                bins + usize::from(b)
            };
            debug_assert!(at < cursors.len());
            // SAFETY: `offset < starts` (`fast_range32` onto `starts`), so
            // `offset >> 3 < bins`, and `b < BUCKETS`: `at < bins +
            // buckets = cursors.len()`.
            let cursor = unsafe { cursors.get_unchecked_mut(at) };
            let place = *cursor;
            debug_assert!(place < split.len());
            // SAFETY: the region of `at` begins at the sum of the counts of
            // the regions before it and holds as many places as keys go
            // there (counted above from the same `placed` and `sizes`, with
            // the same mask), and the counts sum to `primaries.len()`; each
            // key advances its region's cursor by one, so `place` stays
            // below the region's end, at most `split.len()`.
            unsafe { *split.get_unchecked_mut(place) = (first + offset, h) };
            *cursor = place + 1;
        }
    }

    /// The keys of the last [`split`](Self::split)'s sweep, in start order
    /// to within 8 slots.
    fn sweep(&self) -> &[(u32, u64)] {
        &self.split[..self.sweep_len]
    }

    /// The keys of bucket `b`, not in the last [`split`](Self::split)'s
    /// sweep (empty for a bucket of the sweep).
    fn rest(&self, b: u32) -> &[(u32, u64)] {
        &self.split[self.rest_at[b as usize]..self.rest_at[b as usize + 1]]
    }

    /// Bucket numbers, the most keys first (ties: the lower number).
    fn largest_first(&self) -> [u32; BUCKETS as usize] {
        let mut order: [u32; BUCKETS as usize] = core::array::from_fn(|b| b as u32);
        order.sort_by_key(|&b| core::cmp::Reverse(self.sizes[b as usize]));
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alg::Settings;

    /// A filter that needs more slots than it may have (here shards sized
    /// for 101 slots a key) is an error before any allocation, in both
    /// modes; with room, the same plan bands.
    #[test]
    fn too_many_slots_are_refused_in_both_modes() {
        type W64 = Settings<u64, true, false, false>;
        let n = 40_000u64;
        let hashes: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let plan = plan_shards(64, n, 100.0);
        assert!(plan.geometry.num_levels() > 1);
        let last = |k: u64| k + k / 10 + 64;
        for memory in [Memory::Full, Memory::Low] {
            for max_slots in [n, 101 * n, 60 * n] {
                let r = band::<W64>(hashes.clone(), &plan, 0, 4, last, max_slots, memory);
                assert!(matches!(r, Err(None)), "{memory:?}, at most {max_slots} slots");
            }
            let ok = band::<W64>(hashes.clone(), &plan, 0, 4, last, 1 << 32, memory);
            assert!(ok.is_ok(), "{memory:?}: room for all");
        }
    }

    /// The bytes do not depend on the order of the keys (construction
    /// reorders them by shard, bucket and start, and bumps keys in that
    /// order), in either memory mode, widths 32 and 64: the same filter
    /// from the keys reversed and rotated.
    #[test]
    fn bytes_do_not_depend_on_key_order() {
        use crate::standalone::{Config, Ribbon};
        let hashes: Vec<u64> = (0..60_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x1234)
            .collect();
        let mut reversed = hashes.clone();
        reversed.reverse();
        let mut rotated = hashes.clone();
        rotated.rotate_left(12_345);
        for width in [32, 64] {
            for low_memory in [false, true] {
                let mut config = Config::balanced(width, 7.0);
                config.low_memory = low_memory;
                let a = Ribbon::from_hashes(&hashes, &config).expect("builds");
                for other in [&reversed, &rotated] {
                    let b = Ribbon::from_hashes(other, &config).expect("builds");
                    assert_eq!(
                        a.as_bytes(),
                        b.as_bytes(),
                        "width {width}, low memory {low_memory}"
                    );
                }
            }
        }
    }

    /// `ShardKeys` splits a shard's keys into exactly the keys of the
    /// sweep's buckets, ordered by start to within 8 slots, and the others
    /// by bucket, each with its primary start, for sweep masks that take
    /// no bucket, some (including empty ones) and all.
    #[test]
    fn shard_keys_split_by_bucket_and_start() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let primaries: Vec<u64> = (0..700)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        let (first, starts) = (1000u32, 611u32);
        let offset_bits = |h: u64| (h >> 20) as u32;
        let start_of = |h: u64| first + fast_range32(offset_bits(h), starts);
        let bucket_of = |h: u64| bucket(mix(h));
        let mut keys = ShardKeys::default();
        keys.fill(&primaries, first, starts, offset_bits);
        for b in 0..BUCKETS {
            assert_eq!(
                keys.size(b),
                primaries.iter().filter(|&&h| bucket_of(h) == b).count()
            );
        }
        let order = keys.largest_first();
        assert!(order.windows(2).all(|p| keys.size(p[0]) >= keys.size(p[1])));
        for sweep_mask in [0u16, 0b1011, 0xC000, 0x7FFF, u16::MAX] {
            keys.split(&primaries, sweep_mask);
            let in_sweep = |h: u64| sweep_mask >> bucket_of(h) & 1 == 1;
            let mut expected: Vec<(u32, u64)> = primaries
                .iter()
                .filter(|&&h| in_sweep(h))
                .map(|&h| (start_of(h), h))
                .collect();
            let mut got = keys.sweep().to_vec();
            assert!(got
                .windows(2)
                .all(|p| (p[0].0 - first) >> 3 <= (p[1].0 - first) >> 3));
            expected.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, expected, "sweep of mask {sweep_mask:#x}");
            for b in 0..BUCKETS {
                let mut expected: Vec<(u32, u64)> = primaries
                    .iter()
                    .filter(|&&h| bucket_of(h) == b && !in_sweep(h))
                    .map(|&h| (start_of(h), h))
                    .collect();
                let mut got = keys.rest(b).to_vec();
                expected.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, expected, "bucket {b} of mask {sweep_mask:#x}");
            }
        }
    }

    /// The in-place regrouping of later seeds gives each shard exactly its
    /// keys, for shard counts below, at and above one pass's 256 groups.
    #[test]
    fn group_in_place_groups_by_shard() {
        for num_shards in [1usize, 2, 7, 256, 257, 1000, 4096] {
            let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ num_shards as u64;
            let keys: Vec<u64> = (0..20_000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                })
                .collect();
            let shard_of = |h: u64| (h % num_shards as u64) as usize;
            let mut offsets = vec![0usize; num_shards + 1];
            for &k in &keys {
                offsets[shard_of(k) + 1] += 1;
            }
            prefix_sums(&mut offsets);
            let mut grouped = keys.clone();
            group_in_place(&mut grouped, &offsets, shard_of);
            for u in 0..num_shards {
                assert!(grouped[offsets[u]..offsets[u + 1]]
                    .iter()
                    .all(|&k| shard_of(k) == u));
            }
            let (mut a, mut b) = (keys, grouped);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "a permutation");
        }
    }
}
