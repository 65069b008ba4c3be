//! Query throughput of the filter readers, for before/after comparisons of
//! the query hot path (no Criterion: `cargo run --release --example
//! query_timing`). Prints the best of several rounds in nanoseconds per
//! query, single (`may_match_hash`) and batched (`may_match_many_hashes`), for a
//! filter that fits in cache and one that does not.

use ribbon::core::hash::split_mix64;
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use std::hint::black_box;
use std::time::Instant;

fn build(policy: &str, n: usize, seed: u64) -> Vec<u8> {
    let policy: FilterPolicy = policy.parse().expect("policy");
    let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(7)).expect("builder");
    let mut s = seed;
    for _ in 0..n {
        b.add_key_hash(split_mix64(&mut s))
            .expect("a Ribbon builder takes key hashes");
    }
    b.finish()
}

fn best_ns_per_query(rounds: usize, queries: usize, mut f: impl FnMut() -> usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_nanos() as f64 / queries as f64);
    }
    best
}

fn main() {
    let rounds = 7;
    let mut s = 12345u64;
    let queries: Vec<u64> = (0..1_000_000).map(|_| split_mix64(&mut s)).collect();
    for (policy, n) in [
        ("bloomfilter:10", 10_000usize),
        ("bloomfilter:10", 10_000_000),
        ("ribbonfilter:10", 10_000),
        ("ribbonfilter:10", 10_000_000),
    ] {
        let filter = build(policy, n, 7);
        let reader = FilterReader::new(&filter);
        let single = best_ns_per_query(rounds, queries.len(), || {
            queries.iter().filter(|&&h| reader.may_match_hash(h)).count()
        });
        let batched = best_ns_per_query(rounds, queries.len(), || {
            reader
                .may_match_many_hashes(&queries)
                .iter()
                .filter(|&&m| m)
                .count()
        });
        println!(
            "{policy:>16} n={n:<9} {:>9} bytes  single {single:6.2} ns/query  batched {batched:6.2} ns/query",
            filter.len()
        );
    }
}
