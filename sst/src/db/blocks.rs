//! A file's data blocks in order, read for a walk over every key: runs of
//! adjacent blocks are read with one positional read of up to
//! [`READAHEAD`] bytes, each block's checksum is verified, and compressed
//! blocks are decompressed into one reused buffer (no allocation per block
//! once it has grown).
//!
//! The same checks as [`crate::SstFile::read_data_block`] (RocksDB's
//! `BlockFetcher`: bounds, trailer checksum, decompression), in the same
//! order, block by block. Every block's contents, compressed or not, are
//! charged to the walk's [`ReadBudget::for_data`], so an index that lists
//! a block many times costs no more than the budget allows.

use crate::block_fetch::verify_trailer;
use crate::budget::ReadBudget;
use crate::compression;
use crate::error::{BlockKind, Error};
use crate::handle::{BlockHandle, BLOCK_TRAILER_LEN};
use crate::table::SstFile;

/// The most bytes one read covers (a single larger block is read alone).
pub const READAHEAD: u64 = 256 << 10;

/// A pull cursor over the data blocks of one file: [`DataBlocks::next`]
/// hands out each block's contents in index order, borrowed until the
/// next call.
#[derive(Debug)]
pub(crate) struct DataBlocks {
    handles: Vec<BlockHandle>,
    /// The next block to hand out.
    next: usize,
    /// The blocks of the current span end before `handles[span_end]`; they
    /// are stored (trailers included) in `span`, which starts at
    /// `span_offset`.
    span_end: usize,
    span_offset: u64,
    span: Vec<u8>,
    /// Decompressed contents of the current block.
    buf: Vec<u8>,
    /// The most bytes one read covers.
    readahead: u64,
}

impl DataBlocks {
    /// The data blocks of `sst` (reads its index).
    pub(crate) fn new(sst: &SstFile) -> Result<Self, Error> {
        Self::with_readahead(sst, READAHEAD)
    }

    /// [`DataBlocks::new`], reading at most `readahead` bytes at a time
    /// (at least one block): many sources read at once share a budget.
    pub(crate) fn with_readahead(sst: &SstFile, readahead: u64) -> Result<Self, Error> {
        Ok(Self {
            handles: sst.data_block_handles()?,
            next: 0,
            span_end: 0,
            span_offset: 0,
            span: Vec::new(),
            buf: Vec::new(),
            readahead,
        })
    }

    /// The next data block of `sst` (the file these blocks were listed
    /// from): its handle and contents, checksum-verified and decompressed
    /// (charged to `budget`); `None` after the last.
    pub(crate) fn next<'s>(
        &'s mut self,
        sst: &SstFile,
        budget: &mut ReadBudget,
    ) -> Result<Option<(BlockHandle, &'s [u8])>, Error> {
        let Some(&h) = self.handles.get(self.next) else {
            return Ok(None);
        };
        let fetch = sst.fetcher();
        let footer = fetch.footer();
        let kind = BlockKind::Data;
        if self.next >= self.span_end {
            self.read_span(sst)?;
        }
        self.next += 1;
        let at = (h.offset - self.span_offset) as usize;
        let stored = self
            .span
            .get(at..at + (h.size + BLOCK_TRAILER_LEN) as usize)
            .ok_or(Error::NeedMoreBytes { from: h.offset })?;
        verify_trailer(stored, footer, h, &kind)?;
        let (body, trailer) = stored.split_at(h.size as usize);
        match trailer[0] {
            compression::NO_COMPRESSION => {
                budget.charge(h.size, &kind, h.offset)?;
                Ok(Some((h, body)))
            }
            type_byte => {
                compression::decompress_into(
                    type_byte,
                    body,
                    footer.format_version,
                    &kind,
                    h.offset,
                    budget,
                    sst.compression_dictionary(),
                    &mut self.buf,
                )?;
                Ok(Some((h, &self.buf)))
            }
        }
    }

    /// Reads the run of adjacent, in-bounds blocks from `self.next` on (at
    /// least that block, whose read reports its own bounds error).
    fn read_span(&mut self, sst: &SstFile) -> Result<(), Error> {
        let fetch = sst.fetcher();
        let file_len = fetch.file_len();
        let kind = BlockKind::Data;
        let i = self.next;
        let first = self.handles[i];
        let mut end = first.end_with_trailer().unwrap_or(u64::MAX);
        let mut j = i + 1;
        while let Some(&h) = self.handles.get(j) {
            let next_end = match h.checked_range(file_len, &kind) {
                Ok((start, e)) if start == end && e - first.offset <= self.readahead => e,
                _ => break,
            };
            end = next_end;
            j += 1;
        }
        let span = if j == i + 1 {
            fetch.stored(first, &kind)?
        } else {
            let size = end - first.offset - BLOCK_TRAILER_LEN;
            fetch.stored(BlockHandle::new(first.offset, size), &kind)?
        };
        self.span = span.into_owned();
        self.span_end = j;
        self.span_offset = first.offset;
        Ok(())
    }
}

/// Calls `f` with each data block of `sst` (its handle and its contents,
/// checksum-verified and decompressed), in index order; stops at the
/// first error, of a block or of `f`.
pub(crate) fn for_each_data_block(
    sst: &SstFile,
    budget: &mut ReadBudget,
    mut f: impl FnMut(BlockHandle, &[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut blocks = DataBlocks::new(sst)?;
    while let Some((h, contents)) = blocks.next(sst, budget)? {
        f(h, contents)?;
    }
    Ok(())
}
