//! Configuration checks: invalid settings, size limits and construction
//! failures are errors.

use super::*;

#[test]
fn invalid_configurations_are_errors() {
    let bad = [
        (
            "width",
            Config {
                width: 0,
                ..Config::default()
            },
        ),
        (
            "width",
            Config {
                width: 16,
                ..Config::default()
            },
        ),
        (
            "width",
            Config {
                width: 96,
                ..Config::default()
            },
        ),
        (
            "width",
            Config {
                width: 256,
                ..Config::default()
            },
        ),
        ("result_bits", Config::standard(128, 0.0)),
        ("result_bits", Config::standard(128, 0.5)),
        ("result_bits", Config::standard(128, 32.5)),
        ("result_bits", Config::standard(128, f64::NAN)),
        ("result_bits", Config::standard(128, f64::INFINITY)),
        ("result_bits", Config::standard(128, -3.0)),
        (
            "fp_rate",
            Config {
                precision: Precision::FpRate(0.0),
                ..Config::default()
            },
        ),
        (
            "fp_rate",
            Config {
                precision: Precision::FpRate(0.6),
                ..Config::default()
            },
        ),
        (
            "fp_rate",
            Config {
                precision: Precision::FpRate(1.0),
                ..Config::default()
            },
        ),
        (
            "fp_rate",
            Config {
                precision: Precision::FpRate(f64::NAN),
                ..Config::default()
            },
        ),
        (
            "fp_rate",
            Config {
                precision: Precision::FpRate((-33.0f64).exp2()),
                ..Config::default()
            },
        ),
        (
            "slot_overhead",
            Config {
                slot_overhead: Some(-0.01),
                ..Config::default()
            },
        ),
        (
            "slot_overhead",
            Config {
                slot_overhead: Some(f64::NAN),
                ..Config::default()
            },
        ),
        (
            "slot_overhead",
            Config {
                slot_overhead: Some(101.0),
                ..Config::default()
            },
        ),
        (
            "max_seeds",
            Config {
                max_seeds: 0,
                ..Config::default()
            },
        ),
    ];
    let keys = hashes(100, 1);
    for (setting, config) in bad {
        for result in [
            config.validate().map(|_| ()),
            config.plan(100).map(|_| ()),
            Ribbon::from_hashes(&keys, &config).map(|_| ()),
            Ribbon::from_keys(["a", "b"], &config).map(|_| ()),
        ] {
            match result {
                Err(Error::InvalidConfig {
                    setting: s,
                    ref reason,
                }) => {
                    assert_eq!(s, setting, "{}: {reason}", describe(&config));
                    assert!(!reason.is_empty());
                }
                other => panic!(
                    "{}: expected InvalidConfig({setting}), got {other:?}",
                    describe(&config)
                ),
            }
        }
    }
    // The edges of every range are valid.
    for config in [
        Config::standard(32, 1.0),
        Config::standard(64, 32.0),
        Config::homogeneous(128, 32.0),
        Config {
            precision: Precision::FpRate(0.5),
            ..Config::default()
        },
        Config {
            precision: Precision::FpRate((-32.0f64).exp2()),
            ..Config::default()
        },
        Config {
            slot_overhead: Some(0.0),
            mode: Mode::Homogeneous,
            ..Config::default()
        },
        Config {
            slot_overhead: Some(100.0),
            ..Config::default()
        },
        Config {
            max_seeds: 1,
            ..Config::default()
        },
    ] {
        let f = Ribbon::from_hashes(&keys, &config).unwrap_or_else(|e| panic!("{}: {e}", describe(&config)));
        assert!(keys.iter().all(|&k| f.contains_hash(k)), "{}", describe(&config));
    }
}

#[test]
fn size_limits_are_errors() {
    for config in all_shapes() {
        match config.plan(MAX_KEYS + 1) {
            Err(Error::TooManyKeys { num_keys, max }) => {
                assert_eq!((num_keys, max), (MAX_KEYS + 1, MAX_KEYS));
            }
            other => panic!("{}: {other:?}", describe(&config)),
        }
        // The largest overhead times the most keys exceeds 2^32 slots.
        let huge = Config {
            slot_overhead: Some(100.0),
            ..config.clone()
        };
        assert!(matches!(huge.plan(MAX_KEYS), Err(Error::TooManyKeys { .. })));
        let plan = config
            .plan(MAX_KEYS)
            .unwrap_or_else(|e| panic!("{}: {e}", describe(&config)));
        assert!(u64::from(plan.num_slots) >= MAX_KEYS);
    }
}

#[test]
fn construction_failure_is_an_error_and_homogeneous_never_fails() {
    // No overhead at all: 5120 keys in 5120 slots cannot band.
    let keys = hashes(5120, 2);
    let tight = Config {
        slot_overhead: Some(0.0),
        max_seeds: 3,
        seed: 7,
        ..Config::default()
    };
    match Ribbon::from_hashes(&keys, &tight) {
        Err(e @ Error::ConstructionFailed { .. }) => {
            assert_eq!(
                e,
                Error::ConstructionFailed {
                    num_keys: 5120,
                    num_slots: 5120,
                    first_seed: 7,
                    seeds_tried: 3
                }
            );
            assert!(e.to_string().contains("3 seeds"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    for width in [32, 64, 128] {
        let homog = Config {
            mode: Mode::Homogeneous,
            width,
            max_seeds: 1,
            ..tight.clone()
        };
        let f = Ribbon::from_hashes(&keys, &homog).unwrap();
        assert!(keys.iter().all(|&k| f.contains_hash(k)));
        assert_eq!(f.seed(), 7);
    }
}
