//! Balanced Ribbon (section 6 of Dillinger and Walzer, 2021): one contiguous
//! Standard (or Homogeneous) ribbon, soft-sharded, where every key has a
//! primary and a secondary location and is "bumped" to the secondary one
//! when its primary shard is full.
//!
//! # Geometry
//!
//! The `num_starts = m - w + 1` start positions of the ribbon are cut into
//! `s = 2^b` *soft shards* in the paper's levels: level 1 is shards
//! `0 .. s/2`, level 2 the next `s/4`, …, level `b` one shard, and the last
//! shard comes after them. The shards of a level have the same number of
//! starts (sized during construction for the keys that reach the level);
//! the last shard has the rest (`last_starts`). A shard is a range of
//! starts, not of memory: the equations of one shard reach `w - 1` slots
//! into the next, so neighbouring shards share slots and no space is lost
//! at their borders (the paper's "soft sharding", section 5.4).
//!
//! # Locations of a key
//!
//! From the seeded 64-bit hash `h` of a key (the Standard hasher's
//! [`Hasher::hash`]) and a second mix `g` of it ([`mix`]):
//!
//! * **primary shard** `u`: the top `b` bits of `h`; when `u` is in the
//!   second half and the top 16 bits of `g` are below `redirect` (`α·2^16`),
//!   `u - s/2` instead. Level-1 shards then get relative weight `1 + α`, the
//!   others `1 - α`: the paper's overloading of level 1, so that every
//!   level has more keys than room and each shard can be filled.
//! * **primary start**: `first_start(u) + fastrange32(next 32 bits of h, starts(u))`.
//! * **bucket** `0 .. 16`: from bits 32..48 of `g`, geometric with ratio
//!   `2^-0.5` (bucket `k` holds about `0.29 · 2^(-k/2)` of a shard's
//!   keys; the last bucket the tail), the paper's choice for selecting
//!   how many keys a shard takes.
//! * **secondary start**: uniform over the starts of the next level (the
//!   last shard after level `b`): `fastrange32(low 32 bits of g, …)`. A
//!   uniform choice, as in the paper, spreads each shard's bumped keys over
//!   the next level, so their number per shard does not build up from level
//!   to level.
//!
//! The coefficient row and the result row are the Standard hasher's, the
//! same at both locations.
//!
//! # Metadata and queries
//!
//! Each shard stores a 16-bit *mask*, one bit per bucket: a key whose
//! primary shard is `u` and bucket `k` sits at its primary start when bit
//! `k` of `mask[u]` is set, at its secondary start otherwise. The last
//! shard's mask is all ones: it keeps all of its keys. A query therefore
//! reads one bit of metadata (16 bits per shard of one to two thousand
//! keys: about 0.01 bits per key) and then one or two words per result
//! column, like a Standard Ribbon query.
//!
//! # Construction
//!
//! See [`build`]. Shards are banded in slot order into one
//! [`crate::core::alg::Banding`], each shard after the shards before it: first
//! the keys bumped into the next shard of its level, whose first `w - 1`
//! slots its own keys reach (the keys bumped into a shard are so added
//! with the shard before it; the first shard of a level adds its own),
//! and these must all fit, otherwise the seed fails; then its primary
//! keys bucket by bucket, largest first (the largest, up to 90 % of the
//! shard, in one sweep in start order). A bucket that does not fit
//! entirely is taken back
//! ([`crate::core::alg::Banding::clear_slot`] on the slots its keys were stored
//! at, which [`crate::core::alg::BandingObserver::store`] reports) and bumped to
//! the next level as a whole; the incremental banding makes this
//! backtracking cheap. The last shard takes everything left and is sized
//! for it like a Standard Ribbon filter once its keys are known.
//!
//! Since no equation starts before the shard being banded, the rows below
//! it are final: construction in bounded memory
//! ([`build::Memory::Low`], `Config::low_memory`) keeps only a window of
//! two shards' rows, records what reaches into each shard from the ones
//! before, and bands every shard again, last first, to back-substitute
//! (same bytes).
//!
//! Each level is sized from the keys that reach it (its own primary keys
//! and those bumped from the level before), so that every shard again has
//! about `α n / 2^b` keys more than room (see `ShardPlan::level_slots`); an error in the assumed share of
//! empty slots is then corrected at the next level instead of doubling
//! from level to level (which, with one size for all shards, overwhelmed
//! the deepest shards at 10^7 keys).
//!
//! # Cost
//!
//! Filling shards to about 99.4 % makes Gaussian elimination longer: at
//! 10^6 keys and r = 7, Balanced width 64 performed 16.1 million
//! elimination steps (XORs with a stored row) against 6.2 million for
//! Standard width 128 (measured with a [`crate::core::alg::BandingObserver`];
//! the order of the adds hardly changes the total, 13 million of them in
//! the buckets after the sweep; on 2026-11-27, 2.95 million steps for the
//! sweep's 751 thousand rows and 13.4 million for the 147 thousand rows
//! of the buckets after it, and raising the sweep's share of a shard up to
//! 0.99 left the total at 16.3 to 16.7 million). Each step reads the slot the step before
//! computed, so construction keeps three adds in flight
//! ([`crate::core::alg::Banding::add_all_interleaved`]) and their chains of
//! loads overlap; with that it takes 1.05 to 1.3 times as long as Standard
//! width 128 (measured with `examples/balanced_ab.rs` at 10^6 and 10^7
//! keys, r = 7, on 2026-11-25; one add at a time measured about 1.4 times
//! Standard's when the interleaving was introduced). Taking buckets back
//! costs little: about one failed bucket per shard, under 1 % of the adds.
//!
//! Which buckets a shard keeps depends only on which sets of equations
//! are solvable, and the solution only on the set of equations kept, so
//! neither the order of the adds nor their interleaving changes the file.
//!
//! A query ([`BalancedState`]) reads the geometry through tables built
//! when a filter is opened (per level: the shards' starts, the redirect
//! threshold, the next level's starts), finds a key's level from the
//! leading ones of its hash and its start with one multiplication, and
//! its bucket from one more (`BalancedState::probe`); it then selects
//! between the primary and the secondary start by the mask bit without a
//! branch and reads one site. Against the arithmetic of [`Geometry`]
//! (which construction uses, and the tests compare with) that is 176
//! instead of 241 instructions a single query and 190 instead of 244 a
//! batched one (callgrind, 10^5 keys, r = 7, half members; standalone
//! Standard width 128: 164 and 188 in the same program), and in the
//! kernels bench (L1, 2026-11-27, shared 2-core AMD EPYC) 1.17 of
//! Standard width 128's time single (13.0 against 11.1 ns; 1.85 before)
//! and 1.19 batched (14.3 against 12.0; 1.58 before). What is left is
//! the site selection itself: the same bench with every batched key sent
//! to a start of one multiplication, as Standard's (wrong answers, a
//! measurement only), ran 9.35–9.55 ns against Standard's 12.0, the
//! paper's saving of the narrower word (0.78); the level, two candidate
//! starts, the mix, the redirect, the mask, the bucket and the secondary
//! start take about 45 instructions, five of them multiplications,
//! between the seeded hash and the site (callgrind), and cost the other
//! 4.9 ns.

pub(crate) mod build;

use core::hint::select_unpredictable;

use crate::core::alg::{CoeffRow, RibbonSettings};
use crate::core::batch::answer_in_batches;
use crate::core::hasher::Hasher;
use crate::core::math::fast_range32;
use crate::core::solution::{InterleavedLayout, QuerySite};

/// Buckets per shard: one bit of metadata each.
pub(crate) const BUCKETS: u32 = 16;
/// The mask that keeps every key of a shard.
pub(crate) const KEEP_ALL: u16 = u16::MAX;
/// The most shards (`2^24`): thresholds of 32 MiB at most.
pub(crate) const MAX_SHARD_BITS: u32 = 24;

/// Entries of the level tables: the levels, the last shard and its copy.
const LEVEL_ENTRIES: usize = MAX_SHARD_BITS as usize + 2;

/// The second hash of a key, from its seeded hash `h`: bucket, redirect
/// test and secondary start.
#[inline(always)]
pub(crate) fn mix(h: u64) -> u64 {
    let g = (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    g ^ (g >> 32)
}

/// The soft shards of one Balanced filter (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// `b`: there are `2^b` shards, in `b` levels and the last shard.
    pub(crate) shard_bits: u32,
    /// `α·2^16`: the chance that a key drawn for a later level goes to
    /// level 1 instead.
    pub(crate) redirect: u32,
    /// Starts per shard of each level (index 0 is level 1), sized during
    /// construction from the keys that reach the level; index `b` is the
    /// last shard and `b + 1` a copy of it, so that queries look both up
    /// without a branch.
    pub(crate) level_slots: [u32; LEVEL_ENTRIES],
    /// First start of each level (with the last shard as above).
    pub(crate) level_first: [u32; LEVEL_ENTRIES],
    /// First start of the last shard.
    pub(crate) last_first: u32,
    /// Starts of the last shard (at least 1).
    pub(crate) last_starts: u32,
}

/// The bucket of second hash `g`: `2k` or `2k + 1` for 16 bits with `k`
/// leading zeros, the odd one below `√2 · 2^(15-k)` (a geometric
/// distribution of ratio `2^-0.5`), at most `BUCKETS - 1`.
#[inline(always)]
pub(crate) fn bucket(g: u64) -> u32 {
    let x = ((g >> 32) as u32 & 0xFFFF) | 1;
    let lz = x.leading_zeros();
    let normalized = x << lz;
    let b = 2 * (lz - 16) + u32::from(normalized < 0xB504_F334);
    b.min(BUCKETS - 1)
}

impl Geometry {
    /// `2^shard_bits` shards with redirect `redirect`; no level sized yet.
    pub(crate) fn new(shard_bits: u32, redirect: u32) -> Self {
        Self {
            shard_bits,
            redirect,
            level_slots: [0; LEVEL_ENTRIES],
            level_first: [0; LEVEL_ENTRIES],
            last_first: 0,
            last_starts: 0,
        }
    }

    /// Number of shards, `2^b`.
    #[inline(always)]
    pub(crate) fn num_shards(&self) -> u32 {
        1 << self.shard_bits
    }

    /// The last shard's index.
    #[inline(always)]
    pub(crate) fn last_shard(&self) -> u32 {
        self.num_shards() - 1
    }

    /// Number of levels before the last shard, `b`.
    pub(crate) fn num_levels(&self) -> u32 {
        self.shard_bits
    }

    /// The level (0 for level 1) of a shard: its leading one bits among
    /// `b` (`b` for the last shard).
    #[inline(always)]
    pub(crate) fn level_of(&self, shard: u32) -> u32 {
        (!(shard << 1 << (31 - self.shard_bits))).leading_zeros()
    }

    /// The first shard of level `level` (0-based; `b` gives the last shard).
    #[inline(always)]
    pub(crate) fn level_first_shard(&self, level: u32) -> u32 {
        self.num_shards() - (self.num_shards() >> level)
    }

    /// Valid starts of the whole ribbon, `num_slots - w + 1`.
    pub(crate) fn num_starts(&self) -> u64 {
        u64::from(self.last_first) + u64::from(self.last_starts)
    }

    /// Sets the starts per shard of `level`, after the levels before it.
    pub(crate) fn set_level(&mut self, level: u32, slots: u32) {
        let l = level as usize;
        let first = if l == 0 {
            0
        } else {
            self.level_first[l - 1] + self.level_slots[l - 1] * (self.num_shards() >> l)
        };
        self.level_first[l] = first;
        self.level_slots[l] = slots;
        self.last_first = first + slots * (self.num_shards() >> (l + 1));
        self.set_last_starts(self.last_starts);
    }

    /// Sets the starts of the last shard (after the levels).
    pub(crate) fn set_last_starts(&mut self, starts: u32) {
        self.last_starts = starts;
        let b = self.shard_bits as usize;
        for entry in b..b + 2 {
            self.level_first[entry] = self.last_first;
            self.level_slots[entry] = starts;
        }
    }

    /// Shards in level `level` (0-based), the last shard counting as level
    /// `b` of one shard.
    #[inline(always)]
    fn shards_in_level(&self, level: u32) -> u32 {
        (self.num_shards() >> 1 >> level).max(1)
    }

    /// First start and number of starts of shard `shard`.
    #[inline(always)]
    pub(crate) fn range_of(&self, shard: u32) -> (u32, u32) {
        let level = self.level_of(shard);
        let slots = self.level_slots[level as usize];
        let index = shard - self.level_first_shard(level);
        (self.level_first[level as usize] + index * slots, slots)
    }

    /// The starts of the level after `level` (the last shard after the
    /// last level): first start and number of starts.
    #[inline(always)]
    pub(crate) fn next_level_range(&self, level: u32) -> (u32, u32) {
        let next = level + 1;
        (
            self.level_first[next as usize],
            self.level_slots[next as usize] * self.shards_in_level(next),
        )
    }

    /// The primary start of seeded hash `h` with second hash `g = mix(h)`
    /// (its shard's level sized).
    #[inline(always)]
    pub(crate) fn primary_start(&self, h: u64, g: u64) -> u32 {
        self.start_in_shard(self.primary_shard(h, g), h)
    }

    /// The start of seeded hash `h` in shard `u`: its
    /// [`offset_bits`](Self::offset_bits) onto the shard's starts.
    #[inline(always)]
    pub(crate) fn start_in_shard(&self, u: u32, h: u64) -> u32 {
        let (first, starts) = self.range_of(u);
        first + fast_range32(self.offset_bits(h), starts)
    }

    /// The top `b` bits of seeded hash `h` (0 when `b = 0`): its primary
    /// shard unless redirected.
    #[inline(always)]
    pub(crate) fn top_shard(&self, h: u64) -> u32 {
        (h >> 1 >> (63 - self.shard_bits)) as u32
    }

    /// The 32 bits of seeded hash `h` after its shard bits, which place it
    /// among its primary shard's starts.
    #[inline(always)]
    pub(crate) fn offset_bits(&self, h: u64) -> u32 {
        ((h << self.shard_bits) >> 32) as u32
    }

    /// The primary shard of seeded hash `h` with second hash `g`.
    #[inline(always)]
    pub(crate) fn primary_shard(&self, h: u64, g: u64) -> u32 {
        let half = self.num_shards() / 2;
        let u = self.top_shard(h);
        // Branch-free: the redirect is a coin flip (with `b = 0`, `half`
        // is 0 and so is the change).
        let redirected = (u >= half) & (((g >> 48) as u32) < self.redirect);
        u - half * u32::from(redirected)
    }

    /// The secondary start of a key with second hash `g` whose primary
    /// shard is `shard` (not the last): uniform over the starts of the
    /// next level.
    #[inline(always)]
    pub(crate) fn secondary_start(&self, shard: u32, g: u64) -> u32 {
        let (first, starts) = self.next_level_range(self.level_of(shard));
        first + fast_range32(g as u32, starts)
    }

    /// The shard of start `start`, which lies in the level after `level`.
    pub(crate) fn shard_in_next_level(&self, level: u32, start: u32) -> u32 {
        let next = level + 1;
        if next >= self.num_levels() {
            return self.last_shard();
        }
        let (first, _) = self.next_level_range(level);
        self.level_first_shard(next) + (start - first) / self.level_slots[next as usize]
    }
}

/// Bytes of a Balanced filter's metadata after its solution: one `u16`
/// mask per shard, then one `u32` shard size (starts) per level.
pub(crate) fn metadata_len(g: &Geometry) -> usize {
    2 * g.num_shards() as usize + 4 * g.num_levels() as usize
}

/// Writes the masks and the level sizes of `g` into `out`
/// (`metadata_len(g)` bytes).
pub(crate) fn write_metadata(g: &Geometry, masks: &[u16], out: &mut [u8]) {
    let (mask_bytes, level_bytes) = out.split_at_mut(2 * masks.len());
    for (o, m) in mask_bytes.chunks_exact_mut(2).zip(masks) {
        o.copy_from_slice(&m.to_le_bytes());
    }
    for (o, l) in level_bytes.chunks_exact_mut(4).zip(&g.level_slots) {
        o.copy_from_slice(&l.to_le_bytes());
    }
}

/// Reads the level sizes of `metadata_len(g)` bytes of metadata into `g`
/// (its shard bits and last shard set). Returns `None` when a level size
/// or the sum of starts overflows `u32`.
pub(crate) fn read_levels(g: &mut Geometry, meta: &[u8]) -> Option<()> {
    let levels = &meta[2 * g.num_shards() as usize..];
    let mut end = 0u64;
    for level in 0..g.num_levels() {
        let at = 4 * level as usize;
        let slots = u32::from_le_bytes(levels.get(at..at + 4)?.try_into().ok()?);
        end += u64::from(slots) * u64::from(g.num_shards() >> (level + 1));
        if slots == 0 || end > u64::from(u32::MAX) {
            return None;
        }
        g.set_level(level, slots);
    }
    Some(())
}

/// Reads the mask of shard `shard` from the metadata (`KEEP_ALL` past its
/// end, which a parsed file never has).
#[inline(always)]
pub(crate) fn mask(meta: &[u8], shard: u32) -> u16 {
    let at = shard as usize * 2;
    meta.get(at..at + 2)
        .map_or(KEEP_ALL, |t| u16::from_le_bytes([t[0], t[1]]))
}

/// Entries of the query's level tables ([`BalancedState`]): levels `0 .. b`,
/// then the last shard repeated to the end, so that a level counted from
/// the leading ones of a hash (at most [`MAX_SHARD_BITS`]) indexes them
/// through a mask with `QUERY_LEVELS - 1`, without a bounds check.
const QUERY_LEVELS: usize = 32;
const _: () = assert!(QUERY_LEVELS > MAX_SHARD_BITS as usize && QUERY_LEVELS.is_power_of_two());

/// The starts of the shards of one level, as a query computes them: the
/// first start of shard `u` of the level is `base + u · slots` (wrapping),
/// so that the start of seeded hash `h` in its top shard is
/// `base + (h >> (32 - b)) · slots >> 32` (see [`BalancedState::probe`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ShardStarts {
    /// Starts per shard of the level.
    slots: u32,
    /// `first start of the level - first shard of the level · slots`
    /// (wrapping).
    base: u32,
}

impl ShardStarts {
    /// The start of a key in the shard of the top `b` bits of `hh`,
    /// where `hh` is those bits followed by the key's 32
    /// [`offset bits`](Geometry::offset_bits) (`h >> (32 - b)`).
    ///
    /// `top · slots + fastrange32(x, slots)` is `(top · 2^32 + x) · slots >> 32`
    /// exactly, and its low 32 bits are those of the wrapping 64-bit
    /// product: one multiplication instead of two.
    #[inline(always)]
    fn start(self, hh: u64) -> u32 {
        self.base
            .wrapping_add((hh.wrapping_mul(u64::from(self.slots)) >> 32) as u32)
    }
}

/// A range of starts, `first .. first + starts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct StartRange {
    /// The first start.
    first: u32,
    /// Number of starts.
    starts: u32,
}

/// What a query has worked out before it reads the solution.
#[derive(Debug, Clone, Copy)]
struct Probe {
    /// [`Geometry::primary_start`].
    primary: u32,
    /// Whether the key's equation is at its primary start (its shard's mask
    /// bit).
    keep: bool,
    /// The level table entry of its primary shard's level (0 when
    /// redirected).
    level: usize,
    /// [`mix`] of the seeded hash.
    g: u64,
}

/// What a query of a Balanced filter needs for one settings type: the
/// geometry's arithmetic precomputed, per level, when the filter is
/// opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BalancedState<S: RibbonSettings> {
    layout: InterleavedLayout<S>,
    hasher: Hasher<S>,
    /// `32 - b`: `h >> hash_shift` is the top shard of `h` (its top `b`
    /// bits) followed by its 32 offset bits.
    hash_shift: u32,
    /// `2^(63 - b)`: the leading ones of `h` counted up to `b` (the last
    /// shard) at most.
    level_stop: u64,
    /// `2^b / 2` (0 when `b = 0`): a redirected key's shard is its top
    /// shard less this.
    half: u32,
    /// Each level's [`ShardStarts`], the last shard's from index `b` on.
    starts: [ShardStarts; QUERY_LEVELS],
    /// Each level's redirect threshold: [`Geometry::redirect`] after level
    /// 1 (whose top shards are at least `half`), 0 for level 1 (and for
    /// `b = 0`, where a redirect changes nothing).
    redirect: [u32; QUERY_LEVELS],
    /// Where each level's secondary starts are: the next level's starts
    /// (the last shard's own for the last shard, whose mask keeps every
    /// key; a query of a corrupt mask still reads inside the solution).
    next: [StartRange; QUERY_LEVELS],
    /// Level 1's [`ShardStarts`] for the top `b` bits of a redirected key
    /// (its shard plus `half`): `base - half · slots`.
    redirected: ShardStarts,
    solution_len: usize,
}

impl<S: RibbonSettings> BalancedState<S> {
    /// The query state of `num_blocks >= 1` blocks of solution in
    /// `solution_len` bytes, banded with ordinal seed `seed`.
    pub(crate) fn new(num_blocks: u32, solution_len: usize, seed: u32, geometry: Geometry) -> Self {
        let b = geometry.shard_bits.min(MAX_SHARD_BITS);
        let mut starts = [ShardStarts::default(); QUERY_LEVELS];
        let mut redirect = [0; QUERY_LEVELS];
        let mut next = [StartRange::default(); QUERY_LEVELS];
        for (entry, level) in (0..QUERY_LEVELS as u32).map(|e| (e as usize, e.min(b))) {
            let slots = geometry.level_slots[level as usize];
            starts[entry] = ShardStarts {
                slots,
                base: geometry.level_first[level as usize]
                    .wrapping_sub(geometry.level_first_shard(level).wrapping_mul(slots)),
            };
            redirect[entry] = if level >= 1 { geometry.redirect } else { 0 };
            let (first, count) = geometry.next_level_range(level);
            next[entry] = StartRange { first, starts: count };
        }
        let half = (1u32 << b) / 2;
        Self {
            layout: InterleavedLayout::for_num_blocks(num_blocks, solution_len),
            hasher: Hasher::with_ordinal_seed(seed),
            hash_shift: 32 - b,
            level_stop: 1 << (63 - b),
            half,
            starts,
            redirect,
            next,
            redirected: ShardStarts {
                slots: starts[0].slots,
                base: starts[0].base.wrapping_sub(half.wrapping_mul(starts[0].slots)),
            },
            solution_len,
        }
    }

    pub(crate) fn layout(&self) -> &InterleavedLayout<S> {
        &self.layout
    }

    /// A payload's solution and the metadata after it (the masks and the
    /// level sizes); a payload shorter than the solution is all solution.
    #[inline(always)]
    fn split_payload<'p>(&self, payload: &'p [u8]) -> (&'p [u8], &'p [u8]) {
        payload.split_at(self.solution_len.min(payload.len()))
    }

    /// The primary start of seeded hash `h` and whether its equation is
    /// there ([`Geometry::primary_start`] and the mask bit of
    /// [`Geometry::primary_shard`] for [`bucket`]), with the precomputed
    /// tables and fewer instructions than the geometry's arithmetic (whose
    /// answers `tests::query_matches_the_geometry` compares):
    ///
    /// * the level of the top shard is the number of leading ones of `h`,
    ///   at most `b`: one `leading_zeros` of `!h | 2^(63 - b)`;
    /// * its start is one multiplication ([`ShardStarts::start`]), in the
    ///   top shard and in the level-1 shard a redirect would choose;
    /// * the redirect is one comparison with the level's threshold (0 for
    ///   level 1). With `BRANCH_FREE` false (single queries) the compiler
    ///   branches on it: the prediction (not redirected, for all but α/2
    ///   of the keys) lets the start, and so the solution's read, go ahead
    ///   without waiting for [`mix`]'s multiplication; with `BRANCH_FREE`
    ///   (batches, whose reads wait for the prefetches anyway) it selects,
    ///   and mispredicts nothing. Measured with the kernels bench (L1,
    ///   shared 2-core AMD EPYC, 2026-11-27): single 12.97–12.99 ns with
    ///   the branch against 13.82–13.88 without; batched 14.26–14.35
    ///   without against 14.34–14.70 with;
    /// * the bucket is `min(leading_zeros(y²), 15)` for the 16 bits `y` of
    ///   [`bucket`] (with their low bit set): `floor(log2(y²))` is
    ///   `2 · floor(log2 y)`, plus one when `y ≥ √2 · 2^floor(log2 y)`,
    ///   which is [`bucket`]'s comparison with `0xB504_F334`
    ///   (`tests::bucket_is_the_leading_zeros_of_the_square`, every `y`);
    ///   the `min` is the mask's sign extension (bit 15, the last bucket's,
    ///   copied up to bit 31).
    ///
    /// The secondary start ([`Self::secondary`]) is left to the keys that
    /// need it.
    #[inline(always)]
    fn probe<const BRANCH_FREE: bool>(&self, meta: &[u8], h: u64) -> Probe {
        // `hash_shift <= 32`.
        let hh = h >> self.hash_shift;
        let top = (hh >> 32) as u32;
        let level = (!h | self.level_stop).leading_zeros() as usize & (QUERY_LEVELS - 1);
        let own = self.starts[level].start(hh);
        let lower = self.redirected.start(hh);
        let g = mix(h);
        let redirected = ((g >> 48) as u32) < self.redirect[level];
        let (primary, shard, level) = if !BRANCH_FREE {
            if redirected {
                (lower, top.wrapping_sub(self.half), 0)
            } else {
                (own, top, level)
            }
        } else {
            (
                select_unpredictable(redirected, lower, own),
                top.wrapping_sub(select_unpredictable(redirected, self.half, 0)),
                select_unpredictable(redirected, 0, level),
            )
        };
        let y = u32::from((g >> 32) as u16) | 1;
        let bucket = (y * y).leading_zeros();
        let mask = i32::from(mask(meta, shard) as i16);
        Probe {
            primary,
            keep: (mask >> bucket) & 1 != 0,
            level,
            g,
        }
    }

    /// [`Geometry::secondary_start`] of a probed key: uniform over the
    /// starts of the level after its primary shard's.
    #[inline(always)]
    fn secondary(&self, p: &Probe) -> u32 {
        let next = self.next[p.level & (QUERY_LEVELS - 1)];
        next.first.wrapping_add(fast_range32(p.g as u32, next.starts))
    }

    /// The start that holds the equation of a probed key, without a
    /// branch.
    #[inline(always)]
    fn chosen(&self, p: &Probe) -> u32 {
        select_unpredictable(p.keep, p.primary, self.secondary(p))
    }

    /// Whether the key with hash `key_hash` may be in the set; `payload` is
    /// the solution followed by the thresholds.
    ///
    /// The site is [`Self::chosen`], without a branch on the mask bit:
    /// 12 % of the benchmark's keys (members and not) take their secondary
    /// start, and a mispredicted branch on it cost more than waiting for
    /// the mask (a load of the metadata, in L1 for any filter the caches
    /// hold) and working out the secondary start for every key: 12.97–12.99
    /// against 14.11–14.24 ns in L1 (kernels bench, 2026-11-27).
    #[inline(always)]
    pub(crate) fn contains_hash(&self, payload: &[u8], key_hash: u64) -> bool {
        let (solution, meta) = self.split_payload(payload);
        let h = self.hasher.hash(key_hash);
        let p = self.probe::<false>(meta, h);
        self.answer(solution, h, site_at(&self.layout, self.chosen(&p)))
    }

    /// The answer at `site` for rehashed value `h`: the short AVX2 kernel
    /// where it applies ([`crate::core::arch::short_site_answer`]), the core's query
    /// elsewhere.
    #[inline(always)]
    fn answer(&self, solution: &[u8], h: u64, site: QuerySite) -> bool {
        self.layout.filter_query_short(&self.hasher, h, site, solution)
    }

    /// Batched queries, every site of a batch prefetched before any is read.
    /// (Prefetching 16 or 32 queries ahead, `crate::core::batch::answer_pipelined`,
    /// measured slower at width 64: 14.6 to 15.5 against 13.6 ns/query at
    /// 10^6 keys, 21 to 24 against 19.6 at 3·10^7.)
    pub(crate) fn contains_hashes(&self, payload: &[u8], hashes: &[u64], out: &mut [bool]) {
        let (solution, meta) = self.split_payload(payload);
        answer_in_batches(
            hashes,
            out,
            |k| self.prepare_split(solution, meta, k),
            |(h, site)| self.answer(solution, h, site),
        );
    }

    /// Where the query of seeded hash `h` reads (as
    /// [`InterleavedLayout::prepare_query`] for a given start).
    #[inline(always)]
    fn site(&self, meta: &[u8], h: u64) -> QuerySite {
        site_at(&self.layout, self.chosen(&self.probe::<true>(meta, h)))
    }

    /// The first half of a batched query of `key_hash`: the seeded hash
    /// and the site that holds its equation, prefetched.
    #[inline(always)]
    fn prepare_split(&self, solution: &[u8], meta: &[u8], key_hash: u64) -> (u64, QuerySite) {
        let h = self.hasher.hash(key_hash);
        let site = self.site(meta, h);
        self.layout.prefetch_site(site, solution);
        (h, site)
    }

    /// [`Self::prepare_split`] for a payload (the solution followed by the
    /// thresholds).
    #[inline(always)]
    pub(crate) fn prepare_hash(&self, payload: &[u8], key_hash: u64) -> (u64, QuerySite) {
        let (solution, meta) = self.split_payload(payload);
        self.prepare_split(solution, meta, key_hash)
    }

    /// The answer of [`Self::contains_hash`] for what
    /// [`Self::prepare_hash`] returned.
    #[inline(always)]
    pub(crate) fn answer_prepared(&self, payload: &[u8], (h, site): (u64, QuerySite)) -> bool {
        let (solution, _) = self.split_payload(payload);
        self.answer(solution, h, site)
    }
}

/// The query site of start slot `start` in `layout`: the arithmetic of
/// [`InterleavedLayout::prepare_query`] (`crate::core::solution`) for a start
/// that Balanced Ribbon computes itself.
#[inline(always)]
pub(crate) fn site_at<S: RibbonSettings>(layout: &InterleavedLayout<S>, start: u32) -> QuerySite {
    let w = S::CoeffRow::BITS;
    let block = start / w;
    let upper_start_block = layout.upper_start_block();
    let mut num_columns = layout.upper_num_columns();
    let segment_num = block
        .wrapping_mul(num_columns)
        .wrapping_sub(block.min(upper_start_block));
    if block < upper_start_block {
        num_columns -= 1;
    }
    QuerySite {
        segment_num,
        num_columns,
        start_bit: start % w,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alg::Settings;
    use crate::core::hash::split_mix64;
    use crate::core::hasher::Hasher;
    use crate::core::prelude::*;

    type W64 = Settings<u64, true, false, false>;

    #[test]
    fn site_at_matches_prepare_query() {
        for (blocks, len) in [
            (10u32, 10 * 7 * 8),
            (10, 10 * 7 * 8 + 3 * 8),
            (37, 37 * 3 * 8 - 5 * 8),
        ] {
            let layout = InterleavedLayout::<W64>::for_num_blocks(blocks, len);
            let hasher = Hasher::<W64>::with_ordinal_seed(1);
            for k in 0..5000u64 {
                let h = hasher.hash(k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let start = hasher.start(h, layout.num_starts());
                assert_eq!(site_at(&layout, start), layout.prepare_query(&hasher, h));
            }
        }
    }

    #[test]
    fn buckets_are_geometric() {
        let mut counts = [0u32; BUCKETS as usize];
        let n = 1u64 << 22;
        for k in 0..n {
            counts[bucket(mix(k.wrapping_mul(0x9E37_79B9_7F4A_7C15))) as usize] += 1;
        }
        for (b, &c) in counts.iter().enumerate() {
            let p = if b + 1 < BUCKETS as usize {
                (1.0 - 0.5f64.sqrt()) * (-(b as f64) / 2.0).exp2()
            } else {
                (-(b as f64) / 2.0).exp2()
            };
            let expected = p * n as f64;
            assert!(
                (f64::from(c) - expected).abs() < 6.0 * expected.sqrt() + 0.02 * expected,
                "bucket {b}: {c} vs {expected}"
            );
        }
    }

    /// A geometry of `2^bits` shards with every level sized.
    fn sized(bits: u32, slots: u32, last: u32, redirect: u32) -> Geometry {
        let mut g = Geometry::new(bits, redirect);
        for level in 0..bits {
            g.set_level(level, slots + level);
        }
        g.set_last_starts(last);
        g
    }

    #[test]
    fn levels_tile_the_starts() {
        for bits in 0..8 {
            let g = sized(bits, 100, 70, 8000);
            let mut next = 0;
            for shard in 0..g.num_shards() {
                let (first, starts) = g.range_of(shard);
                assert_eq!(first, next, "bits {bits} shard {shard}");
                next = first + starts;
                if shard + 1 < g.num_shards() {
                    let level = g.level_of(shard);
                    assert!(shard >= g.level_first_shard(level) && shard < g.level_first_shard(level + 1));
                    assert_eq!(starts, 100 + level);
                }
            }
            assert_eq!(u64::from(next), g.num_starts());
            assert_eq!(g.range_of(g.last_shard()), (g.last_first, 70));
        }
    }

    /// The bucket of every 16-bit `y` is `min(leading_zeros(y²), 15)` (with
    /// `y`'s low bit set), what `BalancedState::probe` computes.
    #[test]
    fn bucket_is_the_leading_zeros_of_the_square() {
        for y in 0..=u64::from(u16::MAX) {
            let g = (y << 32) | 0xDEAD_BEEF | (0x1234 << 48);
            let square = ((y | 1) * (y | 1)) as u32;
            assert_eq!(bucket(g), square.leading_zeros().min(BUCKETS - 1), "y = {y}");
        }
    }

    /// The query's precomputed arithmetic (`BalancedState::probe`,
    /// `secondary`, `site`) agrees with the geometry's, which construction
    /// uses, for every number of shards up to 12 and large ones (16, 20,
    /// 24), both outcomes of the redirect and of the mask, and random
    /// hashes.
    #[test]
    fn query_matches_the_geometry() {
        let mut s = 0x5EED_u64;
        for bits in (0..=12).chain([16, 20, MAX_SHARD_BITS]) {
            // Starts per shard small enough for the starts to fit `u32`
            // with 2^24 shards, and different in each level.
            let slots = if bits > 12 { 60 } else { 700 + 3 * bits };
            let g = sized(bits, slots, 500 + bits, 1 << 14);
            let mut masks: Vec<u16> = (0..g.num_shards())
                .map(|u| (u64::from(u).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as u16)
                .collect();
            masks[g.last_shard() as usize] = KEEP_ALL;
            let mut meta = vec![0u8; metadata_len(&g)];
            write_metadata(&g, &masks, &mut meta);
            let blocks = (g.num_starts() as u32 + 63).div_ceil(64);
            let state = BalancedState::<W64>::new(blocks, blocks as usize * 7 * 8, 3, g);
            let (mut redirected, mut bumped) = (0, 0);
            for k in 0..20_000u64 {
                let h = if k % 2 == 0 {
                    split_mix64(&mut s)
                } else {
                    // Structured hashes too: runs of leading ones (the
                    // last shard, the deepest levels) and of zeros.
                    (k.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ (k << 17)).rotate_left(k as u32 % 7)
                };
                let x = mix(h);
                let u = g.primary_shard(h, x);
                redirected += u32::from(u != g.top_shard(h));
                let p = state.probe::<false>(&meta, h);
                let q = state.probe::<true>(&meta, h);
                assert_eq!((q.primary, q.keep, q.level), (p.primary, p.keep, p.level));
                assert_eq!(p.primary, g.primary_start(h, x), "bits {bits} hash {h:#x}");
                let keep = masks[u as usize] >> bucket(x) & 1 == 1;
                assert_eq!(p.keep, keep, "bits {bits} hash {h:#x}");
                bumped += u32::from(!keep);
                if u != g.last_shard() {
                    assert_eq!(
                        state.secondary(&p),
                        g.secondary_start(u, x),
                        "bits {bits} hash {h:#x}"
                    );
                }
                let start = if keep {
                    g.primary_start(h, x)
                } else {
                    g.secondary_start(u, x)
                };
                assert_eq!(state.chosen(&p), start, "bits {bits} hash {h:#x}");
                assert_eq!(state.site(&meta, h), site_at(state.layout(), start));
            }
            // Both sides of the redirect and of the mask were compared.
            if bits >= 1 {
                assert!(
                    redirected > 100 && bumped > 1000,
                    "bits {bits}: {redirected} {bumped}"
                );
            }
        }
    }

    #[test]
    fn locations_stay_in_their_shards_and_level_one_is_overloaded() {
        let g = sized(4, 1000, 700, 1 << 13);
        let mut per_shard = [0u32; 16];
        for k in 0..400_000u64 {
            let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (k << 7);
            let x = mix(h);
            let u = g.primary_shard(h, x);
            let start = g.primary_start(h, x);
            per_shard[u as usize] += 1;
            let (first, starts) = g.range_of(u);
            assert!(start >= first && start < first + starts);
            assert!(bucket(x) < BUCKETS);
            if u != g.last_shard() {
                let level = g.level_of(u);
                let second = g.secondary_start(u, x);
                let (next_first, next_starts) = g.next_level_range(level);
                assert!(second >= next_first && second < next_first + next_starts);
                let p = g.shard_in_next_level(level, second);
                let (pf, ps) = g.range_of(p);
                assert!(second >= pf && second < pf + ps, "shard {p} of start {second}");
            }
        }
        // α = 1/8: level 1 shards get 1.125/16 of the keys, the others 0.875/16.
        for (j, &c) in per_shard.iter().enumerate() {
            let expected = if j < 8 { 1.125 } else { 0.875 } * 400_000.0 / 16.0;
            assert!(
                (f64::from(c) - expected).abs() < 5.0 * expected.sqrt(),
                "shard {j}: {c}"
            );
        }
    }
}
