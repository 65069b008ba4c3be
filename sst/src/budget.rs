//! The per-file read budget: how many bytes one operation on a file may
//! decompress or copy, so that a small hostile file cannot make the reader
//! allocate or work without bound.
//!
//! What is charged: the decompressed size of every block read for the
//! operation except data blocks (meta blocks, index blocks and partitions,
//! filter blocks and partitions), and every key or block copied out of a
//! block into memory the reader keeps (metaindex names, property names,
//! partition separators, filter contents). Data blocks have budgets of their
//! own ([`ReadBudget::for_data`]): a walk over the data blocks
//! ([`crate::SstFile::for_each_data_key`], what `verify_filter` does) may
//! decompress [`BUDGET_FLOOR`] plus [`DATA_BUDGET_PER_FILE_BYTE`] bytes per
//! byte of file, and the keys it reads get [`ReadBudget::for_file`] plus the
//! key bytes the properties record, those capped at
//! [`RAW_KEY_BYTES_PER_FILE_BYTE`] per byte of file (the property is the
//! file's word, not a bound: a hostile file can record any number). So a
//! walk's time is linear in the file size, whatever the file says.
//!
//! The limit is [`BUDGET_FLOOR`] plus [`BUDGET_PER_FILE_BYTE`] bytes per
//! byte of the file. A file RocksDB wrote needs far less:
//!
//! * RocksDB writes the metaindex, the properties and every filter block
//!   uncompressed (`kNoCompression` in `block_based_table_builder.cc`), so
//!   opening one decompresses nothing and copies about the bytes those
//!   blocks hold; the metaindex is written with restart interval 1 (no key
//!   shares bytes with the one before), the properties with one restart,
//!   and their keys are property names.
//! * Index blocks may be compressed; their decompressed size is what the
//!   index builder produced, a small fraction of the data.
//!
//! A hostile file, on the other hand, reaches the limit with repeated
//! shared keys (a key copied once per entry: quadratic) or very
//! compressible index blocks, and gets [`Error::BudgetExceeded`].

use crate::error::{BlockKind, Error};

/// The largest uncompressed block this reader accepts (256 MiB): every
/// decompressor stops there ([`crate::compression`]).
pub const MAX_BLOCK_LEN: u64 = 256 << 20;

/// The budget every file gets besides its per-byte share: room for one
/// block of the largest size this reader decompresses.
pub const BUDGET_FLOOR: u64 = MAX_BLOCK_LEN;
/// Bytes of budget per byte of file.
pub const BUDGET_PER_FILE_BYTE: u64 = 64;
/// Decompressed data-block bytes per byte of file that one walk over the
/// data blocks may produce. Data blocks are RocksDB's only blocks that hold
/// values, which can compress very well, so their share is larger than
/// [`BUDGET_PER_FILE_BYTE`]; a whole file compressing by more than this
/// (beyond the [`BUDGET_FLOOR`] every file gets) is no table RocksDB's
/// block sizes produce, and a hostile file full of 256 MiB run-length ZSTD
/// frames stays linear in its size.
pub const DATA_BUDGET_PER_FILE_BYTE: u64 = 1024;
/// The most key bytes per byte of file that `rocksdb.raw.key.size` may add
/// to a data walk's key budget: keys share prefixes in data blocks and
/// compress, but not by more than this in any table RocksDB writes.
pub const RAW_KEY_BYTES_PER_FILE_BYTE: u64 = 1024;

/// What one operation on one file may still decompress or copy.
#[derive(Debug, Clone)]
pub struct ReadBudget {
    limit: u64,
    used: u64,
}

impl ReadBudget {
    /// The budget of an operation on a file of `file_len` bytes.
    pub fn for_file(file_len: u64) -> Self {
        Self::with_limit(BUDGET_FLOOR.saturating_add(file_len.saturating_mul(BUDGET_PER_FILE_BYTE)))
    }

    /// The budget of one walk over the data blocks of a file of `file_len`
    /// bytes (their decompressed sizes).
    pub fn for_data(file_len: u64) -> Self {
        Self::with_limit(BUDGET_FLOOR.saturating_add(file_len.saturating_mul(DATA_BUDGET_PER_FILE_BYTE)))
    }

    /// The budget for the keys of one walk over the data blocks of a file of
    /// `file_len` bytes whose properties record `raw_key_size` key bytes.
    pub fn for_data_keys(file_len: u64, raw_key_size: u64) -> Self {
        let recorded = raw_key_size.min(file_len.saturating_mul(RAW_KEY_BYTES_PER_FILE_BYTE));
        Self::with_limit(Self::for_file(file_len).limit().saturating_add(recorded))
    }

    /// A budget of `limit` bytes.
    pub fn with_limit(limit: u64) -> Self {
        Self { limit, used: 0 }
    }

    /// A budget that is never exceeded (for tests of the decoders).
    pub fn unlimited() -> Self {
        Self::with_limit(u64::MAX)
    }

    /// The limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes that may still be charged.
    pub fn remaining(&self) -> u64 {
        self.limit - self.used
    }

    /// Bytes charged so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Charges `bytes` about to be decompressed or copied out of `block`
    /// at `offset`; an error, and nothing charged, when they do not fit.
    pub fn charge(&mut self, bytes: u64, block: &BlockKind, offset: u64) -> Result<(), Error> {
        match self.used.checked_add(bytes).filter(|&u| u <= self.limit) {
            Some(u) => {
                self.used = u;
                Ok(())
            }
            None => Err(Error::BudgetExceeded {
                block: block.clone(),
                offset,
                limit: self.limit,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_until_the_limit() {
        let mut b = ReadBudget::with_limit(10);
        b.charge(6, &BlockKind::Index, 0).unwrap();
        b.charge(4, &BlockKind::Index, 0).unwrap();
        let e = b.charge(1, &BlockKind::Metaindex, 7).unwrap_err();
        assert_eq!(b.used(), 10);
        assert!(
            e.to_string()
                .starts_with("read budget exceeded in metaindex block at offset 7"),
            "{e}"
        );
        assert!(ReadBudget::unlimited()
            .charge(u64::MAX, &BlockKind::Data, 0)
            .is_ok());
        assert_eq!(
            ReadBudget::for_file(1).limit(),
            BUDGET_FLOOR + BUDGET_PER_FILE_BYTE
        );
        assert_eq!(
            ReadBudget::for_data(2).limit(),
            BUDGET_FLOOR + 2 * DATA_BUDGET_PER_FILE_BYTE
        );
        // The recorded key bytes count up to their cap, never beyond.
        let base = ReadBudget::for_file(10).limit();
        assert_eq!(ReadBudget::for_data_keys(10, 5).limit(), base + 5);
        assert_eq!(
            ReadBudget::for_data_keys(10, u64::MAX).limit(),
            base + 10 * RAW_KEY_BYTES_PER_FILE_BYTE
        );
    }
}
