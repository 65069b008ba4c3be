//! Outputs: standard output through one buffered writer whose errors
//! (a closed pipe, a full disk) are reported, never a panic; and files
//! written whole, with `-` for standard output.

use crate::error::{shown, write_error, Error};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// An output file written whole or not at all: a temporary file created
/// exclusively (`O_EXCL`, a random name, mode 0600 until it is moved) in
/// the target's directory, moved over the target by [`commit`](Self::commit)
/// once complete and synced; dropped uncommitted, it is removed. The
/// target must be absent or a regular file: a device, a FIFO, a directory
/// or a symbolic link is refused, never replaced (and never followed).
pub struct OutputFile {
    tmp: std::io::BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
}

impl OutputFile {
    /// Creates the temporary file for `target`.
    ///
    /// Errors: the target exists and is not a regular file, or the
    /// temporary file cannot be created.
    pub fn create(target: &Path) -> Result<Self, Error> {
        check_replaceable(target)?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(&format!(
                ".{}.",
                target.file_name().map_or("out".into(), |n| n.to_string_lossy())
            ))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| write_error(&shown(target), e))?;
        Ok(Self {
            tmp: std::io::BufWriter::with_capacity(1 << 20, tmp),
            target: target.to_path_buf(),
        })
    }

    /// Syncs the file and moves it over the target (checked again to be
    /// absent or a regular file).
    pub fn commit(self) -> Result<(), Error> {
        let shown_target = shown(&self.target);
        let tmp = self
            .tmp
            .into_inner()
            .map_err(|e| write_error(&shown_target, e.into_error()))?;
        // The mode a plain create gives (0644 under the usual umask), or
        // the replaced file's; the temporary file was made 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&self.target).map_or(0o644, |m| m.permissions().mode() & 0o7777);
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| write_error(&shown_target, e))?;
        }
        tmp.as_file()
            .sync_all()
            .map_err(|e| write_error(&shown_target, e))?;
        check_replaceable(&self.target)?;
        tmp.persist(&self.target)
            .map_err(|e| write_error(&shown_target, e.error))?;
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.tmp.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

/// Refuses a target that exists and is not a regular file (not followed
/// when it is a symbolic link).
fn check_replaceable(target: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if !m.file_type().is_file() => Err(Error::failed(format!(
            "cannot write {}: it exists and is not a regular file (refusing to replace it; use '-' for standard output)",
            shown(target)
        ))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(write_error(&shown(target), e)),
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
