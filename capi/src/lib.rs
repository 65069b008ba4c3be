//! The C library of this workspace: `libribbon.so` / `libribbon.a` and the
//! header `ribbon.h` (generated from this crate by cbindgen, committed as
//! `capi/include/ribbon.h`).
//!
//! Everything the Rust crates answer, reachable from C, Go (cgo), or any
//! language with a C FFI:
//!
//! * SST files ([`sst`]): open a path or bytes, `may_match`, the batch
//!   `ribbon_sst_may_match_many`, prefix queries, `info` as JSON;
//! * database directories ([`db`]): the files a `Get` asks for each key;
//! * RocksDB-format filters ([`filter`]): build the bytes from a policy
//!   string and keys, open bytes, query;
//! * standalone, Balanced and sharded filters ([`standalone`]): build,
//!   serialise, open bytes or a memory-mapped file (zero-copy), query;
//! * reconciliation ([`reconcile`]): sketch, diff.
//!
//! # Contract of every function
//!
//! * It returns [`RIBBON_OK`] (0) on success and one of the `RIBBON_ERR_*`
//!   codes otherwise; the one-line message of the last failure on the
//!   calling thread is [`ribbon_last_error`]. Answers come back through
//!   out-parameters, written only on success (an out-handle is set to NULL
//!   first).
//! * Every pointer and length is checked: NULL where a value is needed
//!   (a NULL key array with `n > 0`, a NULL handle, a NULL out-parameter)
//!   is [`RIBBON_ERR_NULL`], never undefined behaviour. A pointer that is
//!   not NULL must point to as many valid bytes as its length says (C
//!   cannot check that).
//! * A buffer whose size the caller sets (a batch of keys, their hashes,
//!   a filter built from them, a copy of the caller's bytes) is allocated
//!   fallibly: an input too large for the memory available is
//!   [`RIBBON_ERR_MEMORY`], never an abort. Batch queries work chunk by
//!   chunk into the caller's answer buffer.
//! * No panic crosses the boundary: each entry point runs under
//!   `catch_unwind`, and a caught panic is [`RIBBON_ERR_PANIC`].
//! * Handles are opaque; each has one `*_close`/`*_free` function, which
//!   takes NULL as a no-op. Buffers the library returns are freed with
//!   [`ribbon_bytes_free`] (bytes, with their length) or
//!   [`ribbon_string_free`] (NUL-terminated strings).
//! * Threads: handles are immutable after they are made, so any number
//!   of threads may query one handle at once; closing it must not race a
//!   query. The last-error message is per thread.
//! * The ABI is versioned: [`ribbon_abi_version`] returns
//!   [`RIBBON_ABI_VERSION`], the value of the header's macro when the
//!   library was built; a caller compares the two at start-up.

#![warn(missing_docs)]

pub mod db;
pub mod filter;
mod guard;
pub mod reconcile;
pub mod sst;
pub mod standalone;

use std::ffi::c_char;

pub use guard::{
    RIBBON_ERR_ARGUMENT, RIBBON_ERR_BUILD, RIBBON_ERR_CORRUPT, RIBBON_ERR_IO, RIBBON_ERR_MEMORY,
    RIBBON_ERR_NULL, RIBBON_ERR_PANIC, RIBBON_ERR_TOO_LARGE, RIBBON_ERR_UNSUPPORTED, RIBBON_OK,
};

/// The ABI version of this header and library. It changes whenever a
/// function, type or constant of the header changes incompatibly.
pub const RIBBON_ABI_VERSION: u32 = 1;

/// The ABI version the library was built with: compare it with the
/// header's `RIBBON_ABI_VERSION` before calling anything else.
#[no_mangle]
pub extern "C" fn ribbon_abi_version() -> u32 {
    RIBBON_ABI_VERSION
}

/// The one-line message of the last failure on the calling thread, as a
/// NUL-terminated UTF-8 string; `""` when no call on this thread has failed.
/// The pointer stays valid until the next failing call on this thread;
/// the caller must not free it.
#[no_mangle]
pub extern "C" fn ribbon_last_error() -> *const c_char {
    guard::last_error_ptr()
}

/// Frees a byte buffer the library returned (`ptr` and `len` exactly as
/// returned). NULL is a no-op.
///
/// # Safety
/// `ptr` is NULL or a buffer this library returned with length `len`,
/// not freed before.
#[no_mangle]
pub unsafe extern "C" fn ribbon_bytes_free(ptr: *mut u8, len: usize) {
    if ptr.is_null() {
        return;
    }
    let slice = std::ptr::slice_from_raw_parts_mut(ptr, len);
    // SAFETY: the caller passes back a buffer made by `guard::give_bytes`
    // (a `Box<[u8]>` of `len` bytes turned into a raw pointer), once.
    drop(unsafe { Box::from_raw(slice) });
}

/// Frees a string the library returned. NULL is a no-op.
///
/// # Safety
/// `s` is NULL or a string this library returned, not freed before (not
/// the pointer of [`ribbon_last_error`], which the library owns).
#[no_mangle]
pub unsafe extern "C" fn ribbon_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: the caller passes back a string made by `guard::give_string`
    // (`CString::into_raw`), once.
    drop(unsafe { std::ffi::CString::from_raw(s) });
}
