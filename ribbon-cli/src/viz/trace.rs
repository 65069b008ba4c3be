//! The construction `ribbon viz` replays: the keys banded and
//! back-substituted by `ribbon::core::alg` itself, every step recorded through its
//! [`BandingObserver`]. The page only replays these records; it never
//! eliminates or solves anything on its own.
//!
//! The system is the one of a Standard Ribbon filter with `r` result bits:
//! [`Hasher`] gives each key a start, a `w`-bit coefficient row (first
//! coefficient one, no smash) and a result row, of which the low `r` bits
//! are kept. Keys are added in order of their start (the order the page
//! draws; the banding does not depend on it). A seed whose banding meets a
//! contradiction is recorded up to that step, and the next seed is tried.

use ribbon::core::alg::{simple_back_subst_observed, Banding, BandingObserver, Equation, Settings, SmallRow};
use ribbon::core::hasher::Hasher;
use serde::Serialize;

/// The settings of the drawn filter, for ribbon width `W`: first
/// coefficient always one, no smash, Standard (not homogeneous) Ribbon.
pub type VizSettings<const W: u32> = Settings<SmallRow<W>, true, false, false>;

/// One step of banding, as the page replays it: `(kind, key, slot, coeff,
/// result, other)`. Kinds: `"b"` the key's equation starts (slot = its start,
/// the row as hashed); `"x"` its row, with lowest coefficient at `slot`,
/// was XORed with the pivot row stored there, key `other` (the row is the
/// sum, relative to `slot`); `"s"` the row was stored at the empty `slot`,
/// its pivot; `"z"` the row reduced to `0 = result` (redundant when the
/// result is 0, else a contradiction).
pub type Step = (&'static str, u32, u32, u32, u32, i64);

/// One slot solved by back-substitution, last slot first: `(slot, key of
/// the pivot row there or -1, coeff, result, solution)`.
pub type Solve = (u32, i64, u32, u32, u32);

/// One seed tried.
#[derive(Debug, Serialize)]
pub struct Attempt {
    /// The ordinal seed.
    pub seed: u32,
    /// The raw seed the hasher mixes in (the page's query mode needs it).
    pub raw_seed: u32,
    /// Each key's equation under this seed, in key order: `[start, coeff, result]`.
    pub equations: Vec<[u32; 3]>,
    /// Key indexes by increasing start (ties in key order): the order of
    /// the rows on the page and of the adds.
    pub order: Vec<u32>,
    /// Every banding step, in order.
    pub steps: Vec<Step>,
    /// The key whose equation contradicted the others, if this seed failed.
    pub failed_key: Option<u32>,
}

/// A whole construction: the seeds tried and, for the one that banded,
/// the back-substitution.
#[derive(Debug, Serialize)]
pub struct Trace {
    /// Ribbon width `w`.
    pub width: u32,
    /// Result bits `r`.
    pub result_bits: u32,
    /// Slots `m` (columns of the matrix).
    pub columns: u32,
    /// Valid starts, `m - w + 1`.
    pub num_starts: u32,
    /// Whether a seed banded (else every attempt failed, and there is no
    /// back-substitution or solution).
    pub banded: bool,
    /// Seeds that failed before the one that banded (all of them tried when
    /// none banded).
    pub failed_seeds: u32,
    /// Every seed tried, the last one the seed that banded (when none
    /// banded: the first of the failed ones, see [`construct_all`]).
    pub attempts: Vec<Attempt>,
    /// Back-substitution, slot by slot from the last.
    pub back_subst: Vec<Solve>,
    /// The solution, one row of `r` bits per slot: what
    /// `ribbon::core::alg::simple_back_subst` returns.
    pub solution: Vec<u32>,
}

/// The observer: records the steps of the key being added.
struct Recorder {
    key: u32,
    steps: Vec<Step>,
    /// The key whose row is stored at each slot.
    pivots: Vec<Option<u32>>,
    solves: Vec<Solve>,
}

fn key_at(pivots: &[Option<u32>], slot: u32) -> i64 {
    pivots.get(slot as usize).copied().flatten().map_or(-1, i64::from)
}

impl<const W: u32> BandingObserver<SmallRow<W>> for Recorder {
    fn begin(&mut self, eq: &Equation<SmallRow<W>>) {
        self.steps
            .push(("b", self.key, eq.start, eq.coeff_row.get(), eq.result_row, -1));
    }
    fn eliminate(&mut self, slot: u32, coeff_row: SmallRow<W>, result_row: u32) {
        let pivot = key_at(&self.pivots, slot);
        self.steps
            .push(("x", self.key, slot, coeff_row.get(), result_row, pivot));
    }
    fn store(&mut self, slot: u32, coeff_row: SmallRow<W>, result_row: u32) {
        self.steps
            .push(("s", self.key, slot, coeff_row.get(), result_row, -1));
        self.pivots[slot as usize] = Some(self.key);
    }
    fn reduced_to_zero(&mut self, result_row: u32) {
        self.steps.push(("z", self.key, 0, 0, result_row, -1));
    }
    fn solve(&mut self, slot: u32, coeff_row: SmallRow<W>, result_row: u32, solution_row: u32) {
        let key = key_at(&self.pivots, slot);
        self.solves
            .push((slot, key, coeff_row.get(), result_row, solution_row));
    }
}

/// The equation of `key_hash` under `hasher`, with the result row cut to
/// `result_bits` bits.
pub fn equation<const W: u32>(
    hasher: &Hasher<VizSettings<W>>,
    key_hash: u64,
    num_starts: u32,
    result_bits: u32,
) -> Equation<SmallRow<W>> {
    let mut eq = hasher.equation(key_hash, num_starts);
    eq.result_row &= result_mask(result_bits);
    eq
}

/// The low `result_bits` bits.
pub fn result_mask(result_bits: u32) -> u32 {
    u32::MAX >> (32 - result_bits.clamp(1, 32))
}

/// Bands `key_hashes` into `columns` slots (at least `W`), trying ordinal
/// seeds `0..max_seeds` in turn, and back-substitutes the first banding
/// that succeeds. `None` when every seed fails.
pub fn construct<const W: u32>(
    key_hashes: &[u64],
    columns: u32,
    result_bits: u32,
    max_seeds: u32,
) -> Option<Trace> {
    Some(construct_all::<W>(
        key_hashes,
        columns,
        result_bits,
        max_seeds,
        u32::MAX,
    ))
    .filter(|t| t.banded)
}

/// As [`construct`], but a construction where every seed fails is returned
/// too (`banded` false), with only its first `keep_failed` attempts
/// recorded (all `max_seeds` are tried and counted in `failed_seeds`).
pub fn construct_all<const W: u32>(
    key_hashes: &[u64],
    columns: u32,
    result_bits: u32,
    max_seeds: u32,
    keep_failed: u32,
) -> Trace {
    let mut attempts = Vec::new();
    let mut num_starts = 0;
    let mut num_slots = columns;
    for seed in 0..max_seeds {
        let hasher = Hasher::<VizSettings<W>>::with_ordinal_seed(seed);
        let mut banding = Banding::<VizSettings<W>>::new();
        banding.reset(columns);
        num_starts = banding.num_starts();
        num_slots = banding.num_slots();
        let equations: Vec<Equation<SmallRow<W>>> = key_hashes
            .iter()
            .map(|&h| equation(&hasher, h, num_starts, result_bits))
            .collect();
        let mut order: Vec<u32> = (0..key_hashes.len() as u32).collect();
        order.sort_by_key(|&k| equations[k as usize].start);
        let mut rec = Recorder {
            key: 0,
            steps: Vec::new(),
            pivots: vec![None; banding.num_slots() as usize],
            solves: Vec::new(),
        };
        let failed_key = order.iter().copied().find(|&k| {
            rec.key = k;
            !banding.add_observed(equations[k as usize], &mut rec)
        });
        if failed_key.is_some() && seed >= keep_failed {
            continue;
        }
        attempts.push(Attempt {
            seed,
            raw_seed: ribbon::core::hasher::raw_seed_from_ordinal(seed),
            equations: equations
                .iter()
                .map(|e| [e.start, e.coeff_row.get(), e.result_row])
                .collect(),
            order,
            steps: std::mem::take(&mut rec.steps),
            failed_key,
        });
        if failed_key.is_none() {
            let solution = simple_back_subst_observed(&banding, result_bits, &mut rec);
            return Trace {
                width: W,
                result_bits,
                columns: banding.num_slots(),
                num_starts,
                banded: true,
                failed_seeds: seed,
                attempts,
                back_subst: rec.solves,
                solution,
            };
        }
    }
    Trace {
        width: W,
        result_bits,
        columns: num_slots,
        num_starts,
        banded: false,
        failed_seeds: max_seeds,
        attempts,
        back_subst: Vec::new(),
        solution: Vec::new(),
    }
}
