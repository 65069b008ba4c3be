//! Balanced Ribbon construction: levels banded in order into one
//! [`Banding`], each level sized for the keys that reach it, buckets of
//! primary keys taken back when they do not fit and bumped to the next
//! level, and the last shard sized for what is left.

use super::{bucket, mix, Geometry, BUCKETS, KEEP_ALL, MAX_SHARD_BITS};
use crate::alg::{Banding, BandingObserver, CoeffRow, Equation, RibbonSettings};
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
pub(crate) fn band<S: RibbonSettings>(
    hashes: &[u64],
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
    let mut by_shard = vec![0u64; hashes.len()];
    let tries = max_seeds.max(1);
    let mut attempt = 0;
    while attempt < tries {
        let seed = first_seed.wrapping_add(attempt);
        allocated = allocated.min(max_slots);
        let mut geometry = plan.geometry;
        let mut ctx = SeedRun {
            hashes,
            plan,
            geometry: &mut geometry,
            hasher: Hasher::<S>::with_ordinal_seed(seed),
            banding: &mut banding,
            by_shard: &mut by_shard,
            allocated: allocated as u32,
        };
        match ctx.run(&last_shard_slots, max_slots) {
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

/// One seed of [`band`].
struct SeedRun<'a, S: RibbonSettings> {
    hashes: &'a [u64],
    plan: &'a ShardPlan,
    geometry: &'a mut Geometry,
    hasher: Hasher<S>,
    banding: &'a mut Banding<S>,
    by_shard: &'a mut [u64],
    allocated: u32,
}

impl<S: RibbonSettings> SeedRun<'_, S> {
    #[inline(always)]
    fn equation(&self, start: u32, h: u64) -> Equation<S::CoeffRow> {
        Equation {
            start,
            coeff_row: self.hasher.coeff_row(h),
            result_row: self.hasher.result_row(h),
        }
    }

    /// Bands every key: `Ok((num_slots, masks))` when each found its place.
    fn run(
        &mut self,
        last_shard_slots: &impl Fn(u64) -> u64,
        max_slots: u64,
    ) -> Result<(u32, Vec<u16>), SeedFailure> {
        let w = S::CoeffRow::BITS;
        let num_shards = self.geometry.num_shards() as usize;
        let last = self.geometry.last_shard();

        // Seeded hashes grouped by primary shard (one counting sort).
        let mut offsets = vec![0usize; num_shards + 1];
        let shards: Vec<u32> = self
            .hashes
            .iter()
            .map(|&k| {
                let h = self.hasher.hash(k);
                self.geometry.primary_shard(h, mix(h))
            })
            .collect();
        for &u in &shards {
            offsets[u as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut fill = offsets.clone();
        for (&k, &u) in self.hashes.iter().zip(&shards) {
            self.by_shard[fill[u as usize]] = self.hasher.hash(k);
            fill[u as usize] += 1;
        }
        drop(fill);
        drop(shards);

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
                // Grouped by shard (a counting sort), then banded.
                let shard_of = |h: u64| {
                    let start = self.geometry.secondary_start(first - 1, mix(h));
                    (self.geometry.shard_in_next_level(level - 1, start), start)
                };
                for &h in &bumped {
                    bumped_into[shard_of(h).0 as usize] += 1;
                }
                let mut at = vec![0usize; (end - first) as usize + 1];
                for shard in first..end {
                    at[(shard - first) as usize + 1] =
                        at[(shard - first) as usize] + bumped_into[shard as usize] as usize;
                }
                next_bumped.clear();
                next_bumped.resize(bumped.len(), 0);
                for &h in &bumped {
                    let i = (shard_of(h).0 - first) as usize;
                    next_bumped[at[i]] = h;
                    at[i] += 1;
                }
                for &h in &next_bumped {
                    if !self.banding.add(self.equation(shard_of(h).1, h)) {
                        return Err(SeedFailure::Contradiction);
                    }
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
        for &h in &bumped {
            // Bumped from level `b`, the shard before the last.
            let start = self.geometry.secondary_start(last - 1, mix(h));
            if !self.banding.add(self.equation(start, h)) {
                return Err(SeedFailure::Contradiction);
            }
        }
        for &h in last_primaries {
            let eq = self.equation(self.geometry.primary_start(h, mix(h)), h);
            if !self.banding.add(eq) {
                return Err(SeedFailure::Contradiction);
            }
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
        let order: Vec<u32> = buckets.largest_first().collect();
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
                self.geometry,
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
            let geometry = *self.geometry;
            let equations = keys.iter().map(move |&h| (geometry.primary_start(h, mix(h)), h));
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
        for (start, h) in keys {
            if !self.banding.add_observed(self.primary_equation(start, h), stored) {
                stored.undo(self.banding);
                return false;
            }
        }
        true
    }

    /// The equation of a primary key at `start`.
    #[inline(always)]
    fn primary_equation(&self, start: u32, h: u64) -> Equation<S::CoeffRow> {
        self.equation(start, h)
    }
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
    counts: Vec<u32>,
}

impl Scratch {
    /// Fills `sorted` with `keys` and their primary starts, ordered by
    /// start to within 8 slots (one counting sort).
    fn sort_by_start(&mut self, keys: impl Iterator<Item = u64>, g: &Geometry, first: u32, starts: u32) {
        let bins = (starts as usize >> 3) + 1;
        self.counts.clear();
        self.counts.resize(bins + 1, 0);
        self.unsorted.clear();
        self.unsorted
            .extend(keys.map(|h| (g.primary_start(h, mix(h)), h)));
        for &(start, _) in &self.unsorted {
            self.counts[((start - first) >> 3) as usize + 1] += 1;
        }
        for i in 1..self.counts.len() {
            self.counts[i] += self.counts[i - 1];
        }
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
        for i in 1..self.offsets.len() {
            self.offsets[i] += self.offsets[i - 1];
        }
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
    fn largest_first(&self) -> impl Iterator<Item = u32> {
        let mut order: [u32; BUCKETS as usize] = core::array::from_fn(|b| b as u32);
        order.sort_by_key(|&b| core::cmp::Reverse(self.keys(b).len()));
        order.into_iter()
    }
}
