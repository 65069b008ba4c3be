//! Streaming key input for `ribbon big`: text lines, hex lines or
//! fixed-width binary records, from a file or standard input, read in
//! blocks (never whole) and hashed on every core.

use crate::error::{read_error, shown, Error};
use crate::input::decode_hex;
use rayon::prelude::*;
use ribbon::core::hash::get_slice_hash64;
use std::io::Read;
use std::path::Path;
use xxhash_rust::xxh3::Xxh3Default as Xxh3;

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
    let mut total = 0u64;
    for_each_block(path, format, |data, first_line, consumed| {
        let hashes = hash_block(data, format, path, first_line)?;
        total += hashes.len() as u64;
        sink(&hashes, consumed)?;
        Ok(hashes.len() as u64)
    })?;
    Ok(total)
}

/// A block in flight: its buffer, the length of its whole keys, the input
/// bytes consumed at its end, and whether it is the last.
type Full = (Vec<u8>, usize, u64, bool);

/// Reads `path` (`-`: standard input) in blocks of whole keys and hands
/// each to `sink` with the number of keys (lines) before it and the input
/// bytes consumed up to its end; `sink` returns the number of keys in the
/// block.
///
/// The next block is read on a thread of its own while `sink` works on
/// this one (two block buffers, recycled). Errors: the input's, a text line
/// longer than a block, bytes after the last whole binary record.
pub fn for_each_block(
    path: &Path,
    format: KeyFormat,
    sink: impl FnMut(&[u8], u64, u64) -> Result<u64, Error>,
) -> Result<(), Error> {
    blocks(path, format, None, sink)
}

/// [`for_each_block`], and also the [`InputDigest`] of every byte read
/// (the whole input), computed on the reading thread as it reads.
pub fn for_each_block_digest(
    path: &Path,
    format: KeyFormat,
    sink: impl FnMut(&[u8], u64, u64) -> Result<u64, Error>,
) -> Result<InputDigest, Error> {
    let mut hasher = Xxh3::new();
    blocks(path, format, Some(&mut hasher), sink)?;
    Ok(InputDigest(hasher.digest128()))
}

fn blocks(
    path: &Path,
    format: KeyFormat,
    digest: Option<&mut Xxh3>,
    mut sink: impl FnMut(&[u8], u64, u64) -> Result<u64, Error>,
) -> Result<(), Error> {
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Result<Full, Error>>(1);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader = scope.spawn(move || {
            let result = read_blocks(path, format, &full_tx, &empty_rx, digest);
            if let Err(e) = result {
                // The receiver is gone only when the sink failed first.
                let _ = full_tx.send(Err(e));
            }
        });
        let mut line_no = 0u64;
        for block in full_rx {
            let (buf, usable, consumed, last) = block?;
            line_no += sink(&buf[..usable], line_no, consumed)?;
            if last {
                break;
            }
            // The reader may already have ended (it stops after the last block).
            let _ = empty_tx.send(buf);
        }
        drop(empty_tx);
        // The digest is complete once the reader has ended (it sends the
        // last block after hashing it).
        if reader.join().is_err() {
            return Err(Error::failed(format!(
                "{}: the reading thread failed",
                shown(path)
            )));
        }
        Ok(())
    })
}

/// A digest of a key input's bytes (XXH3, 128 bits, of the whole input in
/// order): what a resumed `big build` compares to prove its input is the
/// one it bucketed. Not a cryptographic hash: it tells changed keys from
/// the same ones, not a forgery made to collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputDigest(pub u128);

impl InputDigest {
    /// Reads the regular file `path` whole and returns its digest.
    pub fn of_file(path: &Path) -> Result<Self, Error> {
        let mut file = crate::input::open_regular(path)?;
        let mut hasher = Xxh3::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = read_full(&mut file, &mut buf).map_err(|e| read_error(path, e))?;
            hasher.update(&buf[..n]);
            if n < buf.len() {
                return Ok(InputDigest(hasher.digest128()));
            }
        }
    }
}

impl std::fmt::Display for InputDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// The reading thread of [`for_each_block`]: sends each block's whole keys
/// and carries the partial key at its end into the next buffer.
fn read_blocks(
    path: &Path,
    format: KeyFormat,
    full: &std::sync::mpsc::SyncSender<Result<Full, Error>>,
    empty: &std::sync::mpsc::Receiver<Vec<u8>>,
    mut digest: Option<&mut Xxh3>,
) -> Result<(), Error> {
    let mut input = crate::input::open(path)?;
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0usize;
    let mut consumed = 0u64;
    loop {
        let n = read_full(&mut input, &mut buf[filled..]).map_err(|e| read_error(path, e))?;
        if let Some(h) = digest.as_deref_mut() {
            h.update(&buf[filled..filled + n]);
        }
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
        consumed += usable as u64;
        let mut next = empty.try_recv().unwrap_or_else(|_| vec![0u8; BLOCK]);
        next[..filled - usable].copy_from_slice(&buf[usable..filled]);
        let carried = filled - usable;
        if full.send(Ok((buf, usable, consumed, eof))).is_err() || eof {
            return Ok(());
        }
        buf = next;
        filled = carried;
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

/// Splits `data` (whole keys) into at most `count` pieces of whole keys,
/// in order, each with the number of keys (lines) before it in `data`
/// when `lines` (text and hex formats) and 0 otherwise.
pub fn split_keys(data: &[u8], format: KeyFormat, count: usize) -> Vec<(&[u8], u64)> {
    let count = count.max(1);
    let mut pieces = Vec::with_capacity(count);
    let mut at = 0usize;
    for i in 1..=count {
        let mut end = (data.len() as u128 * i as u128 / count as u128) as usize;
        match format {
            KeyFormat::Binary(r) => end -= end % r,
            _ if i == count => end = data.len(),
            _ => {
                end = match data[at.max(end)..].iter().position(|&b| b == b'\n') {
                    Some(j) => at.max(end) + j + 1,
                    None => data.len(),
                }
            }
        }
        let end = end.max(at);
        if end > at || (i == count && pieces.is_empty()) {
            pieces.push((&data[at..end], 0));
        }
        at = end;
    }
    if !matches!(format, KeyFormat::Binary(_)) {
        let newlines: Vec<u64> = pieces
            .par_iter()
            .map(|(p, _)| p.iter().filter(|&&b| b == b'\n').count() as u64)
            .collect();
        let mut before = 0;
        for (piece, n) in pieces.iter_mut().zip(newlines) {
            piece.1 = before;
            before += n;
        }
    }
    pieces
}

/// The hashes of the keys in `data` (whole keys only; the input's final
/// block may end without a newline), on every core, in input order;
/// `first_line` is the number of lines before `data`, for messages.
pub fn hash_block(data: &[u8], format: KeyFormat, path: &Path, first_line: u64) -> Result<Vec<u64>, Error> {
    let pieces = split_keys(data, format, 4 * rayon::current_num_threads());
    let hashed: Vec<Result<Vec<u64>, Error>> = pieces
        .par_iter()
        .map(|&(piece, before)| hash_keys(piece, format, path, first_line + before))
        .collect();
    let mut all = Vec::with_capacity(hashed.iter().map(|h| h.as_ref().map_or(0, Vec::len)).sum());
    for h in hashed {
        // The first error in input order, whichever thread met it first.
        all.extend_from_slice(&h?);
    }
    Ok(all)
}

/// The hashes of the keys in `data` (whole keys only, one thread), in
/// order; `first_line` is the number of lines before `data`, for messages.
pub fn hash_keys(data: &[u8], format: KeyFormat, path: &Path, first_line: u64) -> Result<Vec<u64>, Error> {
    match format {
        KeyFormat::Binary(r) => Ok(data.chunks_exact(r).map(get_slice_hash64).collect()),
        KeyFormat::Text | KeyFormat::Hex => {
            if data.is_empty() {
                return Ok(Vec::new());
            }
            let body = data.strip_suffix(b"\n").unwrap_or(data);
            let lines = body.split(|&b| b == b'\n');
            if format == KeyFormat::Text {
                return Ok(lines
                    .map(|l| get_slice_hash64(l.strip_suffix(b"\r").unwrap_or(l)))
                    .collect());
            }
            let mut key = Vec::new();
            lines
                .enumerate()
                .map(|(i, l)| {
                    key.clear();
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

    #[test]
    fn pieces_are_whole_keys_in_order_with_their_line_numbers() {
        let text = b"a\n\nbc\r\ndef\n\n\nghij\nk";
        let dir = Path::new("k");
        for format in [KeyFormat::Text, KeyFormat::Binary(3)] {
            let data: &[u8] = match format {
                KeyFormat::Binary(_) => &text[..18],
                _ => text,
            };
            let whole = hash_keys(data, format, dir, 0).unwrap();
            for count in 1..=data.len() + 2 {
                let pieces = split_keys(data, format, count);
                assert!(pieces.len() <= count.max(1));
                assert_eq!(pieces.concat_bytes(), data, "{format:?} {count}");
                let mut hashes = Vec::new();
                for &(piece, before) in &pieces {
                    if format == KeyFormat::Text {
                        assert_eq!(before, hashes.len() as u64, "{count}");
                    }
                    hashes.extend(hash_keys(piece, format, dir, before).unwrap());
                }
                assert_eq!(hashes, whole, "{format:?} {count}");
            }
        }
        // The line number of a bad hex line, in whichever piece it falls.
        let hex = b"00\n01\n02\n0x\n04\n";
        for count in 1..8 {
            let e = split_keys(hex, KeyFormat::Hex, count)
                .into_iter()
                .map(|(p, before)| hash_keys(p, KeyFormat::Hex, dir, 10 + before))
                .collect::<Result<Vec<_>, _>>()
                .unwrap_err();
            assert!(e.to_string().starts_with("k:14: invalid hex"), "{count}: {e}");
        }
    }

    trait Concat {
        fn concat_bytes(&self) -> Vec<u8>;
    }
    impl Concat for Vec<(&[u8], u64)> {
        fn concat_bytes(&self) -> Vec<u8> {
            self.iter().flat_map(|(p, _)| p.iter().copied()).collect()
        }
    }
}
