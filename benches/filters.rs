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
use ribbon::core::hash::get_slice_hash64;
use ribbon::rocksdb::format::FilterReader;
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

/// Writes `keys` (sorted here) into an SST at `path` with a Ribbon filter,
/// full or partitioned, through RocksDB's `SstFileWriter`.
pub fn write_sst(path: &std::path::Path, keys: &[Vec<u8>], partitioned: bool) {
    let table = format!(
        "format_version=7;filter_policy=ribbonfilter:10;{}",
        if partitioned {
            "partition_filters=true;index_type=kTwoLevelIndexSearch;metadata_block_size=4096;"
        } else {
            ""
        }
    );
    let opts = rocksdb::Options::default()
        .get_options_from_string(format!(
            "compression=kNoCompression;block_based_table_factory={{{table}}}"
        ))
        .expect("options");
    let mut sorted = keys.to_vec();
    sorted.sort();
    sorted.dedup();
    let mut w = rocksdb::SstFileWriter::create(&opts);
    w.open(path).expect("open sst");
    for k in &sorted {
        w.put(k, b"v").expect("put");
    }
    w.finish().expect("finish sst");
}

/// The filter blocks of `sst` with the keys each one answers: every key
/// for a full filter; for a partitioned one, each key in the partition
/// whose separator is the first at or after it (bytewise keys;
/// internal-key separators are compared on their user-key part).
fn group_by_block<'a>(sst: &'a ribbon_sst::SstFile, keys: &'a [Vec<u8>]) -> Vec<(&'a [u8], Vec<&'a [u8]>)> {
    use ribbon_sst::Filter;
    match sst.filter() {
        Filter::Full { contents, .. } => {
            vec![(contents.as_slice(), keys.iter().map(|k| k.as_slice()).collect())]
        }
        Filter::Partitioned {
            partitions,
            index_key_includes_seq,
            ..
        } => {
            let mut groups: Vec<(&[u8], Vec<&[u8]>)> = partitions
                .iter()
                .map(|p| (p.contents.as_slice(), Vec::new()))
                .collect();
            for k in keys {
                let i = partitions.partition_point(|p| {
                    let sep = &p.separator;
                    let user = if *index_key_includes_seq {
                        &sep[..sep.len().saturating_sub(8)]
                    } else {
                        &sep[..]
                    };
                    user < k.as_slice()
                });
                groups[i.min(partitions.len() - 1)].1.push(k);
            }
            groups
        }
        other => panic!("unexpected filter {other:?}"),
    }
}

/// Batched may-match through `SstFile` (full and partitioned Ribbon
/// filters, 10^6 keys, queries of 10^5 half members) against the raw
/// `FilterReader` batch over the same filter blocks (for a partitioned
/// filter, with the keys already grouped by partition, which `SstFile`
/// does itself).
fn sst_query(c: &mut Criterion) {
    use ribbon_sst::SstFile;
    const N: usize = 1_000_000;
    const Q: usize = 100_000;
    let members = member_keys(KeyKind::Binary16To24, N, 1);
    let probes: Vec<Vec<u8>> = members[..Q / 2]
        .iter()
        .cloned()
        .chain(member_keys(KeyKind::Binary16To24, Q / 2, 3))
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    for partitioned in [false, true] {
        let layout = if partitioned { "partitioned" } else { "full" };
        let path = dir.path().join(format!("{layout}.sst"));
        write_sst(&path, &members, partitioned);
        let sst = SstFile::open(&path).expect("open sst");
        let answers = sst.key_may_match_many(&probes);
        let single: Vec<bool> = probes.iter().map(|k| sst.key_may_match(k)).collect();
        assert_eq!(answers, single, "{layout}: batched answers are the single ones");
        assert!(answers[..Q / 2].iter().all(|&m| m), "{layout}: no false negative");
        // The raw baseline: one reader per filter block, its keys grouped.
        let groups = group_by_block(&sst, &probes);
        let raw: usize = groups
            .iter()
            .map(|(block, keys)| {
                FilterReader::new(block)
                    .may_match_many(keys)
                    .iter()
                    .filter(|&&m| m)
                    .count()
            })
            .sum();
        assert_eq!(
            raw,
            answers.iter().filter(|&&m| m).count(),
            "{layout}: the raw baseline asks the same blocks"
        );
        let mut g = c.benchmark_group(format!("sst_query/{layout}"));
        g.throughput(Throughput::Elements(Q as u64));
        g.sample_size(20);
        g.warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_secs(2));
        g.bench_function("sstfile_batch", |b| {
            b.iter(|| {
                sst.key_may_match_many(black_box(&probes))
                    .iter()
                    .filter(|&&m| m)
                    .count()
            })
        });
        let ask = |groups: &[(&[u8], Vec<&[u8]>)]| {
            groups
                .iter()
                .map(|(block, keys)| {
                    let r = FilterReader::new(block);
                    r.may_match_many(black_box(keys)).iter().filter(|&&m| m).count()
                })
                .sum::<usize>()
        };
        g.bench_function("filter_reader_batch", |b| b.iter(|| ask(&groups)));
        if partitioned {
            // The same, with the grouping (a binary search of the
            // separators per key) timed: what a user of the raw reader
            // pays end to end, and what `SstFile` does itself.
            g.bench_function("filter_reader_batch_grouping_timed", |b| {
                b.iter(|| ask(&group_by_block(&sst, black_box(&probes))))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, build, query, sst_query);
criterion_main!(benches);
