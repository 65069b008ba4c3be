//! SST files: open, whole-key and prefix queries, one key or a batch, and
//! `info` as JSON (the fields of `ribbon sst info --json`).

use crate::guard::{self, Failure, Keys, Result};
use crate::guard::{RIBBON_ERR_CORRUPT, RIBBON_ERR_IO, RIBBON_ERR_UNSUPPORTED};
use ribbon_sst::{Error, Filter, SstFile, TableInfo};
use std::ffi::{c_char, c_int};

/// An open SST file (opaque): its footer, properties and filter, read once
/// at open. Immutable: queries from many threads at once are safe.
pub struct RibbonSst {
    sst: SstFile,
}

/// The name of an SST handle in errors.
const SST: &str = "the SST handle";

/// The error code of an SST reading error.
pub(crate) fn sst_failure(e: &Error) -> Failure {
    let code = match e {
        Error::Io { .. } => RIBBON_ERR_IO,
        Error::PlainTable
        | Error::CuckooTable
        | Error::UnsupportedFormatVersion { .. }
        | Error::UnsupportedChecksumType { .. }
        | Error::UnsupportedCompression { .. }
        | Error::Unsupported { .. } => RIBBON_ERR_UNSUPPORTED,
        _ => RIBBON_ERR_CORRUPT,
    };
    Failure::new(code, e.to_string())
}

/// Opens the SST file at `path` (a NUL-terminated path) into `*out`.
/// Reads the footer, metaindex, properties and the whole filter, every
/// block's checksum verified. Errors: [`crate::RIBBON_ERR_IO`] (missing,
/// unreadable, not a regular file), [`crate::RIBBON_ERR_CORRUPT`],
/// [`crate::RIBBON_ERR_UNSUPPORTED`]. Close with [`ribbon_sst_close`].
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_open(path: *const c_char, out: *mut *mut RibbonSst) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe { guard::open_path(path, out, |path| sst_open(SstFile::open(path))) }
}

/// Opens an SST file from `len` bytes at `data` (copied; the caller may
/// free them on return) into `*out`. Errors as [`ribbon_sst_open`].
///
/// # Safety
/// `data` is NULL (with `len == 0`) or points to `len` readable bytes;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_open_bytes(
    data: *const u8,
    len: usize,
    out: *mut *mut RibbonSst,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_bytes(data, len, "the SST bytes", out, |data| {
            sst_open(SstFile::from_bytes(
                guard::copy_bytes(data, "the SST bytes")?.into_vec(),
            ))
        })
    }
}

/// The handle of an opened SST file, or its failure.
fn sst_open(opened: std::result::Result<SstFile, Error>) -> Result<RibbonSst> {
    opened.map(|sst| RibbonSst { sst }).map_err(|e| sst_failure(&e))
}

/// Closes an SST handle. NULL is a no-op.
///
/// # Safety
/// `sst` is NULL or a handle from `ribbon_sst_open*`, not closed before,
/// and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_close(sst: *mut RibbonSst) {
    // SAFETY: as the caller vouches. Dropping cannot panic.
    unsafe { guard::take(sst) }
}

/// Whether `Get(key)` would get past the table's filter: `*out` = 1 for
/// "may match", 0 for "definitely not" (exactly when RocksDB 11.8's filter
/// check says so). A table without a usable filter answers 1.
///
/// # Safety
/// `sst` is NULL or a live handle; `key` is NULL (with `key_len == 0`)
/// or points to `key_len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_may_match(
    sst: *const RibbonSst,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe { guard::answer_key(sst, SST, key, key_len, out, |h, key| Ok(h.sst.key_may_match(key))) }
}

/// [`ribbon_sst_may_match`] for `n` keys: key `i` is `key_lens[i]` bytes
/// at `keys[i]`, its answer goes to `out[i]` (1 may match, 0 definitely
/// not). The same answers as asking key by key, batched as RocksDB's
/// MultiGet asks a full filter (all keys hashed, then the probes with
/// their memory fetches overlapped). On failure `out`'s contents are
/// unspecified.
///
/// # Safety
/// `sst` is NULL or a live handle; `keys` and `key_lens` are NULL (with
/// `n == 0`) or arrays of `n` elements, each `keys[i]` NULL (with
/// `key_lens[i] == 0`) or pointing to `key_lens[i]` bytes; `out` is NULL
/// (with `n == 0`) or `n` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_may_match_many(
    sst: *const RibbonSst,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_keys(sst, SST, keys, key_lens, n, out, |h, keys, out| {
            may_match_many(&h.sst, keys, out)
        })
    }
}

/// `SstFile::key_may_match_many` over C's arrays. A full filter of whole
/// keys that takes 64-bit hashes (FastLocalBloom, Standard128 Ribbon,
/// Balanced Ribbon) is asked as `SstFile` asks it
/// (`table.rs`, `batched_may_match`: every key hashed, then one batch over
/// the hashes) without copying the keys into slices first; every other
/// filter goes through `SstFile::key_may_match_many` itself.
fn may_match_many(sst: &SstFile, keys: &Keys<'_>, out: &mut [bool]) -> Result<()> {
    let filter = sst.filter();
    if let Filter::Full { contents, .. } = filter {
        if filter.is_queryable() && sst.whole_key_filtering() {
            let reader = filter.block_reader(contents);
            if reader.takes_hash64() {
                reader.may_match_many_hashes_into(&keys.hashes()?, out);
                return Ok(());
            }
        }
    }
    let keys = keys.to_vec()?;
    for (o, a) in out.iter_mut().zip(sst.key_may_match_many(&keys)) {
        *o = a;
    }
    Ok(())
}

/// Whether a key with `key`'s prefix may be in the table, as a prefix seek
/// to `key` asks the filter (`*out` = 1 or 0; 1 when `key` is out of the
/// prefix extractor's domain). [`crate::RIBBON_ERR_UNSUPPORTED`] when the
/// table has no prefix extractor this library can reproduce.
///
/// # Safety
/// As [`ribbon_sst_may_match`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_prefix_may_match(
    sst: *const RibbonSst,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_key(sst, SST, key, key_len, out, |h, key| {
            h.sst.prefix_may_match(key).map_err(|e| sst_failure(&e))
        })
    }
}

/// [`ribbon_sst_prefix_may_match`] for `n` keys, answers into `out[i]`.
///
/// # Safety
/// As [`ribbon_sst_may_match_many`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_prefix_may_match_many(
    sst: *const RibbonSst,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_keys(sst, SST, keys, key_lens, n, out, |h, keys, out| {
            let got = h
                .sst
                .prefix_may_match_many(&keys.to_vec()?)
                .map_err(|e| sst_failure(&e))?;
            out.copy_from_slice(&got);
            Ok(())
        })
    }
}

/// The table and its filter as one JSON object (a NUL-terminated UTF-8
/// string into `*out`, freed with [`crate::ribbon_string_free`]): the
/// fields of one file of `ribbon sst info --json`, without `file`
/// (`format_version`, `checksum`, `filter_layout`, `filter_kind`,
/// `filter_policy`, `num_entries`, `bits_per_filter_entry`,
/// `expected_fp_rate`, `whole_key_filtering`, `prefix_extractor`, ...;
/// numbers that cannot be given are `null`).
///
/// # Safety
/// `sst` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sst_info_json(sst: *const RibbonSst, out: *mut *mut c_char) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe { guard::string_of(sst, SST, out, |h| info_json(&TableInfo::new(&h.sst))) }
}

pub(crate) fn info_json(i: &TableInfo) -> Result<String> {
    let doc = i.report();
    serde_json::to_string(&doc)
        .map_err(|e| Failure::new(RIBBON_ERR_UNSUPPORTED, format!("info as JSON: {e}")))
}
