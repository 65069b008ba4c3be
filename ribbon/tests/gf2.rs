//! Property tests: Ribbon banding and back-substitution against a naive dense
//! GF(2) solver, over every combination of width (32, 64, 128),
//! first-coefficient-always-one, smash and homogeneous.

use ribbon::core::alg::{simple_back_subst, Banding, CoeffRow, RibbonSettings};
use ribbon::core::hasher::Hasher;
use ribbon::core::solution::InterleavedLayout;
use ribbon::test_support::keys::Rng;

/// Dense Gaussian elimination: rows are (coefficient bits over all slots,
/// result). Returns the solution whose free variables take `free(i)`, or
/// `None` when inconsistent. Pivots are each row's lowest set column, as in
/// banding, so the result is the same unique solution.
fn dense_solve(num_slots: usize, rows: &[(Vec<u64>, u32)], free: impl Fn(usize) -> u32) -> Option<Vec<u32>> {
    let words = num_slots.div_ceil(64);
    let mut pivots: Vec<Option<(Vec<u64>, u32)>> = vec![None; num_slots];
    for (coeffs, result) in rows {
        let (mut c, mut r) = (coeffs.clone(), *result);
        loop {
            let Some(col) = (0..num_slots).find(|&i| c[i / 64] >> (i % 64) & 1 == 1) else {
                if r != 0 {
                    return None;
                }
                break;
            };
            match &pivots[col] {
                Some((pc, pr)) => {
                    for w in 0..words {
                        c[w] ^= pc[w];
                    }
                    r ^= pr;
                }
                None => {
                    pivots[col] = Some((c, r));
                    break;
                }
            }
        }
    }
    let mut x = vec![0u32; num_slots];
    for i in (0..num_slots).rev() {
        x[i] = match &pivots[i] {
            None => free(i),
            Some((c, r)) => {
                let mut v = *r;
                for j in i + 1..num_slots {
                    if c[j / 64] >> (j % 64) & 1 == 1 {
                        v ^= x[j];
                    }
                }
                v
            }
        };
    }
    Some(x)
}

fn run<S: RibbonSettings>(name: &str) {
    let w = S::CoeffRow::BITS;
    let mut rng = Rng(u64::from(w) * 1000 + name.len() as u64);
    let mut solved = 0;
    let mut failed = 0;
    for trial in 0..120 {
        let num_slots = w * (2 + rng.below(3) as u32);
        // From sparse to over-full, so both outcomes occur.
        let n = (u64::from(num_slots) * (50 + rng.below(60)) / 100) as usize;
        let hasher = Hasher::<S>::with_ordinal_seed(trial);
        let keys: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let mut banding = Banding::<S>::new();
        banding.reset(num_slots);
        let eqs: Vec<_> = keys
            .iter()
            .map(|&k| hasher.equation(k, banding.num_starts()))
            .collect();
        let ok = banding.add_all(eqs.iter().copied());
        let result_bits = 1 + rng.below(32) as u32;
        let mask = if result_bits == 32 {
            u32::MAX
        } else {
            (1u32 << result_bits) - 1
        };
        let rows_with = |mask: u32| -> Vec<(Vec<u64>, u32)> {
            eqs.iter()
                .map(|e| {
                    let mut c = vec![0u64; (num_slots as usize).div_ceil(64)];
                    for j in 0..w {
                        if (e.coeff_row >> j) & S::CoeffRow::ONE == S::CoeffRow::ONE {
                            let s = (e.start + j) as usize;
                            c[s / 64] |= 1 << (s % 64);
                        }
                    }
                    (c, e.result_row & mask)
                })
                .collect()
        };
        let rows = rows_with(mask);
        let free = |i: usize| {
            if S::HOMOGENEOUS {
                ((i as u64).wrapping_mul(0x9E37_79B1_85EB_CA87) as u32) & mask
            } else {
                0
            }
        };
        // The dense solver sees only the low result bits; banding all 32.
        // Solvability of the 32-bit system implies it for the low bits.
        let dense = dense_solve(num_slots as usize, &rows, free);
        // Banding fails exactly when the full system (all 32 result bits,
        // as banding sees them) has no solution.
        let full = dense_solve(num_slots as usize, &rows_with(u32::MAX), |_| 0);
        if !ok {
            failed += 1;
            assert!(!S::HOMOGENEOUS, "{name}: homogeneous banding never fails");
            assert!(
                full.is_none(),
                "{name}: trial {trial}: banding failed but the dense solver solved the system"
            );
            continue;
        }
        assert!(
            full.is_some(),
            "{name}: trial {trial}: banded, but the system has no solution"
        );
        solved += 1;
        let dense =
            dense.unwrap_or_else(|| panic!("{name}: banding succeeded, dense solver found no solution"));
        let simple: Vec<u32> = simple_back_subst(&banding, 32).iter().map(|v| v & mask).collect();
        assert_eq!(
            simple, dense,
            "{name}: trial {trial} solution differs from the dense solver"
        );

        // Order independence: the reversed insertion order gives the same solution.
        let mut reversed = Banding::<S>::new();
        reversed.reset(num_slots);
        assert!(reversed.add_all(eqs.iter().rev().copied()));
        assert_eq!(
            simple_back_subst(&reversed, 32),
            simple_back_subst(&banding, 32),
            "{name}: order"
        );

        // ICML with `result_bits` columns: every key matches (no false negatives).
        if !S::HOMOGENEOUS {
            let layout = InterleavedLayout::<S>::for_num_slots(
                num_slots,
                (num_slots / w * result_bits) as usize * S::CoeffRow::BYTES,
            );
            assert_eq!(layout.upper_num_columns(), result_bits);
            let mut data = vec![0u8; layout.data_len()];
            layout.back_subst(&banding, &mut data);
            for &k in &keys {
                let h = hasher.hash(k);
                let site = layout.prepare_query(&hasher, h);
                assert!(
                    layout.filter_query(&hasher, h, site, &data),
                    "{name}: false negative"
                );
                assert_eq!(
                    layout.phsf_query(&hasher, h, &data),
                    hasher.result_row(h) & mask,
                    "{name}: PHSF value"
                );
            }
        }
    }
    assert!(solved > 10, "{name}: too few solvable trials ({solved})");
    if !S::HOMOGENEOUS {
        assert!(
            failed > 0,
            "{name}: no trial was over-full; the test did not exercise failure"
        );
    }
}

macro_rules! settings {
    ($($name:ident: $cr:ty, $fcao:expr, $smash:expr, $homog:expr;)*) => {
        $(
            mod $name {
                use super::*;
                struct Settings;
                impl RibbonSettings for Settings {
                    type CoeffRow = $cr;
                    const FIRST_COEFF_ALWAYS_ONE: bool = $fcao;
                    const USE_SMASH: bool = $smash;
                    const HOMOGENEOUS: bool = $homog;
                }
                #[test]
                fn matches_dense_solver() {
                    run::<Settings>(stringify!($name));
                }
            }
        )*
    };
}

settings! {
    w32_plain: u32, false, false, false;
    w32_fcao: u32, true, false, false;
    w32_smash: u32, false, true, false;
    w32_fcao_smash: u32, true, true, false;
    w32_homog: u32, false, false, true;
    w32_fcao_homog: u32, true, false, true;
    w32_smash_homog: u32, false, true, true;
    w32_all: u32, true, true, true;
    w64_plain: u64, false, false, false;
    w64_fcao: u64, true, false, false;
    w64_smash: u64, false, true, false;
    w64_fcao_smash: u64, true, true, false;
    w64_homog: u64, false, false, true;
    w64_fcao_homog: u64, true, false, true;
    w64_smash_homog: u64, false, true, true;
    w64_all: u64, true, true, true;
    w128_plain: u128, false, false, false;
    w128_fcao: u128, true, false, false;
    w128_smash: u128, false, true, false;
    w128_fcao_smash: u128, true, true, false;
    w128_homog: u128, false, false, true;
    w128_fcao_homog: u128, true, false, true;
    w128_smash_homog: u128, false, true, true;
    w128_all: u128, true, true, true;
}
