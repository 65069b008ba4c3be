//! The footer at the end of an SST file, and block handles.
//!
//! Ported from RocksDB's `table/format.{h,cc}` (`Footer::DecodeFrom`,
//! `BlockHandle::DecodeFrom`, `ReadFooterFromFile`) and the magic numbers of
//! `table/block_based/block_based_table_builder.cc`,
//! `table/plain/plain_table_builder.cc` and
//! `table/cuckoo/cuckoo_table_builder.cc`.
//!
//! Footer layouts (the last bytes of the file):
//!
//! * legacy (format_version 0, legacy magic): metaindex handle, index handle,
//!   zero padding to 40 bytes, 8-byte magic; CRC-32C block checksums.
//! * format_version 1 to 5: checksum type byte, the same 40 bytes of
//!   handles, 4-byte format_version, 8-byte magic (53 bytes).
//! * format_version 6 and 7: checksum type byte, the extended magic
//!   `3e 00 7a 00`, the footer's own checksum, the base context checksum,
//!   the metaindex size (the metaindex ends right before the footer), 24
//!   reserved bytes of which the last 8 must be zero, format_version, magic.

use crate::checksum::{self, ChecksumType};
use crate::coding::{fixed32, fixed64, Reader};
use crate::error::{BlockKind, Error};
pub use crate::handle::{BlockHandle, BLOCK_TRAILER_LEN};

/// The block-based table magic number (format_version 1 and later).
pub const BLOCK_BASED_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// The legacy block-based table magic number (format_version 0).
pub const LEGACY_BLOCK_BASED_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// The plain table magic number.
pub const PLAIN_TABLE_MAGIC: u64 = 0x8242_2296_63bf_9564;
/// The legacy plain table magic number.
pub const LEGACY_PLAIN_TABLE_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
/// The cuckoo table magic number.
pub const CUCKOO_TABLE_MAGIC: u64 = 0x9267_89d0_c5f1_7873;

/// Length of the legacy footer.
pub const LEGACY_FOOTER_LEN: usize = 48;
/// Length of every newer footer.
pub const FOOTER_LEN: usize = 53;
/// Largest format_version this reader knows (RocksDB 11.8's latest).
pub const LATEST_FORMAT_VERSION: u32 = 7;

const EXTENDED_MAGIC: [u8; 4] = [0x3e, 0x00, 0x7a, 0x00];

/// Which kind of table the footer's magic number says the file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableMagic {
    /// Block-based table, newer footer.
    BlockBased,
    /// Block-based table, legacy footer (format_version 0).
    LegacyBlockBased,
}

/// A decoded footer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footer {
    /// Legacy or newer block-based footer.
    pub magic: TableMagic,
    /// The format_version (0 for the legacy footer).
    pub format_version: u32,
    /// The checksum type of every block (and of the footer itself for
    /// format_version 6 and later).
    pub checksum_type: ChecksumType,
    /// The base context checksum (format_version 6 and later; 0 before).
    pub base_context_checksum: u32,
    /// The metaindex block.
    pub metaindex: BlockHandle,
    /// The index block, for format_version 5 and earlier (later versions
    /// keep it in the metaindex as `rocksdb.index`).
    pub index: Option<BlockHandle>,
    /// Offset of the footer in the file.
    pub offset: u64,
    /// Length of the footer.
    pub len: usize,
}

impl Footer {
    /// Decodes the footer at the end of `file` (the whole file's bytes),
    /// checking it as `Footer::DecodeFrom` does, and its own checksum for
    /// format_version 6 and later.
    ///
    /// Unlike RocksDB 11.8, the legacy footer and format_version 1 are read
    /// too (their structure is the same; RocksDB 11.8 refuses them).
    pub fn decode(file: &[u8]) -> Result<Footer, Error> {
        Self::decode_tail(file, file.len() as u64)
    }

    /// [`Footer::decode`] from the last `tail.len()` bytes of a file of
    /// `file_len` bytes (at least the last 53 bytes, or the whole file).
    pub fn decode_tail(tail: &[u8], file_len: u64) -> Result<Footer, Error> {
        if file_len == 0 {
            return Err(Error::Empty);
        }
        if file_len < LEGACY_FOOTER_LEN as u64 {
            return Err(Error::TooShort { len: file_len });
        }
        let need = (FOOTER_LEN as u64).min(file_len) as usize;
        if tail.len() < need {
            return Err(Error::NeedMoreBytes {
                from: file_len - need as u64,
            });
        }
        match fixed64(&tail[tail.len() - 8..]) {
            BLOCK_BASED_MAGIC => {}
            LEGACY_BLOCK_BASED_MAGIC => return Self::decode_legacy(tail, file_len),
            PLAIN_TABLE_MAGIC | LEGACY_PLAIN_TABLE_MAGIC => return Err(Error::PlainTable),
            CUCKOO_TABLE_MAGIC => return Err(Error::CuckooTable),
            magic => return Err(Error::BadMagic { magic }),
        }
        let version = fixed32(&tail[tail.len() - 12..]);
        if !(1..=LATEST_FORMAT_VERSION).contains(&version) {
            return Err(Error::UnsupportedFormatVersion { version });
        }
        if file_len < FOOTER_LEN as u64 {
            return Err(Error::TooShort { len: file_len });
        }
        let footer: &[u8; FOOTER_LEN] = tail[tail.len() - FOOTER_LEN..]
            .try_into()
            .map_err(|_| Error::TooShort { len: file_len })?;
        let checksum_type =
            ChecksumType::from_byte(footer[0]).ok_or(Error::UnsupportedChecksumType { byte: footer[0] })?;
        let offset = file_len - FOOTER_LEN as u64;
        if version >= 6 {
            Self::decode_with_context(footer, offset, version, checksum_type)
        } else {
            Self::decode_with_handles(footer, offset, version, checksum_type)
        }
    }

    /// The format_version 1 to 5 footer at `offset`: both handles as
    /// varints in 40 bytes.
    fn decode_with_handles(
        footer: &[u8; FOOTER_LEN],
        offset: u64,
        version: u32,
        checksum_type: ChecksumType,
    ) -> Result<Footer, Error> {
        let (metaindex, index) = Self::decode_handles(&footer[1..41])?;
        Ok(Footer {
            magic: TableMagic::BlockBased,
            format_version: version,
            checksum_type,
            base_context_checksum: 0,
            metaindex,
            index: Some(index),
            offset,
            len: FOOTER_LEN,
        })
    }

    /// The format_version 6+ footer at `offset`: extended magic, its own
    /// checksum, the base context checksum and the metaindex size (the
    /// metaindex ends right before the footer).
    fn decode_with_context(
        footer: &[u8; FOOTER_LEN],
        offset: u64,
        version: u32,
        checksum_type: ChecksumType,
    ) -> Result<Footer, Error> {
        if footer[1..5] != EXTENDED_MAGIC {
            return Err(Error::BadFooter {
                what: format!(
                    "bad extended magic number {:02x}{:02x}{:02x}{:02x}",
                    footer[1], footer[2], footer[3], footer[4]
                ),
            });
        }
        let stored = fixed32(&footer[5..9]);
        let base = fixed32(&footer[9..13]);
        let metaindex_size = u64::from(fixed32(&footer[13..17]));
        if checksum::context_modifier(base, 0) == 0 {
            return Err(Error::BadFooter {
                what: "invalid base context checksum 0".into(),
            });
        }
        let mut covered = *footer;
        covered[5..9].fill(0);
        checksum::verify(checksum_type, base, offset, &covered, stored)
            .map_err(|m| Error::checksum_mismatch(&BlockKind::Footer, offset, m))?;
        if fixed64(&footer[33..41]) != 0 {
            return Err(Error::BadFooter {
                what: "the file uses a future feature (reserved footer bytes are set)".into(),
            });
        }
        let metaindex_offset = offset
            .checked_sub(BLOCK_TRAILER_LEN)
            .and_then(|end| end.checked_sub(metaindex_size))
            .ok_or(Error::OversizedHandle {
                block: BlockKind::Metaindex,
                offset: 0,
                size: metaindex_size,
            })?;
        Ok(Footer {
            magic: TableMagic::BlockBased,
            format_version: version,
            checksum_type,
            base_context_checksum: base,
            metaindex: BlockHandle::new(metaindex_offset, metaindex_size),
            index: None,
            offset,
            len: FOOTER_LEN,
        })
    }

    fn decode_legacy(tail: &[u8], file_len: u64) -> Result<Footer, Error> {
        let start = tail.len() - LEGACY_FOOTER_LEN;
        let (metaindex, index) = Self::decode_handles(&tail[start..start + 40])?;
        Ok(Footer {
            magic: TableMagic::LegacyBlockBased,
            format_version: 0,
            checksum_type: ChecksumType::Crc32c,
            base_context_checksum: 0,
            metaindex,
            index: Some(index),
            offset: file_len - LEGACY_FOOTER_LEN as u64,
            len: LEGACY_FOOTER_LEN,
        })
    }

    fn decode_handles(part: &[u8]) -> Result<(BlockHandle, BlockHandle), Error> {
        let mut r = Reader::new(part);
        let bad = |what| Error::BadVarint {
            block: BlockKind::Footer,
            offset: 0,
            what,
        };
        let metaindex = BlockHandle::decode(&mut r).ok_or_else(|| bad("metaindex handle"))?;
        let index = BlockHandle::decode(&mut r).ok_or_else(|| bad("index handle"))?;
        Ok((metaindex, index))
    }

    /// Whether blocks carry a context checksum (format_version 6 and later).
    pub fn uses_context_checksum(&self) -> bool {
        self.base_context_checksum != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_other_tables_and_short_files() {
        assert_eq!(Footer::decode(&[]), Err(Error::Empty));
        assert_eq!(Footer::decode(&[0; 20]), Err(Error::TooShort { len: 20 }));
        let mut f = vec![0u8; 64];
        f[56..].copy_from_slice(&PLAIN_TABLE_MAGIC.to_le_bytes());
        assert_eq!(Footer::decode(&f), Err(Error::PlainTable));
        f[56..].copy_from_slice(&LEGACY_PLAIN_TABLE_MAGIC.to_le_bytes());
        assert_eq!(Footer::decode(&f), Err(Error::PlainTable));
        f[56..].copy_from_slice(&CUCKOO_TABLE_MAGIC.to_le_bytes());
        assert_eq!(Footer::decode(&f), Err(Error::CuckooTable));
        f[56..].copy_from_slice(&7u64.to_le_bytes());
        assert_eq!(Footer::decode(&f), Err(Error::BadMagic { magic: 7 }));
        f[56..].copy_from_slice(&BLOCK_BASED_MAGIC.to_le_bytes());
        f[52..56].copy_from_slice(&9u32.to_le_bytes());
        assert_eq!(
            Footer::decode(&f),
            Err(Error::UnsupportedFormatVersion { version: 9 })
        );
    }

    #[test]
    fn legacy_and_v5_footers_decode() {
        let mut f = vec![0u8; 100];
        let n = f.len();
        // Legacy: handles (10, 20) and (30, 40) at the footer's start.
        f[n - 48..n - 44].copy_from_slice(&[10, 20, 30, 40]);
        f[n - 8..].copy_from_slice(&LEGACY_BLOCK_BASED_MAGIC.to_le_bytes());
        let footer = Footer::decode(&f).unwrap();
        assert_eq!(footer.format_version, 0);
        assert_eq!(footer.metaindex, BlockHandle::new(10, 20));
        assert_eq!(footer.index, Some(BlockHandle::new(30, 40)));
        // format_version 5 with xxHash64.
        let mut f = vec![0u8; 100];
        f[n - 53] = 3;
        f[n - 52..n - 48].copy_from_slice(&[1, 2, 3, 4]);
        f[n - 12..n - 8].copy_from_slice(&5u32.to_le_bytes());
        f[n - 8..].copy_from_slice(&BLOCK_BASED_MAGIC.to_le_bytes());
        let footer = Footer::decode(&f).unwrap();
        assert_eq!(footer.checksum_type, ChecksumType::XxHash64);
        assert_eq!(footer.metaindex, BlockHandle::new(1, 2));
        f[n - 53] = 9;
        assert_eq!(
            Footer::decode(&f),
            Err(Error::UnsupportedChecksumType { byte: 9 })
        );
    }
}
