//! The written memory budget of reading and diffing sketches (the
//! `sketch` module's docs), measured with a counting allocator: reading a
//! sketch file of `n` bytes takes at most `1.4 n`, and a diff of two at most
//! `10 n` of their bytes together, here near its largest (a difference
//! filling the sketch).

use ribbon_reconcile::{Sketch, SketchParams};

#[path = "../../sst/tests/support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

#[test]
fn reading_and_diffing_sketches_stay_within_the_written_budget() {
    for chunk_bytes in [1, 32] {
        let cells = 30_000;
        let params = SketchParams {
            cells,
            chunk_bytes,
            ..SketchParams::default()
        };
        let (mut a, mut b) = (Sketch::new(params), Sketch::new(params));
        // A difference of cells / 1.6 elements (4-byte keys of four 1-byte
        // chunks, or 32-byte keys of one chunk): about the most that decodes.
        let per_key = if chunk_bytes == 1 { 4 } else { 1 };
        for i in 0..(cells * 5 / 8 / per_key) as u32 {
            let key = if chunk_bytes == 1 {
                i.to_le_bytes().to_vec()
            } else {
                i.to_le_bytes().repeat(8)
            };
            if i % 2 == 0 {
                a.insert(&key)
            } else {
                b.insert(&key)
            }
        }
        let (ab, bb) = (a.to_bytes(), b.to_bytes());
        let n = ab.len() + bb.len();
        let (read, read_peak) = peak_of(|| Sketch::from_bytes(&ab).unwrap());
        assert!(
            read_peak as f64 <= 1.4 * ab.len() as f64,
            "read {read_peak} for {}",
            ab.len()
        );
        drop(read);
        let (diff, diff_peak) = peak_of(|| {
            let (sa, sb) = (Sketch::from_bytes(&ab).unwrap(), Sketch::from_bytes(&bb).unwrap());
            sa.diff(&sb).map(|d| d.len())
        });
        println!(
            "chunk {chunk_bytes}: files {n} bytes, read {read_peak} ({:.2} of its file), diff {diff_peak} ({:.2} n), {:?} keys",
            read_peak as f64 / ab.len() as f64,
            diff_peak as f64 / n as f64,
            diff
        );
        assert!(diff.is_ok());
        assert!(diff_peak <= 10 * n, "diff {diff_peak} > 10 × {n}");
    }
}
