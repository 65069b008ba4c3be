//! The native harness itself: RocksDB's filters built in-process behave as
//! filters (no false negatives, FP rates near their targets).

mod util;

use ribbon_compat::harness::{NativeBuilder, NativeReader, Reason};
use util::{member_keys, non_member_keys, KeyKind};

#[test]
fn native_ribbon_has_no_false_negatives() {
    let keys = member_keys(KeyKind::RandomBinary, 50_000, 1);
    let filter = NativeBuilder::build("ribbonfilter:10", 7, &keys);
    assert_eq!(filter[filter.len() - 5], 0xFE, "a Standard128 Ribbon trailer");
    let reader = NativeReader::new(&filter);
    assert!(keys.iter().all(|k| reader.may_match(k)));
    assert!(reader.may_match_batch(&keys).iter().all(|&m| m));
}

#[test]
fn native_fp_rates_are_near_their_targets() {
    // 10 bits/key: FastLocalBloom ~0.95%, Ribbon targets the same rate
    // (with ~30% less space). 5 sigma bounds for 200k probes.
    let keys = member_keys(KeyKind::Binary16To24, 100_000, 2);
    let probes = non_member_keys(200_000, 3);
    for (policy, expected) in [("bloomfilter:10", 0.0095), ("ribbonfilter:10:-1", 0.0095)] {
        let filter = NativeBuilder::build(policy, 7, &keys);
        let reader = NativeReader::new(&filter);
        let fps = probes.iter().filter(|k| reader.may_match(k)).count() as f64;
        let n = probes.len() as f64;
        let sigma = (n * expected * (1.0 - expected)).sqrt();
        assert!(
            (fps - n * expected).abs() < 5.0 * sigma + 0.1 * n * expected,
            "{policy}: {fps} false positives of {n}, expected about {}",
            n * expected
        );
    }
}

#[test]
fn native_policy_strings_and_contexts() {
    assert!(NativeBuilder::new("nonsense:10", 7, Reason::Misc, -1).is_err());
    // 0 bits per key: no filter at all.
    assert!(!NativeBuilder::new("bloomfilter:0.2", 7, Reason::Misc, -1)
        .unwrap()
        .has_builder());
    // Flushes get Bloom under ribbonfilter's default bloom_before_level 0.
    let mut b = NativeBuilder::new("ribbonfilter:10", 7, Reason::Flush, 0).unwrap();
    for k in member_keys(KeyKind::RandomBinary, 2000, 4) {
        b.add_key(&k);
    }
    let f = b.finish();
    assert_eq!(f[f.len() - 5], 0xFF, "FastLocalBloom trailer for a flush");
}
