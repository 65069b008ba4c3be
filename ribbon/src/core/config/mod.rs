//! Ported from RocksDB 11.8.1 util/ribbon_config.h and util/ribbon_config.cc.
//!
//! How many keys fit in how many Ribbon slots.
//!
//! Banding (the first phase of Ribbon construction) can fail for a given hash
//! seed, and the fuller the slots, the likelier that is. This module relates a
//! number of slots `m` to a number of keys `n` such that banding `n` keys into
//! `m` slots fails with roughly a chosen [`ConstructionFailureChance`] per
//! seed (or less), for a given coefficient row width (64 or 128 bits), with or
//! without "smash" (extra hashing that improves utilisation at the ends of the
//! structure), and for standard or homogeneous Ribbon:
//!
//! * [`BandingConfig::num_to_add`] / [`get_num_to_add`]: keys for a slot
//!   count (RocksDB's `GetNumToAdd`);
//! * [`BandingConfig::num_slots`] / [`get_num_slots`]: slots for a key count
//!   (RocksDB's `GetNumSlots`).
//!
//! Neither rounds the slot count to what a solution layout needs (that is the
//! solution's `RoundUpNumSlots`).
//!
//! # Where the numbers come from
//!
//! There is no good closed formula, so RocksDB ships measured tables, one per
//! (failure chance, width, smash) combination: entry `i` is the number of keys
//! that can be added to exactly `2^i` slots, for `i` in `0..=17`. They were
//! produced with the `FindOccupancy` tool in RocksDB's `util/ribbon_test.cc`
//! (a disabled-by-default typed test, run with `--find_occ`), which
//! repeatedly bands fresh keys into a fixed number of slots until the first
//! failure and records the distribution of how many slots were left: the
//! median of that distribution gives the [`OneIn2`] table, its 95th
//! percentile the [`OneIn20`] table and its 99.9th percentile the
//! [`OneIn1000`] table (each as slots minus remaining slots). A `0.0` entry
//! means "too few slots for this configuration".
//!
//! # Interpolation and extrapolation
//!
//! * Below `2^17` slots, [`BandingConfig::num_to_add`] interpolates linearly
//!   (in the slot count) between the two surrounding powers of two.
//! * From `2^17` slots on, the overhead factor `slots / keys` is modelled as
//!   growing by a fixed amount per doubling of the slot count (0.0038 for
//!   128-bit rows, 0.0083 for 64-bit rows), anchored at the last table entry:
//!   `factor(L) = 2^17 / table[17] + (L - 17) * per_doubling` with
//!   `L = log2(slots)`, and keys = `slots / factor(L)`.
//! * [`BandingConfig::num_slots`] inverts that: it picks the power of two
//!   `2^k` nearest in log scale to the key count (stepping down once if that
//!   power holds more keys than requested), evaluates the key capacity at
//!   `2^k` and `2^(k+1)` (from the table or the large-size formula) and
//!   interpolates linearly between them, rounding the slot count up.
//!   Requests too small for the table return the minimum slot count: one
//!   coefficient row width with smash, two without (with one dip below it
//!   just under the smallest tabulated size, see
//!   [`BandingConfig::try_num_slots`]).
//! * The two directions are consistent: from the minimum slot count on both
//!   are non-decreasing, and `num_to_add(num_slots(n)) >= n`, except for
//!   `n = table[17]` (short by one key, from rounding where the table hands
//!   over to the formula).
//! * Homogeneous Ribbon subtracts 8 from the key count for given slots, and
//!   adds 8 to the key count (wrapping in `u32`) before computing slots.
//!
//! # Fidelity
//!
//! The arithmetic is RocksDB's, operation for operation, in `f64` (C++
//! `double`) with `u32` (C++ `uint32_t`) inputs and outputs:
//!
//! * `log2` is computed as `ln(x) * 1.4426950409` (the truncated constant, not
//!   [`std::f64::consts::LOG2_E`]), with `ln` from the platform's libm, as in
//!   RocksDB (without the `std` feature, from the `libm` crate, which differs
//!   in the last bit for some arguments; the slot counts tested here are
//!   RocksDB's in both builds).
//! * Float-to-integer conversions truncate toward zero. Where RocksDB's
//!   conversion would be out of range (undefined behaviour in C++; only
//!   [`BandingConfig::num_slots`] for more than roughly 2/3 of `u32::MAX` keys,
//!   which RocksDB documents as unsupported), the result is what x86-64
//!   RocksDB computes: the value truncated to 64 bits, then its low 32 bits
//!   (0 when it does not fit in an `i64`).
//! * Where RocksDB only `assert`s (slot counts too small for the table,
//!   homogeneous results below 8), the result is what RocksDB's release build
//!   computes; nothing panics.
//! * Results match a RocksDB build without fused multiply-add. A RocksDB built
//!   for a CPU with FMA (e.g. `-march=haswell`) lets the compiler fuse some of
//!   these expressions; for the Standard128 Ribbon filter configuration that
//!   changes [`BandingConfig::num_to_add`] by one for 50 of the 2^32 possible
//!   slot counts (all above 2^27), and leaves [`BandingConfig::num_slots`]
//!   unchanged for every key count the filter accepts.
//!
//! [`OneIn2`]: ConstructionFailureChance::OneIn2
//! [`OneIn20`]: ConstructionFailureChance::OneIn20
//! [`OneIn1000`]: ConstructionFailureChance::OneIn1000

mod tables;
#[cfg(test)]
pub(crate) mod tests;

use tables::{KnownToAdd, FACTOR_PER_POW2_128, FACTOR_PER_POW2_64, KNOWN_SIZE};

/// The accepted chance that banding fails for one hash seed (RocksDB's
/// `ConstructionFailureChance`).
///
/// Accepting a higher chance packs more keys into the same slots (less space
/// overhead) at the price of more re-seeding during construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ConstructionFailureChance {
    /// About one seed in 2 fails (`kOneIn2`).
    OneIn2,
    /// About one seed in 20 fails (`kOneIn20`); the default for standard
    /// (non-homogeneous) Ribbon and what the Standard128 Ribbon filter uses.
    OneIn20,
    /// About one seed in 1000 fails (`kOneIn1000`); the default for
    /// homogeneous Ribbon, where "failure" degrades the FP rate instead.
    OneIn1000,
}

impl ConstructionFailureChance {
    /// Every failure chance, in RocksDB's declaration order.
    pub const ALL: [Self; 3] = [Self::OneIn2, Self::OneIn20, Self::OneIn1000];

    /// RocksDB's enum value (`kOneIn2 = 0`, `kOneIn20 = 1`,
    /// `kOneIn1000 = 2`): the index into [`ALL`](Self::ALL), and the code
    /// the standalone file format stores. The one mapping between the
    /// variants and numbers; see also [`one_in`](Self::one_in).
    #[must_use]
    pub const fn code(self) -> u8 {
        match self {
            Self::OneIn2 => 0,
            Self::OneIn20 => 1,
            Self::OneIn1000 => 2,
        }
    }

    /// The failure chance with RocksDB's enum value `code` (see
    /// [`code`](Self::code)), if any.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::OneIn2),
            1 => Some(Self::OneIn20),
            2 => Some(Self::OneIn1000),
            _ => None,
        }
    }

    /// `n` of "one seed in `n` fails": 2, 20 or 1000.
    #[must_use]
    pub const fn one_in(self) -> u32 {
        match self {
            Self::OneIn2 => 2,
            Self::OneIn20 => 20,
            Self::OneIn1000 => 1000,
        }
    }

    /// The failure chance of one seed in `n` (2, 20 or 1000), if any.
    #[must_use]
    pub fn from_one_in(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.one_in() == n)
    }

    /// The default RocksDB's runtime-configurable `BandingConfigHelper`
    /// uses: [`OneIn1000`](Self::OneIn1000) for homogeneous Ribbon,
    /// [`OneIn20`](Self::OneIn20) otherwise.
    #[must_use]
    pub const fn default_for(homogeneous: bool) -> Self {
        if homogeneous {
            Self::OneIn1000
        } else {
            Self::OneIn20
        }
    }
}

/// `one in 20` (likewise `one in 2`, `one in 1000`).
impl core::fmt::Display for ConstructionFailureChance {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "one in {}", self.one_in())
    }
}

impl Default for ConstructionFailureChance {
    /// [`OneIn20`](Self::OneIn20), the default for standard Ribbon.
    fn default() -> Self {
        Self::default_for(false)
    }
}

/// Settings that decide the relation between slots and keys (the template
/// parameters of RocksDB's `BandingConfigHelper1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BandingConfig {
    /// Accepted chance of banding failure per seed.
    pub failure_chance: ConstructionFailureChance,
    /// Width of a coefficient row in bits. RocksDB has data for 64 and 128
    /// only; any other width is [unsupported](Self::is_supported).
    pub coeff_bits: u32,
    /// Whether banding uses "smash" (`kUseSmash`).
    pub use_smash: bool,
    /// Whether this is homogeneous Ribbon (`kHomogeneous`), which reserves 8
    /// keys' worth of headroom relative to standard Ribbon.
    pub homogeneous: bool,
}

impl BandingConfig {
    /// The configuration RocksDB's Standard128 Ribbon filter
    /// (`Standard128RibbonBitsBuilder` in table/block_based/filter_policy.cc)
    /// sizes itself with: one failure in 20, and the settings of
    /// [`crate::core::alg::Standard128`] (128-bit coefficient rows, no smash, not
    /// homogeneous).
    pub const STANDARD128_RIBBON: Self =
        Self::for_settings::<crate::core::alg::Standard128>(ConstructionFailureChance::OneIn20);

    /// The configuration of the settings type `S` (its width, smash and
    /// homogeneous flags) at `failure_chance`.
    #[must_use]
    pub const fn for_settings<S: crate::core::alg::RibbonSettings>(
        failure_chance: ConstructionFailureChance,
    ) -> Self {
        Self::new(
            failure_chance,
            <S::CoeffRow as crate::core::alg::CoeffRow>::BITS,
            S::USE_SMASH,
            S::HOMOGENEOUS,
        )
    }

    /// Bundles the four settings.
    #[must_use]
    pub const fn new(
        failure_chance: ConstructionFailureChance,
        coeff_bits: u32,
        use_smash: bool,
        homogeneous: bool,
    ) -> Self {
        Self {
            failure_chance,
            coeff_bits,
            use_smash,
            homogeneous,
        }
    }

    /// Whether RocksDB has sizing data for this configuration, i.e. whether
    /// `coeff_bits` is 64 or 128 (every failure chance, smash and homogeneous
    /// setting is covered for those).
    #[must_use]
    pub const fn is_supported(self) -> bool {
        self.coeff_bits == 64 || self.coeff_bits == 128
    }

    /// Number of keys that can be added to `num_slots` slots with about the
    /// configured failure chance per seed, or `None` if the configuration is
    /// [unsupported](Self::is_supported).
    ///
    /// Returns `Some(0)` for zero slots. Slot counts below the smallest
    /// tabulated power of two give RocksDB's (release build) interpolation
    /// toward zero, typically 0 or a handful of keys; for homogeneous Ribbon,
    /// results under 8 are not reduced by the 8-key headroom. Does not round
    /// for any solution layout.
    #[must_use]
    pub fn try_num_to_add(&self, num_slots: u32) -> Option<u32> {
        Some(self.curve()?.num_to_add(num_slots, self.homogeneous))
    }

    /// Number of slots for `num_to_add` keys to be added with about the
    /// configured failure chance per seed, or `None` if the configuration is
    /// [unsupported](Self::is_supported).
    ///
    /// Returns `Some(0)` for zero keys. Key counts below the smallest
    /// tabulated size get the minimum slot count (`coeff_bits` with smash,
    /// `2 * coeff_bits` without), except that, as in RocksDB, those whose log2
    /// rounds to the smallest tabulated power of two are interpolated down
    /// from half of it and may get fewer (but never fewer slots than keys).
    /// The result is not rounded for any solution layout, whose
    /// `RoundUpNumSlots` restores the minimum. RocksDB supports up to about
    /// 2/3 of `u32::MAX` keys; beyond the point where the slot count would
    /// exceed `u32::MAX`, the result wraps as it does in x86-64 RocksDB.
    #[must_use]
    pub fn try_num_slots(&self, num_to_add: u32) -> Option<u32> {
        Some(self.curve()?.num_slots(num_to_add, self.homogeneous))
    }

    /// [`try_num_to_add`](Self::try_num_to_add), with `0` for an unsupported
    /// configuration (what RocksDB's release build returns there).
    #[must_use]
    pub fn num_to_add(&self, num_slots: u32) -> u32 {
        self.try_num_to_add(num_slots).unwrap_or(0)
    }

    /// [`try_num_slots`](Self::try_num_slots), with `0` for an unsupported
    /// configuration (what RocksDB's release build returns there).
    #[must_use]
    pub fn num_slots(&self, num_to_add: u32) -> u32 {
        self.try_num_slots(num_to_add).unwrap_or(0)
    }

    fn curve(&self) -> Option<Curve> {
        let known = tables::known_to_add_by_pow2(self.failure_chance, self.coeff_bits, self.use_smash)?;
        let factor_per_pow2 = if self.coeff_bits == 128 {
            FACTOR_PER_POW2_128
        } else {
            FACTOR_PER_POW2_64
        };
        let min_slots = if self.use_smash {
            self.coeff_bits
        } else {
            2 * self.coeff_bits
        };
        Some(Curve {
            known,
            factor_per_pow2,
            min_slots,
        })
    }
}

/// Number of keys that can be added to `num_slots` slots with about `failure_chance`
/// failure chance per seed (RocksDB's
/// `BandingConfigHelper1<failure_chance, coeff_bits, use_smash, homogeneous>::GetNumToAdd`).
///
/// Shorthand for [`BandingConfig::num_to_add`]: `0` for zero slots and for a
/// `coeff_bits` other than 64 or 128 (RocksDB has no data for other widths,
/// and its release build returns 0 for them).
#[must_use]
pub fn get_num_to_add(
    failure_chance: ConstructionFailureChance,
    coeff_bits: u32,
    use_smash: bool,
    homogeneous: bool,
    num_slots: u32,
) -> u32 {
    BandingConfig::new(failure_chance, coeff_bits, use_smash, homogeneous).num_to_add(num_slots)
}

/// Number of slots for `num_to_add` keys with about `failure_chance` failure chance per
/// seed (RocksDB's
/// `BandingConfigHelper1<failure_chance, coeff_bits, use_smash, homogeneous>::GetNumSlots`).
///
/// Shorthand for [`BandingConfig::num_slots`]: `0` for zero keys and for a
/// `coeff_bits` other than 64 or 128 (RocksDB has no data for other widths,
/// and its release build returns 0 for them). Not rounded for any solution
/// layout.
#[must_use]
pub fn get_num_slots(
    failure_chance: ConstructionFailureChance,
    coeff_bits: u32,
    use_smash: bool,
    homogeneous: bool,
    num_to_add: u32,
) -> u32 {
    BandingConfig::new(failure_chance, coeff_bits, use_smash, homogeneous).num_slots(num_to_add)
}

/// RocksDB's approximation of `1 / ln(2)`, kept as written: using the exact
/// constant would change results.
#[allow(clippy::approx_constant)]
const LOG2_OF_E: f64 = 1.4426950409;

/// `log2(x)` the way RocksDB computes it.
fn approx_log2(x: u32) -> f64 {
    crate::core::float::ln(f64::from(x)) * LOG2_OF_E
}

/// Homogeneous Ribbon's headroom, in keys.
const HOMOGENEOUS_HEADROOM: u32 = 8;

/// The slots-to-keys relation of one supported configuration (RocksDB's
/// `BandingConfigHelperData`).
struct Curve {
    known: &'static KnownToAdd,
    factor_per_pow2: f64,
    min_slots: u32,
}

impl Curve {
    /// Overhead factor (slots per key) at the largest tabulated size.
    fn final_known_factor(&self) -> f64 {
        f64::from(1u32 << (KNOWN_SIZE - 1)) / self.known[KNOWN_SIZE - 1]
    }

    /// The large-size overhead factor extrapolated back to one slot.
    fn base_factor(&self) -> f64 {
        self.final_known_factor() - (KNOWN_SIZE - 1) as f64 * self.factor_per_pow2
    }

    /// Overhead factor for large slot counts, by log2 of the slot count.
    fn factor_for_large(&self, log2_num_slots: f64) -> f64 {
        self.base_factor() + log2_num_slots * self.factor_per_pow2
    }

    /// Keys for exactly `2^log2_num_slots` slots, as a double.
    fn num_to_add_for_pow2(&self, log2_num_slots: u32) -> f64 {
        if let Some(&known) = self.known.get(log2_num_slots as usize) {
            return known;
        }
        // Callers pass at most 33; the infinite fallback is never reached.
        let slots = 1u64
            .checked_shl(log2_num_slots)
            .map_or(f64::INFINITY, |s| s as f64);
        slots / self.factor_for_large(f64::from(log2_num_slots))
    }

    fn num_to_add(&self, num_slots: u32, homogeneous: bool) -> u32 {
        if num_slots == 0 {
            return 0;
        }
        let log2_num_slots = approx_log2(num_slots);
        // In 0..=32 for any non-zero u32.
        let floor_log2 = log2_num_slots as u32;
        let lower_index = floor_log2 as usize;
        let num_to_add = match (self.known.get(lower_index), self.known.get(lower_index + 1)) {
            (Some(&lower), Some(&upper)) => {
                // Linear interpolation between the neighbouring powers of two.
                let ceil_portion = f64::from(num_slots) / f64::from(1u32 << floor_log2) - 1.0;
                (ceil_portion * upper + (1.0 - ceil_portion) * lower) as u32
            }
            _ => (f64::from(num_slots) / self.factor_for_large(log2_num_slots)) as u32,
        };
        if homogeneous && num_to_add >= HOMOGENEOUS_HEADROOM {
            // RocksDB asserts that there is room for the headroom; its release
            // build leaves smaller results as they are.
            num_to_add - HOMOGENEOUS_HEADROOM
        } else {
            num_to_add
        }
    }

    fn num_slots(&self, num_to_add: u32, homogeneous: bool) -> u32 {
        if num_to_add == 0 {
            return 0;
        }
        // Wraps in u32 like RocksDB's; a wrapped 0 gives ln = -inf, which
        // converts to 0 below (as it does on x86-64 RocksDB) and so yields the
        // minimum slot count.
        let num_to_add = if homogeneous {
            num_to_add.wrapping_add(HOMOGENEOUS_HEADROOM)
        } else {
            num_to_add
        };
        let wanted = f64::from(num_to_add);
        // In 0..=32.
        let mut approx_log2_slots = (approx_log2(num_to_add) + 0.5) as u32;

        let mut lower_num_to_add = self.num_to_add_for_pow2(approx_log2_slots);
        if approx_log2_slots == 0 || lower_num_to_add == 0.0 {
            return self.min_slots;
        }
        let upper_num_to_add;
        if wanted < lower_num_to_add {
            upper_num_to_add = lower_num_to_add;
            approx_log2_slots -= 1;
            lower_num_to_add = self.num_to_add_for_pow2(approx_log2_slots);
        } else {
            upper_num_to_add = self.num_to_add_for_pow2(approx_log2_slots + 1);
        }

        let upper_portion = (wanted - lower_num_to_add) / (upper_num_to_add - lower_num_to_add);
        // approx_log2_slots <= 32, so the shift cannot overflow a u64.
        let lower_num_slots = (1u64 << approx_log2_slots) as f64;
        // Interpolate and round up.
        double_to_u32(upper_portion * lower_num_slots + lower_num_slots + 0.999999999)
    }
}

/// C++'s `static_cast<uint32_t>(double)` as GCC and Clang compile it for
/// x86-64: truncate to a 64-bit integer (`cvttsd2si`, which gives
/// `i64::MIN` for NaN and out-of-range values), keep the low 32 bits. For
/// values in `0..2^32` this is plain truncation; beyond, it is what RocksDB's
/// (formally undefined) conversion yields there.
fn double_to_u32(d: f64) -> u32 {
    const I64_RANGE: core::ops::Range<f64> = -9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0;
    if I64_RANGE.contains(&d) {
        d as i64 as u32
    } else {
        // NaN and out of range.
        0
    }
}
