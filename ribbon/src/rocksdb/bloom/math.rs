// Ported from RocksDB 11.8.1: util/bloom_impl.h (class BloomMath).

//! False-positive-rate estimates for Bloom-like filters.
//!
//! These are the estimates RocksDB uses for user feedback, for choosing the
//! Ribbon filter's target FP rate from a Bloom bits/key setting, and for the
//! filter builders' `estimated_fp_rate` methods. Every formula evaluates its
//! floating point operations in the same order as RocksDB and calls the
//! platform `exp`/`pow`/`sqrt` (never `powi`), so on the same platform the
//! results are the same `f64` values RocksDB computes.

#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;

/// Namespace for the Bloom filter FP-rate formulas (all associated functions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BloomMath;

impl BloomMath {
    /// FP rate of a standard (not cache-local) Bloom filter with
    /// `bits_per_key` bits of filter per added key and `num_probes` probes per
    /// key: `(1 - e^(-k/b))^k`.
    ///
    /// Scale-independent. `bits_per_key <= 0`, NaN or a negative `num_probes`
    /// give whatever the IEEE formula gives (no panic).
    #[must_use]
    pub fn standard_fp_rate(bits_per_key: f64, num_probes: i32) -> f64 {
        let k = f64::from(num_probes);
        (1.0 - (-k / bits_per_key).exp()).powf(k)
    }

    /// FP rate of a cache-local ("blocked") Bloom filter whose probes for a
    /// key all land in one cache line of `cache_line_bits` bits.
    ///
    /// Estimated as the mean of [`standard_fp_rate`](Self::standard_fp_rate)
    /// at one standard deviation above and below the mean number of keys per
    /// cache line (keys per line treated as Poisson). Returns exactly `1.0` when
    /// `bits_per_key <= 0.0`.
    #[must_use]
    pub fn cache_local_fp_rate(bits_per_key: f64, num_probes: i32, cache_line_bits: i32) -> f64 {
        if bits_per_key <= 0.0 {
            return 1.0;
        }
        let line_bits = f64::from(cache_line_bits);
        let keys_per_line = line_bits / bits_per_key;
        let stddev = keys_per_line.sqrt();
        let crowded = Self::standard_fp_rate(line_bits / (keys_per_line + stddev), num_probes);
        let uncrowded = Self::standard_fp_rate(line_bits / (keys_per_line - stddev), num_probes);
        (crowded + uncrowded) / 2.0
    }

    /// FP rate caused by fingerprint collisions alone: the probability that a
    /// new item's `fingerprint_bits`-bit hash equals the hash of one of
    /// `num_keys` stored items (hashes assumed stored losslessly).
    ///
    /// Uses `1 - e^(-n/2^b)` when `n/2^b > 0.0001`, otherwise the
    /// second-order series `x - x^2/2` (more precise for tiny `x`).
    #[must_use]
    pub fn fingerprint_fp_rate(num_keys: usize, fingerprint_bits: i32) -> f64 {
        let inv_space = 0.5f64.powf(f64::from(fingerprint_bits));
        // Same conversion as C++'s size_t -> double.
        #[allow(clippy::cast_precision_loss)]
        let base = num_keys as f64 * inv_space;
        if base > 0.0001 {
            1.0 - (-base).exp()
        } else {
            base - (base * base * 0.5)
        }
    }

    /// Probability that either of two independent events happens, given
    /// their probabilities: `r1 + r2 - r1*r2` (written so tiny rates do not
    /// lose precision near 1.0).
    #[must_use]
    pub fn independent_probability_sum(rate1: f64, rate2: f64) -> f64 {
        rate1 + rate2 - (rate1 * rate2)
    }
}

#[cfg(test)]
mod tests {
    use super::BloomMath;

    #[test]
    fn standard_known_values() {
        // 10 bits/key with 7 probes: textbook ~0.819%.
        let r = BloomMath::standard_fp_rate(10.0, 7);
        assert!((r - 0.008_19).abs() < 0.000_01, "{r}");
        // Matches the formula term by term.
        let want = (1.0 - (-7.0f64 / 10.0).exp()).powf(7.0);
        assert_eq!(r.to_bits(), want.to_bits());
    }

    #[test]
    fn cache_local_values() {
        assert_eq!(BloomMath::cache_local_fp_rate(0.0, 6, 512), 1.0);
        assert_eq!(BloomMath::cache_local_fp_rate(-3.0, 6, 512), 1.0);
        // The RocksDB wiki quotes ~0.9535% for 10 bits/key, 6 probes, 512-bit
        // lines; this estimate lands close to it.
        let r = BloomMath::cache_local_fp_rate(10.0, 6, 512);
        assert!(r > 0.0090 && r < 0.0100, "{r}");
        // Cache-local is always worse than standard at the same settings.
        assert!(r > BloomMath::standard_fp_rate(10.0, 6));
        // Larger cache lines approach the standard rate.
        let big = BloomMath::cache_local_fp_rate(10.0, 6, 1 << 20);
        assert!((big - BloomMath::standard_fp_rate(10.0, 6)).abs() < 1e-5);
        // Infinite bits per key (no keys): zero.
        assert_eq!(BloomMath::cache_local_fp_rate(f64::INFINITY, 6, 512), 0.0);
    }

    #[test]
    fn fingerprint_values() {
        assert_eq!(BloomMath::fingerprint_fp_rate(0, 64), 0.0);
        // Small branch: x - x^2/2.
        let x = 1000.0 * 0.5f64.powf(32.0);
        assert_eq!(BloomMath::fingerprint_fp_rate(1000, 32), x - x * x * 0.5);
        // Large branch: 1 - e^-x.
        let n = 100_000_000usize;
        let x = n as f64 * 0.5f64.powf(32.0);
        assert_eq!(BloomMath::fingerprint_fp_rate(n, 32), 1.0 - (-x).exp());
        assert!(BloomMath::fingerprint_fp_rate(usize::MAX, 1) <= 1.0);
    }

    #[test]
    fn independent_sum() {
        assert_eq!(BloomMath::independent_probability_sum(0.0, 0.25), 0.25);
        assert_eq!(BloomMath::independent_probability_sum(0.5, 0.5), 0.75);
        assert_eq!(BloomMath::independent_probability_sum(1.0, 0.3), 1.0);
    }
}
