//! Filters side by side, in one process and on the same keys (random binary,
//! 16 to 24 bytes): the pure-Rust Standard128 Ribbon and FastLocalBloom,
//! RocksDB's C++ for both (through the native harness, one call per whole
//! operation so no per-key FFI is timed), and `xorf::BinaryFuse8` and
//! `fastbloom` as the Rust filters a user might pick instead.
//!
//! Groups: `build/<n>` (raw keys to finished filter, hashing included) and
//! `query/<kind>/<mode>` (kind: positive, negative, mixed; mode: single,
//! batched in MultiGet batches of 32). Key counts: 10^4 to 10^6 by default;
//! `RIBBON_BENCH_MAX_N=10000000` adds 10^7. `cargo run --release --bin
//! bench-report` turns the results into the README's table and plot.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ribbon::format::FilterReader;
use ribbon::hash::get_slice_hash64;
use ribbon::test_support::keys::{member_keys, KeyKind};
use ribbon_compat::harness::{build_packed, NativeReader};
use ribbon_compat::packed::{build_rust, PackedKeys};
use std::hint::black_box;
use std::time::Duration;
use xorf::Filter as _;

const RIBBON: &str = "ribbonfilter:10";
const BLOOM: &str = "bloomfilter:10";

fn sizes() -> Vec<usize> {
    let max: usize = std::env::var("RIBBON_BENCH_MAX_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    [10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]
        .into_iter()
        .filter(|&n| n <= max)
        .collect()
}

fn xorf_build(keys: &PackedKeys) -> xorf::BinaryFuse8 {
    let hashes: Vec<u64> = keys.iter().map(get_slice_hash64).collect();
    xorf::BinaryFuse8::try_from(&hashes).expect("binary fuse construction")
}

fn fastbloom_build(keys: &PackedKeys) -> fastbloom::BloomFilter {
    let n = keys.ends.len();
    let mut f = fastbloom::BloomFilter::with_num_bits(n * 10).expected_items(n);
    for k in keys.iter() {
        f.insert(k);
    }
    f
}

fn build(c: &mut Criterion) {
    for n in sizes() {
        let keys = PackedKeys::new(&member_keys(KeyKind::Binary16To24, n, 1));
        let mut g = c.benchmark_group(format!("build/{n}"));
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(if n >= 1_000_000 { 8 } else { 3 }));
        g.bench_function("rust_ribbon", |b| {
            b.iter(|| build_rust(RIBBON, 7, black_box(&keys)))
        });
        g.bench_function("rocksdb_ribbon", |b| {
            b.iter(|| build_packed(RIBBON, 7, black_box(&keys)))
        });
        g.bench_function("rust_bloom", |b| {
            b.iter(|| build_rust(BLOOM, 7, black_box(&keys)))
        });
        g.bench_function("rocksdb_bloom", |b| {
            b.iter(|| build_packed(BLOOM, 7, black_box(&keys)))
        });
        g.bench_function("xorf_binary_fuse8", |b| b.iter(|| xorf_build(black_box(&keys))));
        g.bench_function("fastbloom", |b| b.iter(|| fastbloom_build(black_box(&keys))));
        g.finish();
    }
}

fn query(c: &mut Criterion) {
    let n = std::env::var("RIBBON_BENCH_QUERY_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000usize);
    let members = member_keys(KeyKind::Binary16To24, n, 1);
    let keys = PackedKeys::new(&members);
    let ribbon = build_rust(RIBBON, 7, &keys);
    let bloom = build_rust(BLOOM, 7, &keys);
    let xor = xorf_build(&keys);
    let fast = fastbloom_build(&keys);
    const Q: usize = 100_000;
    let positive = PackedKeys::new(&members[..Q]);
    let negative = PackedKeys::new(&member_keys(KeyKind::Binary16To24, Q, 2));
    let mixed = PackedKeys::new(
        &members[..Q / 2]
            .iter()
            .cloned()
            .chain(member_keys(KeyKind::Binary16To24, Q / 2, 3))
            .collect::<Vec<_>>(),
    );
    for (kind, probes) in [
        ("positive", &positive),
        ("negative", &negative),
        ("mixed", &mixed),
    ] {
        for batched in [false, true] {
            let mode = if batched { "batched" } else { "single" };
            let mut g = c.benchmark_group(format!("query/{kind}/{mode}"));
            g.throughput(Throughput::Elements(Q as u64));
            g.sample_size(20);
            g.warm_up_time(Duration::from_millis(300));
            g.measurement_time(Duration::from_secs(2));
            for (name, filter) in [("ribbon", &ribbon), ("bloom", &bloom)] {
                let reader = FilterReader::new(filter);
                g.bench_function(BenchmarkId::new("rust", name), |b| {
                    b.iter(|| {
                        if batched {
                            let mut count = 0;
                            let mut hashes = [0u64; 32];
                            let mut out = [false; 32];
                            let mut it = probes.iter();
                            loop {
                                let mut len = 0;
                                for (h, k) in hashes.iter_mut().zip(it.by_ref()) {
                                    *h = get_slice_hash64(k);
                                    len += 1;
                                }
                                if len == 0 {
                                    break count;
                                }
                                reader.may_match_many_hashes_into(&hashes[..len], &mut out[..len]);
                                count += out[..len].iter().filter(|&&m| m).count();
                            }
                        } else {
                            probes.iter().filter(|k| reader.may_match(k)).count()
                        }
                    })
                });
                let native = NativeReader::new(filter);
                g.bench_function(BenchmarkId::new("rocksdb", name), |b| {
                    b.iter(|| native.count_matches(black_box(probes), batched))
                });
            }
            if !batched {
                g.bench_function(BenchmarkId::new("xorf", "binary_fuse8"), |b| {
                    b.iter(|| {
                        probes
                            .iter()
                            .filter(|k| xor.contains(&get_slice_hash64(k)))
                            .count()
                    })
                });
                g.bench_function(BenchmarkId::new("fastbloom", "bloom"), |b| {
                    b.iter(|| probes.iter().filter(|k| fast.contains(k)).count())
                });
            }
            g.finish();
        }
    }
}

criterion_group!(benches, build, query);
criterion_main!(benches);
