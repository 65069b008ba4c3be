//! Streaming key input for `ribbon big`: text lines, hex lines or
//! fixed-width binary records, from a file or standard input, read in
//! blocks (never whole) and hashed on every core.

use crate::error::{read_error, shown, Error};
use crate::input::decode_hex;
use rayon::prelude::*;
use ribbon::core::hash::get_slice_hash64;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes read per block.
const BLOCK: usize = 16 << 20;

/// How keys are written in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFormat {
    /// One key per line, the line's bytes without a trailing `\r`.
    Text,
    /// One key per line in hex (surrounding whitespace ignored).
    Hex,
    /// Records of this many bytes, back to back.
    Binary(usize),
}

impl KeyFormat {
    /// From the command line's `--hex` and `--record-bytes`.
    pub fn from_args(hex: bool, record_bytes: Option<usize>) -> Self {
        match (hex, record_bytes) {
            (_, Some(n)) => KeyFormat::Binary(n),
            (true, None) => KeyFormat::Hex,
            (false, None) => KeyFormat::Text,
        }
    }

    /// A short name, for the job description and messages.
    pub fn name(self) -> String {
        match self {
            KeyFormat::Text => "text".into(),
            KeyFormat::Hex => "hex".into(),
            KeyFormat::Binary(n) => format!("binary{n}"),
        }
    }
}

/// Reads keys from `path` (`-`: standard input) block by block and hands
/// their 64-bit hashes, in input order, to `sink`, one block at a time,
/// with the input bytes consumed so far.
pub fn for_each_hash_block(
    path: &Path,
    format: KeyFormat,
    mut sink: impl FnMut(&[u64], u64) -> Result<(), Error>,
) -> Result<u64, Error> {
    let mut input: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(crate::input::open(path)?)
    };
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0usize;
    let mut consumed = 0u64;
    let mut line_no = 0u64;
    let mut total = 0u64;
    loop {
        let n = read_full(&mut input, &mut buf[filled..]).map_err(|e| read_error(path, e))?;
        filled += n;
        let eof = filled < buf.len();
        // The complete keys in the buffer.
        let usable = match format {
            KeyFormat::Binary(r) => {
                if eof && !filled.is_multiple_of(r) {
                    return Err(Error::failed(format!(
                        "{}: {} bytes after the last whole {r}-byte record",
                        shown(path),
                        filled % r
                    )));
                }
                filled - filled % r
            }
            _ if eof => filled,
            _ => match buf[..filled].iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => {
                    return Err(Error::failed(format!(
                        "{}: a line longer than {} MiB",
                        shown(path),
                        BLOCK >> 20
                    )))
                }
            },
        };
        let hashes = hash_block(&buf[..usable], format, path, line_no)?;
        if !matches!(format, KeyFormat::Binary(_)) {
            line_no += hashes.len() as u64;
        }
        consumed += usable as u64;
        total += hashes.len() as u64;
        sink(&hashes, consumed)?;
        if eof {
            return Ok(total);
        }
        buf.copy_within(usable..filled, 0);
        filled -= usable;
    }
}

/// Reads until `buf` is full or the input ends.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The hashes of the keys in `data` (whole keys only; the input's final
/// block may end without a newline).
fn hash_block(data: &[u8], format: KeyFormat, path: &Path, first_line: u64) -> Result<Vec<u64>, Error> {
    match format {
        KeyFormat::Binary(r) => Ok(data.par_chunks_exact(r).map(get_slice_hash64).collect()),
        KeyFormat::Text | KeyFormat::Hex => {
            if data.is_empty() {
                return Ok(Vec::new());
            }
            let body = data.strip_suffix(b"\n").unwrap_or(data);
            let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
            if format == KeyFormat::Text {
                return Ok(lines
                    .par_iter()
                    .map(|l| get_slice_hash64(l.strip_suffix(b"\r").unwrap_or(l)))
                    .collect());
            }
            lines
                .par_iter()
                .enumerate()
                .map(|(i, l)| {
                    let mut key = Vec::new();
                    decode_hex(l.trim_ascii(), &mut key)
                        .map(|()| get_slice_hash64(&key))
                        .map_err(|e| {
                            Error::failed(format!(
                                "{}:{}: invalid hex: {e}",
                                shown(path),
                                first_line + i as u64 + 1
                            ))
                        })
                })
                .collect()
        }
    }
}

/// An estimate of the number of keys in `path` before reading it: exact
/// for binary records, from the first block's line lengths for text; None
/// for standard input or an unreadable size.
pub fn estimate_keys(path: &Path, format: KeyFormat) -> Option<u64> {
    if path == Path::new("-") {
        return None;
    }
    let len = std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)?
        .len();
    match format {
        KeyFormat::Binary(r) => Some(len / r as u64),
        _ => {
            let mut head = vec![0u8; 1 << 20];
            let n = read_full(&mut crate::input::open_regular(path).ok()?, &mut head).ok()?;
            let lines = head[..n].iter().filter(|&&b| b == b'\n').count().max(1) as u64;
            Some((len as f64 * lines as f64 / n.max(1) as f64).ceil() as u64)
        }
    }
}

/// The input's size and modification time, to recognise it on a rerun
/// (None for standard input).
pub fn fingerprint(path: &Path) -> Option<(PathBuf, u64, u128)> {
    if path == Path::new("-") {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((std::fs::canonicalize(path).ok()?, meta.len(), mtime))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashes_of(data: &[u8], format: KeyFormat) -> Result<Vec<u64>, Error> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k");
        std::fs::write(&p, data).unwrap();
        let mut all = Vec::new();
        for_each_hash_block(&p, format, |h, _| {
            all.extend_from_slice(h);
            Ok(())
        })?;
        Ok(all)
    }

    #[test]
    fn formats_give_the_keys_hashes() {
        let h = |k: &[u8]| get_slice_hash64(k);
        assert_eq!(
            hashes_of(b"a\r\nbc\n", KeyFormat::Text).unwrap(),
            [h(b"a"), h(b"bc")]
        );
        assert_eq!(
            hashes_of(b"a\n\nb", KeyFormat::Text).unwrap(),
            [h(b"a"), h(b""), h(b"b")]
        );
        assert_eq!(hashes_of(b"", KeyFormat::Text).unwrap(), Vec::<u64>::new());
        assert_eq!(hashes_of(b"00ff\n", KeyFormat::Hex).unwrap(), [h(&[0, 255])]);
        assert_eq!(
            hashes_of(b"abcdef", KeyFormat::Binary(3)).unwrap(),
            [h(b"abc"), h(b"def")]
        );
        let e = hashes_of(b"abcde", KeyFormat::Binary(3)).unwrap_err();
        assert!(
            e.to_string()
                .contains("2 bytes after the last whole 3-byte record"),
            "{e}"
        );
        let e = hashes_of(b"00\nzz\n", KeyFormat::Hex).unwrap_err();
        assert!(
            e.to_string().ends_with(":2: invalid hex: 'z' is not a hex digit"),
            "{e}"
        );
    }
}
