//! Byte identity with native RocksDB: every filter the pure-Rust builder
//! writes equals the one RocksDB writes for the same keys, policy and
//! context, and the pure-Rust reader answers every query as RocksDB does.

mod util;

use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, CompactionStyle, CreationReason, FilterPolicy};
use ribbon_compat::harness::{NativeBuilder, NativeReader, Reason};
use util::{member_keys, non_member_keys, KeyKind};

const BITS: [f64; 15] = [
    0.4, 1.0, 2.0, 3.5, 5.0, 6.25, 7.0, 8.0, 9.9, 10.0, 12.3, 15.5, 16.0, 20.0, 23.7,
];
const SMALL_COUNTS: [usize; 11] = [0, 1, 2, 3, 10, 100, 1000, 1023, 1024, 4096, 10_000];

fn context(format_version: i32, reason: Reason, level: i32, offm: bool) -> BuildContext {
    BuildContext {
        format_version,
        compaction_style: CompactionStyle::Level,
        reason: match reason {
            Reason::Misc => CreationReason::Misc,
            Reason::Flush => CreationReason::Flush,
            Reason::Compaction => CreationReason::Compaction,
        },
        level_at_creation: level,
        optimize_filters_for_memory: offm,
    }
}

/// Builds with both, compares bytes, sizing answers and query answers.
/// Returns the filter.
fn check(
    policy: &str,
    format_version: i32,
    reason: Reason,
    level: i32,
    keys: &[Vec<u8>],
    probes: &[Vec<u8>],
) -> Vec<u8> {
    check_with(policy, format_version, reason, level, true, keys, probes)
}

/// [`check`] for an SstFileWriter file (no level).
fn check_sst(policy: &str, format_version: i32, keys: &[Vec<u8>], probes: &[Vec<u8>]) -> Vec<u8> {
    check(policy, format_version, Reason::Misc, -1, keys, probes)
}

/// The three built-in formats at `bits`: Ribbon, FastLocalBloom (fv 7) and
/// the legacy Bloom (fv 4).
fn three_formats(bits: f64) -> [(String, i32); 3] {
    [
        (format!("ribbonfilter:{bits}"), 7),
        (format!("bloomfilter:{bits}"), 7),
        (format!("bloomfilter:{bits}"), 4),
    ]
}

/// A native and a Rust builder for the same policy and SstFileWriter
/// context, or `None` (after checking both agree) when it builds no filter.
fn builder_pair(policy: &str, fv: i32) -> Option<(NativeBuilder, FilterBuilder)> {
    let native = NativeBuilder::new(policy, fv, Reason::Misc, -1).unwrap();
    let parsed: FilterPolicy = policy.parse().unwrap();
    let rust = FilterBuilder::new(&parsed, &BuildContext::sst_file_writer(fv));
    assert_eq!(
        rust.is_some(),
        native.has_builder(),
        "{policy} fv={fv}: one side builds no filter"
    );
    rust.map(|r| (native, r))
}

fn check_with(
    policy: &str,
    format_version: i32,
    reason: Reason,
    level: i32,
    offm: bool,
    keys: &[Vec<u8>],
    probes: &[Vec<u8>],
) -> Vec<u8> {
    let what = format!(
        "{policy} fv={format_version} {reason:?} level={level} offm={offm} n={}",
        keys.len()
    );
    let mut native =
        NativeBuilder::with_optimize_filters_for_memory(policy, format_version, reason, level, offm).unwrap();
    let parsed: FilterPolicy = policy.parse().unwrap();
    let rust = FilterBuilder::new(&parsed, &context(format_version, reason, level, offm));
    let Some(mut rust) = rust else {
        assert!(
            !native.has_builder(),
            "{what}: RocksDB builds a filter, Rust none"
        );
        return Vec::new();
    };
    assert!(native.has_builder(), "{what}: Rust builds a filter, RocksDB none");
    for k in keys {
        native.add_key(k);
        rust.add_key(k);
    }
    assert_eq!(
        rust.estimate_entries_added(),
        native.estimate_entries_added(),
        "{what}"
    );
    let n = rust.estimate_entries_added();
    assert_eq!(
        rust.calculate_space(n),
        native.calculate_space(n),
        "{what}: CalculateSpace"
    );
    let native_bytes = native.finish();
    let rust_bytes = rust.finish();
    if native_bytes != rust_bytes {
        let first = native_bytes.iter().zip(&rust_bytes).position(|(a, b)| a != b);
        panic!(
            "{what}: bytes differ: native {} bytes, rust {} bytes, first difference at {first:?}; \
             native trailer {:?}, rust trailer {:?}",
            native_bytes.len(),
            rust_bytes.len(),
            &native_bytes[native_bytes.len().saturating_sub(5)..],
            &rust_bytes[rust_bytes.len().saturating_sub(5)..]
        );
    }
    let native_reader = NativeReader::new(&native_bytes);
    let rust_reader = FilterReader::new(&rust_bytes);
    assert!(
        keys.iter().all(|k| rust_reader.may_match(k)),
        "{what}: false negative"
    );
    for p in probes {
        assert_eq!(
            rust_reader.may_match(p),
            native_reader.may_match(p),
            "{what}: probe {p:?}"
        );
    }
    let batch = &probes[..probes.len().min(4096)];
    assert_eq!(
        rust_reader.may_match_many(batch),
        native_reader.may_match_batch(batch),
        "{what}: batch"
    );
    native_bytes
}

#[test]
fn small_key_counts_every_bits_per_key() {
    let probes = non_member_keys(100_000, 11);
    for kind in [KeyKind::RandomBinary, KeyKind::SortedAscii] {
        for &n in &SMALL_COUNTS {
            let keys = member_keys(kind, n, n as u64 + 100);
            for &bits in &BITS {
                for (policy, fv) in three_formats(bits) {
                    check_sst(&policy, fv, &keys, &probes);
                }
            }
        }
    }
}

#[test]
fn optimize_filters_for_memory_off() {
    let probes = non_member_keys(20_000, 22);
    for n in [1usize, 10, 100, 1000, 5000] {
        let keys = member_keys(KeyKind::RandomBinary, n, 23);
        for bits in [1.0, 2.0, 6.25, 10.0, 23.7] {
            for policy in [format!("bloomfilter:{bits}"), format!("ribbonfilter:{bits}")] {
                check_with(&policy, 7, Reason::Misc, -1, false, &keys, &probes);
            }
        }
    }
}

#[test]
fn internal_policy_names_and_format_versions() {
    let probes = non_member_keys(20_000, 12);
    let keys = member_keys(KeyKind::RandomBinary, 3000, 13);
    for fv in 2..=7 {
        for bits in [1.0, 6.5, 10.0, 20.0] {
            for name in [
                "rocksdb.internal.Standard128RibbonFilter",
                "rocksdb.internal.FastLocalBloomFilter",
                "rocksdb.internal.LegacyBloomFilter",
                "bloomfilter",
                "ribbonfilter",
                "rocksdb.BloomFilter",
                "rocksdb.RibbonFilter",
            ] {
                check_sst(&format!("{name}:{bits}"), fv, &keys, &probes);
            }
        }
    }
}

#[test]
fn large_key_counts() {
    let probes = non_member_keys(100_000, 14);
    let keys = member_keys(KeyKind::RandomBinary, 100_000, 15);
    for &bits in &BITS {
        check_sst(&format!("ribbonfilter:{bits}"), 7, &keys, &probes);
    }
    for bits in [1.0, 10.0, 23.7] {
        check_sst(&format!("bloomfilter:{bits}"), 7, &keys, &probes);
        check_sst(&format!("bloomfilter:{bits}"), 3, &keys, &probes);
    }
    let keys = member_keys(KeyKind::Binary16To24, 1_000_000, 16);
    for bits in [1.0, 6.25, 10.0, 23.7] {
        check_sst(&format!("ribbonfilter:{bits}"), 7, &keys, &probes);
    }
    check_sst("bloomfilter:10", 7, &keys, &probes);
    check_sst("bloomfilter:10", 4, &keys, &probes);
}

#[test]
fn hybrid_bloom_before_level() {
    let probes = non_member_keys(20_000, 17);
    let keys = member_keys(KeyKind::RandomBinary, 5000, 18);
    for bbl in [-1, 0, 1, 3, i32::MAX] {
        let policy = format!("ribbonfilter:10:{bbl}");
        for level in [-1, 0, 1, 3, 5] {
            check(&policy, 7, Reason::Compaction, level, &keys, &probes);
            check(&policy, 7, Reason::Misc, level, &keys, &probes);
        }
        check(&policy, 7, Reason::Flush, 0, &keys, &probes);
    }
}

#[test]
fn duplicates_and_prefix_alternates() {
    let probes = non_member_keys(20_000, 19);
    let mut keys = member_keys(KeyKind::SortedAscii, 3000, 20);
    // Consecutive duplicates are hashed once.
    let dups: Vec<Vec<u8>> = keys.iter().flat_map(|k| [k.clone(), k.clone()]).collect();
    for policy in ["ribbonfilter:10", "bloomfilter:10"] {
        for fv in [4, 7] {
            check(policy, fv, Reason::Misc, -1, &dups, &probes);
        }
    }
    // AddKeyAndAlt with a 3-byte prefix (many keys share a prefix).
    keys.sort();
    for (policy, fv) in three_formats(10.0) {
        let (mut native, mut rust) = builder_pair(&policy, fv).unwrap();
        for k in &keys {
            let alt = &k[..k.len().min(3)];
            native.add_key_and_alt(k, alt);
            rust.add_key_and_alt(k, alt);
            // A repeated key with its prefix, as with duplicate user keys.
            native.add_key_and_alt(k, alt);
            rust.add_key_and_alt(k, alt);
        }
        assert_eq!(
            rust.estimate_entries_added(),
            native.estimate_entries_added(),
            "{policy} fv={fv}"
        );
        assert_eq!(
            rust.finish(),
            native.finish(),
            "{policy} fv={fv}: AddKeyAndAlt bytes"
        );
    }
}

#[test]
fn sizing_answers_match() {
    let keys = member_keys(KeyKind::RandomBinary, 50, 21);
    for &bits in &BITS {
        for (policy, fv) in three_formats(bits) {
            let Some((mut native, mut rust)) = builder_pair(&policy, fv) else {
                continue;
            };
            // The Ribbon sizing takes entropy from the first key added.
            for k in &keys {
                native.add_key(k);
                rust.add_key(k);
            }
            let mut n = 0usize;
            while n < 20_000_000 {
                assert_eq!(
                    rust.calculate_space(n),
                    native.calculate_space(n),
                    "{policy} fv={fv} CalculateSpace({n})"
                );
                n = n * 9 / 8 + 1;
            }
            let mut bytes = 1usize;
            while bytes < 50_000_000 {
                assert_eq!(
                    rust.approximate_num_entries(bytes),
                    native.approximate_num_entries(bytes),
                    "{policy} fv={fv} ApproximateNumEntries({bytes})"
                );
                for n in [0usize, 1, 100, bytes / 2, bytes * 3] {
                    let (r, c) = (
                        rust.estimated_fp_rate(n, bytes),
                        native.estimated_fp_rate(n, bytes),
                    );
                    assert!(
                        r == c || (r.is_nan() && c.is_nan()) || (r - c).abs() <= 1e-12 * c.abs(),
                        "{policy} fv={fv} EstimatedFpRate({n}, {bytes}): {r} vs {c}"
                    );
                }
                bytes = bytes * 5 / 4 + 1;
            }
        }
    }
}

#[test]
fn corrupt_filters_answer_like_rocksdb() {
    let mut rng = util::Rng(41);
    let keys = member_keys(KeyKind::RandomBinary, 2000, 42);
    let probes = non_member_keys(300, 43);
    for (policy, fv) in three_formats(10.0) {
        let good = check_sst(&policy, fv, &keys, &probes);
        let mut tried = 0;
        while tried < 300 {
            let mut f = good.clone();
            match rng.below(3) {
                0 => {
                    let keep = rng.below(f.len() as u64 + 1) as usize;
                    f.truncate(keep);
                }
                1 => {
                    let at = f.len() - 1 - rng.below(5) as usize;
                    let v = rng.next_u64() as u8;
                    f[at] = v;
                }
                _ => {
                    let at = rng.below(f.len() as u64) as usize;
                    let bit = rng.below(8);
                    f[at] ^= 1 << bit;
                }
            }
            // RocksDB itself reads out of bounds on a Bloom filter shorter
            // than one 64-byte block plus trailer, and on a legacy trailer
            // whose num_lines * 64 wraps around to the length (the Rust
            // reader answers "may match" there); compare where it is sound.
            if f.len() > 5 && f.len() < 69 {
                continue;
            }
            if f.len() > 5 && (1..=127).contains(&f[f.len() - 5]) {
                let t = f.len() - 4;
                let num_lines = u32::from_le_bytes([f[t], f[t + 1], f[t + 2], f[t + 3]]);
                if u64::from(num_lines) * 64 > u64::from(u32::MAX)
                    && num_lines.wrapping_mul(64) as usize == f.len() - 5
                {
                    continue;
                }
            }
            tried += 1;
            let native = NativeReader::new(&f);
            let rust = FilterReader::new(&f);
            for k in keys.iter().take(100).chain(&probes) {
                assert_eq!(
                    rust.may_match(k),
                    native.may_match(k),
                    "{policy} fv={fv}: corrupt filter of {} bytes",
                    f.len()
                );
            }
        }
    }
}
