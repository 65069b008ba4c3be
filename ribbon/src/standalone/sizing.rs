//! How many slots a standalone filter gets for `n` keys, and how many bytes of
//! solution.
//!
//! * **Standard Ribbon, width 64 or 128**: RocksDB's measured tables
//!   ([`crate::core::config::BandingConfig::try_num_slots`]) for the configured
//!   failure chance and smash setting.
//! * **Standard Ribbon, width 32**: RocksDB has no table; this module has
//!   its own, [`W32_KNOWN_TO_ADD`], measured the way RocksDB measured its
//!   tables, by the committed tool `ribbon/examples/space_overhead.rs`
//!   (`cargo run --release -p rocks-ribbon --example space_overhead -- occupancy 32`).
//! * **Homogeneous Ribbon, any width**: the paper's equation 7,
//!   `ε = (4 + r/4) / w` ([`homogeneous_overhead`]), `m = ⌈n (1 + ε)⌉`.
//! * **An explicit [`Config::slot_overhead`]** `ε`: `m = ⌈n (1 + ε)⌉`.
//!
//! The slot count is then rounded up to what the interleaved solution
//! supports ([`crate::core::solution::round_up_num_slots`]: whole blocks of `w`
//! slots, at least two without smash), and the solution length follows from
//! the precision ([`crate::core::solution::bytes_for_fp_rate`] for a fractional
//! number of columns).

use super::balanced::BalancedState;
use super::config::{Config, Mode};
use super::engine::{dispatch, Engine, QueryState, Visitor};
use super::Error;
use crate::core::alg::{Banding, CoeffRow, RibbonSettings};
use crate::core::config::{BandingConfig, ConstructionFailureChance};
#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::hasher::Hasher;
use crate::core::solution::{self, InterleavedLayout};

/// The most keys a standalone filter takes.
pub const MAX_KEYS: u64 = 1 << 31;

/// The most slots a standalone filter has: the file format's limit.
pub use super::file::MAX_SLOTS;

/// The paper's equation 7: the space overhead `ε = (4 + r/4) / w` that
/// minimises Homogeneous Ribbon's total overhead for `r` result bits and
/// ribbon width `w`.
///
/// ```
/// // The paper's example: r = 7, w = 64 gives about 9 %.
/// let e = ribbon::standalone::sizing::homogeneous_overhead(64, 7.0);
/// assert!((e - 0.0898).abs() < 1e-4);
/// ```
#[must_use]
pub fn homogeneous_overhead(width: u32, result_bits: f64) -> f64 {
    (4.0 + result_bits / 4.0) / f64::from(width)
}

/// Keys that can be added to exactly `2^i` slots of width-32 Standard Ribbon
/// with about the table's failure chance per seed, `i` in `0..=17` (`0.0`:
/// too few slots), in the layout of RocksDB's tables
/// ([`crate::core::config`]). Rows: no smash, then smash; columns within a row:
/// one in 2, one in 20, one in 1000.
///
/// Measured with first coefficient always one by
/// `cargo run --release -p rocks-ribbon --example space_overhead -- occupancy 32`
/// (the median, 95th and 99.9th percentile of the slots left empty at the
/// first failed add, over fresh random keys), the procedure of RocksDB's
/// `FindOccupancy` in `util/ribbon_test.cc`.
///
/// 20 000 trials per size; the tool's output is committed in
/// [`ribbon/docs/space-overhead.md`](https://github.com/rocks-ribbon/rocks-ribbon/blob/main/ribbon/docs/space-overhead.md).
#[rustfmt::skip]
pub const W32_KNOWN_TO_ADD: [[[f64; 18]; 3]; 2] = [
    // No smash.
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 61.0, 122.0, 245.0, 488.0, 969.0, 1911.0, 3763.0, 7395.0, 14536.0, 28576.0, 56176.5, 110442.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 57.0, 115.0, 230.0, 458.0, 906.0, 1789.0, 3522.0, 6932.0, 13627.0, 26811.0, 52688.9, 103634.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 51.0, 106.0, 210.0, 413.0, 825.0, 1634.0, 3229.0, 6275.0, 12406.0, 24519.0, 47242.0, 92491.9],
    ],
    // Smash.
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 31.0, 63.0, 126.0, 252.0, 498.0, 979.0, 1922.0, 3771.0, 7408.0, 14548.0, 28570.0, 56188.5, 110494.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 27.0, 59.0, 121.0, 239.0, 467.0, 917.0, 1798.0, 3526.0, 6944.0, 13634.0, 26774.0, 52625.0, 103672.9],
        [0.0, 0.0, 0.0, 0.0, 0.0, 22.0, 53.0, 111.0, 217.0, 425.0, 824.0, 1632.0, 3205.0, 6311.0, 12446.0, 24174.0, 47735.0, 93085.9],
    ],
];

/// Growth of the width-32 overhead factor (slots per key) per doubling of the
/// slot count beyond `2^17` slots, from the same tool (one in 20, 1000
/// trials at `2^17 ..= 2^20` slots: 0.0249; the paper's Table 1 says about
/// 2 % per doubling).
pub const W32_FACTOR_PER_POW2: f64 = 0.025;

/// Unrounded slots for width-32 Standard Ribbon and `n >= 1` keys.
fn w32_num_slots(chance: ConstructionFailureChance, smash: bool, n: u64) -> f64 {
    let known = &W32_KNOWN_TO_ADD[usize::from(smash)][usize::from(chance.code())];
    let n = n as f64;
    let last = known.len() - 1;
    // Below the smallest tabulated size: that size.
    let first = known.iter().position(|&k| k > 0.0).unwrap_or(last);
    if n <= known[first] {
        return (first as f64).exp2();
    }
    // Within the table: linear in slots between neighbouring powers of two.
    if let Some(i) = (first..last).find(|&i| n <= known[i + 1]) {
        let portion = (n - known[i]) / (known[i + 1] - known[i]);
        return (i as f64).exp2() * (1.0 + portion);
    }
    // Beyond: the overhead factor grows by a fixed amount per doubling.
    let factor_at_last = (last as f64).exp2() / known[last];
    let factor = |log2_slots: f64| factor_at_last + (log2_slots - last as f64).max(0.0) * W32_FACTOR_PER_POW2;
    let mut slots = n * factor_at_last;
    for _ in 0..4 {
        slots = n * factor(slots.log2());
    }
    slots
}

/// Unrounded slots for `n` keys (`n >= 1`) under a valid `config`.
fn raw_num_slots(config: &Config, n: u64) -> Result<u64, Error> {
    let too_many = Error::TooManyKeys {
        num_keys: n,
        max: MAX_KEYS,
    };
    if n > MAX_KEYS {
        return Err(too_many);
    }
    let from_overhead = |e: f64| (n as f64 * (1.0 + e)).ceil();
    let slots = match (config.slot_overhead, config.mode) {
        (Some(e), _) => from_overhead(e),
        (None, Mode::Homogeneous) => {
            from_overhead(homogeneous_overhead(config.width, config.precision.bits()))
        }
        (None, Mode::Standard) if config.width == 32 => {
            w32_num_slots(config.failure_chance, config.smash, n).ceil()
        }
        (None, Mode::Standard) => {
            let table = BandingConfig::new(config.failure_chance, config.width, config.smash, false);
            let slots = table.try_num_slots(n as u32).unwrap_or(0);
            // The tables wrap past about 2^32 slots; a wrapped count is
            // smaller than the number of keys.
            if u64::from(slots) < n {
                return Err(too_many);
            }
            f64::from(slots)
        }
    };
    if slots > MAX_SLOTS as f64 {
        return Err(too_many);
    }
    Ok(slots as u64)
}

/// Bytes of solution for `num_slots` slots (a supported count) at the
/// configured precision.
pub(crate) fn solution_len<S: RibbonSettings>(config: &Config, num_slots: u32) -> usize {
    let num_blocks = num_slots / S::CoeffRow::BITS;
    match config.precision.whole_columns() {
        Some(columns) => num_blocks as usize * columns as usize * S::CoeffRow::BYTES,
        None => solution::bytes_for_fp_rate::<S>(num_slots, config.precision.target_fp_rate(), 0),
    }
}

/// The soft shards of a Balanced filter of `n >= 1` keys under a valid
/// Balanced `config` (the last shard not yet sized).
pub(crate) fn balanced_shards(config: &Config, n: u64) -> super::balanced::build::ShardPlan {
    let overhead = config
        .slot_overhead
        .unwrap_or_else(|| config.balanced_shard_overhead());
    super::balanced::build::plan_shards(config.width, n, overhead)
}

/// Slots for the last shard of a Balanced filter holding `k` keys: what a
/// filter of `k` keys gets without Balanced Ribbon (the failure-chance
/// tables, or equation 7 for Homogeneous Ribbon), plus, after other
/// shards (`after_shards`), `w` slots for the previous shard's equations
/// that reach into it. Saturates for counts beyond the tables.
pub(crate) fn last_shard_slots(config: &Config, k: u64, after_shards: bool) -> u64 {
    let single = Config {
        balanced: false,
        slot_overhead: None,
        ..config.clone()
    };
    let border = if after_shards { u64::from(config.width) } else { 0 };
    raw_num_slots(&single, k.max(1)).unwrap_or(MAX_SLOTS) + border
}

/// The exact shape of a filter before it is built: slots, blocks, bytes and
/// the expected FP rate, from [`Config::plan`]. For a Balanced filter the
/// last shard is sized during construction, for the keys that reach it:
/// the plan assumes its expected share, and the built filter differs by a
/// fraction of one shard.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// Number of keys planned for.
    pub num_keys: u64,
    /// Slots `m` (a whole number of blocks; 0 for no keys).
    pub num_slots: u32,
    /// Blocks of `w` slots.
    pub num_blocks: u32,
    /// Bytes of solution.
    pub solution_len: usize,
    /// Bytes of the standalone file ([`super::file`]).
    pub file_len: usize,
    /// Result columns of the upper blocks (lower blocks have one fewer).
    pub upper_num_columns: u32,
    /// First block with `upper_num_columns` columns.
    pub upper_start_block: u32,
    /// The FP rate of the column mix (Homogeneous Ribbon's actual rate is
    /// somewhat higher); 0 for no keys.
    pub expected_fp_rate: f64,
}

impl Plan {
    /// Solution bits per key (0 for no keys).
    #[must_use]
    pub fn bits_per_key(&self) -> f64 {
        if self.num_keys == 0 {
            0.0
        } else {
            self.solution_len as f64 * 8.0 / self.num_keys as f64
        }
    }
}

/// The plan for `num_keys` keys under `S`, which must be `config`'s settings.
pub(crate) fn plan_typed<S: RibbonSettings>(config: &Config, num_keys: u64) -> Result<Plan, Error> {
    let empty = Plan {
        num_keys,
        num_slots: 0,
        num_blocks: 0,
        solution_len: 0,
        file_len: super::file::file_len(0),
        upper_num_columns: 0,
        upper_start_block: 0,
        expected_fp_rate: 0.0,
    };
    if num_keys == 0 {
        return Ok(empty);
    }
    let (num_slots, thresholds_len) = if config.balanced {
        if num_keys > MAX_KEYS {
            return Err(Error::TooManyKeys {
                num_keys,
                max: MAX_KEYS,
            });
        }
        let plan = balanced_shards(config, num_keys);
        let g = plan.geometry;
        let s = u64::from(g.num_shards());
        let per_shard = plan.level_slots((1.0 + plan.alpha) * plan.keys_per_shard);
        let slots = (s - 1) * u64::from(per_shard) + last_shard_slots(config, num_keys / s, g.shard_bits > 0);
        if slots > MAX_SLOTS {
            return Err(Error::TooManyKeys {
                num_keys,
                max: MAX_KEYS,
            });
        }
        (
            solution::round_up_num_slots::<S>(slots as u32),
            super::balanced::metadata_len(&g),
        )
    } else {
        let raw = raw_num_slots(config, num_keys)?;
        (solution::round_up_num_slots::<S>(raw as u32), 0)
    };
    let num_blocks = num_slots / S::CoeffRow::BITS;
    let solution_len = solution_len::<S>(config, num_slots);
    let layout = InterleavedLayout::<S>::for_num_slots(num_slots, solution_len);
    let header_len = if config.balanced {
        super::file::BALANCED_HEADER_LEN
    } else {
        super::file::HEADER_LEN
    };
    Ok(Plan {
        num_slots,
        num_blocks,
        solution_len,
        file_len: (header_len + solution_len + thresholds_len).next_multiple_of(8)
            + super::file::CHECKSUM_LEN,
        upper_num_columns: layout.upper_num_columns(),
        upper_start_block: layout.upper_start_block(),
        expected_fp_rate: layout.expected_fp_rate(),
        ..empty
    })
}

impl Config {
    /// The exact shape (slots, bytes, expected FP rate) of the filter this
    /// configuration builds for `num_keys` keys, without building it.
    ///
    /// ```
    /// use ribbon::standalone::{Config, Ribbon};
    ///
    /// let config = Config::default();
    /// let plan = config.plan(10_000).unwrap();
    /// let keys: Vec<u64> = (0..10_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    /// let filter = Ribbon::from_hashes(&keys, &config).unwrap();
    /// assert_eq!(filter.solution_len(), plan.solution_len);
    /// assert_eq!(filter.as_bytes().len(), plan.file_len);
    /// ```
    pub fn plan(&self, num_keys: u64) -> Result<Plan, Error> {
        struct PlanFor<'a>(&'a Config, u64);
        impl Visitor for PlanFor<'_> {
            type Output = Result<Plan, Error>;
            fn visit<S: RibbonSettings>(self) -> Self::Output
            where
                QueryState<S>: Into<Engine>,
                BalancedState<S>: Into<Engine>,
            {
                plan_typed::<S>(self.0, self.1)
            }
        }
        self.validate()?;
        dispatch(self.shape()?, PlanFor(self, num_keys))
    }
}

/// Adds the keys with hashes `key_hashes`, in order, to an empty banding of
/// `num_slots` slots (a count below the ribbon width counts as the width; 0
/// slots hold no key) under ordinal seed `seed`, and returns how many were
/// added before the first failure (all of them if none fails).
///
/// Banding succeeds or fails independently of order, so with fresh random
/// hashes the result `k` says that every prefix of up to `k` keys bands and
/// none longer: its distribution over trials is the distribution of how many
/// keys fit in `num_slots` slots. This is the "add till failure" measurement
/// of the paper's Table 1 and of RocksDB's `FindOccupancy` tool, which
/// produced the slot tables of [`crate::core::config`].
pub fn keys_until_failure<S: RibbonSettings>(
    num_slots: u32,
    seed: u32,
    key_hashes: impl IntoIterator<Item = u64>,
) -> u64 {
    if num_slots == 0 {
        return 0;
    }
    let mut banding = Banding::<S>::new();
    banding.reset(num_slots);
    let num_starts = banding.num_starts();
    let hasher = Hasher::<S>::with_ordinal_seed(seed);
    let mut added = 0;
    for k in key_hashes {
        if !banding.add(hasher.equation(k, num_starts)) {
            break;
        }
        added += 1;
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standalone::Precision;

    #[test]
    fn precision_whole_columns() {
        assert_eq!(Precision::ResultBits(7.0).whole_columns(), Some(7));
        assert_eq!(Precision::ResultBits(7.5).whole_columns(), None);
        assert_eq!(Precision::FpRate(1.0 / 1024.0).whole_columns(), Some(10));
        assert_eq!(Precision::FpRate(0.01).whole_columns(), None);
        assert_eq!(Precision::ResultBits(5.5).target_fp_rate(), 3.0 / 128.0);
    }

    #[test]
    fn w32_slots_are_monotone_and_above_keys() {
        for smash in [false, true] {
            for chance in ConstructionFailureChance::ALL {
                let mut prev = 0.0;
                for n in (1..2_000_000u64).step_by(997) {
                    let s = w32_num_slots(chance, smash, n);
                    assert!(
                        s >= n as f64 && s >= prev,
                        "{chance:?} {smash} {n}: {s} after {prev}"
                    );
                    prev = s;
                }
            }
        }
    }
}
