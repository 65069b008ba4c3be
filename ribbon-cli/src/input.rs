//! Inputs: every file is read once, whole, into memory (so a pipe on
//! standard input, as `-` or `/dev/stdin`, works like a regular file), and
//! keys files are split into keys.
//!
//! An input path must name a regular file or the process's standard input
//! (`-`, or a name of it such as `/dev/stdin`): a FIFO, a device, a socket
//! or a directory is refused before it is opened, with a one-line error,
//! since opening a FIFO without a writer would wait forever and a device
//! such as `/dev/zero` never ends. A regular file's size bounds what is
//! read from it.
//!
//! A keys file has one key per line, `\n`-separated; a final newline does not
//! start another key. In text mode a line's bytes are the key, without the
//! line's trailing `\r` (so CRLF files give the same keys as LF files); a key
//! that must end in `\r` needs `--hex`. With `--hex` each line is the key in
//! hex, surrounding whitespace ignored, and an empty line is the empty key.

use crate::error::{read_error, shown, Error};
use std::io::Read;
use std::path::Path;

/// An input opened for reading (see the module docs).
pub enum Input {
    /// Standard input.
    Stdin(std::io::StdinLock<'static>),
    /// A regular file.
    File(std::fs::File),
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Input::Stdin(s) => s.read(buf),
            Input::File(f) => f.read(buf),
        }
    }
}

/// Opens `path`: `-` (or a path naming standard input) is standard input;
/// anything else must be a regular file.
pub fn open(path: &Path) -> Result<Input, Error> {
    if path == Path::new("-") {
        return Ok(Input::Stdin(std::io::stdin().lock()));
    }
    let meta = std::fs::metadata(path).map_err(|e| read_error(path, e))?;
    if !meta.is_file() && is_stdin(&meta) {
        return Ok(Input::Stdin(std::io::stdin().lock()));
    }
    open_regular(path).map(Input::File)
}

/// Opens `path`, which must be a regular file (`ribbon_sst::fs::open_regular`:
/// checked before it is opened and again on the open file, and the open
/// never blocks).
pub fn open_regular(path: &Path) -> Result<std::fs::File, Error> {
    match ribbon_sst::fs::open_regular(path) {
        Ok((file, _)) => Ok(file),
        Err(e) if ribbon_sst::fs::is_not_regular(&e) => Err(Error::failed(format!(
            "cannot read {}: not a regular file (a FIFO, device, socket or directory is refused; '-' reads standard input)",
            shown(path)
        ))),
        Err(e) => Err(read_error(path, e)),
    }
}

/// Whether `meta` is the file this process's standard input is (so that
/// `/dev/stdin` reads the pipe it names).
#[cfg(unix)]
fn is_stdin(meta: &std::fs::Metadata) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
}

#[cfg(not(unix))]
fn is_stdin(_meta: &std::fs::Metadata) -> bool {
    false
}

/// Reads `path` whole (see [`open`]).
pub fn read_all(path: &Path) -> Result<Vec<u8>, Error> {
    let mut data = Vec::new();
    open(path)?
        .read_to_end(&mut data)
        .map_err(|e| read_error(path, e))?;
    Ok(data)
}

/// Reads the regular file `path` whole.
pub fn read_regular(path: &Path) -> Result<Vec<u8>, Error> {
    let mut data = Vec::new();
    open_regular(path)?
        .read_to_end(&mut data)
        .map_err(|e| read_error(path, e))?;
    Ok(data)
}

/// Refuses two inputs that are both standard input (`ribbon query`).
pub fn at_most_one_stdin(paths: &[&Path]) -> Result<(), Error> {
    at_most_one_stdin_for(paths, "query")
}

/// Refuses two inputs that are both standard input; the error points to
/// `ribbon COMMAND --help`.
pub fn at_most_one_stdin_for(paths: &[&Path], command: &str) -> Result<(), Error> {
    if paths.iter().filter(|p| **p == Path::new("-")).count() > 1 {
        return Err(Error::usage(format!(
            "only one input can be standard input ('-') (try 'ribbon {command} --help')"
        )));
    }
    Ok(())
}

/// Keys, stored back to back in one buffer, with the end of each: about
/// the file's size plus 8 bytes a key.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Keys {
    bytes: Vec<u8>,
    ends: Vec<u64>,
}

/// Keys per batch when a command works through its keys in chunks.
pub const CHUNK: usize = 1 << 16;

impl Keys {
    /// Splits a keys file's contents (see the module docs); `path` names the
    /// file in errors.
    pub fn parse(data: &[u8], hex: bool, path: &Path) -> Result<Self, Error> {
        let mut keys = Keys::default();
        if data.is_empty() {
            return Ok(keys);
        }
        let body = data.strip_suffix(b"\n").unwrap_or(data);
        keys.bytes.reserve(body.len());
        for (i, line) in body.split(|&b| b == b'\n').enumerate() {
            if hex {
                decode_hex(line.trim_ascii(), &mut keys.bytes)
                    .map_err(|e| Error::failed(format!("{}:{}: invalid hex: {e}", shown(path), i + 1)))?;
            } else {
                keys.bytes
                    .extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
            }
            keys.ends.push(keys.bytes.len() as u64);
        }
        Ok(keys)
    }

    /// Reads and splits a keys file (`-` is standard input).
    pub fn read(path: &Path, hex: bool) -> Result<Self, Error> {
        Self::parse(&read_all(path)?, hex, path)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Key `i`.
    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// The keys, in file order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.key(i))
    }

    /// The keys in order, [`CHUNK`] at a time, as slices for batch calls.
    pub fn chunks(&self) -> impl Iterator<Item = Vec<&[u8]>> + '_ {
        (0..self.len()).step_by(CHUNK).map(|start| {
            (start..(start + CHUNK).min(self.len()))
                .map(|i| self.key(i))
                .collect()
        })
    }
}

/// Appends the bytes a line of hex digits spells to `out` (the one rule for
/// `--hex` key files: pairs of digits, either case).
pub(crate) fn decode_hex(s: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd number of digits".into());
    }
    let digit = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("{:?} is not a hex digit", char::from(c))),
        }
    };
    for pair in s.chunks_exact(2) {
        out.push(digit(pair[0])? << 4 | digit(pair[1])?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(data: &[u8], hex: bool) -> Vec<Vec<u8>> {
        Keys::parse(data, hex, Path::new("f"))
            .unwrap()
            .iter()
            .map(<[u8]>::to_vec)
            .collect()
    }

    #[test]
    fn splits_lines() {
        assert!(keys(b"", false).is_empty());
        assert_eq!(keys(b"a\n\nbc\n", false), [b"a".to_vec(), vec![], b"bc".to_vec()]);
        assert_eq!(keys(b"a\nb", false), [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(keys(b"\n", false), [Vec::<u8>::new()]);
    }

    #[test]
    fn text_mode_strips_one_carriage_return() {
        assert_eq!(keys(b"a\r\nb\r\n", false), keys(b"a\nb\n", false));
        assert_eq!(keys(b"a\r\r\nb\r", false), [b"a\r".to_vec(), b"b".to_vec()]);
        // Only at the end of a line.
        assert_eq!(keys(b"a\rb\n", false), [b"a\rb".to_vec()]);
    }

    #[test]
    fn chunks_cover_every_key_in_order() {
        let text: String = (0..(2 * CHUNK + 5)).map(|i| format!("k{i}\n")).collect();
        let keys = Keys::parse(text.as_bytes(), false, Path::new("f")).unwrap();
        let chunked: Vec<&[u8]> = keys.chunks().flatten().collect();
        assert_eq!(chunked.len(), keys.len());
        assert!(chunked.iter().copied().eq(keys.iter()));
        assert_eq!(
            keys.chunks().map(|c| c.len()).collect::<Vec<_>>(),
            [CHUNK, CHUNK, 5]
        );
        assert_eq!(Keys::default().chunks().count(), 0);
    }

    #[test]
    fn hex_mode_is_exact() {
        assert_eq!(
            keys(b"00ff\r\n\nAB \n0d\n", true),
            [vec![0, 255], vec![], vec![0xab], vec![0x0d]]
        );
        for bad in [&b"0g\n"[..], b"abc\n", b"a\n"] {
            let e = Keys::parse(bad, true, Path::new("f")).unwrap_err();
            assert!(e.to_string().starts_with("f:1: invalid hex"), "{e}");
        }
    }
}
