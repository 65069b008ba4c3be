//! The layout of a block's contents, from the footer at its end.
//!
//! Ported from RocksDB's `table/block_based/block.{h,cc}` (`Block::Block`),
//! `block_util.h`, `data_block_footer.cc` and `data_block_hash_index.cc`:
//!
//! ```text
//! entries | [values section] | restarts (u32 each) | [hash index] | [values offset u32] | footer u32
//! ```
//!
//! The footer packs the restart count (low 28 bits) with flags: bit 31 a
//! data-block hash index, bit 29 "uniform keys", bit 28 separated key/value
//! storage; bit 30 is reserved.

use crate::coding::fixed32;
use crate::error::{BlockKind, Error};

const HASH_INDEX_BIT: u32 = 1 << 31;
/// The reserved footer bit: a block using it needs a newer reader.
pub(crate) const RESERVED_BIT: u32 = 1 << 30;
const UNIFORM_BIT: u32 = 1 << 29;
const SEPARATED_KV_BIT: u32 = 1 << 28;
const MAX_HASH_INDEXED_BLOCK: usize = 1 << 16;

/// Where the parts of a block are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// End of the entries (0 when the block has no restart point).
    pub keys_end: usize,
    /// Start of the values section, when keys and values are stored apart.
    pub values_section: Option<usize>,
    /// End of the values (the start of the restart array).
    pub values_end: usize,
}

impl Layout {
    /// Reads the layout of `data`, the contents of a block of kind `block`
    /// at `offset`, checking that every part fits.
    pub fn of(data: &[u8], block: &BlockKind, offset: u64) -> Result<Self, Error> {
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
}
