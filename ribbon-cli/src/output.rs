//! Outputs: standard output through one buffered writer whose errors
//! (a closed pipe, a full disk) are reported, never a panic; and files
//! written whole, with `-` for standard output.

use crate::error::{write_error, Error};
use std::io::Write;
use std::path::Path;

/// Buffered standard output; every write error becomes an [`Error`].
pub struct Stdout {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
}

impl Stdout {
    /// Locks standard output.
    pub fn new() -> Self {
        Self {
            out: std::io::BufWriter::new(std::io::stdout().lock()),
        }
    }

    /// Writes `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.out
            .write_all(bytes)
            .map_err(|e| write_error("standard output", e))
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<(), Error> {
        self.bytes(text.as_bytes())?;
        self.bytes(b"\n")
    }

    /// Flushes; call it before returning success.
    pub fn finish(mut self) -> Result<(), Error> {
        self.out.flush().map_err(|e| write_error("standard output", e))
    }
}

impl Stdout {
    /// Prints one line per answer, in order: `1` for "may match", `0` for
    /// "definitely not" (the output of every `query`).
    pub fn answers(&mut self, answers: impl IntoIterator<Item = bool>) -> Result<(), Error> {
        for a in answers {
            self.bytes(if a { b"1\n" } else { b"0\n" })?;
        }
        Ok(())
    }
}

/// Answers the keys chunk by chunk with `answer` and prints the answers as
/// they come ([`Stdout::answers`]), so no more than a chunk of answers is
/// held at once.
pub fn write_answers_by_chunk(
    keys: &crate::input::Keys,
    mut answer: impl FnMut(&[&[u8]]) -> Result<Vec<bool>, Error>,
) -> Result<(), Error> {
    let mut out = Stdout::new();
    for chunk in keys.chunks() {
        out.answers(answer(&chunk)?)?;
    }
    out.finish()
}

/// Writes `bytes` to `path`, or to standard output for `-`.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if path == Path::new("-") {
        let mut out = Stdout::new();
        out.bytes(bytes)?;
        return out.finish();
    }
    std::fs::write(path, bytes).map_err(|e| write_error(&path.display().to_string(), e))
}

/// Writes a one-line note to standard error (never fails: a note that
/// cannot be written is not worth an error of its own).
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "ribbon: {text}");
}

/// Serialises one JSON document.
pub fn to_json(value: &impl serde::Serialize) -> Result<String, Error> {
    serde_json::to_string_pretty(value).map_err(|e| Error::failed(format!("cannot encode JSON: {e}")))
}
