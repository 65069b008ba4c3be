//! Helpers the C library's test files share.

use ribbon::ribbon_last_error;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `ribbon_last_error()`, owned.
pub fn last_error() -> String {
    // SAFETY: the library returns a valid NUL-terminated string it owns.
    unsafe { CStr::from_ptr(ribbon_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// `p` as a C string.
pub fn cpath(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}
