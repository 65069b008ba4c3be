//! Outputs: standard output through one buffered writer whose errors
//! (a closed pipe, a full disk) are reported, never a panic; and files
//! written whole, with `-` for standard output.

use crate::error::{shown, write_error, Error};
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

/// Writes `bytes` to `path` through an [`OutputFile`], or to standard
/// output for `-`.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if path == Path::new("-") {
        let mut out = Stdout::new();
        out.bytes(bytes)?;
        return out.finish();
    }
    let mut file = OutputFile::create(path)?;
    file.write_all(bytes)
        .map_err(|e| write_error(&path.display().to_string(), e))?;
    file.commit()
}

/// An output file written whole or not at all: `ribbon_sst::fs::AtomicFile`
/// (the workspace's one owner of the rule), with this tool's errors. A
/// temporary file is created exclusively (`O_EXCL`, a random name, mode
/// 0600 until it is moved) in the target's directory, moved over the
/// target by [`commit`](Self::commit) once complete and synced; dropped
/// uncommitted, it is removed. The target must be absent or a regular
/// file: a device, a FIFO, a directory or a symbolic link is refused,
/// never replaced (and never followed).
pub struct OutputFile {
    file: ribbon_sst::fs::AtomicFile,
}

impl OutputFile {
    /// Creates the temporary file for `target`.
    ///
    /// Errors: the target exists and is not a regular file, or the
    /// temporary file cannot be created.
    pub fn create(target: &Path) -> Result<Self, Error> {
        let file = ribbon_sst::fs::AtomicFile::create(target).map_err(|e| output_error(target, e))?;
        Ok(Self { file })
    }

    /// Syncs the file and moves it over the target (checked again to be
    /// absent or a regular file).
    pub fn commit(self) -> Result<(), Error> {
        let target = self.file.target().to_path_buf();
        self.file.commit().map_err(|e| output_error(&target, e))
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The error of writing `target`: a target that is not a regular file is
/// refused in one line, anything else is a write error.
fn output_error(target: &Path, e: std::io::Error) -> Error {
    if ribbon_sst::fs::is_not_replaceable(&e) {
        Error::failed(format!(
            "cannot write {}: it exists and is not a regular file (refusing to replace it; use '-' for standard output)",
            shown(target)
        ))
    } else {
        write_error(&shown(target), e)
    }
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
