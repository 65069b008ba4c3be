//! The reader RocksDB gets from every policy whose blocks the `ribbon`
//! crate reads: the table's filter family decides the format
//! ([`ribbon::plugin::TableFilter`]).

use crate::counters::READERS_CREATED;
use crate::custom::{FilterBlock, Reader};
use ribbon::plugin::{Family, TableFilter};
use std::sync::atomic::Ordering::Relaxed;

/// A reader of any filter block of a family the `ribbon` crate reads
/// (RocksDB's built-in formats; `rust.BalancedRibbon`'s), parsed once.
/// `reader` borrows `block`'s bytes; it is declared first, so it is dropped
/// first.
pub(crate) struct FamilyReader {
    reader: TableFilter<'static>,
    _block: FilterBlock,
}

impl FamilyReader {
    /// The reader of `block` (counted in [`crate::Counters`]).
    pub(crate) fn new(block: FilterBlock, family: Family) -> Self {
        READERS_CREATED.fetch_add(1, Relaxed);
        // SAFETY: the bytes behind `block` do not move when `block` does (they
        // are RocksDB's block or a boxed slice) and live as long as `block`,
        // which this struct owns and drops after `reader`, so the borrow never
        // outlives them.
        let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(block.as_ptr(), block.len()) };
        Self {
            reader: TableFilter::in_family(family, bytes),
            _block: block,
        }
    }
}

impl Reader for FamilyReader {
    fn may_match(&self, key: &[u8]) -> bool {
        self.reader.may_match(key)
    }
    fn may_match_many(&self, keys: &[&[u8]], out: &mut [bool]) {
        // Keys and answers of the same length (C++'s batch); hashes on the
        // stack.
        let n = keys.len().min(out.len());
        self.reader.may_match_many_into(&keys[..n], &mut out[..n]);
    }
}
