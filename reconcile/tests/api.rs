//! The library API: keys go in as anything `AsRef<[u8]>` (one by one or
//! through `Extend`), and a difference too large to list is an error that
//! names the cells it needs, not a command-line flag, with its cause.

use ribbon_reconcile::{DecodeError, DiffError, Sketch, SketchParams};
use std::error::Error as _;

#[test]
fn extend_inserts_every_key() {
    let params = SketchParams {
        cells: 200,
        ..SketchParams::default()
    };
    let keys: Vec<String> = (0..1000).map(|i| format!("key{i}")).collect();
    let mut one_by_one = Sketch::new(params);
    for k in &keys {
        one_by_one.insert(k);
    }
    let mut extended = Sketch::new(params);
    extended.extend(&keys);
    assert_eq!(extended, one_by_one);
    assert_eq!(extended.to_bytes(), one_by_one.to_bytes());
    let mut fewer = Sketch::new(params);
    fewer.extend(keys.iter().skip(1).map(|k| k.as_bytes()));
    let d = extended.diff(&fewer).unwrap();
    assert_eq!(d.only_in_a, [b"key0".to_vec()]);
    assert!(d.only_in_b.is_empty());
}

#[test]
fn diff_errors_name_cells_and_their_cause() {
    let small = SketchParams {
        cells: 30,
        ..SketchParams::default()
    };
    let (mut a, mut b) = (Sketch::new(small), Sketch::new(small));
    a.extend((0..500).map(|i| format!("a{i}")));
    b.extend((0..500).map(|i| format!("b{i}")));
    let e = a.diff(&b).unwrap_err();
    let DiffError::TooLarge {
        error: DecodeError::Incomplete { .. },
        recommended_cells,
        ..
    } = &e
    else {
        panic!("{e:?}");
    };
    let message = e.to_string();
    assert!(
        message.contains(&format!("{recommended_cells} cells")),
        "{message}"
    );
    assert!(
        !message.contains("--"),
        "a library error names no flag: {message}"
    );
    assert!(e.source().is_some_and(|s| s.is::<DecodeError>()), "{e:?}");

    let estimator_only = Sketch::new(SketchParams::default());
    let e = estimator_only.diff(&estimator_only).unwrap_err();
    assert!(matches!(e, DiffError::NoIbf { .. }), "{e:?}");
    assert!(!e.to_string().contains("--"), "{e}");

    let other_seed = Sketch::new(SketchParams { seed: 1, ..small });
    let e = a.diff(&other_seed).unwrap_err();
    assert!(
        matches!(e, DiffError::Mismatch(_)) && e.source().is_some(),
        "{e:?}"
    );
}

/// A key inserted twice is a difference of its own; `extend` skips a key
/// equal to the one before it, so sorted input with repeats sketches its
/// set.
#[test]
fn extend_skips_consecutive_repeats() {
    let params = SketchParams {
        cells: 64,
        ..SketchParams::default()
    };
    let mut set = Sketch::new(params);
    set.extend(["a", "b", "c"]);

    let mut twice = Sketch::new(params);
    for k in ["a", "b", "b", "c"] {
        twice.insert(k);
    }
    let d = twice.diff(&set).unwrap();
    assert_eq!(d.only_in_a, [b"b".to_vec()], "insert adds every key it is given");

    let mut repeats = Sketch::new(params);
    repeats.extend(["a", "a", "b", "b", "b", "c"]);
    assert_eq!(repeats.keys(), 3);
    assert_eq!(repeats, set);
    let d = repeats.diff(&set).unwrap();
    assert!(d.only_in_a.is_empty() && d.only_in_b.is_empty(), "{d:?}");
}
