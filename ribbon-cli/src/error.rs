//! The tool's one error type: every failure is one line on stderr and an
//! exit code (2 for a bad command line, 1 for anything else).

use std::fmt;
use std::path::Path;

/// A failure, reported as `ribbon: MESSAGE` on one line.
#[derive(Debug)]
pub enum Error {
    /// A bad command line: exit code 2.
    Usage(String),
    /// Anything else: exit code 1.
    Failed(String),
    /// Standard output was closed by its reader (`| head`): a quiet,
    /// normal end (exit code 0, no message).
    ClosedPipe,
}

impl Error {
    /// A runtime failure.
    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// A usage error.
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Failed(_) => 1,
            Error::ClosedPipe => 0,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = match self {
            Error::Usage(m) | Error::Failed(m) => m,
            Error::ClosedPipe => "standard output was closed",
        };
        // One line, whatever the message holds, and no control character
        // (a name read from a file may hold a terminal escape): line
        // breaks become spaces, others are escaped as text output escapes
        // them (`crate::escape::escape_text`).
        if !m.chars().any(char::is_control) {
            return f.write_str(m);
        }
        let mut line = String::with_capacity(m.len() + 8);
        for c in m.chars() {
            match c {
                '\n' | '\r' => line.push(' '),
                c if c.is_control() => crate::escape::push_control(&mut line, c),
                c => line.push(c),
            }
        }
        f.write_str(&line)
    }
}

/// Names a path in messages: `-` is standard input or output.
pub fn shown(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// `cannot read PATH: ERROR`.
pub fn read_error(path: &Path, e: std::io::Error) -> Error {
    Error::failed(format!("cannot read {}: {e}", shown(path)))
}

/// `cannot write WHAT: ERROR`.
pub fn write_error(what: &str, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe && what == "standard output" {
        return Error::ClosedPipe;
    }
    Error::failed(format!("cannot write {what}: {e}"))
}
