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

/// `text` made safe for a line of text output (the one rule of every
/// text output that shows names or keys from files: column-family names,
/// keys, file names, policy names): a control character (C0, DEL, C1)
/// cannot split a line, shift a tab-separated column or reach the
/// terminal as an escape sequence. Tab, newline and carriage return are
/// written `\t`, `\n`, `\r`, other control characters `\xNN` (below
/// U+0080) or `\u{NN}` (C1), and a backslash `\\`, so the escaped text
/// tells every original apart. Everything else is unchanged. (JSON output
/// needs none of this: serde escapes it.)
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() || c == '\\') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    std::borrow::Cow::Owned(out)
}

/// `bytes` as text for a line of output: valid UTF-8 as [`escape_text`]
/// writes it, every byte that is not UTF-8 as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        push_escaped(&mut out, chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => push_control(out, c),
            c => out.push(c),
        }
    }
}

/// Appends the control character `c` escaped: `\xNN` below U+0080, else
/// `\u{NN}` (C1).
pub(crate) fn push_control(out: &mut String, c: char) {
    use std::fmt::Write as _;
    if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_lines_and_columns_whole_and_tells_originals_apart() {
        assert!(matches!(
            escape_text("plain név"),
            std::borrow::Cow::Borrowed("plain név")
        ));
        assert_eq!(escape_text("a\tb\nc\rd"), "a\\tb\\nc\\rd");
        assert_eq!(escape_text("\u{1b}[31mred\u{7f}"), "\\x1b[31mred\\x7f");
        assert_eq!(escape_text("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(escape_text("back\\slash\\t"), "back\\\\slash\\\\t");
        assert_eq!(escape_bytes(b"k\xff\x00\xe2\x82\xac"), "k\\xff\\x00\u{20ac}");
        // No output of either holds a control character.
        let all: String = (0u32..0x200).filter_map(char::from_u32).collect();
        assert!(!escape_text(&all).chars().any(char::is_control));
        let bytes: Vec<u8> = (0..=255).collect();
        assert!(!escape_bytes(&bytes).chars().any(char::is_control));
    }
}
