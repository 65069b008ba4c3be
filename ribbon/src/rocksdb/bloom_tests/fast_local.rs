//! Tests: ports of RocksDB's `util/bloom_test.cc` (FullBloomTest) for
//! FastLocalBloom, and properties of the builder and reader.

use crate::core::prelude::*;

use super::{
    assert_binomial, check_filter_size_consistency, check_varying_lengths, first_fps, key, packed_matches,
    rocksdb_matches, RawFilter, Rng, FREQUENT_SIGMAS,
};
use crate::core::hash::bloom_hash;
use crate::core::math::{lower32of64, upper32of64};
use crate::rocksdb::bloom::fast_local::*;
use crate::rocksdb::bloom::math::BloomMath;
use crate::rocksdb::policy::FilterKind;
use crate::rocksdb::trailer::Parsed;

/// Build from keys the way FullBloomTest does (GetSliceHash64 with
/// adjacent-duplicate collapse).
fn build_keys(keys: impl IntoIterator<Item = Vec<u8>>, builder: FastLocalBloomBuilder) -> Vec<u8> {
    super::build_keys(FilterKind::FastLocalBloom(builder), keys)
}

/// Policy millibits as BloomLikeFilterPolicy computes them.
fn millibits(bits_per_key: f64) -> i32 {
    (bits_per_key * 1000.0 + 0.500001) as i32
}

fn reader(filter: &[u8]) -> FastLocalBloomReader<'_> {
    match parse_trailer(filter) {
        Parsed::Reader(r) => r,
        other => panic!("not a FastLocalBloom filter: {other:?}"),
    }
}

fn num_probes_byte(filter: &[u8]) -> i32 {
    assert_eq!(filter[filter.len() - 5], 0xFF);
    i32::from(filter[filter.len() - 3])
}

struct SchemaCase {
    bits_per_key: f64,
    keys: std::ops::Range<i32>,
    num_probes: i32,
    filter_hash: u32,
    first_fps: &'static str,
}

/// util/bloom_test.cc FullBloomTest.Schema, kFastLocalBloom rows
/// (optimize_filters_for_memory = false).
#[test]
fn schema() {
    let cases = [
        SchemaCase {
            bits_per_key: 5.0,
            keys: 0..87,
            num_probes: 3,
            filter_hash: 4130687756,
            first_fps: "31,38,40,43,61,83,86,112,125,131",
        },
        SchemaCase {
            bits_per_key: 2.0,
            keys: 0..2087,
            num_probes: 1,
            filter_hash: 3817481309,
            first_fps: "11,13,17,25,29,30,35,37,45,53",
        },
        SchemaCase {
            bits_per_key: 3.0,
            keys: 0..2087,
            num_probes: 2,
            filter_hash: 2807269961,
            first_fps: "4,15,17,24,27,28,29,53,63,70",
        },
        SchemaCase {
            bits_per_key: 5.0,
            keys: 0..2087,
            num_probes: 3,
            filter_hash: 204628445,
            first_fps: "15,24,29,39,53,87,89,100,103,104",
        },
        SchemaCase {
            bits_per_key: 8.0,
            keys: 0..2087,
            num_probes: 5,
            filter_hash: 355564975,
            first_fps: "16,60,66,126,220,238,244,256,265,287",
        },
        SchemaCase {
            bits_per_key: 9.0,
            keys: 0..2087,
            num_probes: 6,
            filter_hash: 2137566013,
            first_fps: "156,367,791,872,945,1015,1139,1159,1265",
        },
        SchemaCase {
            bits_per_key: 11.0,
            keys: 0..2087,
            num_probes: 7,
            filter_hash: 2561502687,
            first_fps: "34,74,130,236,643,882,962,1015,1035,1110",
        },
        SchemaCase {
            bits_per_key: 14.0,
            keys: 0..2087,
            num_probes: 8,
            filter_hash: 3709876890,
            first_fps: "130,240,522,565,989,2002,2526,3147,3543",
        },
        SchemaCase {
            bits_per_key: 16.0,
            keys: 0..2087,
            num_probes: 9,
            filter_hash: 1087138490,
            first_fps: "3299,3611,3916,6620,7822,8079,8482,8942",
        },
        SchemaCase {
            bits_per_key: 10.0,
            keys: 0..2087,
            num_probes: 6,
            filter_hash: 2498541272,
            first_fps: "16,126,133,422,466,472,813,1002,1035",
        },
        SchemaCase {
            bits_per_key: 10.0,
            keys: 1..2087,
            num_probes: 6,
            filter_hash: 2058382345,
            first_fps: "16,126,133,422,466,472,813,1002,1035",
        },
        SchemaCase {
            bits_per_key: 10.0,
            keys: 1..2088,
            num_probes: 6,
            filter_hash: 23699164,
            first_fps: "16,126,133,422,466,472,813,1002,1035",
        },
        SchemaCase {
            bits_per_key: 9.5,
            keys: 1..2088,
            num_probes: 6,
            filter_hash: 3166884174,
            first_fps: "126,156,367,444,458,791,813,976,1015",
        },
        SchemaCase {
            bits_per_key: 10.499,
            keys: 1..2088,
            num_probes: 7,
            filter_hash: 4098502778,
            first_fps: "16,236,240,472,1015,1045,1111,1409,1465",
        },
    ];
    for case in &cases {
        let builder = FastLocalBloomBuilder::new(millibits(case.bits_per_key));
        let filter = build_keys(case.keys.clone().map(|i| key(i).to_vec()), builder);
        let ctx = format!("bpk {} keys {:?}", case.bits_per_key, case.keys);
        assert_eq!(num_probes_byte(&filter), case.num_probes, "{ctx}");
        assert_eq!(bloom_hash(&filter), case.filter_hash, "{ctx}");
        let r = reader(&filter);
        let want_count = case.first_fps.split(',').count();
        assert_eq!(
            first_fps(want_count, |k| r.may_match_key(k)),
            case.first_fps,
            "{ctx}"
        );
    }
}

/// util/bloom_test.cc FullBloomTest.RawSchema, FastLocalBloom row.
#[test]
fn raw_schema() {
    let mut raw = RawFilter::new();
    // Two probes, four 64-byte cache lines, weird fill: ~50% FP rate.
    let filter = raw.reset_weird_fill(256, 2 << 8, 255).to_vec();
    assert_eq!(
        packed_matches(|k| rocksdb_matches(&filter, k)),
        9957045189927952471
    );
}

/// util/bloom_test.cc FullBloomTest.CorruptFilters, FastLocalBloom part.
#[test]
fn corrupt_filters() {
    let mut raw = RawFilter::new();
    for fill in [false, true] {
        let check = |filter: &[u8], want: bool| {
            assert_eq!(rocksdb_matches(filter, b"hello"), want, "{filter:?}");
            assert_eq!(rocksdb_matches(filter, b"world"), want);
        };
        // Good config with six probes.
        check(raw.reset(64, 6 << 8, 255, fill), fill);
        // Any other reserved byte set: always true.
        check(raw.reset(64, (6 << 8) | 1, 255, fill), true);
        check(raw.reset(64, (6 << 8) | (1 << 16), 255, fill), true);
        check(raw.reset(64, (6 << 8) | (1 << 24), 255, fill), true);
        // Max 30 probes is good.
        check(raw.reset(64, 30 << 8, 255, fill), fill);
        // More than 30 (or a cache line size other than 64): always true.
        check(raw.reset(64, 31 << 8, 255, fill), true);
        check(raw.reset(64, 33 << 8, 255, fill), true);
        check(raw.reset(64, 66 << 8, 255, fill), true);
        check(raw.reset(64, 130 << 8, 255, fill), true);
        // Zero probes: always true.
        check(raw.reset(64, 0, 255, fill), true);
        // Too short for a trailer: always false.
        check(raw.reset(u32::MAX, 6 << 8, 255, fill), false);
        check(raw.reset(0, 6 << 8, 255, fill), false);
    }
}

/// FullBloomTest.FullEmptyFilter and FullSmall.
#[test]
fn empty_and_small() {
    let empty = build(&[], 10_000);
    assert!(empty.is_empty());
    assert_eq!(parse_trailer(&empty), Parsed::AlwaysFalse);

    let filter = build_keys(
        [b"hello".to_vec(), b"world".to_vec()],
        FastLocalBloomBuilder::new(10_000),
    );
    assert_eq!(filter.len(), 64 + 5);
    let r = reader(&filter);
    assert!(r.may_match_key(b"hello"));
    assert!(r.may_match_key(b"world"));
    assert!(!r.may_match_key(b"x"));
    assert!(!r.may_match_key(b"foo"));
}

/// FullBloomTest.FullVaryingLengths at 10 bits/key.
#[test]
fn varying_lengths() {
    check_varying_lengths(|keys| build_keys(keys.iter().cloned(), FastLocalBloomBuilder::new(10_000)));
}

/// FullBloomTest.FilterSize: CalculateSpace / ApproximateNumEntries
/// consistency, and no overflow (only saturation) for huge counts.
#[test]
fn filter_size_consistency() {
    for m in [1000, 1234, 3456, 9500, 10_000, 10_499, 21_345, 99_999, 100_000] {
        let b = FastLocalBloomBuilder::new(m);
        check_filter_size_consistency(
            |n| b.calculate_space(n),
            |s| b.approximate_num_entries(s),
            &format!("m {m}"),
        );
    }
}

#[test]
fn choose_num_probes_table() {
    let c = FastLocalBloomImpl::choose_num_probes;
    assert_eq!(c(i32::MIN), 1);
    assert_eq!(c(0), 1);
    assert_eq!(c(2080), 1);
    assert_eq!(c(2081), 2);
    assert_eq!(c(10_000), 6);
    assert_eq!(c(10_070), 6);
    assert_eq!(c(10_071), 7);
    assert_eq!(c(14_001), 8);
    assert_eq!(c(25_501), 12);
    assert_eq!(c(25_502), 11); // formula region starts below the table's 12
    assert_eq!(c(28_000), 12);
    assert_eq!(c(28_001), 13);
    assert_eq!(c(50_000), 23);
    assert_eq!(c(50_001), 24);
    assert_eq!(c(i32::MAX), 24);
}

#[test]
fn space_and_entries() {
    assert_eq!(calculate_space(0, 10_000), 5);
    assert_eq!(calculate_space(1, 10_000), 64 + 5);
    assert_eq!(calculate_space(51, 10_000), 64 + 5);
    assert_eq!(calculate_space(52, 10_000), 128 + 5);
    assert_eq!(calculate_space(usize::MAX / 2, 10_000), MAX_DATA_LEN + 5);
    assert_eq!(approximate_num_entries(0, 10_000), 0);
    assert_eq!(approximate_num_entries(4, 10_000), 0);
    assert_eq!(approximate_num_entries(69, 10_000), 51);
    assert_eq!(approximate_num_entries(usize::MAX, 1000), 8 * MAX_DATA_LEN);
    // Below-minimum millibits are treated as 1000, never divide by zero.
    assert_eq!(approximate_num_entries(69, 0), 512);
    assert_eq!(calculate_space(10, -5), calculate_space(10, 1000));
}

#[test]
fn estimated_fp_rates() {
    assert_eq!(estimated_fp_rate(0, 5, 10_000), 0.0);
    assert_eq!(estimated_fp_rate(3, 5, 10_000), 1.0);
    let n = 100_000;
    let len = calculate_space(n, 10_000);
    let est = estimated_fp_rate(n, len, 10_000);
    let want = BloomMath::independent_probability_sum(
        BloomMath::cache_local_fp_rate(8.0 * (len - 5) as f64 / n as f64, 6, 512),
        BloomMath::fingerprint_fp_rate(n, 64),
    );
    assert_eq!(est.to_bits(), want.to_bits());
    assert!(est > 0.009 && est < 0.011, "{est}");
    // Zero keys with data: no NaN.
    assert_eq!(estimated_fp_rate(0, 69, 10_000), 0.0);
}

#[test]
fn optimize_filters_for_memory_changes_only_probes() {
    // 10 bits/key, 2087 keys: 2624 bytes -> 10058 actual millibits, 6 probes either way.
    let b = FastLocalBloomBuilder::new(10_000);
    let o = b.with_optimize_filters_for_memory(true);
    assert_eq!(b.calculate_space(2087), o.calculate_space(2087));
    assert_eq!(o.num_probes(2087, o.calculate_space(2087)), 6);
    // One key at 10 bits/key gets a whole 512-bit cache line: 512000 actual millibits.
    assert_eq!(b.num_probes(1, 69), 6);
    assert_eq!(o.num_probes(1, 69), 24);
    let hashes = [0x0123_4567_89ab_cdefu64];
    assert_eq!(num_probes_byte(&o.build(&hashes)), 24);
    assert_eq!(num_probes_byte(&b.build(&hashes)), 6);
    assert!(reader(&o.build(&hashes)).may_match_hash(hashes[0]));
    // 100 keys at 10 bits/key: 128 bytes -> 10240 actual millibits -> 7 probes
    // with the option on (RocksDB's default), 6 with it off.
    let many: Vec<u64> = (0..100u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    assert_eq!(num_probes_byte(&b.build(&many)), 6);
    assert_eq!(num_probes_byte(&o.build(&many)), 7);
    assert_eq!(b.build(&many).len(), o.build(&many).len());
}

/// The prefetch-batched builder equals plain sequential adds, for any
/// insertion order.
#[test]
fn batched_add_equals_simple_add_in_any_order() {
    let mut rng = Rng(42);
    for n in [1usize, 2, 7, 8, 9, 15, 16, 17, 100, 1000] {
        let mut hashes: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let filter = build(&hashes, 7_000);
        let len = filter.len() - 5;
        let num_probes = FastLocalBloomImpl::choose_num_probes(7_000);
        let mut simple = vec![0u8; len];
        for &h in &hashes {
            FastLocalBloomImpl::add_hash(
                lower32of64(h),
                upper32of64(h),
                len as u32,
                num_probes,
                &mut simple,
            );
        }
        assert_eq!(&filter[..len], &simple[..]);
        assert_eq!(&filter[len..], &[0xFF, 0, num_probes as u8, 0, 0]);
        hashes.reverse();
        assert_eq!(build(&hashes, 7_000), filter);
    }
}

#[test]
fn no_false_negatives_random() {
    let mut rng = Rng(7);
    for &m in &[1000, 2500, 5000, 7777, 10_000, 16_000, 30_000, 60_000, 100_000] {
        for n in [1usize, 3, 50, 64, 65, 511, 4096, 20_000] {
            let hashes: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            for optimize_for_memory in [false, true] {
                let b = FastLocalBloomBuilder::new(m).with_optimize_filters_for_memory(optimize_for_memory);
                let filter = b.build(&hashes);
                assert_eq!(filter.len(), b.calculate_space(n));
                let r = reader(&filter);
                assert!(hashes.iter().all(|&h| r.may_match_hash(h)), "m {m} n {n}");
                let mut out = vec![false; n];
                r.may_match_hashes(&hashes, &mut out);
                assert!(out.iter().all(|&x| x));
            }
        }
    }
}

/// The FP rate RocksDB's comments quote for FastLocalBloom at 10 bits/key
/// and 6 probes (`util/bloom_impl.h`).
const QUOTED_FP_RATE_10_BITS: f64 = 0.00957;

/// FP rate at 10 bits/key within [`FREQUENT_SIGMAS`] of RocksDB's quoted
/// rate and of this crate's estimate (both are models, repeated across the
/// Bloom suites, hence the wider bound).
#[test]
fn fp_rate_statistics() {
    let mut rng = Rng(99);
    let n = 100_000;
    let hashes: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let filter = build(&hashes, 10_000);
    let r = reader(&filter);
    let queries = 200_000u64;
    let fps = (0..queries).filter(|_| r.may_match_hash(rng.next_u64())).count() as u64;
    assert_binomial(
        fps,
        queries,
        QUOTED_FP_RATE_10_BITS,
        FREQUENT_SIGMAS,
        "against RocksDB's quoted rate",
    );
    let est = estimated_fp_rate(n, filter.len(), 10_000);
    assert_binomial(fps, queries, est, FREQUENT_SIGMAS, "against the estimate");
}

#[test]
fn batched_queries_equal_single() {
    let mut rng = Rng(3);
    let hashes: Vec<u64> = (0..500).map(|_| rng.next_u64()).collect();
    let filter = build(&hashes, 4_000);
    let r = reader(&filter);
    let queries: Vec<u64> = (0..1000)
        .map(|i| {
            if i % 3 == 0 {
                hashes[i % 500]
            } else {
                rng.next_u64()
            }
        })
        .collect();
    let mut out = vec![false; queries.len()];
    r.may_match_hashes(&queries, &mut out);
    for (q, o) in queries.iter().zip(&out) {
        assert_eq!(r.may_match_hash(*q), *o);
    }
    // Mismatched lengths: only the common prefix is written.
    let mut short = [false; 5];
    r.may_match_hashes(&queries, &mut short);
    assert_eq!(&short[..], &out[..5]);
    let mut long = vec![true; 1005];
    long[1004] = false;
    r.may_match_hashes(&queries, &mut long);
    assert_eq!(&long[..1000], &out[..]);
    assert!(!long[1004]);
}

/// An independent model of a FastLocalBloom query, straight from the
/// format description (module docs): the cache line
/// `fast_range32(lower32, len / 64)`, probes `upper32 * GOLDEN^i >> 23`,
/// and bits outside `data` count as set (where RocksDB would read past a
/// corrupt filter).
fn model_may_match(data: &[u8], num_probes: i32, h: u64) -> bool {
    let len = data.len() as u64;
    let line = (u64::from(lower32of64(h)) * (len / 64)) >> 32;
    let mut p = upper32of64(h);
    for _ in 0..num_probes {
        let bit = line * 512 + u64::from(p >> 23);
        if let Some(&byte) = data.get((bit / 8) as usize) {
            if byte & (1 << (bit % 8)) == 0 {
                return false;
            }
        }
        p = p.wrapping_mul(0x9e37_79b9);
    }
    true
}

/// Every kernel, single and batched, answers as the model, for the built
/// filter, every truncation of it that still parses, random bytes and
/// readers over arbitrary data and probe counts; and the intact filter has
/// no false negative.
#[test]
fn any_bytes_answer_as_the_model() {
    let mut rng = Rng(11);
    let hashes: Vec<u64> = (0..300).map(|_| rng.next_u64()).collect();
    let queries: Vec<u64> = hashes
        .iter()
        .copied()
        .chain((0..100).map(|_| rng.next_u64()))
        .collect();
    let filter = build(&hashes, 10_000);
    let check = |r: FastLocalBloomReader<'_>, what: &str| {
        for kernel in BloomKernel::available() {
            let r = r.with_kernel(kernel);
            let mut batched = vec![false; queries.len()];
            r.may_match_hashes(&queries, &mut batched);
            for (&h, &b) in queries.iter().zip(&batched) {
                let want = model_may_match(r.data(), r.num_probes(), h);
                assert_eq!(r.may_match_hash(h), want, "{what} {kernel:?} single");
                assert_eq!(b, want, "{what} {kernel:?} batched");
            }
        }
    };
    let intact = reader(&filter);
    assert!(hashes.iter().all(|&h| intact.may_match_hash(h)), "false negative");
    check(intact, "intact");
    let mut parsed = 0;
    for cut in 0..=filter.len() {
        for part in [&filter[..cut], &filter[filter.len() - cut..]] {
            match parse_trailer(part) {
                Parsed::Reader(r) => {
                    parsed += 1;
                    check(r, "truncated");
                }
                Parsed::AlwaysFalse => assert!(part.len() <= 5, "{} bytes", part.len()),
                Parsed::AlwaysTrue | Parsed::OtherFormat => {}
            }
        }
    }
    assert!(parsed > filter.len() / 2, "suffixes keep the trailer: {parsed}");
    for len in 0..200usize {
        for _ in 0..10 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if let Parsed::Reader(r) = parse_trailer(&bytes) {
                check(r, "random");
            }
            for probes in [-5, 0, 1, 6, 31, 40] {
                check(FastLocalBloomReader::new(&bytes, probes), "direct");
            }
            let mut data = bytes.clone();
            FastLocalBloomImpl::add_hash(1, 2, u32::MAX, 6, &mut data);
            FastLocalBloomImpl::add_hash(u32::MAX, 2, 1000, 6, &mut data);
            assert_eq!(data.len(), bytes.len(), "adds stay inside the data");
        }
    }
}
