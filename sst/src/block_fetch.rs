//! Fetching one block from the file: its bounds, its trailer checksum, and
//! decompression.
//!
//! Ported from RocksDB's `table/block_fetcher.cc` and
//! `table/block_based/reader_common.cc` (`VerifyBlockChecksum`: the
//! checksum covers the block and its compression type byte, and the stored
//! value carries the context modifier of its offset).

use crate::budget::ReadBudget;
use crate::checksum;
use crate::coding::fixed32;
use crate::compression;
use crate::error::{BlockKind, Error};
use crate::file_reader::FileReader;
use crate::footer::Footer;
use crate::handle::{BlockHandle, BLOCK_TRAILER_LEN};
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

/// Reads blocks of one file.
#[derive(Debug, Clone, Copy)]
pub struct BlockFetcher<'a> {
    file: &'a dyn FileReader,
    footer: &'a Footer,
    dict: &'a [u8],
}

impl<'a> BlockFetcher<'a> {
    /// A fetcher for `file`, whose footer is `footer`, without a
    /// compression dictionary.
    pub fn new(file: &'a dyn FileReader, footer: &'a Footer) -> Self {
        Self {
            file,
            footer,
            dict: &[],
        }
    }

    /// This fetcher, decompressing data blocks with the table's compression
    /// dictionary `dict` (the `rocksdb.compression_dict` meta block; RocksDB
    /// uses it for data blocks only).
    pub fn with_dictionary(self, dict: &'a [u8]) -> Self {
        Self { dict, ..self }
    }

    /// The file's length.
    pub fn file_len(&self) -> u64 {
        self.file.len()
    }

    /// The footer.
    pub fn footer(&self) -> &'a Footer {
        self.footer
    }

    /// The stored bytes of the block at `handle`, trailer included.
    pub fn stored(&self, handle: BlockHandle, block: &BlockKind) -> Result<Cow<'a, [u8]>, Error> {
        let (start, end) = handle.checked_range(self.file.len(), block)?;
        self.file.read_at(start, end - start)
    }

    /// Verifies the trailer checksum of the block at `handle`.
    pub fn verify_checksum(&self, handle: BlockHandle, block: &BlockKind) -> Result<(), Error> {
        verify_trailer(&self.stored(handle, block)?, self.footer, handle, block)
    }

    /// Reads the block at `handle`: bounds, checksum, then decompression
    /// (charged to `budget`).
    pub fn read(
        &self,
        handle: BlockHandle,
        block: &BlockKind,
        budget: &mut ReadBudget,
    ) -> Result<RawBlock<'a>, Error> {
        let stored = self.stored(handle, block)?;
        verify_trailer(&stored, self.footer, handle, block)?;
        self.decode(stored, handle, block, budget)
    }

    /// The contents of `stored` (a block and its verified trailer at
    /// `handle`), decompressed when its trailer says so.
    pub fn decode(
        &self,
        stored: Cow<'a, [u8]>,
        handle: BlockHandle,
        block: &BlockKind,
        budget: &mut ReadBudget,
    ) -> Result<RawBlock<'a>, Error> {
        let body_len = stored.len().saturating_sub(BLOCK_TRAILER_LEN as usize);
        let compression = stored
            .get(body_len)
            .copied()
            .unwrap_or(compression::NO_COMPRESSION);
        let contents = if compression == compression::NO_COMPRESSION {
            match stored {
                Cow::Borrowed(b) => Cow::Borrowed(&b[..body_len]),
                Cow::Owned(mut v) => {
                    v.truncate(body_len);
                    Cow::Owned(v)
                }
            }
        } else {
            let dict = if *block == BlockKind::Data { self.dict } else { &[] };
            Cow::Owned(compression::decompress_with_dict(
                compression,
                &stored[..body_len],
                self.footer.format_version,
                block,
                handle.offset,
                budget,
                dict,
            )?)
        };
        Ok(RawBlock {
            handle,
            compression,
            contents,
        })
    }
}

/// Verifies the checksum of `stored`, a block and its 5-byte trailer that
/// sit at `handle.offset` in the file. An error when `stored` is shorter
/// than a trailer.
pub fn verify_trailer(
    stored: &[u8],
    footer: &Footer,
    handle: BlockHandle,
    block: &BlockKind,
) -> Result<(), Error> {
    let Some(sum_at) = stored.len().checked_sub(4).filter(|&n| n >= 1) else {
        return Err(Error::Truncated {
            block: block.clone(),
            offset: handle.offset,
            size: BLOCK_TRAILER_LEN,
            file_len: stored.len() as u64,
        });
    };
    let (covered, sum) = stored.split_at(sum_at);
    checksum::verify(
        footer.checksum_type,
        footer.base_context_checksum,
        handle.offset,
        covered,
        fixed32(sum),
    )
    .map_err(|m| Error::checksum_mismatch(block, handle.offset, m))
}
