//! The reconciliation sketch file (`ribbon_reconcile::Sketch`): any bytes
//! are rejected or read without a panic; a sketch that reads is diffed
//! against an empty one of its shape both ways, which must end in a
//! difference or an error, within the sketch module's memory budget
//! (libFuzzer's RSS limit). The checksum is repaired first, so that
//! mutations reach the shape checks and the cells behind it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon_reconcile::{hashing, Sketch};

fn check(bytes: &[u8]) {
    let Ok(sketch) = Sketch::from_bytes(bytes) else {
        return;
    };
    assert_eq!(Sketch::from_bytes(&sketch.to_bytes()).as_ref(), Ok(&sketch));
    // The shape came from a file of this many bytes: an empty twin costs
    // no more than the sketch itself.
    let Ok(empty) = Sketch::try_new(sketch.params()) else {
        return;
    };
    let _ = sketch.estimate_difference(&empty);
    for d in [sketch.diff(&empty), empty.diff(&sketch)] {
        if let Ok(d) = d {
            // Every listed key is a key of the difference: at most the keys
            // the cells can hold.
            assert!(d.len() <= 3 * sketch.params().cells + 64);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if data.len() >= 20 {
        let mut fixed = data.to_vec();
        let end = fixed.len() - 8;
        let sum = hashing::key_hash(&fixed[..end], 0);
        fixed[end..].copy_from_slice(&sum.to_le_bytes());
        check(&fixed);
    }
});
