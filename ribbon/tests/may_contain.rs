//! `MayContain`, the one trait every reader implements: through it (single,
//! batched, generic and `dyn`) every reader answers exactly as its own
//! inherent query, for keys in the set and keys not in it.

use ribbon::plugin::balanced_policy::{BalancedBuilder, BalancedPolicy};
use ribbon::rocksdb::policy::PolicyKind;
use ribbon::standalone::{sharded, Config, Ribbon};
use ribbon::{BuildContext, Family, FilterBuilder, FilterPolicy, FilterReader, MayContain, TableFilter};

fn keys(prefix: &str, n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("{prefix}{i}").into_bytes()).collect()
}

/// The keys of the set, then as many that are not (some of which pass),
/// and the empty key.
fn probes(set: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut p = set.to_vec();
    p.extend(keys("absent", set.len()));
    p.push(Vec::new());
    p
}

/// Every way of asking `filter` through the trait answers `want`, and no
/// key of the set is missed.
fn check(name: &str, filter: &impl MayContain, probes: &[Vec<u8>], want: &[bool], num_set: usize) {
    assert!(
        want[..num_set].iter().all(|&w| w),
        "{name}: the inherent query missed a key"
    );
    assert!(
        want[num_set..].iter().any(|&w| !w),
        "{name}: every absent key passes: the test would not see a wrong answer"
    );
    let single: Vec<bool> = probes.iter().map(|k| filter.contains(k)).collect();
    assert_eq!(single, want, "{name}: contains");
    let by_slice: Vec<bool> = probes.iter().map(|k| filter.contains_key(k)).collect();
    assert_eq!(by_slice, want, "{name}: contains_key");
    assert_eq!(filter.contains_many(probes), want, "{name}: contains_many");
    let mut out = vec![false; probes.len()];
    filter.contains_many_into(probes, &mut out);
    assert_eq!(out, want, "{name}: contains_many_into");
    let refs: Vec<&[u8]> = probes.iter().map(Vec::as_slice).collect();
    let mut out = vec![!want[0]; probes.len()];
    filter.contains_keys_into(&refs, &mut out);
    assert_eq!(out, want, "{name}: contains_keys_into");
    let dynamic: &dyn MayContain = filter;
    assert_eq!(
        (&dynamic).contains_many(probes),
        want,
        "{name}: contains_many through dyn"
    );
    assert_eq!(
        probes.iter().map(|k| dynamic.contains_key(k)).collect::<Vec<_>>(),
        want,
        "{name}: contains through dyn"
    );
}

#[test]
fn rocksdb_filter_blocks_answer_as_may_match() {
    let set = keys("key", 3000);
    let probes = probes(&set);
    for (name, policy, format_version) in [
        (
            "fast local bloom",
            FilterPolicy::new(PolicyKind::FastLocalBloom, 10.0),
            7,
        ),
        (
            "legacy bloom",
            FilterPolicy::new(PolicyKind::LegacyBloom, 10.0),
            7,
        ),
        (
            "standard128 ribbon",
            FilterPolicy::new(PolicyKind::Standard128Ribbon, 10.0),
            7,
        ),
        ("bloomfilter at format_version 4", FilterPolicy::bloom(10.0), 4),
    ] {
        let mut builder =
            FilterBuilder::new(&policy, &BuildContext::sst_file_writer(format_version)).expect(name);
        builder.extend(&set);
        let block = builder.finish();
        let reader = FilterReader::new(&block);
        let want: Vec<bool> = probes.iter().map(|k| reader.may_match(k)).collect();
        check(name, &reader, &probes, &want, set.len());
        let table = TableFilter::from(reader.clone());
        check(name, &table, &probes, &want, set.len());
    }
}

#[test]
fn balanced_table_filter_answers_as_may_match() {
    let set = keys("key", 20_000);
    let probes = probes(&set);
    let mut builder =
        BalancedBuilder::new(&BalancedPolicy::new(10.0, 0), &BuildContext::sst_file_writer(7)).unwrap();
    for k in &set {
        builder.add_key(k);
    }
    let block = builder.finish();
    let table = TableFilter::in_family(Family::BalancedRibbon, &block);
    assert!(matches!(table, TableFilter::BalancedRibbon(_)), "{table:?}");
    let want: Vec<bool> = probes.iter().map(|k| table.may_match(k)).collect();
    check("balanced", &table, &probes, &want, set.len());
}

#[test]
fn standalone_and_sharded_filters_answer_as_contains() {
    let set = keys("key", 5000);
    let probes = probes(&set);
    for (name, config) in [
        ("standard", Config::default()),
        ("homogeneous 64", Config::homogeneous(64, 6.0)),
        ("balanced 64", Config::balanced(64, 7.0)),
    ] {
        let owned = Ribbon::from_keys(&set, &config).unwrap();
        let want: Vec<bool> = probes.iter().map(|k| owned.contains(k)).collect();
        check(name, &owned, &probes, &want, set.len());
        check(name, &owned.as_ribbon_ref(), &probes, &want, set.len());
        let boxed: Box<dyn MayContain> = Box::new(owned.clone());
        check(name, &boxed, &probes, &want, set.len());
    }

    let hashes: Vec<u64> = set
        .iter()
        .map(|k| ribbon::core::hash::get_slice_hash64(k))
        .collect();
    let bits = 2;
    let files: Vec<Vec<u8>> = (0..4)
        .map(|i| {
            let mine: Vec<u64> = hashes
                .iter()
                .copied()
                .filter(|&h| sharded::shard_of(h, bits) == i)
                .collect();
            sharded::build_shard_file(&mine, i, bits, &Config::default()).unwrap()
        })
        .collect();
    let refs: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
    let container = sharded::assemble(bits, &refs).unwrap();
    let view = sharded::ShardedRef::from_bytes(&container).unwrap();
    let want: Vec<bool> = probes.iter().map(|k| view.contains(k)).collect();
    check("sharded", &view, &probes, &want, set.len());
    assert_eq!(view.contains_many(&probes), want, "ShardedRef::contains_many");
}
