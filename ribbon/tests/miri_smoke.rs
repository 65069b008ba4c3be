//! A smoke test of every module with `unsafe` code or a fast path, small
//! enough for Miri (`scripts/miri-smoke.sh` runs it with
//! `cargo +nightly miri test`, with the banding and kernel unit tests):
//! every standalone shape, each RocksDB filter kind with batched queries,
//! truncated blocks, and the FastLocalBloom kernels against each other.
//! Under plain `cargo test` it is one more quick test.

use ribbon::core::hash::get_slice_hash64;
use ribbon::rocksdb::bloom::fast_local::{self, BloomKernel};
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use ribbon::rocksdb::trailer::Parsed;
use ribbon::standalone::{Config, Mode, Ribbon, RibbonRef};
use ribbon::test_support::keys::Rng;

/// Keys per Ribbon filter: enough (over 1024 slots) that Ribbon does not
/// fall back to Bloom.
const RIBBON_KEYS: usize = if cfg!(miri) { 1100 } else { 3000 };
/// Keys per Bloom filter: small under Miri (it interprets every
/// instruction).
const KEYS: usize = if cfg!(miri) { 150 } else { 3000 };
/// Members whose answers are checked per filter.
const CHECKED: usize = if cfg!(miri) { 60 } else { 3000 };
/// Keys per standalone filter (one per shape).
const STANDALONE_KEYS: usize = if cfg!(miri) { 40 } else { 1000 };
/// Non-member queries per filter.
const QUERIES: usize = if cfg!(miri) { 40 } else { 2000 };

fn keys(n: usize, seed: u64) -> Vec<[u8; 8]> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.next_u64().to_le_bytes()).collect()
}

/// Single and batched answers agree key by key; every member matches.
fn check_reader(reader: &FilterReader<'_>, members: &[[u8; 8]], others: &[[u8; 8]], what: &str) {
    for (set, must_match) in [(members, true), (others, false)] {
        let batch = reader.may_match_many(set);
        let hashes: Vec<u64> = set.iter().map(|k| get_slice_hash64(k)).collect();
        let by_hash = reader.may_match_many_hashes(&hashes);
        for (i, k) in set.iter().enumerate() {
            let single = reader.may_match(k);
            assert_eq!(batch[i], single, "{what}: key {i}");
            assert_eq!(by_hash[i], reader.may_match_hash(hashes[i]), "{what}: hash {i}");
            if must_match {
                assert!(single, "{what}: false negative for key {i}");
            }
        }
    }
}

#[test]
fn every_rocksdb_filter_kind_with_batched_queries() {
    let members = keys(RIBBON_KEYS, 1);
    let others = keys(QUERIES, 2);
    for (policy, format_version, kind) in [
        ("ribbonfilter:10", 7, "Standard128Ribbon"),
        ("bloomfilter:10", 7, "FastLocalBloom"),
        ("bloomfilter:10", 4, "LegacyBloom"),
        ("ribbonfilter:10", 7, "FastLocalBloom"),
    ] {
        let n = match (policy, kind) {
            ("ribbonfilter:10", "Standard128Ribbon") => RIBBON_KEYS,
            // Too few keys for Ribbon, which falls back to Bloom.
            ("ribbonfilter:10", _) => 20,
            _ => KEYS,
        };
        let policy: FilterPolicy = policy.parse().unwrap();
        let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(format_version)).unwrap();
        for k in &members[..n] {
            b.add_key(k);
        }
        let filter = b.finish();
        let reader = FilterReader::new(&filter);
        assert_eq!(reader.describe().kind_name(), kind);
        check_reader(&reader, &members[..n.min(CHECKED)], &others, kind);
        // Truncations and a damaged trailer: no panic, no out-of-bounds
        // read (what Miri checks), single and batched answers agree.
        for cut in [0, 1, 5, 6, filter.len() / 2, filter.len() - 1] {
            let part = &filter[filter.len() - cut..];
            check_reader(&FilterReader::new(part), &[], &others[..8], "suffix");
            let part = &filter[..cut];
            check_reader(&FilterReader::new(part), &[], &others[..8], "prefix");
        }
        let mut damaged = filter.clone();
        let t = damaged.len() - 4;
        damaged[t] ^= 0x5A;
        check_reader(&FilterReader::new(&damaged), &[], &others[..8], "damaged");
    }
}

#[test]
fn fast_local_bloom_kernels_agree() {
    let hashes: Vec<u64> = keys(KEYS, 3).iter().map(|k| get_slice_hash64(k)).collect();
    let queries: Vec<u64> = keys(QUERIES, 4).iter().map(|k| get_slice_hash64(k)).collect();
    for millibits in [1000, 10_000, 60_000] {
        let filter = fast_local::build(&hashes, millibits);
        let Parsed::Reader(reader) = fast_local::parse_trailer(&filter) else {
            panic!("not a FastLocalBloom filter");
        };
        let portable = reader.with_kernel(BloomKernel::Portable);
        let mut want = vec![false; queries.len()];
        portable.may_match_hashes(&queries, &mut want);
        for kernel in BloomKernel::available() {
            let r = reader.with_kernel(kernel);
            let mut got = vec![false; queries.len()];
            r.may_match_hashes(&queries, &mut got);
            assert_eq!(got, want, "{kernel:?} batched");
            for (&q, &w) in queries.iter().zip(&want) {
                assert_eq!(r.may_match_hash(q), w, "{kernel:?} single");
            }
            assert!(
                hashes.iter().all(|&h| r.may_match_hash(h)),
                "{kernel:?}: false negative"
            );
        }
    }
}

#[test]
fn every_standalone_shape() {
    let members = keys(STANDALONE_KEYS, 5);
    let others = keys(QUERIES, 6);
    for width in [32, 64, 128] {
        for first_coeff_always_one in [false, true] {
            for smash in [false, true] {
                for mode in [Mode::Standard, Mode::Homogeneous] {
                    let config = Config {
                        width,
                        first_coeff_always_one,
                        smash,
                        mode,
                        ..Config::standard(width, 6.5)
                    };
                    let what = format!("w{width} fcao {first_coeff_always_one} smash {smash} {mode:?}");
                    let filter =
                        Ribbon::from_keys(&members, &config).unwrap_or_else(|e| panic!("{what}: {e}"));
                    let view = RibbonRef::from_bytes(filter.as_bytes()).unwrap();
                    let answers = filter.contains_many(&others);
                    assert_eq!(view.contains_many(&others), answers, "{what}");
                    for (k, &a) in others.iter().zip(&answers) {
                        assert_eq!(filter.contains(k), a, "{what}");
                    }
                    assert!(
                        filter.contains_many(&members).iter().all(|&m| m),
                        "{what}: false negative"
                    );
                    if let Ok(block) = filter.to_rocksdb() {
                        let reader = FilterReader::new(&block);
                        check_reader(&reader, &members, &others, &what);
                        let back = Ribbon::from_rocksdb(&block, members.len() as u64).unwrap();
                        assert_eq!(back.contains_many(&others), answers, "{what}: round trip");
                    }
                    // A truncated file is an error, never a panic.
                    let bytes = filter.as_bytes();
                    assert!(RibbonRef::from_bytes(&bytes[..bytes.len() - 1]).is_err());
                }
            }
        }
    }
}
