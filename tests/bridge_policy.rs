//! The Rust FilterPolicy (rocks-bridge) driven through RocksDB's own
//! FilterPolicy interface: its builder writes the same bytes as RocksDB's
//! built-in policy, and its reader answers as RocksDB's does.

mod util;

use ribbon_compat::harness::{NativeBuilder, NativeReader, Reason};
use util::{member_keys, non_member_keys, KeyKind};

fn build(policy: &str, fv: i32, reason: Reason, level: i32, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut b = NativeBuilder::new(policy, fv, reason, level).unwrap();
    assert!(b.has_builder(), "{policy}");
    for k in keys {
        b.add_key(k);
    }
    let n = b.estimate_entries_added();
    let space = b.calculate_space(n);
    let f = b.finish();
    if !keys.is_empty() {
        assert_eq!(space, f.len(), "{policy}: CalculateSpace");
    }
    f
}

#[test]
fn rust_policy_builds_native_bytes() {
    rocks_bridge::register();
    let probes = non_member_keys(20_000, 31);
    for n in [0usize, 1, 100, 1023, 10_000, 100_000] {
        let keys = member_keys(KeyKind::RandomBinary, n, 32 + n as u64);
        for bits in ["1", "6.5", "10", "20"] {
            for (rust, native, fv) in [
                (
                    format!("rust.RibbonFilter:{bits}"),
                    format!("ribbonfilter:{bits}"),
                    7,
                ),
                (
                    format!("rust.BloomFilter:{bits}"),
                    format!("bloomfilter:{bits}"),
                    7,
                ),
                (
                    format!("rust.BloomFilter:{bits}"),
                    format!("bloomfilter:{bits}"),
                    6,
                ),
                (
                    format!("rust.BloomFilter:{bits}"),
                    format!("bloomfilter:{bits}"),
                    4,
                ),
            ] {
                let r = build(&rust, fv, Reason::Misc, -1, &keys);
                let c = build(&native, fv, Reason::Misc, -1, &keys);
                assert_eq!(r, c, "{rust} vs {native} fv={fv} n={n}");
                // Each side's reader on the other's bytes.
                let rust_reader = NativeReader::for_policy(&rust, &c).unwrap();
                let native_reader = NativeReader::for_policy(&native, &r).unwrap();
                assert!(keys.iter().all(|k| rust_reader.may_match(k)));
                for p in &probes {
                    assert_eq!(
                        rust_reader.may_match(p),
                        native_reader.may_match(p),
                        "{rust} n={n}"
                    );
                }
                assert_eq!(
                    rust_reader.may_match_batch(&probes[..1000]),
                    native_reader.may_match_batch(&probes[..1000])
                );
            }
        }
    }
}

#[test]
fn rust_policy_follows_bloom_before_level() {
    rocks_bridge::register();
    let keys = member_keys(KeyKind::SortedAscii, 3000, 33);
    for bbl in [-1, 0, 1, 3] {
        for (reason, level) in [
            (Reason::Flush, 0),
            (Reason::Compaction, 0),
            (Reason::Compaction, 1),
            (Reason::Compaction, 5),
            (Reason::Misc, -1),
        ] {
            let r = build(&format!("rust.RibbonFilter:10:{bbl}"), 7, reason, level, &keys);
            let c = build(&format!("ribbonfilter:10:{bbl}"), 7, reason, level, &keys);
            assert_eq!(r, c, "bloom_before_level {bbl} {reason:?} level {level}");
        }
    }
}

#[test]
fn rust_policy_reader_survives_corrupt_filters() {
    rocks_bridge::register();
    let keys = member_keys(KeyKind::RandomBinary, 2000, 34);
    let good = build("ribbonfilter:10", 7, Reason::Misc, -1, &keys);
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for cut in [0, 1, 5, 6, 100, good.len() - 1] {
        cases.push(good[..cut].to_vec());
    }
    for pos in [
        good.len() - 5,
        good.len() - 4,
        good.len() - 3,
        good.len() - 1,
        0,
        17,
    ] {
        for v in [0u8, 1, 0x7F, 0x80, 0xFE, 0xFF] {
            let mut c = good.clone();
            c[pos] = v;
            cases.push(c);
        }
    }
    for bad in &cases {
        let rust = NativeReader::for_policy("rust.RibbonFilter:10", bad).unwrap();
        let native = NativeReader::new(bad);
        for k in keys.iter().take(200) {
            assert_eq!(rust.may_match(k), native.may_match(k), "len {}", bad.len());
        }
    }
}

#[test]
fn rust_policy_ids_round_trip() {
    assert_eq!(
        rocks_bridge::canonical_id("rust.RibbonFilter:10").as_deref(),
        Some("rust.RibbonFilter:10:0")
    );
    assert_eq!(
        rocks_bridge::canonical_id("rust.RibbonFilter:6.5:-1").as_deref(),
        Some("rust.RibbonFilter:6.5:-1")
    );
    assert_eq!(
        rocks_bridge::canonical_id("rust.BloomFilter:9.9").as_deref(),
        Some("rust.BloomFilter:9.9")
    );
    assert_eq!(rocks_bridge::canonical_id("rust.BloomFilter:x"), None);
    assert_eq!(rocks_bridge::canonical_id("ribbonfilter:10"), None);
    rocks_bridge::register();
    assert!(NativeBuilder::new("rust.RibbonFilter:banana", 7, Reason::Misc, -1).is_err());
    assert!(NativeBuilder::new("rust.RibbonFilter:10:1:2", 7, Reason::Misc, -1).is_err());
    // 0 bits per key: no filter, as with the built-ins.
    assert!(!NativeBuilder::new("rust.BloomFilter:0.2", 7, Reason::Misc, -1)
        .unwrap()
        .has_builder());
}

/// One grammar: every id string is accepted by RocksDB (through the
/// bridge's registration) exactly when `FilterPolicy::parse_optional` accepts it,
/// RocksDB writes back the id `FilterPolicy::id` gives, and the ids that
/// mean "no policy" clear it.
#[test]
fn bridge_and_filter_policy_parse_agree_on_ids() {
    use ribbon::rocksdb::policy::{FilterPolicy, Provider};
    for id in [
        "rust.RibbonFilter:10",
        "rust.RibbonFilter:6.5:-1",
        "rust.RibbonFilter:23.456:3",
        "rust.RibbonFilter:0.75",
        "rust.BloomFilter:10",
        "rust.BloomFilter:9.9",
        "rust.BloomFilter:10:false",
        "rust.RibbonFilter:banana",
        "rust.RibbonFilter:10:1:2",
        "rust.RibbonFilter",
        "rust.FastLocalBloomFilter:10",
        "noSuchFilter:10",
        "",
        "nullptr",
    ] {
        let parsed = FilterPolicy::parse_optional(id);
        let mut opts = rocksdb::Options::default();
        opts.set_block_based_table_factory(&rocksdb::BlockBasedOptions::default());
        let bridged = rocks_bridge::set_filter_policy(&mut opts, id);
        match parsed {
            Ok(Some(p)) => {
                assert_eq!(p.provider(), Provider::Rust, "{id}");
                assert_eq!(bridged, Ok(Some(p.id())), "{id}");
                assert_eq!(rocks_bridge::canonical_id(id), Some(p.id()), "{id}");
            }
            Ok(None) => {
                // The ids that mean "no policy" clear it.
                assert_eq!(bridged, Ok(None), "{id:?}");
            }
            Err(_) => {
                // Refused, never quietly "no filter".
                assert!(
                    bridged.is_err(),
                    "{id}: RocksDB accepted what FilterPolicy::parse_optional rejects, as {bridged:?}"
                );
                assert_eq!(rocks_bridge::canonical_id(id), None, "{id}");
            }
        }
    }
}
