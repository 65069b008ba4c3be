//! The exceptions of `rocks_ribbon`, one class per kind of failure, all
//! under `rocks_ribbon.Error`, and the mapping from each Rust error.
//!
//! ```text
//! Error
//! ├── IoError            a file could not be read (missing, unreadable, not a regular file)
//! ├── CorruptionError    bytes that are not what they claim (checksums, lengths, formats)
//! ├── UnsupportedError   valid input this reader refuses rather than answer wrong
//! ├── NotAFilterError    bytes that are not a filter block RocksDB writes
//! ├── PolicyError        a filter policy string RocksDB would not accept
//! ├── ConfigError        a standalone filter's settings, or a failed construction
//! ├── ReconcileError     sketches that cannot be compared or decoded
//! └── ClosedError        a query of a closed file, database or filter
//! ```

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use ribbon_sst::db::DbError;

create_exception!(rocks_ribbon, Error, PyException, "Every error of rocks_ribbon.");
create_exception!(
    rocks_ribbon,
    IoError,
    Error,
    "A file could not be read: missing, unreadable, or not a regular file."
);
create_exception!(
    rocks_ribbon,
    CorruptionError,
    Error,
    "Bytes that are not what they claim: a checksum, length or format check failed."
);
create_exception!(
    rocks_ribbon,
    UnsupportedError,
    Error,
    "Valid input that this reader refuses rather than answer wrong (an option or format it cannot reproduce)."
);
create_exception!(
    rocks_ribbon,
    NotAFilterError,
    Error,
    "Bytes that are not a filter block RocksDB writes."
);
create_exception!(
    rocks_ribbon,
    PolicyError,
    Error,
    "A filter policy string RocksDB would not accept, or one that writes no filter."
);
create_exception!(
    rocks_ribbon,
    ConfigError,
    Error,
    "A standalone filter's settings are invalid, or its construction failed."
);
create_exception!(
    rocks_ribbon,
    ReconcileError,
    Error,
    "Two sketches cannot be compared, or their difference cannot be decoded."
);
create_exception!(
    rocks_ribbon,
    ClosedError,
    Error,
    "A query of a file, database or filter after close()."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("IoError", py.get_type::<IoError>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("NotAFilterError", py.get_type::<NotAFilterError>())?;
    m.add("PolicyError", py.get_type::<PolicyError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("ReconcileError", py.get_type::<ReconcileError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    Ok(())
}

/// An SST reader's error as the exception of its kind (its one-line message).
pub fn sst_error(e: ribbon_sst::Error) -> PyErr {
    sst_error_as(&e, e.to_string())
}

/// The exception class of SST error `e`, with message `msg`.
fn sst_error_as(e: &ribbon_sst::Error, msg: String) -> PyErr {
    use ribbon_sst::Error as E;
    match e {
        E::Io { .. } => IoError::new_err(msg),
        E::PlainTable
        | E::CuckooTable
        | E::UnsupportedFormatVersion { .. }
        | E::UnsupportedChecksumType { .. }
        | E::UnsupportedCompression { .. }
        | E::Unsupported { .. } => UnsupportedError::new_err(msg),
        _ => CorruptionError::new_err(msg),
    }
}

/// A database reader's error as the exception of its kind (its one-line
/// message, which names the file).
pub fn db_error(e: DbError) -> PyErr {
    let msg = e.to_string();
    db_error_as(&e, msg)
}

/// [`db_error`] of opening the database directory `dir`, named first as
/// the command line and the C library name it (the reader's messages do
/// not repeat the directory they were asked for).
pub fn db_error_at(e: DbError, dir: &std::path::Path) -> PyErr {
    let msg = format!("{}: {e}", dir.display());
    db_error_as(&e, msg)
}

/// `e`'s exception class with message `msg`.
fn db_error_as(e: &DbError, msg: String) -> PyErr {
    match e {
        DbError::Io { .. } => IoError::new_err(msg),
        DbError::Unsupported { .. } => UnsupportedError::new_err(msg),
        DbError::Argument { .. } => pyo3::exceptions::PyValueError::new_err(msg),
        DbError::Sst { error, .. } => sst_error_as(error, msg),
        _ => CorruptionError::new_err(msg),
    }
}

/// A standalone filter's error: its bytes (corruption), bytes that are no
/// RocksDB Ribbon filter, or its settings and construction.
pub fn standalone_error(e: ribbon::standalone::Error) -> PyErr {
    use ribbon::standalone::Error as E;
    let msg = e.to_string();
    match e {
        E::BadMagic
        | E::UnsupportedVersion { .. }
        | E::Truncated { .. }
        | E::HeaderChecksumMismatch
        | E::ChecksumMismatch
        | E::Corrupt(_) => CorruptionError::new_err(msg),
        E::NotRocksDbRibbon(_) => NotAFilterError::new_err(msg),
        _ => ConfigError::new_err(msg),
    }
}

/// An I/O error on `path` as [`IoError`], in one line naming the path.
pub fn io_error(path: &std::path::Path, e: &std::io::Error) -> PyErr {
    IoError::new_err(format!("{}: {e}", path.display()))
}
