//! The construction parameters of a standalone filter, and their validation.

use super::engine::{Shape, Width};
use super::Error;
use crate::core::config::ConstructionFailureChance;
#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::prelude::*;

/// Standard or Homogeneous Ribbon (the paper's sections 2–3 and 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Mode {
    /// Every key's equation has a hash-derived result row: the FP rate is
    /// exactly `2^-r`, but banding can fail for a seed, so construction
    /// retries seeds, and the slots needed per key grow slowly with the
    /// number of keys (the paper's Table 1).
    #[default]
    Standard,
    /// Every result row is zero and unconstrained solution rows are
    /// pseudo-random: construction never fails and the overhead does not
    /// grow with the number of keys, but the FP rate is somewhat above
    /// `2^-r` (the paper's Figure 5). Slots follow the paper's equation 7,
    /// `ε = (4 + r/4) / w`.
    Homogeneous,
}

/// How many result bits (solution columns) each slot stores: the FP rate.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Precision {
    /// `r` result bits per slot, `1.0 ..= 32.0`. A whole `r` gives an FP rate
    /// of `2^-r`; a fractional `r` stores `⌊r⌋` columns in a `1 - frac(r)`
    /// portion of the blocks and `⌈r⌉` in the rest (the ICML mix of the
    /// paper's section 5.1), for an FP rate of
    /// `(1 - frac(r)) · 2^-⌊r⌋ + frac(r) · 2^-⌈r⌉`.
    ResultBits(f64),
    /// A target FP rate `p` in `2^-32 ..= 0.5`, reached with the same column
    /// mix (`p = 2^-k` gives exactly `k` columns).
    FpRate(f64),
}

impl Precision {
    /// The FP rate the column mix aims at (before Homogeneous Ribbon's
    /// degradation).
    #[must_use]
    pub fn target_fp_rate(self) -> f64 {
        match self {
            Precision::FpRate(p) => p,
            Precision::ResultBits(r) => {
                let lower = r.floor();
                let frac = r - lower;
                (1.0 - frac) * (-lower).exp2() + frac * (-lower - 1.0).exp2()
            }
        }
    }

    /// The whole number of columns when every block has the same count.
    pub(crate) fn whole_columns(self) -> Option<u32> {
        let bits = match self {
            Precision::ResultBits(r) => r,
            Precision::FpRate(p) => -p.log2(),
        };
        (bits.fract() == 0.0 && (1.0..=32.0).contains(&bits)).then_some(bits as u32)
    }

    /// Average result bits per slot: `r`, or `log2(1/p)`.
    #[must_use]
    pub fn bits(self) -> f64 {
        match self {
            Precision::ResultBits(r) => r,
            Precision::FpRate(p) => -p.log2(),
        }
    }
}

/// The configuration of a standalone Ribbon filter.
///
/// A plain struct: start from [`Config::default`] and set what you need.
/// Nothing is checked until [`Config::validate`] (which every construction
/// calls), so an invalid setting surfaces as [`Error::InvalidConfig`], never
/// as a panic.
///
/// The default is RocksDB's shape (width 128, first coefficient always one,
/// no smash, Standard Ribbon, one failure in 20 per seed) with 7 result bits
/// (FP rate 1/128), seed 0 and 256 seeds: filters built with it can be
/// exported to RocksDB's format (see [`super::Ribbon::to_rocksdb`]).
///
/// ```
/// use ribbon::standalone::{Config, Mode, Precision};
///
/// let config = Config {
///     width: 64,
///     precision: Precision::ResultBits(7.5),
///     mode: Mode::Homogeneous,
///     ..Config::default()
/// };
/// assert!(config.validate().is_ok());
/// assert!(Config { width: 16, ..Config::default() }.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Config {
    /// Ribbon width `w` in bits: 32, 64 or 128. Wider ribbons need fewer
    /// slots per key and are slower to build and query.
    pub width: u32,
    /// Result bits per slot or target FP rate.
    pub precision: Precision,
    /// Standard or Homogeneous Ribbon.
    pub mode: Mode,
    /// "Smash": spread starts over `w/2` extra positions and clamp them to
    /// the valid range, which fills the first and last slots better. Worth
    /// it below about 10 000 keys (the paper recommends Standard Ribbon with
    /// smash for small sets). Filters with smash cannot be exported to
    /// RocksDB's format.
    pub smash: bool,
    /// Force bit 0 of every coefficient row to one (RocksDB's choice;
    /// slightly faster banding).
    pub first_coeff_always_one: bool,
    /// The accepted chance that banding fails for one seed (Standard Ribbon
    /// only): the slot tables trade space for retries.
    pub failure_chance: ConstructionFailureChance,
    /// Explicit space overhead `ε`: `⌈n (1 + ε)⌉` slots for `n` keys (rounded
    /// up to whole blocks), in `0.0 ..= 100.0`, instead of the failure-chance
    /// tables (Standard) or equation 7 (Homogeneous).
    pub slot_overhead: Option<f64>,
    /// The first ordinal seed tried.
    pub seed: u32,
    /// How many seeds Standard Ribbon tries (`seed`, `seed + 1`, …) before
    /// construction fails with [`Error::ConstructionFailed`]; at least 1.
    pub max_seeds: u32,
    /// Balanced Ribbon (the paper's section 6): soft shards with bumping
    /// between them, for under 1% space overhead (width 64) at any number
    /// of keys (see the guide). Any width and precision; Standard Ribbon
    /// only (Homogeneous shards filled this tightly answer "may match"
    /// far too often: 43 × 2^-r measured at r = 7, width 64) and no smash.
    /// With no keys the filter is the empty filter, written as version 1.
    /// [`Config::slot_overhead`] then sets the overhead of the shards
    /// before the last (default: [`Config::balanced_shard_overhead`]);
    /// [`Config::failure_chance`] sizes the last shard. Written as format
    /// version 2.
    pub balanced: bool,
    /// Balanced Ribbon: build in bounded memory. The first pass keeps a
    /// window of two shards' rows instead of a banding of the whole
    /// filter, and back-substitution bands each shard again from what
    /// that pass recorded; the key hashes are regrouped in place. Peak
    /// memory is then the key hashes, the finished filter and about 20
    /// bits per key (`rust.BalancedRibbon:10`, width 64, at 10^6 and 10^7
    /// keys: 91 bits per key, against 192 and 213 without), for about 1.3
    /// times the construction time (width 64: 61 against 46 ns/key at
    /// 10^6 keys, 70 against 51 at 10^7). The filter's bytes are the same.
    /// Ignored for other filters.
    pub low_memory: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            width: 128,
            precision: Precision::ResultBits(7.0),
            mode: Mode::Standard,
            smash: false,
            first_coeff_always_one: true,
            failure_chance: ConstructionFailureChance::OneIn20,
            slot_overhead: None,
            seed: 0,
            max_seeds: 256,
            balanced: false,
            low_memory: false,
        }
    }
}

/// Supported ribbon widths.
pub const WIDTHS: [u32; 3] = [32, 64, 128];

/// The largest [`Config::slot_overhead`] accepted (slots = 101 × keys).
pub const MAX_SLOT_OVERHEAD: f64 = 100.0;

impl Config {
    /// Standard Ribbon of width `width` with `result_bits` bits per slot,
    /// other settings default.
    #[must_use]
    pub fn standard(width: u32, result_bits: f64) -> Self {
        Self {
            width,
            precision: Precision::ResultBits(result_bits),
            ..Self::default()
        }
    }

    /// Homogeneous Ribbon of width `width` with `result_bits` bits per slot,
    /// other settings default.
    #[must_use]
    pub fn homogeneous(width: u32, result_bits: f64) -> Self {
        Self {
            mode: Mode::Homogeneous,
            ..Self::standard(width, result_bits)
        }
    }

    /// Balanced Standard Ribbon of width `width` with `result_bits` bits
    /// per slot, other settings default.
    #[must_use]
    pub fn balanced(width: u32, result_bits: f64) -> Self {
        Self {
            balanced: true,
            ..Self::standard(width, result_bits)
        }
    }

    /// This configuration aiming at the FP rate `fp_rate` (in `2^-32 ..=
    /// 0.5`, checked when the filter is built or by
    /// [`validate`](Self::validate)) instead of its result bits:
    /// [`Precision::FpRate`].
    ///
    /// ```
    /// use ribbon::{Config, Precision, Ribbon};
    ///
    /// let config = Config::default().with_fp_rate(0.01);
    /// assert_eq!(config.precision, Precision::FpRate(0.01));
    /// let keys: Vec<String> = (0..10_000).map(|i| format!("key{i}")).collect();
    /// let filter = Ribbon::from_keys(&keys, &config)?;
    /// assert!((filter.target_fp_rate() - 0.01).abs() < 1e-9);
    /// assert!(Config::default().with_fp_rate(0.9).validate().is_err());
    /// # Ok::<(), ribbon::standalone::Error>(())
    /// ```
    #[must_use]
    pub fn with_fp_rate(self, fp_rate: f64) -> Self {
        Self {
            precision: Precision::FpRate(fp_rate),
            ..self
        }
    }

    /// This configuration with `result_bits` bits per slot
    /// ([`Precision::ResultBits`], `1.0 ..= 32.0`).
    #[must_use]
    pub fn with_result_bits(self, result_bits: f64) -> Self {
        Self {
            precision: Precision::ResultBits(result_bits),
            ..self
        }
    }

    /// The overhead of a Balanced filter's shards before the last when
    /// [`Config::slot_overhead`] is not set, by width.
    #[must_use]
    pub fn balanced_shard_overhead(&self) -> f64 {
        super::balanced::build::default_shard_overhead(self.width)
    }

    /// Checks every setting; the error names the first invalid one.
    pub fn validate(&self) -> Result<(), Error> {
        self.shape()?;
        match self.precision {
            Precision::ResultBits(r) if !(1.0..=32.0).contains(&r) => {
                return Err(invalid("result_bits", format!("must be in 1 ..= 32, got {r}")))
            }
            Precision::FpRate(p) if !((-32.0f64).exp2()..=0.5).contains(&p) => {
                return Err(invalid("fp_rate", format!("must be in 2^-32 ..= 0.5, got {p}")))
            }
            _ => {}
        }
        if let Some(e) = self.slot_overhead {
            if !(0.0..=MAX_SLOT_OVERHEAD).contains(&e) {
                return Err(invalid(
                    "slot_overhead",
                    format!("must be in 0 ..= {MAX_SLOT_OVERHEAD}, got {e}"),
                ));
            }
        }
        if self.max_seeds == 0 {
            return Err(invalid("max_seeds", "must be at least 1".into()));
        }
        if self.balanced && self.smash {
            return Err(invalid(
                "smash",
                "does not apply to Balanced Ribbon (its shards share their borders)".into(),
            ));
        }
        if self.balanced && self.mode == Mode::Homogeneous {
            return Err(invalid(
                "mode",
                "Balanced Ribbon fills its shards as far as banding allows, which only \
                 Standard Ribbon's FP rate survives; use Mode::Standard"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The settings combination, or an error for an unsupported width.
    pub(crate) fn shape(&self) -> Result<Shape, Error> {
        let width = Width::from_bits(self.width)
            .ok_or_else(|| invalid("width", format!("must be 32, 64 or 128, got {}", self.width)))?;
        Ok(Shape {
            width,
            first_coeff_always_one: self.first_coeff_always_one,
            smash: self.smash,
            homogeneous: self.mode == Mode::Homogeneous,
        })
    }
}

fn invalid(setting: &'static str, reason: String) -> Error {
    Error::InvalidConfig { setting, reason }
}
