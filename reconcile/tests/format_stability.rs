//! The sketch file's bytes for fixed inputs are pinned: a change to the
//! hashing, the cell layout or the serialisation that would make sketches
//! of two builds incomparable fails here. (Pins last changed deliberately
//! with format version 2: two mixes per key instead of eight, see
//! `ribbon_reconcile::hashing`.)

use ribbon_reconcile::{Sketch, SketchParams};

fn sketch(params: SketchParams, keys: u64) -> Sketch {
    let mut s = Sketch::new(params);
    for i in 0..keys {
        // Lengths 0 to 99: empty keys, one chunk and many chunks.
        let len = (i * 7 % 100) as usize;
        let k: Vec<u8> = (0..len)
            .map(|j| (i as u8).wrapping_mul(31).wrapping_add(j as u8))
            .collect();
        s.insert(&k);
    }
    s
}

#[test]
fn sketch_bytes_are_pinned() {
    let cases = [
        (
            SketchParams {
                cells: 90,
                ..SketchParams::default()
            },
            40,
        ),
        (
            SketchParams {
                cells: 30,
                chunk_bytes: 5,
                strata: 4,
                stratum_cells: 12,
                seed: 9,
            },
            25,
        ),
        (SketchParams::default(), 1000),
    ];
    let got: Vec<u64> = cases
        .iter()
        .map(|&(p, n)| ribbon::core::hash::hash64(&sketch(p, n).to_bytes(), 0))
        .collect();
    assert_eq!(
        got,
        [
            0x6d14_bdfb_1683_3f0b,
            0xfc11_c140_ba2d_3502,
            0xbbbc_9207_9e57_f5a1
        ]
    );
}
