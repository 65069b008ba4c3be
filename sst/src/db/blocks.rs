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
use std::borrow::Cow;

/// The most bytes one read covers (a single larger block is read alone).
pub const READAHEAD: u64 = 64 << 10;

/// Calls `f` with each data block of `sst` (its handle and its contents,
/// checksum-verified and decompressed), in index order; stops at the
/// first error, of a block or of `f`.
pub(crate) fn for_each_data_block(
    sst: &SstFile,
    budget: &mut ReadBudget,
    mut f: impl FnMut(BlockHandle, &[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let handles = sst.data_block_handles()?;
    let fetch = sst.fetcher();
    let footer = fetch.footer();
    let file_len = fetch.file_len();
    let dict = sst.compression_dictionary();
    let kind = BlockKind::Data;
    let mut buf = Vec::new();
    let mut i = 0;
    while i < handles.len() {
        // A run of adjacent, in-bounds blocks (at least the first, whose
        // read reports its own bounds error).
        let first = handles[i];
        let mut end = first.end_with_trailer().unwrap_or(u64::MAX);
        let mut j = i + 1;
        while let Some(&h) = handles.get(j) {
            let next_end = match h.checked_range(file_len, &kind) {
                Ok((start, e)) if start == end && e - first.offset <= READAHEAD => e,
                _ => break,
            };
            end = next_end;
            j += 1;
        }
        let span: Cow<'_, [u8]> = if j == i + 1 {
            fetch.stored(first, &kind)?
        } else {
            let size = end - first.offset - BLOCK_TRAILER_LEN;
            fetch.stored(BlockHandle::new(first.offset, size), &kind)?
        };
        for &h in &handles[i..j] {
            let at = (h.offset - first.offset) as usize;
            let stored = span
                .get(at..at + (h.size + BLOCK_TRAILER_LEN) as usize)
                .ok_or(Error::NeedMoreBytes { from: h.offset })?;
            verify_trailer(stored, footer, h, &kind)?;
            let (body, trailer) = stored.split_at(h.size as usize);
            let contents: &[u8] = match trailer[0] {
                compression::NO_COMPRESSION => {
                    budget.charge(h.size, &kind, h.offset)?;
                    body
                }
                type_byte => {
                    compression::decompress_into(
                        type_byte,
                        body,
                        footer.format_version,
                        &kind,
                        h.offset,
                        budget,
                        dict,
                        &mut buf,
                    )?;
                    &buf
                }
            };
            f(h, contents)?;
        }
        i = j;
    }
    Ok(())
}
