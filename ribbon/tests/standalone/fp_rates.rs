//! FP rates and space overheads against the paper (Dillinger and
//! Walzer, 2021).

use super::*;

/// Standard Ribbon's FP rate is `2^-r` for whole `r`, and the ⌊r⌋/⌈r⌉ mix
/// for fractional `r` or a target FP rate, for every width.
#[test]
fn standard_fp_rates_match_the_paper() {
    let keys = hashes(20_000, 3);
    let queries = 1_000_000 / DEBUG_DIVISOR as u64;
    let precisions = [
        Precision::ResultBits(1.0),
        Precision::ResultBits(3.0),
        Precision::ResultBits(7.0),
        Precision::ResultBits(8.0),
        Precision::ResultBits(13.0),
        // The paper's example: r = 5.5 gives 3/128.
        Precision::ResultBits(5.5),
        Precision::ResultBits(7.7),
        Precision::FpRate(0.01),
    ];
    for width in [32, 64, 128] {
        for (i, &precision) in precisions.iter().enumerate() {
            let config = Config {
                width,
                precision,
                smash: i % 2 == 1,
                ..Config::default()
            };
            let what = describe(&config);
            let f = Ribbon::from_hashes(&keys, &config).unwrap();
            let expected = f.expected_fp_rate();
            let target = precision.target_fp_rate();
            if let Precision::ResultBits(r) = precision {
                if r.fract() == 0.0 {
                    assert_eq!(expected, (-r).exp2(), "{what}");
                    assert_eq!(f.result_bits(), r, "{what}");
                }
            }
            // The mix's blocks round to whole blocks: within 1 %.
            assert!(
                (expected / target - 1.0).abs() < 0.01,
                "{what}: {expected} vs {target}"
            );
            if precision == Precision::ResultBits(5.5) {
                assert!((target - 3.0 / 128.0).abs() < 1e-15);
            }
            let measured = f.measure_fp_rate(queries, 0xF0 + i as u64);
            assert_binomial(
                (measured * queries as f64).round() as u64,
                queries,
                expected,
                FREQUENT_SIGMAS,
                &what,
            );
        }
    }
}

/// Homogeneous Ribbon at n = 10^6 with equation 7's overhead: the total
/// space overhead `bits_per_key / log2(1/f) - 1`, averaged over a few key
/// sets, lies between the allocated overhead (the FP rate cannot beat
/// `2^-r`) and the paper's Table 2 value (the data of its Figure 5, measured
/// at n = 10^6).
///
/// For widths 64 and 128 this implementation measures FP rates closer to
/// `2^-r` than the paper reports (e.g. w = 64, r = 7: about 0.785 % against
/// the paper's 0.81 %, so 9.1 % overhead against 10.1 %); see
/// `ribbon/docs/space-overhead.md`. For width 32 the FP rate varies by a few
/// percent between key sets even at n = 10^6, hence more key sets.
fn homogeneous_against_table2(r: u32, paper: &[(u32, f64)]) {
    let n = 1_000_000;
    for &(width, percent) in paper {
        let r = f64::from(r);
        let config = Config::homogeneous(width, r);
        let what = describe(&config);
        let key_sets = if width == 32 { 4 } else { 2 };
        // About 10 000 false positives per filter.
        let queries = (10_000.0 / (-r).exp2()) as u64 / DEBUG_DIVISOR as u64;
        let mut overheads = Vec::new();
        let mut allocated = 0.0;
        for set in 0..key_sets {
            let keys = hashes(n, u64::from(width) << 32 | (r as u64) << 8 | set);
            let f = Ribbon::from_hashes(&keys, &config).unwrap();
            let eps = homogeneous_overhead(width, r);
            assert!(
                (f.bits_per_key() / (r * (1.0 + eps)) - 1.0).abs() < 1e-3,
                "{what}"
            );
            allocated = f.bits_per_key() / r - 1.0;
            overheads.push(f.measured_space_overhead(queries, set + 0xAB));
        }
        let k = overheads.len() as f64;
        let mean = overheads.iter().sum::<f64>() / k;
        // The spread between filters includes the binomial sampling error.
        let spread = (overheads.iter().map(|o| (o - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
        // At least the binomial sampling error of one filter's measurement:
        // d(overhead)/d(f) · sd(f), with f ≈ 2^-r.
        let f = (-r).exp2();
        let sampling =
            (1.0 + allocated) * r / (r * r * core::f64::consts::LN_2) * (1.0 / (f * queries as f64)).sqrt();
        let slack = 0.0005 + RARE_SIGMAS * spread.max(sampling) / k.sqrt();
        assert!(
            mean >= allocated - slack && mean <= percent / 100.0 + slack,
            "{what}: overhead {:.3}% (filters: {:?}), allocated {:.3}%, paper {percent}% (slack {:.3}%)",
            mean * 100.0,
            overheads
                .iter()
                .map(|o| (o * 1e5).round() / 1e3)
                .collect::<Vec<_>>(),
            allocated * 100.0,
            slack * 100.0
        );
    }
}

#[test]
fn homogeneous_overheads_r3() {
    homogeneous_against_table2(3, &[(32, 16.1), (64, 8.0), (128, 4.2)]);
}

#[test]
fn homogeneous_overheads_r7() {
    homogeneous_against_table2(7, &[(32, 20.6), (64, 10.1), (128, 5.1)]);
}

#[test]
fn homogeneous_overheads_r11() {
    homogeneous_against_table2(11, &[(32, 28.0), (64, 12.7), (128, 7.3)]);
}
