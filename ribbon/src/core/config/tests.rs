//! Tests for the Ribbon sizing configuration.
//!
//! Expected values marked "RocksDB" were produced by compiling RocksDB
//! 11.8.1's util/ribbon_config.cc unmodified (g++ -O2 -DNDEBUG, x86-64
//! baseline, no FMA) with a small driver that evaluates
//! `BandingConfigHelper1<failure_chance, bits, smash, homog>` on the inputs of
//! [`samples`] and folds the results with FNV-1a (see [`Fnv`]).

use crate::core::prelude::*;

use super::ConstructionFailureChance::{self, OneIn1000, OneIn2, OneIn20};
use super::{get_num_slots, get_num_to_add, BandingConfig};

/// RocksDB documents GetNumSlots as supported up to about 2/3 of `u32::MAX`.
const SLOTS_LIMIT: u32 = 2_863_311_530;

/// A spot the tables are checked at: RocksDB's filter limit
/// (`kMaxRibbonEntries` in filter_policy.cc), the most keys a RocksDB
/// Ribbon filter asks these tables for. The core knows no format, so this
/// is the number itself; `crate::rocksdb::standard128::MAX_RIBBON_ENTRIES`
/// owns the rule, and its tests check it equals this spot.
pub(crate) const MAX_RIBBON_ENTRIES: u32 = 950_000_000;

/// Every supported configuration.
fn all_supported() -> Vec<BandingConfig> {
    let mut v = Vec::new();
    for failure_chance in ConstructionFailureChance::ALL {
        for bits in [128, 64] {
            for smash in [false, true] {
                for homog in [false, true] {
                    v.push(BandingConfig::new(failure_chance, bits, smash, homog));
                }
            }
        }
    }
    v
}

/// The inputs the golden hashes cover (same order as the C++ driver).
fn samples() -> Vec<u32> {
    let mut v: Vec<u32> = (0..=70_000).collect();
    for k in 0..32 {
        for d in -3i64..=3 {
            if let Ok(x) = u32::try_from((1i64 << k) + d) {
                v.push(x);
            }
        }
    }
    v.extend([u32::MAX, u32::MAX - 1, SLOTS_LIMIT, MAX_RIBBON_ENTRIES]);
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200_000 {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        v.push((s >> 32) as u32);
    }
    v
}

/// FNV-1a over 32-bit values (one xor-multiply per value).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn add(&mut self, x: u32) {
        self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// (failure chance, bits, smash, homogeneous, hash of num_to_add over all samples,
/// hash of num_slots over the samples <= SLOTS_LIMIT). RocksDB.
#[rustfmt::skip]
const GOLDEN: [(ConstructionFailureChance, u32, bool, bool, u64, u64); 24] = [
    (OneIn2, 128, false, false, 0xe613_d301_70d8_ab10, 0xa751_b4b3_40df_ba96),
    (OneIn2, 128, true, false, 0x3ac1_b846_9a25_f622, 0x5c99_977c_a7f0_9260),
    (OneIn2, 128, false, true, 0xbfcf_b846_c4ab_47f0, 0x6209_7af0_5800_0888),
    (OneIn2, 128, true, true, 0x7b52_67ac_3690_78ba, 0x805a_92ca_2812_2f62),
    (OneIn2, 64, false, false, 0x9b62_1b23_b5c5_55a6, 0xe00a_306f_1f4b_18ec),
    (OneIn2, 64, true, false, 0x0e15_b74e_24ac_00a2, 0x13d8_48f7_13c6_fffa),
    (OneIn2, 64, false, true, 0xb72f_98c2_b0f6_424e, 0xfad8_5dfb_c093_50fc),
    (OneIn2, 64, true, true, 0x1dda_e7a4_4423_b262, 0x00f9_fb73_2ca9_cf0c),
    (OneIn20, 128, false, false, 0x82b4_4c33_bd88_a404, 0xd4c0_63d2_7c68_9351),
    (OneIn20, 128, true, false, 0x3ce2_aceb_8f63_f1ee, 0xd702_63f4_7ba7_eb87),
    (OneIn20, 128, false, true, 0x5041_f213_3b30_e754, 0xe803_27ae_78c1_0c6c),
    (OneIn20, 128, true, true, 0x9db7_fdcc_a880_0d06, 0x1c89_b7ca_6ea4_37ac),
    (OneIn20, 64, false, false, 0x4d19_8cff_41c1_c64e, 0x2be9_9361_a69d_acc3),
    (OneIn20, 64, true, false, 0x9789_6ae4_49d3_3626, 0x61a4_c0df_c118_291d),
    (OneIn20, 64, false, true, 0x72a3_61a7_b0ba_f866, 0xd042_c03d_fc66_6079),
    (OneIn20, 64, true, true, 0x41ac_95fc_11d6_a4c6, 0x28e0_141b_11ad_b55e),
    (OneIn1000, 128, false, false, 0x85fb_fc79_faf4_73aa, 0x4bed_32f6_b23d_06f6),
    (OneIn1000, 128, true, false, 0x21c7_6bdb_160f_dc7e, 0x184c_b64d_7483_445b),
    (OneIn1000, 128, false, true, 0xd18d_9380_482e_119a, 0xfcda_c99d_b704_2949),
    (OneIn1000, 128, true, true, 0x66fd_cc80_d467_8b86, 0x0aed_4b79_9790_fd67),
    (OneIn1000, 64, false, false, 0x509f_98d4_cd09_8549, 0x7611_3d14_6f3b_1b00),
    (OneIn1000, 64, true, false, 0xbcee_e7bb_b5b1_4745, 0xd59d_84b8_3f5b_a87e),
    (OneIn1000, 64, false, true, 0xc8e1_8d9c_81ca_a3b1, 0xc0c7_0d25_e28c_868b),
    (OneIn1000, 64, true, true, 0xcc80_1368_1d71_ea15, 0xb82f_1f45_545f_662a),
];

#[test]
fn matches_rocksdb_on_all_configurations() {
    let samples = samples();
    assert_eq!(samples.len(), 270_226);
    for &(failure_chance, bits, smash, homog, want_add, want_slots) in &GOLDEN {
        let config = BandingConfig::new(failure_chance, bits, smash, homog);
        let mut add = Fnv::new();
        let mut slots = Fnv::new();
        let mut slots_count = 0;
        for &n in &samples {
            add.add(config.num_to_add(n));
        }
        for &n in samples.iter().filter(|&&n| n <= SLOTS_LIMIT) {
            slots.add(config.num_slots(n));
            slots_count += 1;
        }
        assert_eq!(slots_count, 203_759);
        assert_eq!(add.0, want_add, "num_to_add {config:?}");
        assert_eq!(slots.0, want_slots, "num_slots {config:?}");
    }
}

/// Inputs of the spot-value tables below.
const SPOTS: [u32; 39] = [
    0,
    1,
    2,
    3,
    5,
    31,
    32,
    33,
    63,
    64,
    65,
    100,
    127,
    128,
    129,
    200,
    255,
    256,
    257,
    300,
    500,
    1000,
    1023,
    1024,
    1025,
    3000,
    10000,
    65535,
    65536,
    65537,
    100_000,
    131_071,
    131_072,
    131_073,
    1_000_000,
    MAX_RIBBON_ENTRIES,
    2_000_000_000,
    SLOTS_LIMIT,
    u32::MAX,
];

fn check_spots(config: BandingConfig, to_add: &[u32; 39], slots: &[u32; 38]) {
    for (&n, &want) in SPOTS.iter().zip(to_add) {
        assert_eq!(config.num_to_add(n), want, "num_to_add({n}) {config:?}");
    }
    for (&n, &want) in SPOTS.iter().zip(slots) {
        assert_eq!(config.num_slots(n), want, "num_slots({n}) {config:?}");
    }
}

#[test]
#[rustfmt::skip]
fn spot_values_match_rocksdb() {
    check_spots(
        BandingConfig::STANDARD128_RIBBON,
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 139, 246, 248, 249, 291, 487, 977, 1000,
          1001, 1002, 2934, 9758, 63446, 63447, 63448, 96608, 126505, 126505, 126506, 954897,
          875719793, 1836710738, 2624795587, 3929186909],
        &[0, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 231, 263, 264,
          265, 309, 513, 1023, 1047, 1048, 1049, 3068, 10249, 67706, 67707, 67708, 103525, 135837,
          135838, 135839, 1047490, 1031068581, 2178804063, 3125787535],
    );
    check_spots(
        BandingConfig::new(OneIn2, 64, true, false),
        &[0, 0, 0, 0, 0, 0, 0, 1, 60, 62, 63, 98, 125, 126, 127, 198, 253, 254, 255, 298, 497, 996,
          1018, 1019, 1020, 2952, 9697, 62133, 62134, 62135, 94276, 123254, 123254, 123255, 919326,
          812066323, 1696684708, 2420246300, 3615531660],
        &[0, 64, 64, 64, 64, 64, 64, 64, 65, 66, 67, 102, 129, 130, 131, 202, 257, 258, 259, 302,
          503, 1004, 1028, 1029, 1030, 3049, 10317, 69183, 69184, 69185, 106138, 139515, 139516,
          139517, 1088933, 1113312140, 2362243781, 3395057025],
    );
    check_spots(
        BandingConfig::new(OneIn1000, 64, true, true),
        &[0, 0, 0, 0, 0, 0, 0, 1, 43, 45, 46, 81, 108, 109, 110, 181, 236, 237, 238, 278, 464, 920,
          941, 942, 943, 2733, 8975, 57829, 57830, 57831, 87854, 114923, 114923, 114924, 858535,
          761911055, 1592637049, 2272332985, 3395416626],
        &[0, 64, 64, 64, 64, 64, 64, 64, 82, 83, 84, 119, 146, 147, 148, 219, 276, 277, 278, 324,
          539, 1088, 1114, 1115, 1116, 3294, 11161, 74380, 74381, 74382, 113942, 149757, 149758,
          149759, 1167016, 1187415958, 2518125765, 3617415935],
    );
}

/// Values worked out by hand from the tables.
#[test]
fn hand_computed_values() {
    let f = BandingConfig::STANDARD128_RIBBON;
    // Exact powers of two inside the table: the entry, truncated.
    assert_eq!(f.num_to_add(256), 248); // 248.851
    assert_eq!(f.num_to_add(1 << 10), 1001); // 1001.26
    assert_eq!(f.num_to_add(1 << 16), 63447); // 63447.3
                                              // Half way between 2^8 and 2^9: (248.851 + 499.532) / 2 = 374.19.
    assert_eq!(f.num_to_add(384), 374);
    // A quarter of the way from 2^12 to 2^13: 0.75 * 4005.59 + 0.25 * 8000.39
    // = 5004.29.
    assert_eq!(f.num_to_add(5120), 5004);
    // Below the smallest supported size, interpolation toward the 0 entry:
    // 129 slots = 2^7 * (1 + 1/128); 248.851 / 128 = 1.94.
    assert_eq!(f.num_to_add(129), 1);
    // 2^20 slots: factor = 2^17 / 126506 + 3 * 0.0038 = 1.0474932,
    // 1048576 / 1.0474932 = 1001033.4.
    assert_eq!(f.num_to_add(1 << 20), 1_001_033);

    // 1001 keys: round(log2(1001)) = 10, but 1001 < 1001.26, so interpolate
    // between 2^9 (499.532 keys) and 2^10 (1001.26 keys):
    // 512 * (1 + 501.468 / 501.728) = 1023.73, rounded up.
    assert_eq!(f.num_slots(1001), 1024);
    // 4000 keys: between 2^11 (2003.97) and 2^12 (4005.59):
    // 2048 * (1 + 1996.03 / 2001.62) = 4090.28, rounded up.
    assert_eq!(f.num_slots(4000), 4091);
    // 300 keys: round(log2(300)) = 8 and 300 >= 248.851, so between 2^8 and
    // 2^9 (499.532): 256 * (1 + 51.149 / 250.681) = 308.2, rounded up.
    assert_eq!(f.num_slots(300), 309);
    // Too few keys for the table: the minimum, two 128-bit rows.
    assert_eq!(f.num_slots(1), 256);
    assert_eq!(f.num_slots(100), 256);
    // With smash the minimum is one row.
    assert_eq!(BandingConfig::new(OneIn20, 128, true, false).num_slots(3), 128);
    assert_eq!(BandingConfig::new(OneIn20, 64, true, false).num_slots(3), 64);
    assert_eq!(BandingConfig::new(OneIn20, 64, false, false).num_slots(3), 128);
}

#[test]
fn zero_in_zero_out() {
    for config in all_supported() {
        assert_eq!(config.num_to_add(0), 0);
        assert_eq!(config.num_slots(0), 0);
    }
}

#[test]
fn unsupported_widths() {
    for bits in [0, 1, 8, 16, 32, 63, 65, 127, 129, 256, u32::MAX] {
        for failure_chance in ConstructionFailureChance::ALL {
            for smash in [false, true] {
                for homog in [false, true] {
                    let config = BandingConfig::new(failure_chance, bits, smash, homog);
                    assert!(!config.is_supported());
                    for n in [0, 1, 1000, u32::MAX] {
                        assert_eq!(config.try_num_to_add(n), None);
                        assert_eq!(config.try_num_slots(n), None);
                        assert_eq!(config.num_to_add(n), 0);
                        assert_eq!(config.num_slots(n), 0);
                    }
                    assert_eq!(get_num_to_add(failure_chance, bits, smash, homog, 1000), 0);
                    assert_eq!(get_num_slots(failure_chance, bits, smash, homog, 1000), 0);
                }
            }
        }
    }
    for config in all_supported() {
        assert!(config.is_supported());
        assert_eq!(config.try_num_slots(1000), Some(config.num_slots(1000)));
        assert_eq!(config.try_num_to_add(1000), Some(config.num_to_add(1000)));
    }
}

#[test]
fn free_functions_match_config() {
    for config in all_supported() {
        let (failure_chance, bits, smash, homog) = (
            config.failure_chance,
            config.coeff_bits,
            config.use_smash,
            config.homogeneous,
        );
        for n in (0..5000).chain([65_536, 1 << 20, MAX_RIBBON_ENTRIES, u32::MAX]) {
            assert_eq!(
                get_num_to_add(failure_chance, bits, smash, homog, n),
                config.num_to_add(n)
            );
            assert_eq!(
                get_num_slots(failure_chance, bits, smash, homog, n),
                config.num_slots(n)
            );
        }
    }
}

#[test]
fn defaults() {
    assert_eq!(ConstructionFailureChance::default(), OneIn20);
    assert_eq!(ConstructionFailureChance::default_for(false), OneIn20);
    assert_eq!(ConstructionFailureChance::default_for(true), OneIn1000);
    assert_eq!(
        BandingConfig::STANDARD128_RIBBON,
        BandingConfig {
            failure_chance: OneIn20,
            coeff_bits: 128,
            use_smash: false,
            homogeneous: false,
        }
    );
}

/// Homogeneous Ribbon is standard Ribbon with 8 keys of headroom.
#[test]
fn homogeneous_is_shifted_by_eight() {
    let inputs: Vec<u32> = (0..20_000).chain(samples().into_iter().step_by(7)).collect();
    for config in all_supported().into_iter().filter(|c| !c.homogeneous) {
        let homog = BandingConfig {
            homogeneous: true,
            ..config
        };
        for &n in &inputs {
            let standard = config.num_to_add(n);
            let want = if standard >= 8 { standard - 8 } else { standard };
            assert_eq!(homog.num_to_add(n), want);
            if n > 0 {
                assert_eq!(homog.num_slots(n), config.num_slots(n.wrapping_add(8)));
            }
        }
    }
}

/// Huge and wrapping inputs neither panic nor leave the documented range.
#[test]
fn extreme_inputs() {
    for config in all_supported() {
        let min_slots = if config.use_smash {
            config.coeff_bits
        } else {
            2 * config.coeff_bits
        };
        for n in (u32::MAX - 20)..=u32::MAX {
            let add = config.num_to_add(n);
            assert!(add < n && add > n / 2, "{config:?} {n} {add}");
            let slots = config.num_slots(n);
            if config.homogeneous && n > u32::MAX - 8 {
                // n + 8 wraps to 0..=6 in u32, as in RocksDB: minimum slots.
                assert_eq!(slots, min_slots, "{config:?} {n}");
            } else {
                // Beyond RocksDB's supported range the true count exceeds
                // u32 and wraps as in x86-64 RocksDB (checked against native
                // RocksDB in the workspace's tests/compat_config.rs).
                assert!(slots < n, "{config:?} {n} {slots}");
            }
        }
        // The supported range never needs to wrap.
        assert!(config.num_slots(SLOTS_LIMIT) < u32::MAX);
    }
}

/// Sizes in the region RocksDB actually uses: densely up to 140_000 (past
/// every table's last entry), sparsely up to 2^20, then every power of two
/// (and neighbours) up to the supported limit.
fn property_inputs() -> Vec<u32> {
    let mut v: Vec<u32> = (1..=140_000).collect();
    v.extend((140_000..(1 << 20)).step_by(97));
    for k in 17..32 {
        for d in [-2i64, -1, 0, 1, 2] {
            if let Ok(x) = u32::try_from((1i64 << k) + d) {
                v.push(x);
            }
        }
    }
    v.retain(|&n| n <= SLOTS_LIMIT);
    v.sort_unstable();
    v.dedup();
    v
}

/// The minimum slot count RocksDB returns for too few keys.
fn min_slots(config: BandingConfig) -> u32 {
    if config.use_smash {
        config.coeff_bits
    } else {
        2 * config.coeff_bits
    }
}

/// From the minimum slot count on, both directions are non-decreasing, which
/// RocksDB's ribbon_test relies on when it steps `num_to_add` up until
/// `GetNumSlots(num_to_add + 1)` grows.
#[test]
fn monotone() {
    let inputs = property_inputs();
    for config in all_supported() {
        let min = min_slots(config);
        let mut prev_add = 0;
        let mut prev_slots = 0;
        for &n in inputs.iter().filter(|&&n| n >= min) {
            let add = config.num_to_add(n);
            assert!(
                add >= prev_add,
                "num_to_add {config:?} at {n}: {add} < {prev_add}"
            );
            prev_add = add;
            let slots = config.num_slots(n);
            assert!(
                slots >= prev_slots,
                "num_slots {config:?} at {n}: {slots} < {prev_slots}"
            );
            prev_slots = slots;
        }
    }
}

/// Below the minimum, RocksDB's formulas have one dip each way (kept as is):
/// `num_slots` returns the minimum up to `2^(k - 1/2)` keys, `2^k` being the
/// smallest tabulated size, then interpolates from `2^(k-1)` slots toward
/// `2^k`, i.e. below the minimum; homogeneous `num_to_add` leaves results
/// under 8 unreduced, so it drops when they reach 8.
#[test]
fn small_size_quirks() {
    for config in all_supported() {
        let min = min_slots(config);
        let headroom = if config.homogeneous { 8 } else { 0 };
        // Smallest tabulated power of two: the minimum slot count.
        let first_known = config.num_to_add(min) + headroom;
        // First key count (before headroom) whose log2 rounds to log2(min).
        let dip_start = (f64::from(min) / std::f64::consts::SQRT_2).ceil() as u32;
        let mut decreases = Vec::new();
        let mut prev = 0;
        for n in 1..=2 * min {
            let slots = config.num_slots(n);
            assert!(slots >= n, "{config:?}: {n} keys -> {slots} slots");
            let raw = n + headroom;
            if raw < dip_start {
                assert_eq!(slots, min, "{config:?}: {n}");
            } else if raw < first_known {
                assert!(slots <= min && slots > min / 2, "{config:?}: {n} -> {slots}");
            } else {
                assert!(slots >= min, "{config:?}: {n} -> {slots}");
            }
            if slots < prev {
                decreases.push(n);
            }
            prev = slots;
        }
        assert_eq!(decreases, [dip_start - headroom], "{config:?}");

        let mut add_decreases = Vec::new();
        let mut prev = 0;
        for s in 1..=2 * min {
            let add = config.num_to_add(s);
            if add < prev {
                add_decreases.push(s);
            }
            prev = add;
        }
        assert_eq!(add_decreases.len(), usize::from(config.homogeneous), "{config:?}");
    }
}

/// Slots for `n` keys hold at least `n` keys, and never fewer slots than
/// keys. The one exception, by one key, is RocksDB's own rounding where the
/// table hands over to the large-size formula: exactly `table[17]` keys get
/// `2^17` slots, whose formula capacity comes out a hair under `table[17]`.
#[test]
fn round_trip_keys_to_slots_to_keys() {
    let inputs = property_inputs();
    for config in all_supported() {
        let mut exceptions = Vec::new();
        for &n in &inputs {
            let slots = config.num_slots(n);
            assert!(slots >= n, "{config:?}: {n} keys -> {slots} slots");
            if n >= min_slots(config) {
                let back = config.num_to_add(slots);
                if back < n {
                    exceptions.push((n, slots, back));
                }
            }
        }
        assert_eq!(exceptions.len(), 1, "{config:?}: {exceptions:?}");
        let (n, slots, back) = exceptions[0];
        assert_eq!((slots, back), (1 << 17, n - 1), "{config:?}");
    }
}

/// A less failure-tolerant setting never packs more keys into the same slots.
#[test]
fn failure_chance_orders_capacity() {
    for bits in [64, 128] {
        for smash in [false, true] {
            for homog in [false, true] {
                let by_failure_chance = ConstructionFailureChance::ALL
                    .map(|failure_chance| BandingConfig::new(failure_chance, bits, smash, homog));
                for n in (256..=100_000)
                    .step_by(13)
                    .chain([1 << 20, 1 << 25, 1 << 30, u32::MAX])
                {
                    let adds = by_failure_chance.map(|c| c.num_to_add(n));
                    assert!(
                        adds[0] >= adds[1] && adds[1] >= adds[2],
                        "{bits} {smash} {n} {adds:?}"
                    );
                }
            }
        }
    }
}

/// The configuration of RocksDB's Standard128 Ribbon filter, over the range
/// its builder uses (up to `kMaxRibbonEntries`).
#[test]
fn standard128_ribbon_filter_configuration() {
    let f = BandingConfig::STANDARD128_RIBBON;
    assert_eq!(f, BandingConfig::new(OneIn20, 128, false, false));
    assert_eq!(f.num_slots(0), 0);

    let mut inputs: Vec<u32> = (0..=100_000).collect();
    inputs.extend((100_000..=MAX_RIBBON_ENTRIES).step_by(99_991));
    for k in 0..32 {
        for d in [-1i64, 0, 1] {
            if let Ok(x) = u32::try_from((1i64 << k) + d) {
                if x <= MAX_RIBBON_ENTRIES {
                    inputs.push(x);
                }
            }
        }
    }
    inputs.push(MAX_RIBBON_ENTRIES);
    inputs.sort_unstable();
    inputs.dedup();

    let mut prev_slots = 0;
    for &n in &inputs {
        let slots = f.num_slots(n);
        if n == 0 {
            assert_eq!(slots, 0);
            continue;
        }
        assert!(slots >= n, "{n}: {slots}");
        if n < 249 {
            // Fewer keys than table[8] = 248.851: the minimum, two 128-bit
            // rows, except for RocksDB's dip (see small_size_quirks), which
            // the filter's RoundUpNumSlots lifts back to 256.
            let want = if n >= 182 { 222..=256 } else { 256..=256 };
            assert!(want.contains(&slots), "{n}: {slots}");
            continue;
        }
        assert!(slots >= 256, "{n}: {slots}");
        assert!(slots >= prev_slots, "{n}: {slots}");
        prev_slots = slots;
        let back = f.num_to_add(slots);
        // n = 126506 = table[17]: see round_trip_keys_to_slots_to_keys.
        assert!(
            back >= n || (n == 126_506 && back == n - 1),
            "{n}: {slots} {back}"
        );
        if n >= 10_000 {
            // Overhead of a few percent at these sizes, growing slowly.
            let overhead = f64::from(slots) / f64::from(n);
            assert!((1.0..1.1).contains(&overhead), "{n}: {slots} ({overhead})");
        }
    }
    // ApproximateNumEntries compares against this bound. RocksDB.
    assert_eq!(f.num_slots(MAX_RIBBON_ENTRIES), 1_031_068_581);
    // The inverse over-estimates a little at this size. RocksDB.
    assert_eq!(f.num_to_add(1_031_068_581), 950_056_482);
}

/// Every input of the Standard128 Ribbon filter configuration: num_slots for
/// all key counts the filter accepts, num_to_add for every u32 slot count.
/// RocksDB (built without FMA). Slow: run with
/// `cargo test --release -p rocks-ribbon --lib config -- --ignored`.
#[test]
#[ignore = "exhaustive; about a minute in release mode"]
fn standard128_ribbon_exhaustive_matches_rocksdb() {
    let f = BandingConfig::STANDARD128_RIBBON;
    let mut slots = Fnv::new();
    for n in 0..=MAX_RIBBON_ENTRIES {
        slots.add(f.num_slots(n));
    }
    assert_eq!(slots.0, 0xb802_dbc4_2836_30ca);
    let mut add = Fnv::new();
    for n in 0..=u32::MAX {
        add.add(f.num_to_add(n));
    }
    assert_eq!(add.0, 0x698f_1f2a_3345_77bd);
}
