//! Reading one block (bounds, trailer checksum, decompression) and walking
//! the entries of a block.
//!
//! Ported from RocksDB's `table/block_fetcher.cc` and
//! `table/block_based/reader_common.cc` (`VerifyBlockChecksum`: the
//! checksum covers the block and its compression type byte, and the stored
//! value carries the context modifier of its offset), and
//! `table/block_based/block.{h,cc}`, `block_util.h`, `data_block_footer.cc`
//! and `data_block_hash_index.cc` for the block format:
//!
//! ```text
//! entries | [values section] | restarts (u32 each) | [hash index] | [values offset u32] | footer u32
//! ```
//!
//! The footer packs the restart count (low 28 bits) with flags: bit 31 a
//! data-block hash index, bit 29 "uniform keys", bit 28 separated key/value
//! storage; bit 30 is reserved. An entry is the varint32s `shared`,
//! `non_shared`, then `value_len` (except in delta-encoded index blocks)
//! and `value_offset` (only at restart points of blocks with separated
//! values), then the key's non-shared bytes, then (unless values are
//! separated) the value. Index blocks with
//! delta-encoded values store no value length: the value is a block handle,
//! or when the key shares bytes with the previous one, only the signed
//! difference of its size from the previous handle's.

use crate::checksum::{self, ChecksumType};
use crate::coding::{fixed32, Reader};
use crate::compression;
use crate::error::{BlockKind, Error};
use crate::footer::{BlockHandle, Footer, BLOCK_TRAILER_LEN};
use std::borrow::Cow;

/// A block read from the file: its handle, its compression type byte and
/// its (decompressed) contents.
#[derive(Debug, Clone)]
pub struct RawBlock<'a> {
    /// Where it is.
    pub handle: BlockHandle,
    /// The compression type byte of the trailer.
    pub compression: u8,
    /// The contents, decompressed.
    pub contents: Cow<'a, [u8]>,
}

/// The bytes of a file: all of them, or only its tail (enough for the
/// footer, meta blocks and filter, which RocksDB writes after the data
/// blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBytes {
    data: Vec<u8>,
    base: u64,
}

impl FileBytes {
    /// A whole file.
    pub fn whole(data: Vec<u8>) -> Self {
        Self { data, base: 0 }
    }

    /// The last `data.len()` bytes of a file of `file_len` bytes.
    /// Precondition: `data.len() <= file_len`.
    pub fn tail(data: Vec<u8>, file_len: u64) -> Self {
        let base = file_len.saturating_sub(data.len() as u64);
        Self { data, base }
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.base + self.data.len() as u64
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every byte of the file is here.
    pub fn is_whole(&self) -> bool {
        self.base == 0
    }

    /// The bytes held: the whole file, or its tail.
    pub fn held(&self) -> &[u8] {
        &self.data
    }

    /// Bytes `start..end` of the file, or [`Error::NeedMoreBytes`] when
    /// they begin before the tail held.
    /// Precondition: `start <= end <= self.len()`.
    pub fn range(&self, start: u64, end: u64) -> Result<&[u8], Error> {
        if start < self.base {
            return Err(Error::NeedMoreBytes { from: start });
        }
        let s = (start - self.base) as usize;
        let e = (end - self.base) as usize;
        self.data.get(s..e).ok_or(Error::NeedMoreBytes { from: start })
    }
}

/// Checks that `handle` (plus trailer) lies inside a file of `file_len`
/// bytes and returns the range of the block and trailer.
pub fn check_bounds(handle: BlockHandle, file_len: u64, block: &BlockKind) -> Result<(u64, u64), Error> {
    let oversized = || Error::OversizedHandle {
        block: block.clone(),
        offset: handle.offset,
        size: handle.size,
    };
    let end = handle
        .offset
        .checked_add(handle.size)
        .and_then(|e| e.checked_add(BLOCK_TRAILER_LEN))
        .ok_or_else(oversized)?;
    if handle.offset > file_len || handle.size > file_len {
        return Err(oversized());
    }
    if end > file_len {
        return Err(Error::Truncated {
            block: block.clone(),
            offset: handle.offset,
            size: handle.size + BLOCK_TRAILER_LEN,
            file_len,
        });
    }
    Ok((handle.offset, end))
}

/// The stored bytes of the block at `handle`, trailer included.
pub fn stored_block<'a>(
    file: &'a FileBytes,
    handle: BlockHandle,
    block: &BlockKind,
) -> Result<&'a [u8], Error> {
    let (start, end) = check_bounds(handle, file.len(), block)?;
    file.range(start, end)
}

/// Verifies the trailer checksum of the block at `handle`
/// (`VerifyBlockChecksum`).
pub fn verify_checksum(
    file: &FileBytes,
    footer: &Footer,
    handle: BlockHandle,
    block: &BlockKind,
) -> Result<(), Error> {
    verify_trailer(stored_block(file, handle, block)?, footer, handle, block)
}

/// Verifies the checksum of `stored`, a block and its 5-byte trailer that
/// sit at `handle.offset` in the file.
/// Precondition: `stored.len() >= 5`.
pub fn verify_trailer(
    stored: &[u8],
    footer: &Footer,
    handle: BlockHandle,
    block: &BlockKind,
) -> Result<(), Error> {
    let end = stored.len();
    let body_and_type = &stored[..end - 4];
    let stored = fixed32(&stored[end - 4..end]);
    let computed = checksum::compute(footer.checksum_type, body_and_type);
    let stored_plain = stored.wrapping_sub(checksum::context_modifier(
        footer.base_context_checksum,
        handle.offset,
    ));
    if stored_plain != computed {
        return Err(Error::ChecksumMismatch {
            block: block.clone(),
            offset: handle.offset,
            checksum_type: footer.checksum_type,
            stored: if footer.checksum_type == ChecksumType::Crc32c {
                checksum::crc32c_unmask(stored_plain)
            } else {
                stored_plain
            },
            computed: if footer.checksum_type == ChecksumType::Crc32c {
                checksum::crc32c_unmask(computed)
            } else {
                computed
            },
        });
    }
    Ok(())
}

/// Reads the block at `handle`: bounds, checksum, then decompression.
pub fn read_block<'a>(
    file: &'a FileBytes,
    footer: &Footer,
    handle: BlockHandle,
    block: &BlockKind,
) -> Result<RawBlock<'a>, Error> {
    let stored = stored_block(file, handle, block)?;
    verify_trailer(stored, footer, handle, block)?;
    let body = &stored[..stored.len() - BLOCK_TRAILER_LEN as usize];
    let compression = stored[stored.len() - BLOCK_TRAILER_LEN as usize];
    let contents = if compression == compression::NO_COMPRESSION {
        Cow::Borrowed(body)
    } else {
        Cow::Owned(compression::decompress(
            compression,
            body,
            footer.format_version,
            block,
            handle.offset,
        )?)
    };
    Ok(RawBlock {
        handle,
        compression,
        contents,
    })
}

/// How values are stored in a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFormat {
    /// A length-prefixed value per entry (data, meta and older index
    /// blocks).
    Plain,
    /// An index block's block handles, delta-encoded (no value length;
    /// `index.value.is.delta.encoded`).
    DeltaHandles,
}

/// The layout of a block, from its footer (`Block::Block`).
#[derive(Debug, Clone, Copy)]
struct Layout {
    keys_end: usize,
    values_section: Option<usize>,
    values_end: usize,
}

const HASH_INDEX_BIT: u32 = 1 << 31;
const RESERVED_BIT: u32 = 1 << 30;
const UNIFORM_BIT: u32 = 1 << 29;
const SEPARATED_KV_BIT: u32 = 1 << 28;
const MAX_HASH_INDEXED_BLOCK: usize = 1 << 16;

fn layout(data: &[u8], block: &BlockKind, offset: u64) -> Result<Layout, Error> {
    let bad = |what: &str| Error::BadBlock {
        block: block.clone(),
        offset,
        what: what.into(),
    };
    if data.len() < 4 {
        return Err(bad("too small for the block footer"));
    }
    let mut packed = fixed32(&data[data.len() - 4..]);
    let mut rest = data.len() - 4;
    let hash = packed & HASH_INDEX_BIT != 0;
    let separated = packed & SEPARATED_KV_BIT != 0;
    packed &= !(HASH_INDEX_BIT | SEPARATED_KV_BIT | UNIFORM_BIT);
    if packed & RESERVED_BIT != 0 {
        return Err(bad("unrecognized feature in block footer (reserved bits set)"));
    }
    let num_restarts = packed as usize;
    let mut values_section = None;
    if separated {
        if rest < 4 {
            return Err(bad("too small for the values section offset"));
        }
        values_section = Some(fixed32(&data[rest - 4..rest]) as usize);
        rest -= 4;
    }
    if hash {
        if !(2..MAX_HASH_INDEXED_BLOCK).contains(&rest) {
            return Err(bad("corrupt data block hash index"));
        }
        let buckets = usize::from(u16::from_le_bytes([data[rest - 2], data[rest - 1]]));
        if buckets == 0 || buckets + 2 > rest {
            return Err(bad("corrupt data block hash index"));
        }
        rest = rest - 2 - buckets;
    }
    let restarts_len = num_restarts
        .checked_mul(4)
        .filter(|&l| l <= rest)
        .ok_or_else(|| bad("too small for its restart points"))?;
    let restarts = rest - restarts_len;
    let keys_end = match values_section {
        Some(v) if v > restarts => return Err(bad("values section starts past the restart points")),
        Some(v) => v,
        None => restarts,
    };
    Ok(Layout {
        keys_end: if num_restarts == 0 { 0 } else { keys_end },
        values_section,
        values_end: restarts,
    })
}

/// Walks the entries of one block in order, reconstructing each key from
/// the shared prefix of the previous one. Every read is bounds-checked; a
/// malformed entry ends the walk with an error naming the block.
#[derive(Debug)]
pub struct EntryIter<'a> {
    data: &'a [u8],
    block: BlockKind,
    offset: u64,
    layout: Layout,
    format: ValueFormat,
    have_first_key: bool,
    restart_interval: u32,
    pos: usize,
    entry_index: u64,
    key: Vec<u8>,
    value: (usize, usize),
    next_value: usize,
    handle: Option<BlockHandle>,
    first_key: (usize, usize),
}

impl<'a> EntryIter<'a> {
    /// An iterator over `data`, a block of kind `block` at `offset`.
    /// `restart_interval` is only used by blocks with separated values
    /// (`data.block.restart.interval`).
    pub fn new(
        data: &'a [u8],
        block: BlockKind,
        offset: u64,
        format: ValueFormat,
        restart_interval: u32,
    ) -> Result<Self, Error> {
        let layout = layout(data, &block, offset)?;
        if layout.values_section.is_some() && (format != ValueFormat::Plain || restart_interval == 0) {
            return Err(Error::BadBlock {
                block,
                offset,
                what: "separated key/value storage without a known restart interval".into(),
            });
        }
        Ok(Self {
            data,
            block,
            offset,
            next_value: layout.values_section.unwrap_or(0),
            layout,
            format,
            have_first_key: false,
            restart_interval,
            pos: 0,
            entry_index: 0,
            key: Vec::new(),
            value: (0, 0),
            handle: None,
            first_key: (0, 0),
        })
    }

    /// Index values carry the first key of their block
    /// (`kBinarySearchWithFirstKey`).
    pub fn with_first_key(mut self, have_first_key: bool) -> Self {
        self.have_first_key = have_first_key;
        self
    }

    fn bad(&self, what: &str) -> Error {
        Error::BadBlock {
            block: self.block.clone(),
            offset: self.offset,
            what: format!("{what} (entry {})", self.entry_index),
        }
    }

    fn varint(&self, r: &mut Reader<'_>, what: &'static str) -> Result<u32, Error> {
        r.varint32().ok_or_else(|| Error::BadVarint {
            block: self.block.clone(),
            offset: self.offset,
            what,
        })
    }

    /// Advances to the next entry; `Ok(false)` at the end of the block.
    pub fn advance(&mut self) -> Result<bool, Error> {
        if self.pos >= self.layout.keys_end {
            return Ok(false);
        }
        let keys = &self.data[..self.layout.keys_end];
        let mut r = Reader::new(&keys[self.pos..]);
        let shared = self.varint(&mut r, "shared key length")? as usize;
        let non_shared = self.varint(&mut r, "key length")? as usize;
        let value_len = match self.format {
            ValueFormat::Plain => Some(self.varint(&mut r, "value length")? as usize),
            ValueFormat::DeltaHandles => None,
        };
        let separated = self.layout.values_section.is_some();
        let value_offset = if separated && self.entry_index.is_multiple_of(u64::from(self.restart_interval)) {
            Some(self.varint(&mut r, "value offset")? as usize)
        } else {
            None
        };
        if shared > self.key.len() {
            return Err(self.bad("key shares more bytes than the previous key has"));
        }
        let key_start = self.pos + r.position();
        let key_end = key_start
            .checked_add(non_shared)
            .filter(|&e| e <= keys.len())
            .ok_or_else(|| self.bad("key runs past the end of the entries"))?;
        self.key.truncate(shared);
        self.key.extend_from_slice(&keys[key_start..key_end]);
        let mut next = key_end;
        match (self.format, value_len) {
            (ValueFormat::Plain, Some(len)) => {
                let (start, limit) = if separated {
                    (
                        value_offset.map_or(self.next_value, |o| self.layout.values_section.unwrap_or(0) + o),
                        self.layout.values_end,
                    )
                } else {
                    (key_end, keys.len())
                };
                let end = start
                    .checked_add(len)
                    .filter(|&e| e <= limit)
                    .ok_or_else(|| self.bad("value runs past the end of the block"))?;
                self.value = (start, end);
                if separated {
                    self.next_value = end;
                } else {
                    next = end;
                }
                self.handle = None;
            }
            _ => {
                let mut vr = Reader::new(&keys[key_end..]);
                let handle = match (shared != 0, self.handle) {
                    (true, Some(prev)) => {
                        let delta = vr.varsigned64().ok_or_else(|| Error::BadVarint {
                            block: self.block.clone(),
                            offset: self.offset,
                            what: "delta-encoded block handle",
                        })?;
                        let offset = prev
                            .offset
                            .checked_add(prev.size)
                            .and_then(|o| o.checked_add(BLOCK_TRAILER_LEN))
                            .ok_or_else(|| self.bad("delta-encoded handle overflows"))?;
                        let size = prev
                            .size
                            .checked_add_signed(delta)
                            .ok_or_else(|| self.bad("delta-encoded handle overflows"))?;
                        BlockHandle::new(offset, size)
                    }
                    (true, None) => return Err(self.bad("delta-encoded handle without a previous one")),
                    (false, _) => BlockHandle::decode(&mut vr).ok_or_else(|| Error::BadVarint {
                        block: self.block.clone(),
                        offset: self.offset,
                        what: "block handle",
                    })?,
                };
                if self.have_first_key {
                    let fk = vr
                        .length_prefixed()
                        .ok_or_else(|| self.bad("bad first key in index value"))?;
                    let start = key_end + vr.position() - fk.len();
                    self.first_key = (start, start + fk.len());
                }
                self.value = (key_end, key_end + vr.position());
                next = key_end + vr.position();
                self.handle = Some(handle);
            }
        }
        self.pos = next;
        self.entry_index += 1;
        Ok(true)
    }

    /// The current key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value's bytes.
    pub fn value(&self) -> &'a [u8] {
        &self.data[self.value.0..self.value.1]
    }

    /// Offset of the current value inside the block.
    pub fn value_offset(&self) -> usize {
        self.value.0
    }

    /// The current entry's value as an index value: the block handle
    /// (decoded from a plain value, or delta-decoded).
    pub fn index_handle(&mut self) -> Result<BlockHandle, Error> {
        if let Some(h) = self.handle {
            return Ok(h);
        }
        let mut r = Reader::new(self.value());
        let h = BlockHandle::decode(&mut r).ok_or_else(|| Error::BadVarint {
            block: self.block.clone(),
            offset: self.offset,
            what: "block handle",
        })?;
        if self.have_first_key {
            r.length_prefixed()
                .ok_or_else(|| self.bad("bad first key in index value"))?;
        }
        Ok(h)
    }

    /// How many entries have been read.
    pub fn entries_read(&self) -> u64 {
        self.entry_index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a block the way `BlockBuilder` does (plain values, delta
    /// encoding, one restart every `interval` entries).
    pub(crate) fn build(entries: &[(&[u8], &[u8])], interval: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut restarts = Vec::new();
        let mut last: &[u8] = &[];
        for (i, (k, v)) in entries.iter().enumerate() {
            let shared = if i % interval == 0 {
                restarts.push(out.len() as u32);
                0
            } else {
                k.iter().zip(last).take_while(|(a, b)| a == b).count()
            };
            for n in [shared, k.len() - shared, v.len()] {
                crate::coding::put_varint64(&mut out, n as u64);
            }
            out.extend(&k[shared..]);
            out.extend(*v);
            last = k;
        }
        if restarts.is_empty() {
            restarts.push(0);
        }
        for r in &restarts {
            out.extend(r.to_le_bytes());
        }
        out.extend((restarts.len() as u32).to_le_bytes());
        out
    }

    #[test]
    fn walks_delta_encoded_entries() {
        let entries: Vec<(&[u8], &[u8])> = vec![
            (b"apple", b"1"),
            (b"apricot", b"22"),
            (b"banana", b""),
            (b"band", b"4"),
        ];
        for interval in [1, 2, 16] {
            let block = build(&entries, interval);
            let mut it = EntryIter::new(&block, BlockKind::Data, 0, ValueFormat::Plain, 0).unwrap();
            for (k, v) in &entries {
                assert!(it.advance().unwrap());
                assert_eq!(it.key(), *k);
                assert_eq!(it.value(), *v);
            }
            assert!(!it.advance().unwrap());
        }
    }

    #[test]
    fn rejects_bad_footers_and_entries() {
        assert!(EntryIter::new(&[1, 2], BlockKind::Data, 0, ValueFormat::Plain, 0).is_err());
        // 100 restarts in an 8-byte block.
        let mut b = vec![0u8; 4];
        b.extend(100u32.to_le_bytes());
        assert!(EntryIter::new(&b, BlockKind::Data, 0, ValueFormat::Plain, 0).is_err());
        // Reserved bit.
        let mut b = vec![0u8; 4];
        b.extend((1u32 | RESERVED_BIT).to_le_bytes());
        assert!(EntryIter::new(&b, BlockKind::Data, 0, ValueFormat::Plain, 0).is_err());
        // An entry whose key runs past the end.
        let mut b = vec![0u8, 50, 0];
        b.extend(0u32.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        let mut it = EntryIter::new(&b, BlockKind::Data, 0, ValueFormat::Plain, 0).unwrap();
        assert!(it.advance().is_err());
    }
}
