//! What-if: the bytes a filter would take as RocksDB's Standard128 Ribbon
//! (`ribbonfilter`) or as `rust.BalancedRibbon` at the same FP rate, from
//! the ribbon crate's own sizing rules (no table of sizes), and the
//! build-time price from this project's measured build speeds.

use ribbon::plugin::balanced_policy::{BalancedBuilder, BalancedPolicy};
use ribbon::rocksdb::bloom::{BloomMath, FastLocalBloomBuilder, FastLocalBloomImpl};
use ribbon::rocksdb::policy::FilterKind;
use ribbon::{BuildContext, FilterBuilder};

/// Build speed in ns/key at one key count, as measured in
/// [`docs/benchmarks.md`](https://github.com/rocks-ribbon/rocks-ribbon/blob/main/docs/benchmarks.md) (criterion medians, the "RocksDB C++" column of
/// the table "Ribbon build, n = N" / "FastLocalBloom build, n = N" rows
/// for RocksDB's own filters, the "Rust" column of "Balanced build" for
/// `rust.BalancedRibbon`). A test reads that file and checks each value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuildSpeed {
    /// Keys per filter.
    pub n: u64,
    /// RocksDB's FastLocalBloom build, ns/key.
    pub bloom_ns: f64,
    /// RocksDB's Standard128 Ribbon build, ns/key.
    pub ribbon_ns: f64,
    /// `rust.BalancedRibbon` build, ns/key (`None`: not measured at this n).
    pub balanced_ns: Option<f64>,
}

/// The measured build speeds ([`docs/benchmarks.md`](https://github.com/rocks-ribbon/rocks-ribbon/blob/main/docs/benchmarks.md)).
pub const BUILD_SPEEDS: [BuildSpeed; 4] = [
    BuildSpeed {
        n: 10_000,
        bloom_ns: 26.92,
        ribbon_ns: 78.04,
        balanced_ns: None,
    },
    BuildSpeed {
        n: 100_000,
        bloom_ns: 30.94,
        ribbon_ns: 89.94,
        balanced_ns: None,
    },
    BuildSpeed {
        n: 1_000_000,
        bloom_ns: 27.76,
        ribbon_ns: 120.96,
        balanced_ns: Some(123.40),
    },
    BuildSpeed {
        n: 10_000_000,
        bloom_ns: 32.23,
        ribbon_ns: 176.60,
        balanced_ns: Some(126.43),
    },
];

/// The measured speed for the key count nearest `n` (in log scale).
pub fn speed_for(n: u64) -> BuildSpeed {
    let ln = (n.max(1) as f64).ln();
    *BUILD_SPEEDS
        .iter()
        .min_by(|a, b| {
            let da = ((a.n as f64).ln() - ln).abs();
            let db = ((b.n as f64).ln() - ln).abs();
            da.total_cmp(&db)
        })
        .expect("non-empty table")
}

/// The nearest measured Balanced build speed (measured at 10^6 and 10^7 keys).
pub fn balanced_speed_for(n: u64) -> f64 {
    if n >= 3_000_000 {
        BUILD_SPEEDS[3].balanced_ns.unwrap_or(f64::NAN)
    } else {
        BUILD_SPEEDS[2].balanced_ns.unwrap_or(f64::NAN)
    }
}

/// Bits per key for which a FastLocalBloom filter's FP rate is `fp`
/// (RocksDB's `cache_local_fp_rate` with its probe choice), by bisection
/// over 1 to 100 bits per key; `None` when `fp` is not in that range.
pub fn bloom_bits_for_fp(fp: f64) -> Option<f64> {
    let rate = |bits: f64| {
        let millibits = (bits * 1000.0 + 0.500001) as i32;
        BloomMath::cache_local_fp_rate(bits, FastLocalBloomImpl::choose_num_probes(millibits), 512)
    };
    if !(fp.is_finite() && fp > 0.0) || fp > rate(1.0) || fp < rate(100.0) {
        return None;
    }
    let (mut lo, mut hi) = (1.0f64, 100.0f64);
    for _ in 0..50 {
        let mid = (lo + hi) / 2.0;
        if rate(mid) > fp {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

/// Filter bytes (trailer included) RocksDB's Standard128 Ribbon takes for
/// `n` entries at FP rate `fp` (Bloom where RocksDB's own rule picks Bloom
/// for few keys: then the Bloom's size).
pub fn ribbon_bytes(n: u64, fp: f64) -> Option<u64> {
    if n == 0 || !(fp > 0.0 && fp < 1.0) {
        return None;
    }
    let bits = bloom_bits_for_fp(fp)?;
    let millibits = (bits * 1000.0 + 0.500001) as i32;
    let kind = FilterKind::Standard128Ribbon {
        desired_one_in_fp_rate: 1.0 / fp,
        bloom: FastLocalBloomBuilder::new(millibits),
    };
    Some(FilterBuilder::for_kind(kind).calculate_space(n as usize) as u64)
}

/// Filter bytes a `rust.BalancedRibbon` block takes for `n` entries at the
/// FP rate of a FastLocalBloom of the same bits per key as `fp` (the
/// policy's own target rule), including its fall-backs to RocksDB's block.
pub fn balanced_bytes(n: u64, fp: f64) -> Option<u64> {
    if n == 0 || !(fp > 0.0 && fp < 1.0) {
        return None;
    }
    let bits = bloom_bits_for_fp(fp)?;
    let policy = BalancedPolicy::new(bits, -1);
    let ctx = BuildContext::default();
    BalancedBuilder::new(&policy, &ctx).map(|b| b.calculate_space(n as usize) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_speeds_are_the_documented_ones() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/benchmarks.md");
        let Ok(doc) = std::fs::read_to_string(path) else {
            // A packaged crate has no docs/: nothing to compare against.
            return;
        };
        let cpp = |row: &str| -> f64 {
            let line = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {row} |")))
                .unwrap_or_else(|| panic!("docs/benchmarks.md has no row {row:?}"));
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            cells[3].trim_end_matches(" ns/key").parse().unwrap()
        };
        let rust = |row: &str| -> f64 {
            let line = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {row} |")))
                .unwrap();
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            cells[2].trim_end_matches(" ns/key").parse().unwrap()
        };
        for s in BUILD_SPEEDS {
            assert_eq!(s.ribbon_ns, cpp(&format!("Ribbon build, n = {}", s.n)));
            assert_eq!(s.bloom_ns, cpp(&format!("FastLocalBloom build, n = {}", s.n)));
            if let Some(b) = s.balanced_ns {
                assert_eq!(b, rust(&format!("Balanced build, n = {}", s.n)));
            }
        }
    }

    #[test]
    fn ribbon_saves_about_thirty_percent_at_ten_bits() {
        let bits = 10.0;
        let millibits = 10_000;
        let fp = BloomMath::cache_local_fp_rate(bits, FastLocalBloomImpl::choose_num_probes(millibits), 512);
        assert!((bloom_bits_for_fp(fp).unwrap() - bits).abs() < 1e-6);
        let n = 100_000u64;
        let bloom = FastLocalBloomBuilder::new(millibits).calculate_space(n as usize) as f64;
        let ribbon = ribbon_bytes(n, fp).unwrap() as f64;
        let balanced = balanced_bytes(n, fp).unwrap() as f64;
        assert!(
            ribbon < bloom * 0.75 && ribbon > bloom * 0.6,
            "{ribbon} vs {bloom}"
        );
        assert!(balanced < ribbon, "{balanced} vs {ribbon}");
        assert_eq!(speed_for(150_000).n, 100_000);
        assert_eq!(speed_for(1).n, 10_000);
    }
}
