//! Where a table's bytes come from: positional reads from a file on disk,
//! or a byte buffer (tests, fuzzing, [`crate::SstFile::from_bytes`]).
//!
//! A reader only hands out the bytes asked for, so opening a table reads
//! its footer and the blocks the filter needs, and verifying it reads one
//! block at a time: memory stays bounded by the largest block, whatever
//! the file's size.

use crate::error::Error;
use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

/// Positional reads from a table's bytes.
pub trait FileReader: fmt::Debug + Send + Sync {
    /// The file's length in bytes.
    fn len(&self) -> u64;

    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes `offset .. offset + len`. Precondition: they lie inside the
    /// file (callers bounds-check handles first); a reader may still fail
    /// (I/O, or a file that shrank).
    fn read_at(&self, offset: u64, len: u64) -> Result<Cow<'_, [u8]>, Error>;
}

/// A table held in memory.
#[derive(Debug, Clone)]
pub struct InMemoryFile {
    bytes: Vec<u8>,
}

impl InMemoryFile {
    /// The table whose bytes are `bytes`.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self { bytes }
    }
}

impl FileReader for InMemoryFile {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, len: u64) -> Result<Cow<'_, [u8]>, Error> {
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(s, l)| Some(s..s.checked_add(l)?))
            .and_then(|r| self.bytes.get(r));
        range
            .map(Cow::Borrowed)
            .ok_or(Error::NeedMoreBytes { from: offset })
    }
}

/// A table on disk, read by position, with its last bytes read once up
/// front (the footer, metaindex, properties, index and filter follow the
/// data blocks, so opening a table usually reads nothing else).
#[derive(Debug)]
pub struct DiskFile {
    file: Mutex<File>,
    path: String,
    len: u64,
    tail: Vec<u8>,
    tail_start: u64,
}

impl DiskFile {
    /// Opens `path` and reads its last `tail_len` bytes.
    pub fn open(path: &Path, tail_len: u64) -> Result<Self, Error> {
        let path_text = path.display().to_string();
        let io = |e: std::io::Error| Error::Io {
            path: path_text.clone(),
            message: e.to_string(),
        };
        // A FIFO would block the open itself (and a device or directory
        // is no table): refused before opening, by the one owner of the rule.
        let (mut file, meta) = crate::fs::open_regular(path).map_err(io)?;
        let len = meta.len();
        let tail_start = len.saturating_sub(tail_len);
        let tail = read_exact_at(&mut file, tail_start, len - tail_start).map_err(io)?;
        Ok(Self {
            file: Mutex::new(file),
            path: path_text,
            len,
            tail,
            tail_start,
        })
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }
}

impl FileReader for DiskFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, len: u64) -> Result<Cow<'_, [u8]>, Error> {
        if offset >= self.tail_start {
            let start = (offset - self.tail_start) as usize;
            if let Some(b) = usize::try_from(len)
                .ok()
                .and_then(|l| self.tail.get(start..start.checked_add(l)?))
            {
                return Ok(Cow::Borrowed(b));
            }
        }
        let mut file = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        read_exact_at(&mut file, offset, len)
            .map(Cow::Owned)
            .map_err(|e| self.io(e))
    }
}

/// Bytes `offset .. offset + len` of `file`.
fn read_exact_at(file: &mut File, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 30));
    file.take(len).read_to_end(&mut buf)?;
    if (buf.len() as u64) < len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the file shrank while being read",
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_reads_match_memory_reads() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let path = std::env::temp_dir().join(format!("ribbon-sst-file-reader-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let mem = InMemoryFile::new(bytes.clone());
        for tail in [0, 1, 100, 10_000] {
            let disk = DiskFile::open(&path, tail).unwrap();
            assert_eq!(disk.len(), 5000);
            for (o, l) in [(0, 10), (4990, 10), (4000, 1000), (123, 0), (0, 5000)] {
                assert_eq!(disk.read_at(o, l).unwrap(), mem.read_at(o, l).unwrap());
            }
        }
        assert!(mem.read_at(4999, 2).is_err());
        std::fs::remove_file(&path).unwrap();
    }
}
