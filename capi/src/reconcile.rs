//! Reconciliation: sketches of key sets whose size depends on the size of
//! the difference, and the difference of two sketches (`ribbon_reconcile`).
//!
//! The protocol for a difference of unknown size: each side sketches with
//! 0 cells (an estimator only, ~96 KB) and sends it; both call
//! [`ribbon_sketch_estimate`] for the cells to use; each side sketches
//! again with that many cells; [`ribbon_sketch_diff`] lists the keys only
//! in A and only in B, or fails with [`crate::RIBBON_ERR_TOO_LARGE`] (never
//! a partial or wrong list).

use crate::guard::{self, guard, Failure, Keys};
use crate::guard::{RIBBON_ERR_ARGUMENT, RIBBON_ERR_CORRUPT, RIBBON_ERR_TOO_LARGE};
use ribbon_reconcile::{recommended_cells, DiffError, Difference, Sketch, SketchParams};
use std::ffi::c_int;

/// The most heap bytes one sketch may take (1 GiB: about 16 million
/// cells, for differences of about 10 million keys).
pub const RIBBON_SKETCH_MAX_BYTES: u64 = 1 << 30;

/// The name of a sketch handle in errors.
const SKETCH: &str = "the sketch handle";

/// A key set's sketch (opaque). Inserting needs exclusive use; reading
/// (serialise, estimate, diff) may run on many threads at once.
pub struct RibbonSketch {
    sketch: Sketch,
}

/// The keys only in A and only in B (opaque), each list sorted bytewise.
pub struct RibbonDifference {
    diff: Difference,
}

/// Makes an empty sketch into `*out`: key hash seed `seed` (both sides
/// must use the same), `cells` IBF cells (0: an estimator-only sketch, the
/// protocol's first step). [`crate::RIBBON_ERR_ARGUMENT`] when the sketch
/// would take more than [`RIBBON_SKETCH_MAX_BYTES`].
///
/// # Safety
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_new(seed: u64, cells: usize, out: *mut *mut RibbonSketch) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::make_handle(out, || {
            let params = SketchParams {
                seed,
                cells,
                ..SketchParams::default()
            };
            if cells > ribbon_reconcile::ibf::MAX_CELLS || params.memory_bytes() > RIBBON_SKETCH_MAX_BYTES {
                return Err(Failure::argument(format!(
                    "{cells} cells: a sketch may take at most {RIBBON_SKETCH_MAX_BYTES} bytes"
                )));
            }
            let sketch = Sketch::try_new(params).map_err(|e| Failure::argument(e.to_string()))?;
            Ok(RibbonSketch { sketch })
        })
    }
}

/// Adds `n` keys to the sketch (each key of a set once), all or nothing:
/// every key is checked before any is added.
///
/// # Safety
/// `sketch` NULL or live and used by no other thread during the call; the
/// key arrays as in [`crate::sst::ribbon_sst_may_match_many`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_insert_many(
    sketch: *mut RibbonSketch,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let sketch = unsafe { guard::handle_mut(sketch, SKETCH)? };
        // SAFETY: as the caller vouches.
        let keys = unsafe { Keys::new(keys, key_lens, n)? };
        // Every key checked before any is added: all or nothing.
        for i in 0..keys.len() {
            keys.get(i)?;
        }
        for i in 0..keys.len() {
            sketch.sketch.insert(keys.get(i)?);
        }
        Ok(())
    })
}

/// Adds every live key of an open database (its newest entry neither a
/// deletion nor covered by a range deletion) to the sketch, all or
/// nothing: the keys go into a new sketch of the same parameters, added to
/// this one only once the whole database has been read, so a failure
/// (an unreadable file, [`crate::RIBBON_ERR_MEMORY`] for the second
/// sketch) leaves the sketch as it was.
///
/// # Safety
/// `sketch` as in [`ribbon_sketch_insert_many`]; `db` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_insert_db(
    sketch: *mut RibbonSketch,
    db: *const crate::db::RibbonDb,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let sketch = unsafe { guard::handle_mut(sketch, SKETCH)? };
        // SAFETY: as the caller vouches.
        let db = unsafe { guard::handle(db, "the database handle")? };
        let mut fresh = Sketch::try_new(sketch.sketch.params())
            .map_err(|e| Failure::new(crate::guard::RIBBON_ERR_MEMORY, e.to_string()))?;
        crate::db::for_each_live_key(db, |k| fresh.insert(k))?;
        sketch
            .sketch
            .absorb(&fresh)
            .map_err(|m| Failure::argument(m.to_string()))
    })
}

/// Frees a sketch. NULL is a no-op.
///
/// # Safety
/// `sketch` NULL or a live handle, not freed before, used by no other
/// thread.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_free(sketch: *mut RibbonSketch) {
    // SAFETY: as the caller vouches.
    unsafe { guard::take(sketch) }
}

/// The sketch's bytes (versioned and checksummed: what one side sends the
/// other) into `*out`, `*out_len`, freed with [`crate::ribbon_bytes_free`].
///
/// # Safety
/// `sketch` NULL or live; `out`, `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_serialize(
    sketch: *const RibbonSketch,
    out: *mut *mut u8,
    out_len: *mut usize,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe { guard::bytes_of(sketch, SKETCH, out, out_len, |h| Ok(h.sketch.to_bytes())) }
}

/// Reads a sketch from `len` bytes (as [`ribbon_sketch_serialize`] wrote
/// them) into `*out`. [`crate::RIBBON_ERR_CORRUPT`] for bytes that are not a
/// sketch.
///
/// # Safety
/// `data` NULL (with `len == 0`) or `len` readable bytes; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_open_bytes(
    data: *const u8,
    len: usize,
    out: *mut *mut RibbonSketch,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_bytes(data, len, "the sketch bytes", out, |data| {
            let sketch =
                Sketch::from_bytes(data).map_err(|e| Failure::new(RIBBON_ERR_CORRUPT, e.to_string()))?;
            Ok(RibbonSketch { sketch })
        })
    }
}

/// The estimated size of the difference of two sketches' key sets
/// (`*estimate`) and the IBF cells to sketch with to list it
/// (`*recommended_cells`); either out-parameter may be NULL.
/// [`crate::RIBBON_ERR_ARGUMENT`] for sketches made with different
/// parameters.
///
/// # Safety
/// `a`, `b` NULL or live; the out-parameters NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_estimate(
    a: *const RibbonSketch,
    b: *const RibbonSketch,
    estimate: *mut u64,
    recommended: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let (a, b) = unsafe { pair(a, b)? };
        let e = a
            .sketch
            .estimate_difference(&b.sketch)
            .map_err(|m| Failure::new(RIBBON_ERR_ARGUMENT, m.to_string()))?;
        // SAFETY: each is NULL (skipped) or writable, as the caller vouches.
        unsafe {
            guard::put_opt(estimate, e);
            guard::put_opt(recommended, recommended_cells(e));
        }
        Ok(())
    })
}

/// The keys only in A's set and only in B's, into `*out` (free with
/// [`ribbon_difference_free`]). Every key listed is in the difference.
/// Errors: [`crate::RIBBON_ERR_TOO_LARGE`] when the sketches cannot list
/// the difference (too few cells, or an estimator-only sketch; the message
/// gives the cells to use), [`crate::RIBBON_ERR_ARGUMENT`] for sketches made
/// with different parameters.
///
/// # Safety
/// `a`, `b` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sketch_diff(
    a: *const RibbonSketch,
    b: *const RibbonSketch,
    out: *mut *mut RibbonDifference,
) -> c_int {
    let make = || {
        // SAFETY: as the caller vouches.
        let (a, b) = unsafe { pair(a, b)? };
        let diff = a.sketch.diff(&b.sketch).map_err(|e| {
            let code = match e {
                DiffError::Mismatch(_) => RIBBON_ERR_ARGUMENT,
                _ => RIBBON_ERR_TOO_LARGE,
            };
            Failure::new(code, e.to_string())
        })?;
        Ok(RibbonDifference { diff })
    };
    // SAFETY: as the caller vouches.
    unsafe { guard::make_handle(out, make) }
}

/// How many keys are only in A (`side` 0) or only in B (`side` 1), into
/// `*count`.
///
/// # Safety
/// `diff` NULL or live; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_difference_count(
    diff: *const RibbonDifference,
    side: c_int,
    count: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let diff = unsafe { guard::handle(diff, "the difference handle")? };
        let list = side_list(diff, side)?;
        // SAFETY: as the caller vouches.
        unsafe { guard::put(count, list.len(), "the count") }
    })
}

/// Key `i` of side `side` (0: only in A, 1: only in B): `*key` points to
/// its `*key_len` bytes, owned by the difference (valid until
/// [`ribbon_difference_free`]; do not free it). [`crate::RIBBON_ERR_ARGUMENT`]
/// for `i` past the count.
///
/// # Safety
/// `diff` NULL or live; `key`, `key_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_difference_key(
    diff: *const RibbonDifference,
    side: c_int,
    i: usize,
    key: *mut *const u8,
    key_len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let diff = unsafe { guard::handle(diff, "the difference handle")? };
        let list = side_list(diff, side)?;
        let k = list
            .get(i)
            .ok_or_else(|| Failure::argument(format!("key {i} of {}", list.len())))?;
        if key_len.is_null() {
            return Err(Failure::null("the key length"));
        }
        // SAFETY: as the caller vouches.
        unsafe { guard::put(key, k.as_ptr(), "the key pointer")? };
        // SAFETY: checked not NULL; the caller vouches that it is writable.
        unsafe { key_len.write(k.len()) };
        Ok(())
    })
}

/// Sketches A and B, borrowed.
///
/// # Safety
/// `a`, `b` NULL or live.
unsafe fn pair<'a>(
    a: *const RibbonSketch,
    b: *const RibbonSketch,
) -> guard::Result<(&'a RibbonSketch, &'a RibbonSketch)> {
    // SAFETY: as the caller vouches.
    let a = unsafe { guard::handle(a, "sketch A")? };
    // SAFETY: as the caller vouches.
    let b = unsafe { guard::handle(b, "sketch B")? };
    Ok((a, b))
}

fn side_list(diff: &RibbonDifference, side: c_int) -> guard::Result<&[Vec<u8>]> {
    match side {
        0 => Ok(&diff.diff.only_in_a),
        1 => Ok(&diff.diff.only_in_b),
        _ => Err(Failure::argument(format!(
            "side {side}: 0 (only in A) or 1 (only in B)"
        ))),
    }
}

/// Frees a difference. NULL is a no-op.
///
/// # Safety
/// `diff` NULL or a live handle, not freed before, used by no other
/// thread.
#[no_mangle]
pub unsafe extern "C" fn ribbon_difference_free(diff: *mut RibbonDifference) {
    // SAFETY: as the caller vouches.
    unsafe { guard::take(diff) }
}
