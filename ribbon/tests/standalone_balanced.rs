//! Balanced Ribbon (`Config::balanced`, format version 2): no false
//! negatives for any width, precision or size; FP rates within named bounds
//! of the configured rate; space overheads near the paper's (Dillinger and
//! Walzer, 2021, Table 2); the version 2 file's checks; and the committed
//! version 1 files still read.
//!
//! Statistical checks use the named bounds of `ribbon::test_support::stats`;
//! all randomness is seeded, so a run is reproducible.

use ribbon::core::hash::hash64;
use ribbon::standalone::{file, Config, Error, Mode, Precision, Ribbon, RibbonRef};
use ribbon::test_support::keys::Rng;
use ribbon::test_support::stats::{assert_binomial, FREQUENT_SIGMAS};

const HEADER_CHECKSUM_SEED: u64 = 0x5242_4E48_4452_0001;
const BODY_CHECKSUM_SEED: u64 = 0x5242_4E42_4F44_0001;

fn hashes(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.next_u64()).collect()
}

/// Every key answers "may match", through every query path.
fn assert_no_false_negatives(f: &Ribbon, keys: &[u64], what: &str) {
    assert!(keys.iter().all(|&k| f.contains_hash(k)), "{what}: single");
    assert!(f.contains_many_hashes(keys).iter().all(|&m| m), "{what}: batched");
    let view = RibbonRef::from_bytes(f.as_bytes()).expect("its own bytes read back");
    assert!(keys.iter().all(|&k| view.contains_hash(k)), "{what}: view");
}

#[test]
fn no_false_negatives_for_any_width_precision_or_size() {
    let precisions = [
        Precision::ResultBits(1.0),
        Precision::ResultBits(3.0),
        Precision::ResultBits(7.0),
        Precision::ResultBits(7.5),
        Precision::ResultBits(11.0),
        Precision::ResultBits(16.25),
        Precision::FpRate(0.01),
    ];
    let mut seed = 1;
    for width in [32, 64, 128] {
        for first_coeff_always_one in [true, false] {
            for (i, &precision) in precisions.iter().enumerate() {
                // Sizes from one shard (Standard Ribbon) to a few levels.
                for n in [0, 1, 2, 10, 300, 2_500, 9_000 + 1_000 * i] {
                    seed += 1;
                    let config = Config {
                        width,
                        first_coeff_always_one,
                        precision,
                        seed: (seed % 7) as u32,
                        ..Config::balanced(width, 7.0)
                    };
                    let keys = hashes(n, seed);
                    let f = Ribbon::from_hashes(&keys, &config)
                        .unwrap_or_else(|e| panic!("{config:?} n {n}: {e}"));
                    // No keys: the empty filter, which version 1 holds.
                    assert_eq!(f.is_balanced(), n > 0);
                    assert_eq!(f.format_version(), if n > 0 { 2 } else { 1 });
                    assert_eq!(f.num_keys(), n as u64);
                    assert_no_false_negatives(&f, &keys, &format!("{config:?} n {n}"));
                }
            }
        }
    }
}

#[test]
fn duplicate_keys_and_keys_by_bytes_are_found() {
    let mut keys = hashes(20_000, 3);
    keys.extend_from_within(..5_000);
    let f = Ribbon::from_hashes(&keys, &Config::balanced(64, 7.0)).unwrap();
    assert_no_false_negatives(&f, &keys, "duplicates");
    let strings: Vec<String> = (0..30_000).map(|i| format!("key-{i}")).collect();
    let f = Ribbon::from_keys(&strings, &Config::balanced(32, 5.0)).unwrap();
    assert!(strings.iter().all(|k| f.contains(k)));
    assert!(f.contains_many(&strings).iter().all(|&m| m));
}

/// FP rates of Standard Ribbon hold for Balanced Ribbon: the result rows
/// are the same hash-derived values, so a non-member matches with the
/// columns' rate, within `FREQUENT_SIGMAS` binomial deviations.
#[test]
fn fp_rates_are_the_configured_rates() {
    let keys = hashes(120_000, 11);
    for width in [32, 64, 128] {
        for precision in [
            Precision::ResultBits(7.0),
            Precision::ResultBits(4.5),
            Precision::FpRate(0.003),
        ] {
            let config = Config {
                precision,
                ..Config::balanced(width, 7.0)
            };
            let f = Ribbon::from_hashes(&keys, &config).unwrap();
            assert!(f.num_shards() > 16, "{width}: {} shards", f.num_shards());
            let expected = f.expected_fp_rate();
            assert!((expected - precision.target_fp_rate()).abs() < 0.02 * expected);
            let queries = 1_000_000;
            let fp = f.measure_fp_rate(queries, 99);
            assert_binomial(
                (fp * queries as f64).round() as u64,
                queries,
                expected,
                FREQUENT_SIGMAS,
                &format!("Balanced w={width} {precision:?}"),
            );
        }
    }
}

/// Space overhead (solution and metadata against `log2(1/fp)` bits per
/// key) at 200 000 keys, with room over the values measured at 10^6 and
/// 10^7 keys in `ribbon/docs/balanced-ribbon.md` (the last shard, sized
/// like a Standard Ribbon, weighs more at fewer keys).
#[test]
fn space_overhead_is_near_the_papers() {
    let keys = hashes(200_000, 21);
    for (width, bound) in [(32, 0.035), (64, 0.011), (128, 0.006)] {
        let f = Ribbon::from_hashes(&keys, &Config::balanced(width, 7.0)).unwrap();
        let overhead = f.space_overhead();
        assert!(overhead < bound, "w={width}: {overhead}");
        let standard = Ribbon::from_hashes(&keys, &Config::standard(width, 7.0)).unwrap();
        assert!(overhead < standard.space_overhead() / 2.0, "w={width}");
        // The plan's estimate is close to what was built.
        let plan = Config::balanced(width, 7.0).plan(keys.len() as u64).unwrap();
        let ratio = plan.file_len as f64 / f.as_bytes().len() as f64;
        assert!(
            (ratio - 1.0).abs() < 0.01,
            "w={width}: plan {} built {}",
            plan.file_len,
            f.as_bytes().len()
        );
    }
}

#[test]
fn construction_is_deterministic_and_seeded() {
    let keys = hashes(50_000, 5);
    let a = Ribbon::from_hashes(&keys, &Config::balanced(64, 7.0)).unwrap();
    let b = Ribbon::from_hashes(&keys, &Config::balanced(64, 7.0)).unwrap();
    assert_eq!(a.as_bytes(), b.as_bytes());
    let c = Ribbon::from_hashes(
        &keys,
        &Config {
            seed: 40,
            ..Config::balanced(64, 7.0)
        },
    )
    .unwrap();
    assert!(c.seed() >= 40);
    assert_ne!(a.as_bytes(), c.as_bytes());
    assert_no_false_negatives(&c, &keys, "seed 40");
}

/// `Config::low_memory` (a window of rows, every shard banded again for
/// back-substitution) writes the bytes of the full banding: every width,
/// whole and fractional precisions, sizes from one shard to many levels,
/// and loads where seeds fail (few shard slots per key).
#[test]
fn low_memory_construction_writes_the_same_bytes() {
    let mut seed = 100;
    for width in [32, 64, 128] {
        for first_coeff_always_one in [true, false] {
            for precision in [
                Precision::ResultBits(1.0),
                Precision::ResultBits(6.78),
                Precision::ResultBits(7.0),
                Precision::ResultBits(16.25),
            ] {
                for n in [1, 2, 100, 2_500, 40_000, 150_000] {
                    // Many levels once per shape (the default overhead).
                    let overheads: &[Option<f64>] = if n > 100_000 {
                        &[None]
                    } else {
                        &[None, Some(0.0), Some(0.05)]
                    };
                    for &slot_overhead in overheads {
                        seed += 1;
                        let full = Config {
                            first_coeff_always_one,
                            precision,
                            slot_overhead,
                            seed: (seed % 5) as u32,
                            ..Config::balanced(width, 7.0)
                        };
                        let low = Config {
                            low_memory: true,
                            ..full.clone()
                        };
                        let keys = hashes(n, seed);
                        let a = Ribbon::from_hashes(&keys, &full);
                        let b = Ribbon::from_hashes(&keys, &low);
                        match (a, b) {
                            (Ok(a), Ok(b)) => {
                                assert!(a.as_bytes() == b.as_bytes(), "{full:?} n {n}: different bytes");
                                assert_no_false_negatives(&b, &keys, &format!("{low:?} n {n}"));
                            }
                            (Err(a), Err(b)) => assert_eq!(a, b, "{full:?} n {n}"),
                            (a, b) => panic!("{full:?} n {n}: full {:?}, low memory {:?}", a.err(), b.err()),
                        }
                    }
                }
            }
        }
        // Every key twice: redundant equations.
        {
            let keys: Vec<u64> = hashes(30_000, 7).into_iter().flat_map(|h| [h, h]).collect();
            let full = Config::balanced(width, 7.0);
            let low = Config {
                low_memory: true,
                ..full.clone()
            };
            match (
                Ribbon::from_hashes(&keys, &full),
                Ribbon::from_hashes(&keys, &low),
            ) {
                (Ok(a), Ok(b)) => assert!(a.as_bytes() == b.as_bytes(), "{full:?}: different bytes"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{full:?}"),
                (a, b) => panic!("{full:?}: full {:?}, low memory {:?}", a.err(), b.err()),
            }
        }
    }
}

/// Large filters band with one of their first seeds, at every width. A
/// shard's keys reach `w - 1` slots into the next shard, so the keys
/// bumped into the next shard are banded before them; banded after them,
/// width 32 failed every one of 256 seeds from 2·10^6 keys on.
#[test]
fn large_filters_band_with_their_first_seeds() {
    for width in [32, 64, 128] {
        let config = Config {
            max_seeds: 4,
            ..Config::balanced(width, 7.0)
        };
        let keys = hashes(2_000_000, u64::from(width));
        let f = Ribbon::from_hashes(&keys, &config).unwrap_or_else(|e| panic!("{config:?}: {e}"));
        assert_no_false_negatives(&f, &keys, &format!("{config:?}"));
    }
}

#[test]
fn invalid_balanced_configurations_are_errors() {
    for config in [
        Config {
            smash: true,
            ..Config::balanced(64, 7.0)
        },
        Config {
            mode: Mode::Homogeneous,
            ..Config::balanced(64, 7.0)
        },
    ] {
        assert!(
            matches!(config.validate(), Err(Error::InvalidConfig { .. })),
            "{config:?}"
        );
        assert!(matches!(
            Ribbon::from_hashes(&[1, 2, 3], &config),
            Err(Error::InvalidConfig { .. })
        ));
    }
    let f = Ribbon::from_hashes(&hashes(5000, 1), &Config::balanced(128, 7.0)).unwrap();
    assert!(matches!(f.to_rocksdb(), Err(Error::NotRocksDbCompatible(_))));
}

fn balanced_file() -> Vec<u8> {
    Ribbon::from_hashes(&hashes(20_000, 8), &Config::balanced(32, 6.5))
        .unwrap()
        .into_bytes()
}

fn reseal_header(b: &mut [u8]) {
    let sum = hash64(&b[..88], HEADER_CHECKSUM_SEED);
    b[88..96].copy_from_slice(&sum.to_le_bytes());
}

fn reseal_body(b: &mut [u8]) {
    let end = b.len() - 8;
    let sum = hash64(&b[96..end], BODY_CHECKSUM_SEED);
    b[end..].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn version_2_files_round_trip_unaligned() {
    let bytes = balanced_file();
    assert!(file::has_magic(&bytes));
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), file::VERSION_BALANCED);
    assert_eq!(bytes.len() % 8, 0);
    let f = Ribbon::from_bytes(&bytes).unwrap();
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&bytes);
    let probe = hashes(50_000, 9);
    for view in [
        RibbonRef::from_bytes(&bytes).unwrap(),
        RibbonRef::from_bytes(&shifted[1..]).unwrap(),
        RibbonRef::from_bytes_unverified(&bytes).unwrap(),
    ] {
        assert!(view.is_balanced());
        assert_eq!(view.num_shards(), f.num_shards());
        assert_eq!(view.shard_slots(), f.shard_slots());
        assert_eq!(view.last_shard_starts(), f.last_shard_starts());
        assert_eq!(view.contains_many_hashes(&probe), f.contains_many_hashes(&probe));
    }
    assert_no_false_negatives(&f, &hashes(20_000, 8), "reloaded");
}

#[test]
fn version_2_files_detect_every_bit_flip_and_truncation() {
    let bytes = balanced_file();
    for bit in 0..bytes.len() * 8 {
        let mut damaged = bytes.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        let byte = bit / 8;
        let result = RibbonRef::from_bytes(&damaged);
        let ok = matches!(
            (&result, byte),
            (Err(Error::BadMagic), 0..8)
                | (Err(Error::UnsupportedVersion { .. }), 8..10)
                | (Err(Error::HeaderChecksumMismatch), 8..96)
                | (Err(Error::ChecksumMismatch), 96..)
        );
        assert!(ok, "bit {bit} (byte {byte}): {result:?}");
        if byte < 96 {
            assert!(RibbonRef::from_bytes_unverified(&damaged).is_err(), "bit {bit}");
        } else if let Ok(view) = RibbonRef::from_bytes_unverified(&damaged) {
            // Accepted without the body checksum: queries still answer.
            let _ = view.contains_many_hashes(&hashes(1000, 3));
        }
    }
    for len in [0, 9, 50, 95, 96, bytes.len() - 1] {
        assert!(
            matches!(RibbonRef::from_bytes(&bytes[..len]), Err(Error::Truncated { .. })),
            "{len}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(RibbonRef::from_bytes(&longer), Err(Error::Corrupt(_))));
}

#[test]
fn version_2_files_reject_inconsistent_fields() {
    let bytes = balanced_file();
    let f = Ribbon::from_bytes(&bytes).unwrap();
    type Edit = fn(&mut Vec<u8>);
    let header_edits: [(&str, Edit); 8] = [
        ("header length", |b| b[10] = 64),
        ("smash", |b| b[13] |= 2),
        ("homogeneous", |b| b[13] |= 4),
        ("shard bits", |b| b[15] = 25),
        ("last starts", |b| b[56] ^= 1),
        ("redirect", |b| {
            b[60..62].copy_from_slice(&40_000u16.to_le_bytes())
        }),
        ("buckets", |b| b[62] = 8),
        ("reserved", |b| b[70] = 1),
    ];
    for (what, edit) in header_edits {
        let mut b = bytes.clone();
        edit(&mut b);
        reseal_header(&mut b);
        let r = RibbonRef::from_bytes(&b);
        assert!(
            matches!(r, Err(Error::Corrupt(_)) | Err(Error::Truncated { .. })),
            "{what}: {r:?}"
        );
    }
    // Metadata: after the solution, one u16 mask per shard, then one u32
    // shard size per level.
    let meta = 96 + f.solution_len();
    let shards = f.num_shards() as usize;
    // (what, byte offset, new value: a mask byte or a level size byte).
    let body_edits = [
        ("last mask", meta + 2 * (shards - 1), 0x7F),
        ("level of no starts", meta + 2 * shards + 1, 0),
        ("level sizes", meta + 2 * shards, 0xFF),
    ];
    for (what, at, value) in body_edits {
        let mut b = bytes.clone();
        if what == "level of no starts" {
            b[at - 1..at + 3].fill(0);
        } else {
            b[at] = value;
        }
        reseal_body(&mut b);
        let r = RibbonRef::from_bytes(&b);
        assert!(matches!(r, Err(Error::Corrupt(_))), "{what}: {r:?}");
    }
    // Any other mask is a valid (if useless) filter: no panic, and keys
    // whose bucket the mask still keeps are found.
    let mut b = bytes.clone();
    b[meta..meta + 2].copy_from_slice(&0u16.to_le_bytes());
    reseal_body(&mut b);
    let view = RibbonRef::from_bytes(&b).unwrap();
    let _ = view.contains_many_hashes(&hashes(10_000, 4));
}

/// Arbitrary metadata and level sizes behind valid checksums never panic.
#[test]
fn version_2_parser_never_panics() {
    let good = balanced_file();
    let f = Ribbon::from_bytes(&good).unwrap();
    let meta = 96 + f.solution_len();
    let mut rng = Rng(0xBA1);
    let probe = hashes(200, 5);
    for _ in 0..3000 {
        let mut b = good.clone();
        for _ in 0..1 + rng.below(6) {
            let at = if rng.below(2) == 0 {
                meta + rng.below((b.len() - 8 - meta) as u64) as usize
            } else {
                12 + rng.below(76) as usize
            };
            b[at] = rng.next_u64() as u8;
        }
        reseal_header(&mut b);
        reseal_body(&mut b);
        if let Ok(view) = RibbonRef::from_bytes(&b) {
            let _ = view.contains_many_hashes(&probe);
            let _ = probe.iter().filter(|&&h| view.contains_hash(h)).count();
        }
    }
}

/// Files written before Balanced Ribbon (format version 1, committed in
/// `tests/fixtures`, written by the previous release) still read, answer
/// for their keys, and are what this build writes for the same keys.
#[test]
fn version_1_fixtures_still_read() {
    let keys: Vec<String> = (0..1000).map(|i| format!("key-{i}")).collect();
    for (name, config) in [
        ("v1-standard128-r7.rbn", Config::default()),
        ("v1-homogeneous64-r7.5.rbn", Config::homogeneous(64, 7.5)),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let bytes = std::fs::read(&path).unwrap();
        let f = RibbonRef::from_bytes(&bytes).unwrap();
        assert_eq!(f.format_version(), file::VERSION, "{name}");
        assert!(!f.is_balanced());
        assert_eq!(f.num_shards(), 0);
        assert!(keys.iter().all(|k| f.contains(k)), "{name}");
        let rebuilt = Ribbon::from_keys(&keys, &config).unwrap();
        assert_eq!(
            rebuilt.as_bytes(),
            &bytes[..],
            "{name}: version 1 writing changed"
        );
    }
}

/// Balanced construction writes the bytes it wrote when these digests were
/// taken (2026-11-25, before construction regrouped keys in passes instead
/// of cycles and gathered each shard's equations before banding them):
/// neither the order in which keys are grouped and added nor the memory
/// mode may change a file. Every width, both memory modes, one shard to
/// many levels, a fractional precision, and shards with no spare slots.
#[test]
fn balanced_bytes_are_stable() {
    let golden: [(u32, usize, u64); 12] = [
        (32, 1_000, 0x998c3df3888c119f),
        (32, 100_000, 0xd7d9a9f416a7c5ee),
        (32, 300_000, 0x400d0789f13ac13),
        (32, 20_000, 0xd4b767a42304f22f),
        (64, 1_000, 0xa63c6ef73e9df30c),
        (64, 100_000, 0xb06a1adff9f9f1b9),
        (64, 300_000, 0x56e24c420972c568),
        (64, 20_000, 0x9a7f02df386fb0b6),
        (128, 1_000, 0xe842962facf5de63),
        (128, 100_000, 0xb3cc3e83d80cc25e),
        (128, 300_000, 0xefeed487e511fea2),
        (128, 20_000, 0x2d846c9e0adc340e),
    ];
    let mut seen = Vec::new();
    for &(width, n, digest) in &golden {
        let keys = hashes(n, 0xB0B0 + n as u64 + u64::from(width));
        // The last shape of each width: shards with no spare slots.
        let slot_overhead = (n == 20_000).then_some(0.0);
        let full = Config {
            precision: Precision::FpRate(1.0 / 104.9),
            slot_overhead,
            ..Config::balanced(width, 7.0)
        };
        let low = Config {
            low_memory: true,
            ..full.clone()
        };
        let a = Ribbon::from_hashes(&keys, &full).unwrap();
        let b = Ribbon::from_hashes(&keys, &low).unwrap();
        assert!(
            a.as_bytes() == b.as_bytes(),
            "w {width} n {n}: memory modes differ"
        );
        seen.push((width, n, hash64(a.as_bytes(), 0), digest, a.seed()));
    }
    let changed: Vec<String> = seen
        .iter()
        .filter(|s| s.2 != s.3)
        .map(|(width, n, d, _, seed)| format!("({width}, {n}, {d:#x}) (seed {seed})"))
        .collect();
    assert!(changed.is_empty(), "the bytes changed: {changed:#?}");
}
