//! The standalone filter API and file format (`ribbon::standalone`): no false
//! negatives for any configuration, FP rates and space overheads against the
//! paper (Dillinger and Walzer, 2021), the file format's checks, conversion
//! to and from RocksDB's format, and a schema pin.
//!
//! Statistical checks use RocksDB-style named bounds: a check repeated over
//! many configurations in one run tolerates [`FREQUENT_SIGMAS`], a check made
//! once per run [`RARE_SIGMAS`]. All randomness is seeded, so a run is
//! reproducible.

use ribbon::core::alg::{CoeffRow, RibbonSettings};
use ribbon::core::config::ConstructionFailureChance;
use ribbon::core::hash::{get_slice_hash64, hash64};
use ribbon::rocksdb::format::FilterReader;
use ribbon::standalone::sizing::{homogeneous_overhead, keys_until_failure, MAX_KEYS};
use ribbon::standalone::{file, Config, Error, Mode, Precision, Ribbon, RibbonRef, Settings};
use ribbon::test_support::keys::{self, Rng};
pub use ribbon::test_support::stats::{assert_binomial, FREQUENT_SIGMAS, RARE_SIGMAS};

/// Unoptimised builds run the statistical tests with this many times fewer
/// trials and queries (their bounds widen accordingly); `cargo test
/// --release` runs them in full.
const DEBUG_DIVISOR: usize = if cfg!(debug_assertions) { 10 } else { 1 };

fn hashes(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.next_u64()).collect()
}

/// Every settings combination.
fn all_shapes() -> Vec<Config> {
    let mut out = Vec::new();
    for width in [32, 64, 128] {
        for first_coeff_always_one in [false, true] {
            for smash in [false, true] {
                for mode in [Mode::Standard, Mode::Homogeneous] {
                    out.push(Config {
                        width,
                        first_coeff_always_one,
                        smash,
                        mode,
                        ..Config::default()
                    });
                }
            }
        }
    }
    out
}

fn describe(c: &Config) -> String {
    format!(
        "w={} fcao={} smash={} {:?} {:?} seed={}",
        c.width, c.first_coeff_always_one, c.smash, c.mode, c.precision, c.seed
    )
}

mod config;
mod file_format;
mod fp_rates;
mod no_false_negatives;
mod rocksdb;
mod table1;
