//! Measured occupancy tables from RocksDB 11.8.1 util/ribbon_config.cc.
//!
//! Entry `i` of each table is the number of keys that can be banded into
//! exactly `2^i` slots with the table's construction failure chance (see the
//! parent module for how the numbers were measured). `0.0` marks a slot count
//! too small for the configuration. The values are kept as `f64` because the
//! interpolation in the parent module works on them as doubles; every literal
//! is copied digit for digit so that it parses to the same double as in C++.

use super::ConstructionFailureChance;

/// Number of entries in every table: powers of two `2^0 ..= 2^17`.
pub(super) const KNOWN_SIZE: usize = 18;

/// A table of known numbers of keys to add, indexed by log2 of the slot count.
pub(super) type KnownToAdd = [f64; KNOWN_SIZE];

/// Growth of the overhead factor (slots per key) per doubling of the slot
/// count, beyond the tables, for 128-bit coefficient rows.
pub(super) const FACTOR_PER_POW2_128: f64 = 0.0038;

/// As [`FACTOR_PER_POW2_128`], for 64-bit coefficient rows.
pub(super) const FACTOR_PER_POW2_64: f64 = 0.0083;

const ONE_IN_2_128: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 252.984, 506.109, 1013.71, 2029.47, 4060.43, 8115.63, 16202.2,
    32305.1, 64383.5, 128274.0,
];

const ONE_IN_2_128_SMASH: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 126.274, 254.279, 510.27, 1022.24, 2046.02, 4091.99, 8154.98, 16244.3,
    32349.7, 64426.6, 128307.0,
];

const ONE_IN_2_64: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 124.94, 249.968, 501.234, 1004.06, 2006.15, 3997.89, 7946.99, 15778.4,
    31306.9, 62115.3, 123284.0,
];

const ONE_IN_2_64_SMASH: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 62.2683, 126.259, 254.268, 509.975, 1019.98, 2026.16, 4019.75, 7969.8,
    15798.2, 31330.3, 62134.2, 123255.0,
];

const ONE_IN_20_128: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39, 15966.6,
    31828.1, 63447.3, 126506.0,
];

const ONE_IN_20_128_SMASH: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 122.637, 250.651, 506.625, 1018.54, 2036.43, 4041.6, 8039.25, 16005.0,
    31869.6, 63492.8, 126537.0,
];

const ONE_IN_20_64: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 120.659, 243.346, 488.168, 976.373, 1948.86, 3875.85, 7704.97,
    15312.4, 30395.1, 60321.8, 119813.0,
];

const ONE_IN_20_64_SMASH: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 58.6016, 122.619, 250.641, 503.595, 994.165, 1967.36, 3898.17, 7727.21,
    15331.5, 30405.8, 60376.2, 119836.0,
];

const ONE_IN_1000_128: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 242.61, 491.887, 983.603, 1968.21, 3926.98, 7833.99, 15629.0,
    31199.9, 62307.8, 123870.0,
];

const ONE_IN_1000_128_SMASH: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 117.19, 245.105, 500.748, 1010.67, 1993.4, 3950.01, 7863.31, 15652.0,
    31262.1, 62462.8, 124095.0,
];

const ONE_IN_1000_64: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 114.0, 234.8, 471.498, 940.165, 1874.0, 3721.5, 7387.5, 14592.0,
    29160.0, 57745.0, 115082.0,
];

const ONE_IN_1000_64_SMASH: KnownToAdd = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 53.0434, 117.0, 245.312, 483.571, 950.251, 1878.0, 3736.34, 7387.97,
    14618.0, 29142.9, 57838.8, 114932.0,
];

/// The table for a failure chance, coefficient width and smash setting, or
/// `None` for a width RocksDB has no data for (anything but 64 and 128).
pub(super) fn known_to_add_by_pow2(
    failure_chance: ConstructionFailureChance,
    coeff_bits: u32,
    use_smash: bool,
) -> Option<&'static KnownToAdd> {
    use ConstructionFailureChance::{OneIn1000, OneIn2, OneIn20};
    let table = match (failure_chance, coeff_bits, use_smash) {
        (OneIn2, 128, false) => &ONE_IN_2_128,
        (OneIn2, 128, true) => &ONE_IN_2_128_SMASH,
        (OneIn2, 64, false) => &ONE_IN_2_64,
        (OneIn2, 64, true) => &ONE_IN_2_64_SMASH,
        (OneIn20, 128, false) => &ONE_IN_20_128,
        (OneIn20, 128, true) => &ONE_IN_20_128_SMASH,
        (OneIn20, 64, false) => &ONE_IN_20_64,
        (OneIn20, 64, true) => &ONE_IN_20_64_SMASH,
        (OneIn1000, 128, false) => &ONE_IN_1000_128,
        (OneIn1000, 128, true) => &ONE_IN_1000_128_SMASH,
        (OneIn1000, 64, false) => &ONE_IN_1000_64,
        (OneIn1000, 64, true) => &ONE_IN_1000_64_SMASH,
        _ => return None,
    };
    Some(table)
}
