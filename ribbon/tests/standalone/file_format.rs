//! The standalone file format: round trips, and every kind of damage is
//! an error, never a panic.

use super::*;

fn small_filter(config: &Config) -> Ribbon {
    Ribbon::from_hashes(&hashes(300, 5), config).unwrap()
}

#[test]
fn file_round_trips_for_every_shape() {
    for config in all_shapes() {
        let f = small_filter(&Config {
            precision: Precision::ResultBits(6.5),
            ..config.clone()
        });
        let bytes = f.as_bytes().to_vec();
        assert!(file::has_magic(&bytes));
        assert_eq!(bytes.len() % 8, 0);
        // Unaligned bytes load too (the format needs no alignment).
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&bytes);
        for view in [
            RibbonRef::from_bytes(&bytes).unwrap(),
            RibbonRef::from_bytes(&shifted[1..]).unwrap(),
        ] {
            assert_eq!(view.width(), config.width);
            assert_eq!(view.mode(), config.mode);
            assert_eq!(view.smash(), config.smash);
            assert_eq!(view.first_coeff_always_one(), config.first_coeff_always_one);
            assert_eq!(view.seed(), f.seed());
            assert_eq!(view.num_keys(), 300);
            assert_eq!(view.num_blocks(), f.num_blocks());
            assert_eq!(view.upper_num_columns(), f.upper_num_columns());
            assert_eq!(view.upper_start_block(), f.upper_start_block());
            assert_eq!(view.target_fp_rate(), f.target_fp_rate());
            assert_eq!(view.failure_chance(), f.failure_chance());
            assert_eq!(view.as_bytes(), &bytes[..]);
            let probe = hashes(5000, 6);
            assert_eq!(view.contains_many_hashes(&probe), f.contains_many_hashes(&probe));
        }
        let owned = Ribbon::from_bytes(&bytes).unwrap();
        assert_eq!(owned.as_bytes(), f.as_bytes());
        assert_eq!(owned.clone().into_bytes(), bytes);
    }
}

/// Recomputes the header checksum after editing header fields.
fn reseal_header(bytes: &mut [u8]) {
    let sum = hash64(&bytes[..56], 0x5242_4E48_4452_0001);
    bytes[56..64].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn file_rejects_truncation_and_trailing_bytes() {
    let bytes = small_filter(&Config::default()).into_bytes();
    for len in 0..bytes.len() {
        match RibbonRef::from_bytes(&bytes[..len]) {
            Err(Error::Truncated { needed, len: l }) => {
                assert_eq!(l, len as u64);
                assert!(needed > l);
            }
            other => panic!("prefix of {len}: {other:?}"),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(RibbonRef::from_bytes(&longer), Err(Error::Corrupt(_))));
    let e = RibbonRef::from_bytes(&bytes[..100]).unwrap_err();
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn file_detects_every_bit_flip() {
    for config in [Config::default(), Config::homogeneous(32, 3.5)] {
        let bytes = small_filter(&config).into_bytes();
        for bit in 0..bytes.len() * 8 {
            let mut damaged = bytes.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            let byte = bit / 8;
            let result = RibbonRef::from_bytes(&damaged);
            let ok = matches!(
                (&result, byte),
                (Err(Error::BadMagic), 0..8)
                    | (Err(Error::UnsupportedVersion { .. }), 8..10)
                    | (Err(Error::HeaderChecksumMismatch), 10..64)
                    | (Err(Error::ChecksumMismatch), 64..)
            );
            assert!(ok, "bit {bit} (byte {byte}): {result:?}");
            // Without the body checksum a solution flip is accepted, a
            // header flip is not.
            assert_eq!(
                RibbonRef::from_bytes_unverified(&damaged).is_ok(),
                byte >= 64,
                "bit {bit}"
            );
        }
    }
}

#[test]
fn file_rejects_other_versions_and_inconsistent_headers() {
    let bytes = small_filter(&Config::default()).into_bytes();
    // Version 2 is Balanced Ribbon (tests/standalone_balanced.rs); 3 is unknown.
    let mut v3 = bytes.clone();
    v3[8] = 3;
    reseal_header(&mut v3);
    let e = RibbonRef::from_bytes(&v3).unwrap_err();
    assert_eq!(
        e,
        Error::UnsupportedVersion {
            found: 3,
            supported: 2
        }
    );
    assert!(e.to_string().contains("version 3"), "{e}");

    type Edit = fn(&mut Vec<u8>);
    let edits: [(&str, Edit); 9] = [
        ("header length", |b| b[10] = 72),
        ("width", |b| b[12] = 16),
        ("flags", |b| b[13] |= 8),
        ("failure chance", |b| b[14] = 3),
        ("reserved", |b| b[15] = 1),
        ("one block without smash", |b| {
            b[20..24].copy_from_slice(&1u32.to_le_bytes())
        }),
        ("columns", |b| b[40] += 1),
        ("upper start block", |b| b[44] ^= 1),
        ("target FP rate", |b| {
            b[48..56].copy_from_slice(&2.0f64.to_le_bytes())
        }),
    ];
    for (what, edit) in edits {
        let mut b = bytes.clone();
        edit(&mut b);
        reseal_header(&mut b);
        assert!(
            matches!(RibbonRef::from_bytes(&b), Err(Error::Corrupt(_))),
            "{what}: {:?}",
            RibbonRef::from_bytes(&b)
        );
    }
    // A solution length that is not whole segments (the file length matches).
    let mut b = bytes.clone();
    let len = u64::from_le_bytes(b[32..40].try_into().unwrap()) - 8;
    b[32..40].copy_from_slice(&len.to_le_bytes());
    reseal_header(&mut b);
    assert!(matches!(RibbonRef::from_bytes(&b), Err(Error::Corrupt(_))));
    // Another magic.
    let mut b = bytes.clone();
    b[1] = b'X';
    assert_eq!(RibbonRef::from_bytes(&b).unwrap_err(), Error::BadMagic);
}

/// Arbitrary bytes behind a valid magic and version never panic.
#[test]
fn file_parser_never_panics() {
    let mut rng = Rng(0xF022);
    let good = small_filter(&Config::default()).into_bytes();
    for i in 0..20_000 {
        let mut b = if i % 2 == 0 {
            good.clone()
        } else {
            let len = rng.below(300) as usize;
            rng.bytes(len)
        };
        if b.len() >= 10 {
            b[..8].copy_from_slice(&file::MAGIC);
            b[8..10].copy_from_slice(&1u16.to_le_bytes());
        }
        for _ in 0..rng.below(4) {
            if !b.is_empty() {
                let at = rng.below(b.len() as u64) as usize;
                b[at] = rng.next_u64() as u8;
            }
        }
        if b.len() >= 64 && rng.below(2) == 0 {
            reseal_header(&mut b);
        }
        if let Ok(view) = RibbonRef::from_bytes_unverified(&b) {
            let _ = view.contains_many_hashes(&hashes(64, i));
            let _ = view.expected_fp_rate();
        }
    }
}
