//! Block handles, and the rules RocksDB follows when it writes them.
//!
//! Ported from RocksDB's `table/format.{h,cc}` (`BlockHandle::DecodeFrom`,
//! `kBlockTrailerSize`) and, for the ordering rule, from
//! `table/block_based/block_based_table_builder.cc`: every block is
//! appended at the file's current end (`WriteMaybeCompressedBlockImpl`
//! advances the offset by the block and its 5-byte trailer), and the index
//! builders (`index_builder.cc`, `partitioned_filter_block.cc`) record the
//! handles of data blocks, index partitions and filter partitions in the
//! order the blocks were written. So within one index, each handle starts
//! at or after the end (trailer included) of the one before it.

use crate::coding::Reader;
use crate::error::{BlockKind, Error};

/// Size of a block trailer: the compression type byte and a 32-bit checksum.
pub const BLOCK_TRAILER_LEN: u64 = 5;

/// Where a block lies: its offset and its size without the trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct BlockHandle {
    /// Offset of the block in the file.
    pub offset: u64,
    /// Size of the block's stored bytes, trailer excluded.
    pub size: u64,
}

impl BlockHandle {
    /// A handle.
    pub fn new(offset: u64, size: u64) -> Self {
        Self { offset, size }
    }

    /// Decodes two varint64s (`BlockHandle::DecodeFrom`); `None` when they
    /// are cut off or too long.
    pub fn decode(r: &mut Reader<'_>) -> Option<Self> {
        let save = *r;
        match (r.varint64(), r.varint64()) {
            (Some(offset), Some(size)) => Some(Self { offset, size }),
            _ => {
                *r = save;
                None
            }
        }
    }

    /// Decodes a handle from the start of `bytes` (trailing bytes are
    /// ignored, as RocksDB does for metaindex values).
    pub fn decode_from(bytes: &[u8]) -> Option<Self> {
        Self::decode(&mut Reader::new(bytes))
    }

    /// Whether this is the null handle (offset 0, size 0).
    pub fn is_null(&self) -> bool {
        self.offset == 0 && self.size == 0
    }

    /// The offset just past the block's trailer, `None` on overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset.checked_add(self.size)?.checked_add(BLOCK_TRAILER_LEN)
    }

    /// Checks that the block and its trailer lie inside a file of
    /// `file_len` bytes, and returns where they start and end.
    pub fn checked_range(&self, file_len: u64, block: &BlockKind) -> Result<(u64, u64), Error> {
        let oversized = || Error::OversizedHandle {
            block: block.clone(),
            offset: self.offset,
            size: self.size,
        };
        let end = self.end_with_trailer().ok_or_else(oversized)?;
        if self.offset > file_len || self.size > file_len {
            return Err(oversized());
        }
        if end > file_len {
            return Err(Error::Truncated {
                block: block.clone(),
                offset: self.offset,
                size: self.size + BLOCK_TRAILER_LEN,
                file_len,
            });
        }
        Ok((self.offset, end))
    }
}

/// Checks the handles of one index (data blocks, index partitions or
/// filter partitions), in the order the index lists them: each must lie in
/// the file and start at or after the end of the previous block, trailer
/// included. A file RocksDB wrote always passes (see the module docs);
/// a file that fails would make a reader decode one block many times.
/// With the rule, the handles of one index cover disjoint parts of the
/// file, so reading them all reads at most the file's size.
#[derive(Debug, Clone, Default)]
pub struct HandleOrder {
    previous_end: u64,
    entries: u64,
}

impl HandleOrder {
    /// A check with no handle seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts the next handle listed by `index` (the block holding the
    /// handles, at `index_offset`), pointing at a block of kind `target`
    /// in a file of `file_len` bytes.
    pub fn accept(
        &mut self,
        handle: BlockHandle,
        file_len: u64,
        target: &BlockKind,
        index: &BlockKind,
        index_offset: u64,
    ) -> Result<(), Error> {
        let (_, end) = handle.checked_range(file_len, target)?;
        if handle.offset < self.previous_end {
            return Err(Error::BadBlock {
                block: index.clone(),
                offset: index_offset,
                what: format!(
                    "entry {} points at a {target} at offset {}, before the end of the previous one \
                     (offset {}): handles must increase and not overlap",
                    self.entries, handle.offset, self.previous_end
                ),
            });
        }
        self.previous_end = end;
        self.entries += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_accepts_adjacent_blocks_and_rejects_repeats() {
        let (t, i) = (BlockKind::Data, BlockKind::Index);
        let mut o = HandleOrder::new();
        o.accept(BlockHandle::new(0, 10), 100, &t, &i, 50).unwrap();
        o.accept(BlockHandle::new(15, 0), 100, &t, &i, 50).unwrap();
        o.accept(BlockHandle::new(20, 3), 100, &t, &i, 50).unwrap();
        let e = o.accept(BlockHandle::new(20, 3), 100, &t, &i, 50).unwrap_err();
        assert!(
            e.to_string()
                .contains("entry 3 points at a data block at offset 20"),
            "{e}"
        );
        let mut o = HandleOrder::new();
        o.accept(BlockHandle::new(0, 10), 100, &t, &i, 50).unwrap();
        assert!(o.accept(BlockHandle::new(14, 1), 100, &t, &i, 50).is_err());
        assert!(matches!(
            HandleOrder::new().accept(BlockHandle::new(90, 10), 100, &t, &i, 0),
            Err(Error::Truncated { .. })
        ));
    }
}
