//! Golden vectors captured from native RocksDB 11.8.1 (see
//! `src/bin/golden.rs` at the workspace root for the command that
//! regenerates them): the pure-Rust crate reproduces them with no C++.

use ribbon::core::config::{self, ConstructionFailureChance};
use ribbon::core::hash::{bloom_hash, hash64};
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, CompactionStyle, CreationReason, FilterPolicy};
use ribbon::test_support::keys::{match_summary, member_keys, non_member_keys, KeyKind, Rng};

fn lines(text: &'static str, tag: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    text.lines()
        .filter(move |l| l.starts_with(tag) && l[tag.len()..].starts_with(' '))
        .map(|l| l.split_whitespace().collect())
}

fn hex_u64(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap()
}

#[test]
fn hash_values() {
    let text = include_str!("golden/hashes.txt");
    let data = Rng(0x601DE).bytes(4160);
    let mut checked = 0;
    for f in lines(text, "hash64") {
        let len: usize = f[1].parse().unwrap();
        let key = &data[len % 61..len % 61 + len];
        assert_eq!(
            hash64(key, hex_u64(f[2])),
            hex_u64(f[3]),
            "hash64 len {len} seed {}",
            f[2]
        );
        checked += 1;
    }
    for f in lines(text, "bloom_hash") {
        let len: usize = f[1].parse().unwrap();
        let key = &data[len % 61..len % 61 + len];
        assert_eq!(u64::from(bloom_hash(key)), hex_u64(f[2]), "bloom_hash len {len}");
        checked += 1;
    }
    assert!(checked > 8000, "golden hashes missing");
}

#[test]
fn slot_tables() {
    let text = include_str!("golden/slots.txt");
    let mut checked = 0;
    for f in lines(text, "slots") {
        let failure_chance = ConstructionFailureChance::from_code(f[1].parse().unwrap())
            .unwrap_or_else(|| panic!("failure chance code {}", f[1]));
        let bits: u32 = f[2].parse().unwrap();
        let (smash, homog) = (f[3] == "1", f[4] == "1");
        let n: u32 = f[5].parse().unwrap();
        assert_eq!(
            config::get_num_slots(failure_chance, bits, smash, homog, n),
            f[6].parse::<u32>().unwrap(),
            "{f:?}"
        );
        assert_eq!(
            config::get_num_to_add(failure_chance, bits, smash, homog, n),
            f[7].parse::<u32>().unwrap(),
            "{f:?}"
        );
        checked += 1;
    }
    assert!(checked > 1000, "golden slot tables missing");
}

fn key_kind(name: &str) -> KeyKind {
    match name {
        "RandomBinary" => KeyKind::RandomBinary,
        "SortedAscii" => KeyKind::SortedAscii,
        _ => KeyKind::Binary16To24,
    }
}

/// The Schema check: size, fingerprint, trailer, FP count and first false
/// positives of each filter, for every policy and context in the file.
#[test]
fn filter_schema() {
    let text = include_str!("golden/filters.txt");
    let probes = non_member_keys(10_000, 99);
    let mut checked = 0;
    for f in lines(text, "filter") {
        let policy: FilterPolicy = f[1].parse().unwrap();
        let ctx = BuildContext {
            format_version: f[2].parse().unwrap(),
            compaction_style: CompactionStyle::Level,
            reason: match f[3] {
                "flush" => CreationReason::Flush,
                "compaction" => CreationReason::Compaction,
                _ => CreationReason::Misc,
            },
            level_at_creation: f[4].parse().unwrap(),
            optimize_filters_for_memory: true,
        };
        let keys = member_keys(key_kind(f[5]), f[6].parse().unwrap(), f[7].parse().unwrap());
        assert_eq!(f[8], "|");
        let mut b = FilterBuilder::new(&policy, &ctx).expect("a filter-building policy");
        for k in &keys {
            b.add_key(k);
        }
        let filter = b.finish();
        let what = f[..8].join(" ");
        assert_eq!(filter.len(), f[9].parse::<usize>().unwrap(), "{what}: length");
        assert_eq!(hash64(&filter, 0), hex_u64(f[10]), "{what}: fingerprint");
        let trailer = if filter.len() >= 5 {
            filter[filter.len() - 5..]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        } else {
            "-".into()
        };
        assert_eq!(trailer, f[11], "{what}: trailer");
        let reader = FilterReader::new(&filter);
        assert!(keys.iter().all(|k| reader.may_match(k)), "{what}: false negative");
        let (count, first) = match_summary(probes.iter().map(|p| reader.may_match(p)));
        assert_eq!(count, f[12].parse::<usize>().unwrap(), "{what}: FP count");
        assert_eq!(first, f[13], "{what}: first false positives");
        checked += 1;
    }
    assert!(checked > 200, "golden filters missing");
}
