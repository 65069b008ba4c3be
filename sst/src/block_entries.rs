//! Walking the entries of a block.
//!
//! Ported from RocksDB's `table/block_based/block.{h,cc}` (`DecodeEntry`,
//! `DecodeKeyV4`, `IndexBlockIter::DecodeCurrentValue`). An entry is the
//! varint32s `shared`, `non_shared`, then `value_len` (except in
//! delta-encoded index blocks) and `value_offset` (only at restart points
//! of blocks with separated values), then the key's non-shared bytes, then
//! (unless values are separated) the value. Index blocks with
//! delta-encoded values store no value length: the value is a block
//! handle, or when the key shares bytes with the previous one, only the
//! signed difference of its size from the previous handle's, the block
//! starting right after the previous one.
//!
//! Walking a block costs time linear in its size: each key is rebuilt in
//! place from the previous one (truncate to `shared`, append the new
//! bytes). Callers that keep keys copy them, and charge the copy to their
//! [`crate::budget::ReadBudget`].

use crate::block_layout::Layout;
use crate::coding::Reader;
use crate::error::{BlockKind, Error};
use crate::handle::BlockHandle;

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

/// The lengths at the start of an entry.
#[derive(Debug, Clone, Copy)]
struct EntryHeader {
    shared: usize,
    non_shared: usize,
    /// `None` for delta-encoded index values.
    value_len: Option<usize>,
    /// Where the value starts in the values section (separated storage,
    /// restart points only).
    value_offset: Option<usize>,
    /// Where the key's non-shared bytes start.
    key_start: usize,
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
    repeats_previous_key: bool,
    value: (usize, usize),
    next_value: usize,
    handle: Option<BlockHandle>,
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
        let layout = Layout::of(data, &block, offset)?;
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
            repeats_previous_key: false,
            value: (0, 0),
            handle: None,
        })
    }

    /// Index values carry the first key of their block
    /// (`kBinarySearchWithFirstKey`).
    pub fn with_first_key(mut self, have_first_key: bool) -> Self {
        self.have_first_key = have_first_key;
        self
    }

    /// The block's kind.
    pub fn block(&self) -> &BlockKind {
        &self.block
    }

    /// The block's offset in the file.
    pub fn block_offset(&self) -> u64 {
        self.offset
    }

    /// An error about the current entry.
    pub fn bad(&self, what: &str) -> Error {
        Error::BadBlock {
            block: self.block.clone(),
            offset: self.offset,
            what: format!("{what} (entry {})", self.entry_index),
        }
    }

    fn bad_varint(&self, what: &'static str) -> Error {
        Error::BadVarint {
            block: self.block.clone(),
            offset: self.offset,
            what,
        }
    }

    fn varint(&self, r: &mut Reader<'_>, what: &'static str) -> Result<usize, Error> {
        r.varint32()
            .map(|v| v as usize)
            .ok_or_else(|| self.bad_varint(what))
    }

    /// Advances to the next entry; `Ok(false)` at the end of the block.
    #[inline]
    pub fn advance(&mut self) -> Result<bool, Error> {
        if self.pos >= self.layout.keys_end {
            return Ok(false);
        }
        let header = self.read_header()?;
        let key_end = self.read_key(&header)?;
        let next = match header.value_len {
            Some(len) => self.read_plain_value(len, header.value_offset, key_end)?,
            None => self.read_handle_value(header.shared, key_end)?,
        };
        self.pos = next;
        self.entry_index += 1;
        Ok(true)
    }

    #[inline]
    fn read_header(&self) -> Result<EntryHeader, Error> {
        // The common case (RocksDB's `DecodeEntry` fast path): three
        // one-byte varints and no value offset.
        if self.format == ValueFormat::Plain && self.layout.values_section.is_none() {
            if let Some(&[shared, non_shared, value_len]) = self.data[..self.layout.keys_end]
                .get(self.pos..self.pos + 3)
                .and_then(|b| <&[u8; 3]>::try_from(b).ok())
            {
                if (shared | non_shared | value_len) < 0x80 {
                    return Ok(EntryHeader {
                        shared: usize::from(shared),
                        non_shared: usize::from(non_shared),
                        value_len: Some(usize::from(value_len)),
                        value_offset: None,
                        key_start: self.pos + 3,
                    });
                }
            }
        }
        let mut r = Reader::new(&self.data[self.pos..self.layout.keys_end]);
        let shared = self.varint(&mut r, "shared key length")?;
        let non_shared = self.varint(&mut r, "key length")?;
        let value_len = match self.format {
            ValueFormat::Plain => Some(self.varint(&mut r, "value length")?),
            ValueFormat::DeltaHandles => None,
        };
        let separated = self.layout.values_section.is_some();
        let value_offset = if separated && self.entry_index.is_multiple_of(u64::from(self.restart_interval)) {
            Some(self.varint(&mut r, "value offset")?)
        } else {
            None
        };
        Ok(EntryHeader {
            shared,
            non_shared,
            value_len,
            value_offset,
            key_start: self.pos + r.position(),
        })
    }

    /// Rebuilds the key from the previous one; returns where its bytes end.
    #[inline]
    fn read_key(&mut self, h: &EntryHeader) -> Result<usize, Error> {
        if h.shared > self.key.len() {
            return Err(self.bad("key shares more bytes than the previous key has"));
        }
        let key_end = h
            .key_start
            .checked_add(h.non_shared)
            .filter(|&e| e <= self.layout.keys_end)
            .ok_or_else(|| self.bad("key runs past the end of the entries"))?;
        self.repeats_previous_key = self.entry_index > 0 && h.shared == self.key.len() && h.non_shared == 0;
        self.key.truncate(h.shared);
        self.key.extend_from_slice(&self.data[h.key_start..key_end]);
        Ok(key_end)
    }

    /// A length-prefixed value after the key, or in the values section;
    /// returns where the next entry starts.
    #[inline]
    fn read_plain_value(
        &mut self,
        len: usize,
        value_offset: Option<usize>,
        key_end: usize,
    ) -> Result<usize, Error> {
        let (start, limit) = match self.layout.values_section {
            Some(section) => (
                value_offset.map_or(self.next_value, |o| section + o),
                self.layout.values_end,
            ),
            None => (key_end, self.layout.keys_end),
        };
        let end = start
            .checked_add(len)
            .filter(|&e| e <= limit)
            .ok_or_else(|| self.bad("value runs past the end of the block"))?;
        self.value = (start, end);
        self.handle = None;
        if self.layout.values_section.is_some() {
            self.next_value = end;
            Ok(key_end)
        } else {
            Ok(end)
        }
    }

    /// A delta-encoded index value (a handle, or a size delta), then the
    /// first key when index values carry one; returns where the next entry
    /// starts.
    fn read_handle_value(&mut self, shared: usize, key_end: usize) -> Result<usize, Error> {
        let mut vr = Reader::new(&self.data[key_end..self.layout.keys_end]);
        let handle = match (shared != 0, self.handle) {
            (true, Some(prev)) => {
                let delta = vr
                    .varsigned64()
                    .ok_or_else(|| self.bad_varint("delta-encoded block handle"))?;
                let offset = prev
                    .end_with_trailer()
                    .ok_or_else(|| self.bad("delta-encoded handle overflows"))?;
                let size = prev
                    .size
                    .checked_add_signed(delta)
                    .ok_or_else(|| self.bad("delta-encoded handle overflows"))?;
                BlockHandle::new(offset, size)
            }
            (true, None) => return Err(self.bad("delta-encoded handle without a previous one")),
            (false, _) => BlockHandle::decode(&mut vr).ok_or_else(|| self.bad_varint("block handle"))?,
        };
        if self.have_first_key {
            vr.length_prefixed()
                .ok_or_else(|| self.bad("bad first key in index value"))?;
        }
        let end = key_end + vr.position();
        self.value = (key_end, end);
        self.handle = Some(handle);
        Ok(end)
    }

    /// The current key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Whether the current key equals the previous one (it shares all of
    /// it and adds nothing): never so in blocks whose keys are unique.
    pub fn repeats_previous_key(&self) -> bool {
        self.repeats_previous_key
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
        let h = BlockHandle::decode(&mut r).ok_or_else(|| self.bad_varint("block handle"))?;
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
    use crate::block_layout::RESERVED_BIT;

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
