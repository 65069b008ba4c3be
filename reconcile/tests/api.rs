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
