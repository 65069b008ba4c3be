//! Balanced Ribbon construction: levels banded in order into one
//! [`Banding`], each level sized for the keys that reach it, buckets of
//! primary keys taken back when they do not fit and bumped to the next
//! level, and the last shard sized for what is left.

use super::{bucket, mix, Geometry, BUCKETS, KEEP_ALL, MAX_SHARD_BITS};
use crate::alg::{Banding, BandingObserver, CoeffRow, Equation, NoObserver, RibbonSettings};
use crate::math::{fast_range32, prefix_sums};
use crate::solution;
use crate::standard::Hasher;

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

/// A banded Balanced filter, ready for back-substitution.
pub(crate) struct Banded<S: RibbonSettings> {
    pub(crate) seed: u32,
    pub(crate) geometry: Geometry,
    /// Slots of the filter: the banding may have more, all empty.
    pub(crate) num_slots: u32,
    pub(crate) banding: Banding<S>,
    /// One mask per shard.
    pub(crate) masks: Vec<u16>,
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
/// have failed. `last_shard_slots(k)` is the number of slots for the last
/// shard's `k` keys (a Standard Ribbon's sizing), `max_slots` the most
/// slots a filter may have. Returns the banded filter, or the number of
/// seeds tried (`Err(None)`: too many slots).
///
/// Memory: the first seed groups the seeded hashes by shard into a new
/// buffer and frees `hashes` before the banding is allocated, so the peak
/// holds one copy of the hashes; later seeds regroup that buffer in place.
pub(crate) fn band<S: RibbonSettings>(
    hashes: Vec<u64>,
    plan: &ShardPlan,
    first_seed: u32,
    max_seeds: u32,
    last_shard_slots: impl Fn(u64) -> u64,
    max_slots: u64,
) -> Result<Banded<S>, Option<u32>> {
    let w = u64::from(S::CoeffRow::BITS);
    let s = u64::from(plan.geometry.num_shards());
    let n = hashes.len() as u64;
    // Room for the expected slots and the last shard with twice its keys
    // (more is allocated when needed).
    let expected = (n as f64 * (1.0 + plan.overhead) * 1.002) as u64;
    let mut allocated = expected + last_shard_slots(2 * (n / s).max(1)) + 2 * w;
    let mut banding = Banding::<S>::new();
    let mut source = Some(hashes);
    let mut by_shard = Vec::new();
    let tries = max_seeds.max(1);
    let mut attempt = 0;
    while attempt < tries {
        let seed = first_seed.wrapping_add(attempt);
        allocated = allocated.min(max_slots);
        let mut geometry = plan.geometry;
        let hasher = Hasher::<S>::with_ordinal_seed(seed);
        let offsets = group_by_shard(&hasher, &geometry, source.take(), &mut by_shard);
        let mut ctx = SeedRun {
            plan,
            geometry: &mut geometry,
            hasher,
            banding: &mut banding,
            by_shard: &by_shard,
            allocated: allocated as u32,
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
                return Ok(Banded {
                    seed,
                    geometry,
                    num_slots,
                    banding,
                    masks,
                })
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
        Some(hashes) => {
            for &k in &hashes {
                offsets[shard_of(hasher.hash(k)) + 1] += 1;
            }
            prefix_sums(&mut offsets);
            let mut fill = offsets.clone();
            *by_shard = vec![0u64; hashes.len()];
            for k in hashes {
                let h = hasher.hash(k);
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
/// each group by shard, so that each pass's moves stay among at most 256
/// places, and a group's second pass works within the cache.
fn group_in_place(keys: &mut [u64], offsets: &[usize], shard_of: impl Fn(u64) -> usize) {
    let num_shards = offsets.len() - 1;
    let shift = num_shards.next_power_of_two().trailing_zeros().saturating_sub(8);
    let groups: Vec<usize> = (0..=num_shards.div_ceil(1 << shift))
        .map(|g| offsets[(g << shift).min(num_shards)])
        .collect();
    cycle_sort(keys, &groups, |h| shard_of(h) >> shift);
    for g in 0..groups.len() - 1 {
        let first = g << shift;
        let last = ((g + 1) << shift).min(num_shards);
        let bounds = &offsets[first..=last];
        cycle_sort(&mut keys[bounds[0]..bounds[bounds.len() - 1]], bounds, |h| {
            shard_of(h) - first
        });
    }
}

/// Permutes `keys`, which hold the places `bounds[0]..bounds[last]`, so
/// that the keys of bucket `b` lie at `bounds[b]..bounds[b + 1]`: a
/// counting sort by cycles, each key moved to the next free place of its
/// bucket. The buckets' sizes must be the keys' counts.
fn cycle_sort(keys: &mut [u64], bounds: &[usize], bucket: impl Fn(u64) -> usize) {
    let base = bounds[0];
    let mut fill: Vec<usize> = bounds.iter().map(|b| b - base).collect();
    for b in 0..bounds.len() - 1 {
        let end = bounds[b + 1] - base;
        while fill[b] < end {
            let mut h = keys[fill[b]];
            let mut v = bucket(h);
            // Follow the cycle until a key of bucket `b` comes back.
            while v != b {
                core::mem::swap(&mut h, &mut keys[fill[v]]);
                fill[v] += 1;
                v = bucket(h);
            }
            keys[fill[b]] = h;
            fill[b] += 1;
        }
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
}

impl<S: RibbonSettings> SeedRun<'_, S> {
    /// Bands every key: `Ok((num_slots, masks))` when each found its place.
    fn run(
        &mut self,
        offsets: &[usize],
        last_shard_slots: &impl Fn(u64) -> u64,
        max_slots: u64,
    ) -> Result<(u32, Vec<u16>), SeedFailure> {
        let w = S::CoeffRow::BITS;
        let num_shards = self.geometry.num_shards() as usize;
        let last = self.geometry.last_shard();

        self.banding.reset(self.allocated);
        let mut masks = vec![KEEP_ALL; num_shards];
        // Keys bumped from the previous level, and how many went to each
        // shard of this one.
        let mut bumped: Vec<u64> = Vec::new();
        let mut next_bumped: Vec<u64> = Vec::new();
        let mut bumped_into = vec![0u32; num_shards];
        let mut scratch = Scratch::default();
        let mut buckets = Buckets::default();
        for level in 0..self.geometry.num_levels() {
            let first = self.geometry.level_first_shard(level);
            let end = self.geometry.level_first_shard(level + 1);
            let supply = (offsets[end as usize] - offsets[first as usize]) + bumped.len();
            let slots = self.plan.level_slots(supply as f64 / f64::from(end - first));
            self.geometry.set_level(level, slots);
            // `last_first` is now the end of this level.
            let level_end = u64::from(self.geometry.last_first);
            if level_end + 2 * u64::from(w) > u64::from(self.allocated) {
                let m = level_end + last_shard_slots(2 * u64::from(slots)) + 2 * u64::from(w);
                return Err(if m > max_slots {
                    SeedFailure::TooLarge
                } else {
                    SeedFailure::NeedSlots(m + m / 64)
                });
            }
            // Keys bumped into this level must fit: they go first, in
            // start order.
            if level > 0 {
                // Grouped by shard (a counting sort), then banded: each
                // key's start and shard computed once.
                let geometry = *self.geometry;
                scratch.unsorted.clear();
                scratch.shards.clear();
                for &h in &bumped {
                    let start = geometry.secondary_start(first - 1, mix(h));
                    let shard = geometry.shard_in_next_level(level - 1, start);
                    bumped_into[shard as usize] += 1;
                    scratch.unsorted.push((start, h));
                    scratch.shards.push(shard - first);
                }
                let mut at = vec![0usize; (end - first) as usize + 1];
                for shard in first..end {
                    at[(shard - first) as usize + 1] =
                        at[(shard - first) as usize] + bumped_into[shard as usize] as usize;
                }
                scratch.sorted.clear();
                scratch.sorted.resize(bumped.len(), (0, 0));
                for (&key, &i) in scratch.unsorted.iter().zip(&scratch.shards) {
                    scratch.sorted[at[i as usize]] = key;
                    at[i as usize] += 1;
                }
                if !add_all(
                    self.banding,
                    &self.hasher,
                    scratch.sorted.iter().copied(),
                    &mut NoObserver,
                ) {
                    return Err(SeedFailure::Contradiction);
                }
            }
            next_bumped.clear();
            for shard in first..end {
                let primaries = &self.by_shard[offsets[shard as usize]..offsets[shard as usize + 1]];
                buckets.fill(primaries);
                let mask = self.fill_shard(
                    shard,
                    bumped_into[shard as usize] as usize,
                    &buckets,
                    &mut scratch,
                );
                masks[shard as usize] = mask;
                for b in (0..BUCKETS).filter(|b| mask >> b & 1 == 0) {
                    next_bumped.extend(buckets.keys(b));
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
        if num_slots > u64::from(self.allocated) {
            return Err(SeedFailure::NeedSlots(num_slots));
        }
        self.geometry
            .set_last_starts((num_slots - u64::from(w) + 1 - before) as u32);
        // Bumped from level `b`, the shard before the last, and the last
        // shard's own keys.
        let geometry = *self.geometry;
        let bumped_keys = bumped
            .iter()
            .map(|&h| (geometry.secondary_start(last - 1, mix(h)), h));
        let own_keys = last_primaries
            .iter()
            .map(|&h| (geometry.primary_start(h, mix(h)), h));
        let keys = bumped_keys.chain(own_keys);
        if !add_all(self.banding, &self.hasher, keys, &mut NoObserver) {
            return Err(SeedFailure::Contradiction);
        }
        Ok((num_slots as u32, masks))
    }

    /// Adds the buckets of `shard`'s primary keys that fit, largest first,
    /// into a shard already holding `kept` keys; returns its mask.
    ///
    /// The largest buckets, up to [`SWEEP_FILL`] of the shard, almost
    /// always fit: they are banded together in one sweep in start order,
    /// which keeps elimination short (the slots after a start are still
    /// mostly empty); in the rare case that the sweep fails it is taken
    /// back and its buckets are tried one by one like the rest.
    fn fill_shard(&mut self, shard: u32, mut kept: usize, buckets: &Buckets, scratch: &mut Scratch) -> u16 {
        let (first, starts) = self.geometry.range_of(shard);
        // Every key here has primary shard `shard`: its primary start
        // (`Geometry::primary_start`) without working the shard out again.
        let geometry = *self.geometry;
        let start_of = move |h: u64| first + fast_range32(geometry.offset_bits(h), starts);
        let order = buckets.largest_first();
        let mut mask = 0u16;
        let mut swept = 0;
        let mut sweep_keys = 0;
        while swept < order.len()
            && (kept + sweep_keys + buckets.keys(order[swept]).len()) as f64 <= SWEEP_FILL * f64::from(starts)
        {
            sweep_keys += buckets.keys(order[swept]).len();
            swept += 1;
        }
        if swept > 0 {
            scratch.sort_by_start(
                order[..swept].iter().flat_map(|&b| buckets.keys(b)).copied(),
                start_of,
                first,
                starts,
            );
            if self.add_all_or_none(scratch.sorted.iter().copied(), &mut scratch.stored) {
                for &b in &order[..swept] {
                    mask |= 1 << b;
                }
                kept += sweep_keys;
            } else {
                swept = 0;
            }
        }
        for &b in &order[swept..] {
            let keys = buckets.keys(b);
            // A bucket with more keys than the shard has starts left is not
            // tried (its equations would crowd the next shard).
            if kept + keys.len() > starts as usize {
                continue;
            }
            // A bucket that does not fit is taken back: its keys are bumped
            // as a whole.
            let equations = keys.iter().map(|&h| (start_of(h), h));
            if self.add_all_or_none(equations, &mut scratch.stored) {
                mask |= 1 << b;
                kept += keys.len();
            }
        }
        mask
    }

    /// Adds the primary equation of every `(start, hash)`, or none of
    /// them: at the first that does not fit, those added are taken back
    /// (through `stored`, which records them).
    fn add_all_or_none(&mut self, keys: impl IntoIterator<Item = (u32, u64)>, stored: &mut Stored) -> bool {
        stored.clear();
        if add_all(self.banding, &self.hasher, keys, stored) {
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
    /// Keys of a sweep with their starts, in start order.
    sorted: Vec<(u32, u64)>,
    /// The same before sorting.
    unsorted: Vec<(u32, u64)>,
    /// A shard (relative to its level's first) per key of `unsorted`.
    shards: Vec<u32>,
    counts: Vec<u32>,
}

impl Scratch {
    /// Fills `sorted` with `keys` and their starts `start_of(key)` in
    /// `first .. first + starts`, ordered by start to within 8 slots (one
    /// counting sort).
    fn sort_by_start(
        &mut self,
        keys: impl Iterator<Item = u64>,
        start_of: impl Fn(u64) -> u32,
        first: u32,
        starts: u32,
    ) {
        let bins = (starts as usize >> 3) + 1;
        self.counts.clear();
        self.counts.resize(bins + 1, 0);
        self.unsorted.clear();
        self.unsorted.extend(keys.map(|h| (start_of(h), h)));
        for &(start, _) in &self.unsorted {
            self.counts[((start - first) >> 3) as usize + 1] += 1;
        }
        prefix_sums(&mut self.counts);
        self.sorted.clear();
        self.sorted.resize(self.unsorted.len(), (0, 0));
        for &(start, h) in &self.unsorted {
            let bin = ((start - first) >> 3) as usize;
            self.sorted[self.counts[bin] as usize] = (start, h);
            self.counts[bin] += 1;
        }
    }
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

/// One shard's primary keys grouped by bucket (a counting sort).
#[derive(Default)]
struct Buckets {
    keys: Vec<u64>,
    /// The bucket of each primary key, in input order.
    buckets: Vec<u8>,
    offsets: [usize; BUCKETS as usize + 1],
}

impl Buckets {
    fn fill(&mut self, primaries: &[u64]) {
        self.offsets = [0; BUCKETS as usize + 1];
        self.buckets.clear();
        self.buckets
            .extend(primaries.iter().map(|&h| bucket(mix(h)) as u8));
        for &b in &self.buckets {
            self.offsets[usize::from(b) + 1] += 1;
        }
        prefix_sums(&mut self.offsets);
        self.keys.clear();
        self.keys.resize(primaries.len(), 0);
        let mut fill = self.offsets;
        for (&h, &b) in primaries.iter().zip(&self.buckets) {
            self.keys[fill[usize::from(b)]] = h;
            fill[usize::from(b)] += 1;
        }
    }

    fn keys(&self, b: u32) -> &[u64] {
        &self.keys[self.offsets[b as usize]..self.offsets[b as usize + 1]]
    }

    /// Bucket numbers, the most keys first (ties: the lower number).
    fn largest_first(&self) -> [u32; BUCKETS as usize] {
        let mut order: [u32; BUCKETS as usize] = core::array::from_fn(|b| b as u32);
        order.sort_by_key(|&b| core::cmp::Reverse(self.keys(b).len()));
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
