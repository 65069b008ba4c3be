//! Named statistical bounds, as RocksDB's tests name theirs: a check is
//! allowed a stated number of standard deviations, never an unexplained
//! interval.

#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;

/// Standard deviations tolerated by a check repeated over many
/// configurations in one run.
pub const FREQUENT_SIGMAS: f64 = 5.0;
/// Standard deviations tolerated by a check made once per run.
pub const RARE_SIGMAS: f64 = 3.0;

/// The standard deviation of the positives among `trials` Bernoulli(`p`)
/// queries.
#[must_use]
pub fn binomial_sd(trials: u64, p: f64) -> f64 {
    (trials as f64 * p * (1.0 - p)).sqrt()
}

/// Asserts that `count` positives among `trials` Bernoulli(`p`) queries are
/// within `sigmas` standard deviations of the mean.
#[track_caller]
pub fn assert_binomial(count: u64, trials: u64, p: f64, sigmas: f64, what: &str) {
    let mean = trials as f64 * p;
    let sd = binomial_sd(trials, p);
    assert!(
        (count as f64 - mean).abs() <= sigmas * sd,
        "{what}: {count} positives in {trials}, expected {mean:.1} ± {sigmas}·{sd:.1}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_accepts_the_mean_and_rejects_far_counts() {
        assert_binomial(100, 10_000, 0.01, RARE_SIGMAS, "mean");
        assert_binomial(129, 10_000, 0.01, RARE_SIGMAS, "2.9 sigma");
        let far = std::panic::catch_unwind(|| assert_binomial(140, 10_000, 0.01, RARE_SIGMAS, "far"));
        assert!(far.is_err());
    }
}
