//! `ribbon big bench`: the measured half of the report, on a container
//! built from `ribbon big gen` keys `0 .. members`: false negatives on
//! sampled members, the FP rate on non-members against its 3σ bound, and
//! the time of a random positive query through the memory map.

use super::gen::{key, NON_MEMBER_BASE};
use ribbon::core::hash::split_mix64;
use ribbon::standalone::sharded::ShardedRef;
use serde::Serialize;
use std::time::Instant;

/// The measurements.
#[derive(Debug, Serialize)]
pub struct Bench {
    /// Keys in the filter.
    pub num_keys: u64,
    /// File bits per key.
    pub bits_per_key: f64,
    /// Milliseconds to map and open the file (header, index, shard headers).
    pub open_ms: f64,
    /// Members queried for false negatives.
    pub members_checked: u64,
    /// False negatives among them (must be 0).
    pub false_negatives: u64,
    /// Non-members queried.
    pub non_members: u64,
    /// Their positives.
    pub false_positives: u64,
    /// Measured FP rate.
    pub fp_rate: f64,
    /// The filter's expected FP rate.
    pub expected_fp_rate: f64,
    /// Three standard deviations of the measured rate around the expected.
    pub three_sigma: f64,
    /// Whether the measured rate is within 3σ of the expected.
    pub fp_within_3_sigma: bool,
    /// Random member keys timed.
    pub timed_queries: u64,
    /// Mean nanoseconds per query (key hash included), warm, one query
    /// after another in a loop.
    pub positive_query_ns: f64,
}

/// Runs the measurements on an open filter.
pub fn run(view: &ShardedRef<'_>, open_ms: f64, members: u64, sample: u64, non_members: u64) -> Bench {
    let mut state = 0x5eed_u64;
    let mut false_negatives = 0;
    let mut timed: Vec<[u8; 20]> = Vec::new();
    let timed_max = sample.min(1_000_000) as usize;
    for _ in 0..sample {
        let k = key(split_mix64(&mut state) % members.max(1));
        if !view.contains(k) {
            false_negatives += 1;
        }
        if timed.len() < timed_max {
            timed.push(k);
        }
    }
    // Warm pass, then the timed pass.
    let mut hits = timed.iter().filter(|k| view.contains(k)).count();
    let t = Instant::now();
    hits += timed.iter().filter(|k| view.contains(k)).count();
    let positive_query_ns = t.elapsed().as_nanos() as f64 / timed.len().max(1) as f64;
    std::hint::black_box(hits);
    let false_positives = (0..non_members)
        .filter(|&i| view.contains(key(NON_MEMBER_BASE + i)))
        .count() as u64;
    let p = view.expected_fp_rate();
    let fp_rate = false_positives as f64 / non_members as f64;
    let three_sigma = 3.0 * (p * (1.0 - p) / non_members as f64).sqrt();
    Bench {
        num_keys: view.num_keys(),
        bits_per_key: view.bits_per_key(),
        open_ms,
        members_checked: sample,
        false_negatives,
        non_members,
        false_positives,
        fp_rate,
        expected_fp_rate: p,
        three_sigma,
        fp_within_3_sigma: (fp_rate - p).abs() <= three_sigma,
        timed_queries: timed.len() as u64,
        positive_query_ns,
    }
}
