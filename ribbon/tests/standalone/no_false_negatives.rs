//! No false negatives, for every configuration, result-bit count and
//! query method.

use super::*;

/// A random configuration: any shape, any precision, any seed.
fn random_config(rng: &mut Rng, shape: &Config) -> Config {
    let precision = match rng.below(4) {
        0 => Precision::ResultBits(1.0 + rng.below(32) as f64),
        1 => Precision::ResultBits(1.0 + rng.below(3100) as f64 / 100.0),
        2 => Precision::FpRate((-(1.0 + rng.below(3100) as f64 / 100.0)).exp2()),
        _ => Precision::ResultBits([1.0, 1.5, 31.5, 32.0][rng.below(4) as usize]),
    };
    Config {
        precision,
        seed: rng.next_u64() as u32,
        failure_chance: ConstructionFailureChance::ALL[rng.below(3) as usize],
        ..shape.clone()
    }
}

/// Property test: for every shape, random precisions, key counts (including
/// 0 and 1, and duplicate keys) and seeds, every key is found by every query
/// method of the owned filter and of its zero-copy twin, both agree on
/// non-members, and the plan predicts the size.
#[test]
fn no_false_negatives_for_any_configuration() {
    let mut rng = Rng(0x5EED_0001);
    let mut cases = 0;
    for shape in all_shapes() {
        for case in 0..12 {
            let config = random_config(&mut rng, &shape);
            let n = match case {
                0 => 0,
                1 => 1,
                2 => 2,
                _ => rng.below(3000) as usize,
            };
            let mut keys = hashes(n, rng.next_u64());
            if n > 10 && case % 3 == 0 {
                // Duplicates band as redundant equations.
                let dup = keys[..n / 10].to_vec();
                keys.extend(dup);
            }
            let what = format!("{} n={}", describe(&config), keys.len());
            let f = Ribbon::from_hashes(&keys, &config).unwrap_or_else(|e| panic!("{what}: {e}"));
            let plan = config.plan(keys.len() as u64).unwrap();
            assert_eq!(f.solution_len(), plan.solution_len, "{what}");
            assert_eq!(f.as_bytes().len(), plan.file_len, "{what}");
            assert_eq!(f.num_slots(), u64::from(plan.num_slots), "{what}");
            assert_eq!(f.expected_fp_rate(), plan.expected_fp_rate, "{what}");
            assert!(keys.iter().all(|&k| f.contains_hash(k)), "{what}: false negative");
            assert!(
                f.contains_many_hashes(&keys).iter().all(|&b| b),
                "{what}: batched false negative"
            );

            let view = RibbonRef::from_bytes(f.as_bytes()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(
                keys.iter().all(|&k| view.contains_hash(k)),
                "{what}: view false negative"
            );
            let others = hashes(2000, rng.next_u64());
            let owned: Vec<bool> = others.iter().map(|&h| f.contains_hash(h)).collect();
            assert_eq!(f.contains_many_hashes(&others), owned, "{what}");
            assert_eq!(view.contains_many_hashes(&others), owned, "{what}");
            assert_eq!(view.expected_fp_rate(), f.expected_fp_rate());
            assert_eq!(view.seed(), f.seed());
            if n == 0 {
                assert!(owned.iter().all(|&b| !b), "{what}: the empty filter matches");
                assert_eq!(f.expected_fp_rate(), 0.0);
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 24 * 12);
}

/// Every result-bit count, whole and fractional, for every width and mode.
#[test]
fn no_false_negatives_for_any_result_bit_count() {
    let keys = hashes(700, 11);
    for width in [32, 64, 128] {
        for mode in [Mode::Standard, Mode::Homogeneous] {
            for r in 1..=32u32 {
                for bits in [f64::from(r), f64::from(r) + 0.37] {
                    if bits > 32.0 {
                        continue;
                    }
                    let config = Config {
                        width,
                        mode,
                        precision: Precision::ResultBits(bits),
                        ..Config::default()
                    };
                    let f = Ribbon::from_hashes(&keys, &config).unwrap();
                    assert!(
                        keys.iter().all(|&k| f.contains_hash(k)),
                        "{}: false negative",
                        describe(&config)
                    );
                    assert_eq!(f.upper_num_columns(), bits.ceil() as u32, "{}", describe(&config));
                }
            }
        }
    }
}

#[test]
fn filters_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Ribbon>();
    check::<RibbonRef<'static>>();
    check::<Error>();
}

/// The same through the key API: byte-string keys, single and batched.
#[test]
fn no_false_negatives_for_byte_keys() {
    let mut rng = Rng(0x5EED_0002);
    for shape in all_shapes() {
        let config = random_config(&mut rng, &shape);
        let keys = keys::member_keys(keys::KeyKind::RandomBinary, 1500, rng.next_u64());
        let f = Ribbon::from_keys(&keys, &config).unwrap_or_else(|e| panic!("{}: {e}", describe(&config)));
        assert!(keys.iter().all(|k| f.contains(k)), "{}", describe(&config));
        assert!(f.contains_many(&keys).iter().all(|&b| b), "{}", describe(&config));
        let others = keys::non_member_keys(3000, rng.next_u64());
        let single: Vec<bool> = others.iter().map(|k| f.contains(k)).collect();
        assert_eq!(f.contains_many(&others), single);
        let hashed: Vec<u64> = others.iter().map(|k| get_slice_hash64(k)).collect();
        assert_eq!(f.contains_many_hashes(&hashed), single);
        assert!(f.contains("") == f.contains_hash(get_slice_hash64(b"")));
    }
}
