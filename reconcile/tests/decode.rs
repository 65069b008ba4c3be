//! Property tests of decoding: random sets with known differences (none,
//! one key, small, large, every key; keys from empty to many chunks long)
//! decode exactly or report failure, never a wrong key. Cases come from a
//! seeded generator, so a failure names a reproducible case.

use ribbon_reconcile::{cells_for_difference, DecodeError, Difference, Ibf, Sketch, SketchParams};
use std::collections::BTreeSet;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        ribbon::core::hash::split_mix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn key(&mut self, max_len: u64) -> Vec<u8> {
        let len = self.below(max_len + 1) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Two sets: `common` keys in both, `only_a` only in A, `only_b` only in B.
fn sets(
    rng: &mut Rng,
    common: usize,
    only_a: usize,
    only_b: usize,
    max_len: u64,
) -> (BTreeSet<Vec<u8>>, BTreeSet<Vec<u8>>, Difference) {
    let mut all = BTreeSet::new();
    while all.len() < common + only_a + only_b {
        all.insert(rng.key(max_len));
    }
    let mut keys: Vec<Vec<u8>> = all.into_iter().collect();
    // Shuffle so the split does not follow key order.
    for i in (1..keys.len()).rev() {
        keys.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut d = Difference {
        only_in_a: keys[common..common + only_a].to_vec(),
        only_in_b: keys[common + only_a..].to_vec(),
    };
    d.only_in_a.sort();
    d.only_in_b.sort();
    let a = keys[..common + only_a].iter().cloned().collect();
    let b = keys[..common]
        .iter()
        .chain(&keys[common + only_a..])
        .cloned()
        .collect();
    (a, b, d)
}

fn diff_of(
    a: &BTreeSet<Vec<u8>>,
    b: &BTreeSet<Vec<u8>>,
    cells: usize,
    chunk: usize,
    seed: u64,
) -> Result<Difference, DecodeError> {
    let (mut x, mut y) = (Ibf::new(cells, chunk, seed), Ibf::new(cells, chunk, seed));
    a.iter().for_each(|k| x.insert(k));
    b.iter().for_each(|k| y.insert(k));
    x.subtract(&y).unwrap();
    x.decode()
}

/// Decoding gives exactly the difference, or an error: never another set.
fn exact_or_error(result: &Result<Difference, DecodeError>, truth: &Difference, case: &str) -> bool {
    match result {
        Ok(d) => {
            assert_eq!(d, truth, "{case}: decoded a wrong difference");
            true
        }
        Err(_) => false,
    }
}

#[test]
fn known_differences_decode_exactly() {
    let mut rng = Rng(0x5eed);
    for (common, a, b) in [
        (0, 0, 0),
        (500, 0, 0),
        (500, 1, 0),
        (500, 0, 1),
        (300, 7, 5),
        (2000, 150, 150),
        (0, 400, 0),
        (0, 0, 400),
        (0, 250, 250),
    ] {
        for chunk in [1, 8, 32] {
            let (sa, sb, truth) = sets(&mut rng, common, a, b, 80);
            let cells = cells_for_difference((a + b) as u64 * 80usize.div_ceil(chunk) as u64);
            let case = format!("common {common}, only A {a}, only B {b}, chunk {chunk}");
            assert!(
                exact_or_error(&diff_of(&sa, &sb, cells, chunk, rng.next()), &truth, &case),
                "{case}: did not decode"
            );
        }
    }
}

#[test]
fn overfull_tables_fail_honestly_or_decode_exactly() {
    // Differences from well below to far above what the table holds: every
    // answer is exact or an error, and the largest always fail.
    let mut rng = Rng(42);
    let mut failures = 0;
    for trial in 0..300 {
        let d = 1 + rng.below(200) as usize;
        let cells = 30 + rng.below(150) as usize;
        let (sa, sb, truth) = sets(&mut rng, 100, d / 2, d - d / 2, 40);
        let r = diff_of(&sa, &sb, cells, 16, trial);
        if !exact_or_error(&r, &truth, &format!("trial {trial}, d {d}, cells {cells}")) {
            failures += 1;
            assert!(matches!(r, Err(DecodeError::Incomplete { .. })), "{r:?}");
        }
        if d > 2 * cells {
            assert!(
                r.is_err(),
                "trial {trial}: {d} keys out of {cells} cells cannot peel"
            );
        }
    }
    assert!(
        failures > 20,
        "the trials must include failures to mean anything ({failures})"
    );
}

#[test]
fn corrupted_cells_never_give_a_wrong_key() {
    // Flip random bits of a subtracted IBF: decoding may fail, and any key
    // it lists must be one of the true difference.
    let mut rng = Rng(7);
    let (sa, sb, truth) = sets(&mut rng, 200, 20, 20, 24);
    let mut x = Sketch::new(SketchParams {
        cells: 120,
        chunk_bytes: 8,
        ..SketchParams::default()
    });
    let mut y = x.clone();
    sa.iter().for_each(|k| x.insert(k));
    sb.iter().for_each(|k| y.insert(k));
    let (bx, by) = (x.to_bytes(), y.to_bytes());
    let mut decoded = 0;
    for trial in 0..400 {
        let mut b = bx.clone();
        // Flip a byte inside the IBF cells, then fix the checksum as a
        // hostile writer would.
        let ibf_start = bx.len() - 8 - 120 * (28 + 8);
        let at = ibf_start + rng.below((120 * 36) as u64) as usize;
        b[at] ^= 1 << rng.below(8);
        let n = b.len() - 8;
        let sum = ribbon::core::hash::xxph3_64_with_seed(&b[..n], 0);
        b[n..].copy_from_slice(&sum.to_le_bytes());
        let bad = Sketch::from_bytes(&b).unwrap();
        if let Ok(d) = bad.diff(&Sketch::from_bytes(&by).unwrap()) {
            decoded += 1;
            for k in &d.only_in_a {
                assert!(truth.only_in_a.contains(k), "trial {trial}: false key {k:?}");
            }
            for k in &d.only_in_b {
                assert!(truth.only_in_b.contains(k), "trial {trial}: false key {k:?}");
            }
        }
    }
    // A flipped padding or count bit often still leaves a decodable table
    // only when it hits an empty part; most flips must be caught.
    assert!(decoded < 400, "{decoded}");
}

#[test]
fn every_key_different_and_identical_sets() {
    let mut rng = Rng(99);
    let (sa, _, _) = sets(&mut rng, 0, 300, 0, 50);
    let empty = BTreeSet::new();
    let d = diff_of(&sa, &empty, cells_for_difference(300 * 2), 32, 1).unwrap();
    assert_eq!(d.only_in_a, sa.iter().cloned().collect::<Vec<_>>());
    let d = diff_of(&empty, &sa, cells_for_difference(300 * 2), 32, 1).unwrap();
    assert_eq!(d.only_in_b.len(), 300);
    let d = diff_of(&sa, &sa, 3, 32, 1).unwrap();
    assert!(d.is_empty());
}
