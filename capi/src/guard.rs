//! The boundary: error codes, the per-thread last error, `catch_unwind`
//! around every entry point, the checks of pointers and lengths, and the
//! shapes the entry points share (one owner each: [`make_handle`],
//! [`open_bytes`], [`open_path`], [`answer_key`], [`answer_keys`],
//! [`make_bytes`], [`bytes_of`], [`make_string`], [`string_of`]).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const RIBBON_OK: c_int = 0;
/// A pointer that must not be NULL was NULL (a handle, an out-parameter,
/// or a key or key array with a nonzero length).
pub const RIBBON_ERR_NULL: c_int = 1;
/// An argument is invalid: a length too large, a string that is not
/// UTF-8, a policy string or filter configuration that does not parse.
pub const RIBBON_ERR_ARGUMENT: c_int = 2;
/// A file could not be opened or read (missing, not a regular file, no
/// permission).
pub const RIBBON_ERR_IO: c_int = 3;
/// The bytes are not a valid file or filter of the kind asked for
/// (corrupt, truncated, wrong magic, checksum mismatch).
pub const RIBBON_ERR_CORRUPT: c_int = 4;
/// A valid input this library does not handle, or a query the file cannot
/// answer (a prefix query on a table without a prefix extractor).
pub const RIBBON_ERR_UNSUPPORTED: c_int = 5;
/// Building a filter failed (no seed worked, too many keys).
pub const RIBBON_ERR_BUILD: c_int = 6;
/// A reconciliation difference too large for the sketches (or a sketch
/// without the cells to list it): sketch again with more cells.
pub const RIBBON_ERR_TOO_LARGE: c_int = 7;
/// An internal error (a panic) was caught at the boundary; the handle
/// involved should not be used again.
pub const RIBBON_ERR_PANIC: c_int = 8;
/// Memory for a buffer whose size the call's arguments set (a batch of
/// keys, their hashes, a filter built from them, a copy of the caller's
/// bytes) could not be allocated:
/// the call changed nothing; retry with a smaller batch.
pub const RIBBON_ERR_MEMORY: c_int = 9;

/// A failure: its code and one-line message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: c_int,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: c_int, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn null(what: &str) -> Self {
        Self::new(RIBBON_ERR_NULL, format!("{what} is NULL"))
    }

    pub(crate) fn argument(message: impl Into<String>) -> Self {
        Self::new(RIBBON_ERR_ARGUMENT, message)
    }

    /// [`RIBBON_ERR_MEMORY`]: `what` for `n` keys could not be allocated.
    pub(crate) fn memory(what: &str, n: usize) -> Self {
        Self::new(
            RIBBON_ERR_MEMORY,
            format!("cannot allocate {what} for {n} keys: the batch is too large for the memory available"),
        )
    }
}

/// An empty vector with room for exactly `n` elements (`what`, in the
/// error), or [`RIBBON_ERR_MEMORY`]: the one way this library allocates a
/// buffer whose size the caller sets.
pub(crate) fn with_room<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Failure::memory(what, n))?;
    Ok(v)
}

/// A copy of the caller's bytes (`what`, in the error), allocated
/// fallibly ([`RIBBON_ERR_MEMORY`]).
pub(crate) fn copy_bytes(data: &[u8], what: &str) -> Result<Box<[u8]>> {
    let mut v = Vec::new();
    v.try_reserve_exact(data.len()).map_err(|_| {
        Failure::new(
            RIBBON_ERR_MEMORY,
            format!("cannot allocate a copy of {what} ({} bytes)", data.len()),
        )
    })?;
    v.extend_from_slice(data);
    Ok(v.into_boxed_slice())
}

/// Keys per chunk of a batch query: the libraries' own buffers for one
/// chunk (hashes, key slices, answers) stay small whatever the batch's
/// size, and the answers go straight to the caller's buffer.
pub(crate) const CHUNK_KEYS: usize = 1 << 16;

pub(crate) type Result<T> = std::result::Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // One line, and no NUL inside (a key in a message could hold one).
    let line: String = message
        .chars()
        .map(|c| {
            if c == '\0' || c == '\n' || c == '\r' {
                ' '
            } else {
                c
            }
        })
        .collect();
    let c = CString::new(line).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs an entry point: its failure or a caught panic becomes a code and
/// the thread's last error.
pub(crate) fn guard(f: impl FnOnce() -> Result<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => RIBBON_OK,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.code
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            set_last_error(&format!(
                "internal error (a panic caught at the C boundary): {what}"
            ));
            RIBBON_ERR_PANIC
        }
    }
}

/// The largest length of an array of `size`-byte elements Rust can view.
fn check_len(n: usize, size: usize, what: &str) -> Result<()> {
    if n.checked_mul(size.max(1)).is_none_or(|b| b > isize::MAX as usize) {
        return Err(Failure::argument(format!("{what}: length {n} is too large")));
    }
    Ok(())
}

/// `len` bytes at `ptr`; NULL only with `len == 0`.
///
/// # Safety
/// When `ptr` is not NULL it points to `len` readable bytes that stay
/// unchanged for `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    check_len(len, 1, what)?;
    // SAFETY: not NULL, `len` fits isize, and the caller vouches for the bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `n` elements at `ptr`; NULL only with `n == 0`.
///
/// # Safety
/// When `ptr` is not NULL it points to `n` readable, initialised `T`s.
pub(crate) unsafe fn array<'a, T>(ptr: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    check_len(n, size_of::<T>(), what)?;
    if !(ptr as usize).is_multiple_of(align_of::<T>()) {
        return Err(Failure::argument(format!("{what} is not aligned")));
    }
    // SAFETY: not NULL, aligned, the length fits isize, and the caller
    // vouches for the elements.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// The caller's answer buffer of `n` bytes, zeroed and viewed as `bool`s
/// (0 or 1 each); NULL only with `n == 0`.
///
/// # Safety
/// When `ptr` is not NULL it points to `n` writable bytes no other
/// reference uses for `'a`.
pub(crate) unsafe fn answers<'a>(ptr: *mut u8, n: usize) -> Result<&'a mut [bool]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Failure::null("the answer buffer"));
    }
    check_len(n, 1, "the answer buffer")?;
    // SAFETY: `ptr` is not NULL and the caller vouches for `n` writable
    // bytes; zeroing them first makes each a valid `bool` (`false`), and
    // `bool` has the size and alignment of `u8`.
    unsafe {
        std::ptr::write_bytes(ptr, 0, n);
        Ok(std::slice::from_raw_parts_mut(ptr.cast::<bool>(), n))
    }
}

/// The keys of a C batch: `keys[i]` of `key_lens[i]` bytes, `i < n`.
pub(crate) struct Keys<'a> {
    ptrs: &'a [*const u8],
    lens: &'a [usize],
}

impl<'a> Keys<'a> {
    /// Checks the two arrays (NULL only with `n == 0`).
    ///
    /// # Safety
    /// The arrays hold `n` elements each, and each `keys[i]` that is not
    /// NULL points to `key_lens[i]` readable bytes, unchanged for `'a`.
    pub(crate) unsafe fn new(keys: *const *const u8, key_lens: *const usize, n: usize) -> Result<Self> {
        // SAFETY: the caller vouches for the arrays.
        let ptrs = unsafe { array(keys, n, "the key array")? };
        // SAFETY: as above.
        let lens = unsafe { array(key_lens, n, "the key length array")? };
        Ok(Keys { ptrs, lens })
    }

    /// The number of keys.
    pub(crate) fn len(&self) -> usize {
        self.ptrs.len()
    }

    /// Key `i` (`i < len`), checked.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Result<&'a [u8]> {
        let (p, len) = (self.ptrs[i], self.lens[i]);
        if len == 0 {
            return Ok(&[]);
        }
        if p.is_null() {
            return Err(Failure::new(
                RIBBON_ERR_NULL,
                format!("key {i} is NULL with length {len}"),
            ));
        }
        if len > isize::MAX as usize {
            return Err(Failure::argument(format!("key {i}: length {len} is too large")));
        }
        // SAFETY: not NULL, the length fits isize, and `Keys::new`'s caller
        // vouches for the bytes.
        Ok(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// Every key, checked, as slices ([`RIBBON_ERR_MEMORY`] when the
    /// vector cannot be allocated).
    pub(crate) fn to_vec(&self) -> Result<Vec<&'a [u8]>> {
        let mut v = with_room(self.len(), "the key slices")?;
        for i in 0..self.len() {
            v.push(self.get(i)?);
        }
        Ok(v)
    }

    /// Keys `from..to` (`from <= to <= len`).
    pub(crate) fn range(&self, from: usize, to: usize) -> Keys<'a> {
        Keys {
            ptrs: &self.ptrs[from..to],
            lens: &self.lens[from..to],
        }
    }
}

/// A NUL-terminated string argument.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string that stays unchanged for `'a`.
pub(crate) unsafe fn c_str<'a>(s: *const c_char, what: &str) -> Result<&'a CStr> {
    if s.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not NULL; the caller vouches for the terminating NUL.
    Ok(unsafe { CStr::from_ptr(s) })
}

/// A UTF-8 string argument.
///
/// # Safety
/// As [`c_str`].
pub(crate) unsafe fn utf8<'a>(s: *const c_char, what: &str) -> Result<&'a str> {
    // SAFETY: as the caller vouches.
    let c = unsafe { c_str(s, what)? };
    c.to_str()
        .map_err(|_| Failure::argument(format!("{what} is not UTF-8")))
}

/// A path argument (any bytes but NUL, as the OS takes them).
///
/// # Safety
/// As [`c_str`].
pub(crate) unsafe fn path<'a>(s: *const c_char, what: &str) -> Result<&'a std::path::Path> {
    // SAFETY: as the caller vouches.
    let c = unsafe { c_str(s, what)? };
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(c.to_bytes())))
    }
    #[cfg(not(unix))]
    {
        c.to_str()
            .map(std::path::Path::new)
            .map_err(|_| Failure::argument(format!("{what} is not UTF-8")))
    }
}

/// Writes `value` through an out-parameter.
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<()> {
    if out.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not NULL; the caller vouches that it is writable.
    unsafe { out.write(value) };
    Ok(())
}

/// Checks an out-parameter and clears it (NULL), so that a failure leaves
/// no stale pointer behind.
///
/// # Safety
/// `out` is NULL or valid for a write of a pointer.
pub(crate) unsafe fn clear_out<T>(out: *mut *mut T, what: &str) -> Result<()> {
    // SAFETY: as the caller vouches.
    unsafe { put(out, std::ptr::null_mut(), what) }
}

/// A handle argument, borrowed.
///
/// # Safety
/// `h` is NULL or a live handle of type `T` made by this library.
pub(crate) unsafe fn handle<'a, T>(h: *const T, what: &str) -> Result<&'a T> {
    if h.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not NULL; the caller vouches that it is a live handle.
    Ok(unsafe { &*h })
}

/// Hands `value` to C as an owned handle (freed by its close function).
pub(crate) fn give<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Frees a handle `give` made. NULL is a no-op.
///
/// # Safety
/// `h` is NULL or a pointer `give::<T>` returned, not freed before.
pub(crate) unsafe fn take<T>(h: *mut T) {
    if !h.is_null() {
        // SAFETY: as the caller vouches: a `Box<T>` made by `give`, once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Hands bytes to C through two out-parameters (freed by
/// `ribbon_bytes_free(ptr, len)`).
///
/// # Safety
/// `out`, `out_len` are NULL or writable.
pub(crate) unsafe fn give_bytes(bytes: Vec<u8>, out: *mut *mut u8, out_len: *mut usize) -> Result<()> {
    if out.is_null() {
        return Err(Failure::null("the output pointer"));
    }
    if out_len.is_null() {
        return Err(Failure::null("the output length"));
    }
    let len = bytes.len();
    let ptr = if len == 0 {
        std::ptr::null_mut()
    } else {
        Box::into_raw(bytes.into_boxed_slice()).cast::<u8>()
    };
    // SAFETY: both checked not NULL; the caller vouches they are writable.
    unsafe {
        out.write(ptr);
        out_len.write(len);
    }
    Ok(())
}

/// Hands a string to C (freed by `ribbon_string_free`).
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn give_string(s: String, out: *mut *mut c_char) -> Result<()> {
    let c = CString::new(s).map_err(|_| Failure::new(RIBBON_ERR_UNSUPPORTED, "the text holds a NUL byte"))?;
    // SAFETY: as the caller vouches.
    unsafe { put(out, c.into_raw(), "the output string") }
}

impl Failure {
    /// The same failure, its message prefixed with `place` (a path).
    pub(crate) fn at(self, place: impl std::fmt::Display) -> Self {
        Failure::new(self.code, format!("{place}: {}", self.message))
    }
}

impl Keys<'_> {
    /// Every key's 64-bit hash (RocksDB's `GetSliceHash64`), checked
    /// ([`RIBBON_ERR_MEMORY`] when the vector cannot be allocated).
    pub(crate) fn hashes(&self) -> Result<Vec<u64>> {
        let mut v = with_room(self.len(), "the key hashes")?;
        for i in 0..self.len() {
            v.push(rocks_ribbon::core::hash::get_slice_hash64(self.get(i)?));
        }
        Ok(v)
    }
}

/// A handle argument that the call may change, borrowed exclusively.
///
/// # Safety
/// `h` is NULL or a live handle of type `T` made by this library, used by
/// no other thread during the call.
pub(crate) unsafe fn handle_mut<'a, T>(h: *mut T, what: &str) -> Result<&'a mut T> {
    if h.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not NULL; the caller vouches for a live handle no one else uses.
    Ok(unsafe { &mut *h })
}

/// Writes `value` through `out` unless it is NULL (an out-parameter the
/// caller may not want).
///
/// # Safety
/// `out` NULL or writable.
pub(crate) unsafe fn put_opt<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: not NULL; the caller vouches that it is writable.
        unsafe { out.write(value) }
    }
}

// The shapes of the entry points. Each runs under `guard`, checks its
// pointers in the order given, and calls its closure only when they hold.

/// An entry point that makes a handle: `*out` is cleared (NULL) first,
/// then `make` runs, and its value goes to C as an owned handle.
///
/// # Safety
/// `out` is NULL or valid for a write of a pointer.
pub(crate) unsafe fn make_handle<T>(out: *mut *mut T, make: impl FnOnce() -> Result<T>) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        unsafe { clear_out(out, "the output handle")? };
        let value = make()?;
        // SAFETY: checked by `clear_out` above.
        unsafe { put(out, give(value), "the output handle") }
    })
}

/// [`make_handle`] from `len` bytes at `data` (named `what` in errors).
///
/// # Safety
/// As [`make_handle`]; `data` as in [`bytes`].
pub(crate) unsafe fn open_bytes<T>(
    data: *const u8,
    len: usize,
    what: &str,
    out: *mut *mut T,
    open: impl FnOnce(&[u8]) -> Result<T>,
) -> c_int {
    let make = || {
        // SAFETY: as the caller vouches.
        open(unsafe { bytes(data, len, what)? })
    };
    // SAFETY: as the caller vouches.
    unsafe { make_handle(out, make) }
}

/// [`make_handle`] from the NUL-terminated path `path`.
///
/// # Safety
/// As [`make_handle`]; `path` as in [`c_str`].
pub(crate) unsafe fn open_path<T>(
    path: *const c_char,
    out: *mut *mut T,
    open: impl FnOnce(&std::path::Path) -> Result<T>,
) -> c_int {
    let make = || {
        // SAFETY: as the caller vouches.
        open(unsafe { self::path(path, "the path")? })
    };
    // SAFETY: as the caller vouches.
    unsafe { make_handle(out, make) }
}

/// An entry point that answers one key about handle `h` (named `what`):
/// `ask`'s answer goes to `*out` as 1 or 0.
///
/// # Safety
/// `h` as in [`handle`]; `key` as in [`bytes`]; `out` NULL or writable.
pub(crate) unsafe fn answer_key<H>(
    h: *const H,
    what: &str,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
    ask: impl FnOnce(&H, &[u8]) -> Result<bool>,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let h = unsafe { handle(h, what)? };
        // SAFETY: as the caller vouches.
        let key = unsafe { bytes(key, key_len, "the key")? };
        let answer = ask(h, key)?;
        // SAFETY: as the caller vouches.
        unsafe { put(out, u8::from(answer), "the answer") }
    })
}

/// An entry point that answers a batch of `n` keys about handle `h`
/// (named `what`): `ask` is called on each chunk of at most [`CHUNK_KEYS`]
/// keys, in order, and writes the chunk's key `i`'s answer to the zeroed
/// `out[i]` of the chunk's answers (so that no buffer grows with `n`).
///
/// # Safety
/// `h` as in [`handle`]; the key arrays as in [`Keys::new`]; `out` as in
/// [`answers`].
pub(crate) unsafe fn answer_keys<H>(
    h: *const H,
    what: &str,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut u8,
    ask: impl Fn(&H, &Keys<'_>, &mut [bool]) -> Result<()>,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let h = unsafe { handle(h, what)? };
        // SAFETY: as the caller vouches.
        let keys = unsafe { Keys::new(keys, key_lens, n)? };
        // SAFETY: as the caller vouches.
        let out = unsafe { answers(out, n)? };
        for (i, part) in out.chunks_mut(CHUNK_KEYS).enumerate() {
            let from = i * CHUNK_KEYS;
            ask(h, &keys.range(from, from + part.len()), part)?;
        }
        Ok(())
    })
}

/// An entry point that hands C bytes made from handle `h` (named `what`):
/// `*out` is cleared first; the bytes go to `*out`, `*out_len`.
///
/// # Safety
/// `h` as in [`handle`]; `out`, `out_len` NULL or writable.
pub(crate) unsafe fn bytes_of<H>(
    h: *const H,
    what: &str,
    out: *mut *mut u8,
    out_len: *mut usize,
    make: impl FnOnce(&H) -> Result<Vec<u8>>,
) -> c_int {
    // SAFETY: as the caller vouches.
    let make = || make(unsafe { handle(h, what)? });
    // SAFETY: as the caller vouches.
    unsafe { make_bytes(out, out_len, make) }
}

/// An entry point that hands C bytes: `*out` is cleared (NULL) first,
/// then `make` runs, and its bytes go to `*out`, `*out_len` (freed with
/// `ribbon_bytes_free`).
///
/// # Safety
/// `out`, `out_len` NULL or writable.
pub(crate) unsafe fn make_bytes(
    out: *mut *mut u8,
    out_len: *mut usize,
    make: impl FnOnce() -> Result<Vec<u8>>,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        unsafe { clear_out(out, "the output pointer")? };
        let bytes = make()?;
        // SAFETY: as the caller vouches.
        unsafe { give_bytes(bytes, out, out_len) }
    })
}

/// An entry point that hands C a string made from handle `h` (named
/// `what`): `*out` is cleared first; the string goes to `*out`.
///
/// # Safety
/// `h` as in [`handle`]; `out` NULL or writable.
pub(crate) unsafe fn string_of<H>(
    h: *const H,
    what: &str,
    out: *mut *mut c_char,
    make: impl FnOnce(&H) -> Result<String>,
) -> c_int {
    // SAFETY: as the caller vouches.
    let make = || make(unsafe { handle(h, what)? });
    // SAFETY: as the caller vouches.
    unsafe { make_string(out, make) }
}

/// An entry point that hands C a string: `*out` is cleared (NULL) first,
/// then `make` runs, and its string goes to `*out` (freed with
/// `ribbon_string_free`).
///
/// # Safety
/// `out` NULL or writable.
pub(crate) unsafe fn make_string(out: *mut *mut c_char, make: impl FnOnce() -> Result<String>) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        unsafe { clear_out(out, "the output string")? };
        let text = make()?;
        // SAFETY: as the caller vouches.
        unsafe { give_string(text, out) }
    })
}
