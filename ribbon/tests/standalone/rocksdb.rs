//! Conversion to and from RocksDB's Standard128 Ribbon format, with
//! identical answers.

use super::*;

#[test]
fn rocksdb_filters_convert_both_ways_with_identical_answers() {
    for (n, one_in) in [
        (1usize, 100.0),
        (300, 10.0),
        (5_000, 100.0),
        (40_000, 1000.0),
        (10_000, 1.5),
    ] {
        let keys = hashes(n, n as u64);
        let block = ribbon::rocksdb::standard128::build(keys.clone(), one_in, |_| usize::MAX).unwrap();
        let reader = FilterReader::new(&block);
        let f = Ribbon::from_rocksdb(&block, n as u64).unwrap();
        assert_eq!(f.width(), 128);
        assert_eq!(f.num_keys(), n as u64);
        let probe: Vec<u64> = keys.iter().copied().chain(hashes(50_000, 7)).collect();
        let answers: Vec<bool> = probe.iter().map(|&h| reader.may_match_hash(h)).collect();
        assert_eq!(f.contains_many_hashes(&probe), answers, "n={n}");
        let view = RibbonRef::from_bytes(f.as_bytes()).unwrap();
        assert_eq!(view.contains_many_hashes(&probe), answers, "n={n}");
        assert_eq!(view.to_rocksdb().unwrap(), block, "n={n}");
        assert_eq!(f.to_rocksdb().unwrap(), block, "n={n}");
        assert_eq!(
            f.expected_fp_rate(),
            ribbon::rocksdb::standard128::estimated_fp_rate(n, block.len(), |_, _| f64::NAN),
            "n={n}"
        );
    }
    // The empty filter.
    let f = Ribbon::from_rocksdb(&[], 0).unwrap();
    assert!(!f.contains("x"));
    assert_eq!(f.to_rocksdb().unwrap(), Vec::<u8>::new());
}

#[test]
fn standalone_filters_export_to_rocksdb() {
    let keys = keys::member_keys(keys::KeyKind::SortedAscii, 20_000, 8);
    for precision in [
        Precision::ResultBits(7.0),
        Precision::FpRate(0.003),
        Precision::ResultBits(12.25),
    ] {
        let f = Ribbon::from_keys(
            &keys,
            &Config {
                precision,
                ..Config::default()
            },
        )
        .unwrap();
        let block = f.to_rocksdb().unwrap();
        let reader = FilterReader::new(&block);
        assert!(matches!(reader, FilterReader::Standard128Ribbon(_)));
        let probe: Vec<Vec<u8>> = keys
            .iter()
            .cloned()
            .chain(keys::non_member_keys(50_000, 9))
            .collect();
        assert_eq!(
            reader.may_match_many(&probe),
            f.contains_many(&probe),
            "{precision:?}"
        );
        let back = Ribbon::from_rocksdb(&block, 20_000).unwrap();
        assert_eq!(back.contains_many(&probe), f.contains_many(&probe));
    }
}

#[test]
fn rocksdb_conversion_errors() {
    let keys = hashes(1000, 10);
    for config in [
        Config::homogeneous(128, 7.0),
        Config::standard(64, 7.0),
        Config::standard(32, 7.0),
        Config {
            smash: true,
            ..Config::default()
        },
        Config {
            first_coeff_always_one: false,
            ..Config::default()
        },
        Config {
            seed: 256,
            ..Config::default()
        },
    ] {
        let f = Ribbon::from_hashes(&keys, &config).unwrap();
        match f.to_rocksdb() {
            Err(e @ Error::NotRocksDbCompatible(_)) => assert!(e.to_string().contains("RocksDB"), "{e}"),
            other => panic!("{}: {other:?}", describe(&config)),
        }
    }
    // A Bloom filter block is not a Ribbon one.
    let policy: ribbon::rocksdb::policy::FilterPolicy = "bloomfilter:10".parse().unwrap();
    let mut b = ribbon::rocksdb::builder::FilterBuilder::new(
        &policy,
        &ribbon::rocksdb::policy::BuildContext::default(),
    )
    .unwrap();
    for i in 0..1000u32 {
        b.add_key(i.to_le_bytes());
    }
    let bloom = b.finish();
    match Ribbon::from_rocksdb(&bloom, 1000) {
        Err(Error::NotRocksDbRibbon(what)) => assert!(what.contains("Bloom"), "{what}"),
        other => panic!("{other:?}"),
    }
    // Fewer than two blocks: RocksDB answers true for everything.
    let mut tiny = vec![0u8; 16];
    tiny.extend_from_slice(&[0xFE, 0, 1, 0, 0]);
    assert!(matches!(
        Ribbon::from_rocksdb(&tiny, 1),
        Err(Error::NotRocksDbRibbon(_))
    ));
}

// -------------------------------------------------------------- schema --

/// Pins the bytes of one filter per settings combination (a hash of the
/// file) and its first false positives, so the format cannot drift
/// unnoticed. Regenerate only for a deliberate format change (and bump the
/// version).
#[test]
fn schema() {
    let keys: Vec<String> = (0..1000).map(|i| format!("schema-key-{i}")).collect();
    let probes: Vec<String> = (0..20_000).map(|i| format!("probe-{i}")).collect();
    let mut got = Vec::new();
    for config in all_shapes() {
        let config = Config {
            precision: Precision::ResultBits(4.5),
            ..config
        };
        let f = Ribbon::from_keys(&keys, &config).unwrap();
        let first_fps: Vec<usize> = probes
            .iter()
            .enumerate()
            .filter(|(_, p)| f.contains(p))
            .map(|(i, _)| i)
            .take(3)
            .collect();
        got.push(format!(
            "w{} fcao={} smash={} {:?}: {:016x} {:?}",
            config.width,
            config.first_coeff_always_one,
            config.smash,
            config.mode,
            hash64(f.as_bytes(), 0),
            first_fps
        ));
    }
    let expected: &[&str] = &[
        "w32 fcao=false smash=false Standard: 2e08403526525337 [14, 17, 30]",
        "w32 fcao=false smash=false Homogeneous: e8db73264546408c [4, 12, 13]",
        "w32 fcao=false smash=true Standard: 14da60614d9c092f [2, 22, 26]",
        "w32 fcao=false smash=true Homogeneous: 0281fae11afcaf79 [3, 4, 19]",
        "w32 fcao=true smash=false Standard: 13c1f7724e0b27f6 [38, 49, 58]",
        "w32 fcao=true smash=false Homogeneous: 8eeb016fbeff6b43 [1, 2, 19]",
        "w32 fcao=true smash=true Standard: 0b605d9f99fc046b [8, 13, 14]",
        "w32 fcao=true smash=true Homogeneous: 44bdddee8e6d36a3 [1, 16, 36]",
        "w64 fcao=false smash=false Standard: 34d400a46707809c [23, 97, 111]",
        "w64 fcao=false smash=false Homogeneous: cd19f78307e08371 [34, 51, 53]",
        "w64 fcao=false smash=true Standard: 2e07a3636ffc85d6 [52, 70, 72]",
        "w64 fcao=false smash=true Homogeneous: 8e854e6739b1d13d [37, 54, 68]",
        "w64 fcao=true smash=false Standard: 613d96e292dcab8b [6, 22, 49]",
        "w64 fcao=true smash=false Homogeneous: 60452027b3340ac5 [31, 36, 40]",
        "w64 fcao=true smash=true Standard: a5540b2e669b061e [24, 38, 58]",
        "w64 fcao=true smash=true Homogeneous: 34169b01893040fb [32, 42, 62]",
        "w128 fcao=false smash=false Standard: f106ace75b03c563 [25, 41, 99]",
        "w128 fcao=false smash=false Homogeneous: 925769c1b3afd013 [21, 31, 60]",
        "w128 fcao=false smash=true Standard: f8dd143c025febc6 [21, 25, 73]",
        "w128 fcao=false smash=true Homogeneous: 59926d6dce5dc14f [32, 45, 58]",
        "w128 fcao=true smash=false Standard: a327539ffb434fda [24, 33, 34]",
        "w128 fcao=true smash=false Homogeneous: e27191c6cc8e00ac [14, 25, 40]",
        "w128 fcao=true smash=true Standard: 9a2712085263f721 [20, 32, 37]",
        "w128 fcao=true smash=true Homogeneous: c4e247fe0ee4f7bb [79, 87, 115]",
    ];
    for (g, e) in got.iter().zip(expected) {
        assert_eq!(
            g,
            e,
            "the standalone format changed (all values now:\n{})",
            got.join("\n")
        );
    }
    assert_eq!(got.len(), expected.len());
}
