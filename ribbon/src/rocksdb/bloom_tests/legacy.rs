//! Tests: ports of RocksDB's `util/bloom_test.cc` (FullBloomTest) for the
//! legacy Bloom, and properties of the builder and reader.

use crate::core::prelude::*;

use super::{
    assert_binomial, check_filter_size_consistency, check_varying_lengths, key, packed_matches,
    rocksdb_matches, RawFilter, Rng, FREQUENT_SIGMAS,
};
use crate::core::hash::bloom_hash;
use crate::rocksdb::bloom::legacy::*;
use crate::rocksdb::bloom::math::BloomMath;
use crate::rocksdb::policy::FilterKind;
use crate::rocksdb::trailer::Parsed;

fn build_keys(keys: impl IntoIterator<Item = Vec<u8>>, bits_per_key: i32) -> Vec<u8> {
    super::build_keys(
        FilterKind::LegacyBloom(LegacyBloomBuilder::new(bits_per_key)),
        keys,
    )
}

/// Whole bits per key as BloomLikeFilterPolicy derives them.
fn whole_bits(bits_per_key: f64) -> i32 {
    let millibits = (bits_per_key * 1000.0 + 0.500001) as i32;
    (millibits + 500) / 1000
}

fn reader(filter: &[u8]) -> LegacyBloomReader<'_> {
    match parse_trailer(filter) {
        Parsed::Reader(r) => r,
        other => panic!("not a legacy Bloom filter: {other:?}"),
    }
}

/// util/bloom_test.cc FullBloomTest.Schema, kLegacyBloom rows (values
/// for CACHE_LINE_SIZE 64, 128 and 256 via `build_with_log2_cache_line`).
#[test]
fn schema() {
    // (bits/key, keys, num_probes, hash @64, hash @128, hash @256)
    let cases: [(f64, std::ops::Range<i32>, i32, [u32; 3]); 13] = [
        (2.0, 0..2087, 1, [1567096579, 1964771444, 2659542661]),
        (3.0, 0..2087, 2, [2707206547, 2571983456, 218344685]),
        (5.0, 0..2087, 3, [515748486, 94611728, 2436112214]),
        (8.0, 0..2087, 5, [1302145999, 2811644657, 756553699]),
        (9.0, 0..2087, 6, [2092755149, 661139132, 1182970461]),
        (11.0, 0..2087, 7, [3755609649, 1812694762, 1449142939]),
        (14.0, 0..2087, 9, [178861123, 379087593, 2574136516]),
        (16.0, 0..2087, 11, [1129406313, 3049154394, 1727750964]),
        (10.0, 0..2087, 6, [1478976371, 2910591341, 1182970461]),
        (10.0, 1..2087, 6, [4205696321, 1132081253, 2385981855]),
        (10.0, 1..2088, 6, [2885052954, 769447944, 4175124908]),
        (9.5, 1..2088, 6, [2885052954, 769447944, 4175124908]),
        (10.499, 1..2088, 6, [2885052954, 769447944, 4175124908]),
    ];
    for (bpk, keys, num_probes, want) in cases {
        let b = LegacyBloomBuilder::new(whole_bits(bpk));
        let hashes: Vec<u32> = keys.clone().map(|i| bloom_hash(&key(i))).collect();
        for (log2, &want_hash) in (6..=8).zip(&want) {
            let filter = b.build_with_log2_cache_line(&hashes, log2);
            let ctx = format!("bpk {bpk} keys {keys:?} log2 {log2}");
            assert_eq!(i32::from(filter[filter.len() - 5]), num_probes, "{ctx}");
            assert_eq!(bloom_hash(&filter), want_hash, "{ctx}");
            // Readable whatever the line size.
            let r = reader(&filter);
            assert_eq!(r.log2_cache_line_bytes(), log2);
            assert!(hashes.iter().all(|&h| r.may_match_hash(h)), "{ctx}");
        }
        assert_eq!(b.build(&hashes), b.build_with_log2_cache_line(&hashes, 6));
    }
    // First case of Schema: 87 keys at 5 bits/key, 3 probes.
    let filter = build_keys((0..87).map(|i| key(i).to_vec()), whole_bits(5.0));
    assert_eq!(filter[filter.len() - 5], 3);
}

/// util/bloom_test.cc FullBloomTest.RawSchema, legacy rows.
#[test]
fn raw_schema() {
    let mut raw = RawFilter::new();
    // One 256-byte line, two probes, ~50% FP rate.
    let f = raw.reset_weird_fill(256, 1, 2).to_vec();
    assert_eq!(packed_matches(|k| rocksdb_matches(&f, k)), 11384799501900898790);
    // Two 128-byte lines.
    let f = raw.reset_weird_fill(256, 2, 2).to_vec();
    assert_eq!(packed_matches(|k| rocksdb_matches(&f, k)), 10157853359773492589);
    // Four 64-byte lines.
    let f = raw.reset_weird_fill(256, 4, 2).to_vec();
    assert_eq!(packed_matches(|k| rocksdb_matches(&f, k)), 7123594913907464682);
}

/// util/bloom_test.cc FullBloomTest.CorruptFilters, legacy part.
#[test]
fn corrupt_filters() {
    let mut raw = RawFilter::new();
    for fill in [false, true] {
        let mut check = |len: u32, num_lines: u32, num_probes: u32, want: bool| {
            let f = raw.reset(len, num_lines, num_probes, fill).to_vec();
            assert_eq!(
                rocksdb_matches(&f, b"hello"),
                want,
                "{len} {num_lines} {num_probes} {fill}"
            );
            assert_eq!(rocksdb_matches(&f, b"world"), want);
        };
        // Good filter bits: same as fill.
        check(64, 1, 6, fill);
        check(64 * 3, 3, 6, fill);
        check(256 * 3, 3, 6, fill);
        check(64, 1, 30, fill);
        check(64, 1, 1, fill);
        // Zero probes: always true.
        check(64, 1, 0, true);
        // Zero size trumps everything: always false.
        check(0, 0, 6, false);
        check(0, 37, 6, false);
        check(0, 0, 0, false);
        // No solution for the line size: always true.
        check(64, 0, 6, true);
        check(4, 3, 6, true);
        check(97 * 3, 3, 6, true);
        check(65 * 3, 3, 6, true);
        // Less than 5 bytes: always false.
        check(u32::MAX, 3, 6, false);
        check((-5i32) as u32, 3, 6, false);
        // Dubious but accepted probe counts: same as fill.
        check(64, 1, 31, fill);
        check(64, 1, 127, fill);
        // Negative (reserved) probe bytes: always true.
        check(64, 1, 128, true);
        check(64, 1, 253, true);
    }
}

#[test]
fn empty_and_small() {
    assert!(build(&[], 10).is_empty());
    assert_eq!(parse_trailer(&build(&[], 10)), Parsed::AlwaysFalse);
    let f = build_keys([b"hello".to_vec(), b"world".to_vec()], 10);
    // 20 bits -> 1 line (odd).
    assert_eq!(f.len(), 64 + 5);
    assert_eq!(&f[64..], &[6, 1, 0, 0, 0]);
    let r = reader(&f);
    assert!(r.may_match_key(b"hello"));
    assert!(r.may_match_key(b"world"));
    assert!(!r.may_match_key(b"x"));
    assert!(!r.may_match_key(b"foo"));
}

/// FullBloomTest.FullVaryingLengths at 10 bits/key.
#[test]
fn varying_lengths() {
    check_varying_lengths(|keys| build_keys(keys.iter().cloned(), 10));
}

/// FullBloomTest.FilterSize: CalculateSpace / ApproximateNumEntries
/// consistency and no overflow for huge counts.
#[test]
fn filter_size_consistency() {
    for bpk in [1, 2, 3, 4, 10, 21, 50, 100] {
        let b = LegacyBloomBuilder::new(bpk);
        check_filter_size_consistency(
            |n| b.calculate_space(n),
            |s| b.approximate_num_entries(s),
            &format!("bpk {bpk}"),
        );
    }
}

#[test]
fn probes_space_and_estimates() {
    assert_eq!(choose_num_probes(i32::MIN), 1);
    assert_eq!(choose_num_probes(1), 1);
    assert_eq!(choose_num_probes(2), 1);
    assert_eq!(choose_num_probes(3), 2);
    assert_eq!(choose_num_probes(10), 6);
    assert_eq!(choose_num_probes(14), 9);
    assert_eq!(choose_num_probes(16), 11);
    assert_eq!(choose_num_probes(44), 30);
    assert_eq!(choose_num_probes(i32::MAX), 30);
    assert_eq!(calculate_space(0, 10), 5);
    assert_eq!(calculate_space(1, 10), 69);
    // 52 keys * 10 bits = 520 bits -> 2 lines -> 3 (odd).
    assert_eq!(calculate_space(52, 10), 3 * 64 + 5);
    // Capped total bits: 0xffff0000 -> 8388480 lines (even) -> 8388481.
    assert_eq!(calculate_space(usize::MAX / 16, 10), 8_388_481 * 64 + 5);
    assert_eq!(approximate_num_entries(0, 10), 0);
    assert_eq!(approximate_num_entries(68, 10), 0);
    assert_eq!(approximate_num_entries(69, 10), 51);
    assert_eq!(approximate_num_entries(69, 0), approximate_num_entries(69, 1));
    assert_eq!(estimated_fp_rate(0, 5, 10), 0.0);
    assert_eq!(estimated_fp_rate(1, 3, 10), 1.0);
    let n = 100_000;
    let len = calculate_space(n, 10);
    let bpk = 8.0 * (len - 5) as f64 / n as f64;
    let mut want = BloomMath::cache_local_fp_rate(bpk, 6, 512);
    want += 0.1 / (bpk * 0.75 + 22.0);
    let want = BloomMath::independent_probability_sum(want, BloomMath::fingerprint_fp_rate(n, 32));
    assert_eq!(estimated_fp_rate(n, len, 10).to_bits(), want.to_bits());
}

#[test]
fn no_false_negatives_and_fp_rate() {
    let mut rng = Rng(5);
    for bpk in [1, 2, 5, 10, 15, 20, 40, 100] {
        for n in [1usize, 2, 51, 52, 1000, 30_000] {
            let hashes: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let f = build(&hashes, bpk);
            assert_eq!(f.len(), calculate_space(n, bpk));
            let r = reader(&f);
            assert!(hashes.iter().all(|&h| r.may_match_hash(h)), "bpk {bpk} n {n}");
            let mut out = vec![false; n];
            r.may_match_hashes(&hashes, &mut out);
            assert!(out.iter().all(|&x| x));
        }
    }
    // 10 bits/key, 6 probes: within FREQUENT_SIGMAS of the rate RocksDB
    // quotes for this design.
    let n = 100_000;
    let hashes: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let f = build(&hashes, 10);
    let r = reader(&f);
    let queries = 200_000u64;
    let fps = (0..queries)
        .filter(|_| r.may_match_hash(rng.next_u64() as u32))
        .count() as u64;
    assert_binomial(
        fps,
        queries,
        QUOTED_FP_RATE_10_BITS,
        FREQUENT_SIGMAS,
        "against RocksDB's quoted rate",
    );
    // RocksDB's estimate (for warnings only) adds a term for the zero-delta
    // flaw, so it lies above the measured rate, by at most that term.
    let rate = fps as f64 / queries as f64;
    let est = estimated_fp_rate(n, f.len(), 10);
    let bits_per_key = 8.0 * (f.len() - 5) as f64 / n as f64;
    let flaw_term = 0.1 / (bits_per_key * 0.75 + 22.0);
    let sd = crate::test_support::stats::binomial_sd(queries, est) / queries as f64;
    assert!(rate < est, "{rate} vs {est}");
    assert!(
        est - rate <= flaw_term + FREQUENT_SIGMAS * sd,
        "{rate} vs {est}: more than the flaw term {flaw_term} and {FREQUENT_SIGMAS} sigma"
    );
}

/// The FP rate RocksDB's comments quote for the legacy Bloom at 10 bits/key
/// and 6 probes (`util/bloom_impl.h`).
const QUOTED_FP_RATE_10_BITS: f64 = 0.0114;

#[test]
fn batched_equals_single_whatever_the_bytes() {
    let mut rng = Rng(17);
    let hashes: Vec<u32> = (0..400).map(|_| rng.next_u64() as u32).collect();
    let f = build(&hashes, 4);
    let r = reader(&f);
    let queries: Vec<u32> = (0..1000).map(|_| rng.next_u64() as u32).collect();
    let mut out = vec![false; 1000];
    r.may_match_hashes(&queries, &mut out);
    for (q, o) in queries.iter().zip(&out) {
        assert_eq!(r.may_match_hash(*q), *o);
    }
    // Batched answers equal single ones, key by key, whatever the bytes.
    let agree = |r: LegacyBloomReader<'_>, qs: &[u32]| {
        let mut o = vec![false; qs.len()];
        r.may_match_hashes(qs, &mut o);
        for (&q, &b) in qs.iter().zip(&o) {
            assert_eq!(r.may_match_hash(q), b, "{r:?} {q}");
        }
    };
    for cut in 0..=f.len() {
        for part in [&f[..cut], &f[f.len() - cut..]] {
            if let Parsed::Reader(r) = parse_trailer(part) {
                agree(r, &queries[..64]);
            }
        }
    }
    for len in 0..300usize {
        for _ in 0..20 {
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if len >= 5 && rng.next_u64() & 1 == 0 {
                // Plausible num_lines to reach the power-of-two search.
                let nl = (rng.next_u64() % 8) as u32;
                bytes[len - 4..].copy_from_slice(&nl.to_le_bytes());
            }
            if let Parsed::Reader(r) = parse_trailer(&bytes) {
                agree(r, &queries[..33]);
            }
            for (nl, log2) in [
                (0, 6),
                (1, 6),
                (3, 0),
                (u32::MAX, 6),
                (5, 31),
                (2, 32),
                (1, u32::MAX),
            ] {
                agree(LegacyBloomReader::new(&bytes, 6, nl, log2), &queries[..33]);
                let mut d = bytes.clone();
                LegacyLocalityBloomImpl::add_hash(rng.next_u64() as u32, nl, 6, &mut d, log2);
                assert_eq!(d.len(), bytes.len());
            }
        }
    }
    // num_lines * 64 wraps to len: RocksDB would read out of bounds; we
    // answer "may match" for lines outside the data.
    let mut wrap = vec![0u8; 64 + 5];
    wrap[64] = 6;
    wrap[65..].copy_from_slice(&(1u32 + (1 << 26)).to_le_bytes());
    let r = reader(&wrap);
    assert_eq!(r.log2_cache_line_bytes(), 6);
    let any_true = (0..1000u32).any(|h| r.may_match_hash(h.wrapping_mul(0x9e37_79b9)));
    assert!(any_true);
}
