//! The errors of reading a database directory: one line each, naming the
//! file.

use core::fmt;

/// Everything that can go wrong reading a DB directory. Every variant has a
/// one-line [`Display`](fmt::Display).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DbError {
    /// A file could not be read.
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A MANIFEST, WAL or `CURRENT` file is not what RocksDB writes.
    Corrupt {
        /// The file.
        file: String,
        /// What is wrong.
        what: String,
    },
    /// Something this reader does not handle (it refuses rather than give
    /// a wrong answer).
    Unsupported {
        /// What, and what to do about it.
        what: String,
    },
    /// The caller asked for something the database does not have (a column
    /// family it does not hold): the request is wrong, not the database.
    /// The C library reports it as `RIBBON_ERR_ARGUMENT`, Python as
    /// `ValueError`.
    Argument {
        /// What, and what the database has instead.
        what: String,
    },
    /// An SST file of the database could not be read.
    Sst {
        /// The file.
        file: String,
        /// Why.
        error: crate::Error,
    },
}

impl DbError {
    pub(crate) fn corrupt(file: &str, what: impl Into<String>) -> Self {
        DbError::Corrupt {
            file: file.to_string(),
            what: what.into(),
        }
    }

    pub(crate) fn unsupported(what: impl Into<String>) -> Self {
        DbError::Unsupported { what: what.into() }
    }

    pub(crate) fn argument(what: impl Into<String>) -> Self {
        DbError::Argument { what: what.into() }
    }

    pub(crate) fn io(path: &std::path::Path, e: &std::io::Error) -> Self {
        DbError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            DbError::Io { path, message } => format!("cannot read {path}: {message}"),
            DbError::Corrupt { file, what } => format!("{file}: corrupt: {what}"),
            DbError::Unsupported { what } | DbError::Argument { what } => what.clone(),
            DbError::Sst { file, error } => format!("{file}: {error}"),
        };
        f.write_str(&text.replace(['\n', '\r'], " "))
    }
}

impl std::error::Error for DbError {}
