//! The metaindex block: the names of the meta blocks and their handles.
//!
//! Ported from RocksDB's `table/meta_blocks.cc` (`MetaIndexBuilder`: a
//! sorted map written with restart interval 1; `FindMetaBlock`,
//! `FindOptionalMetaBlock`) and the names in
//! `table/block_based/block_based_table_reader.cc`.

use crate::block_entries::{EntryIter, ValueFormat};
use crate::block_fetch::BlockFetcher;
use crate::budget::ReadBudget;
use crate::error::{BlockKind, Error};
use crate::handle::BlockHandle;

/// Metaindex name of the index block (format_version 6 and later).
pub const INDEX_BLOCK: &str = "rocksdb.index";
/// Metaindex name of the range deletion block.
pub const RANGE_DEL_BLOCK: &str = "rocksdb.range_del";
/// Metaindex name of the compression dictionary block.
pub const COMPRESSION_DICT_BLOCK: &str = "rocksdb.compression_dict";

/// The metaindex entries: meta block names and handles, in file order.
pub type MetaindexEntries = Vec<(Vec<u8>, BlockHandle)>;

/// Reads the metaindex the footer points at. Every name copied is charged
/// to `budget`; a name repeated from the entry before is an error
/// (RocksDB writes each name once, from a map).
pub fn read(fetch: &BlockFetcher<'_>, budget: &mut ReadBudget) -> Result<MetaindexEntries, Error> {
    let kind = BlockKind::Metaindex;
    let handle = fetch.footer().metaindex;
    let block = fetch.read(handle, &kind, budget)?;
    let mut it = EntryIter::new(
        &block.contents,
        kind.clone(),
        handle.offset,
        ValueFormat::Plain,
        0,
    )?;
    let mut out = Vec::new();
    while it.advance()? {
        if it.repeats_previous_key() {
            return Err(it.bad("meta block name repeated"));
        }
        let h = BlockHandle::decode_from(it.value()).ok_or_else(|| Error::BadVarint {
            block: kind.clone(),
            offset: handle.offset,
            what: "meta block handle",
        })?;
        budget.charge(it.key().len() as u64, &kind, handle.offset)?;
        out.push((it.key().to_vec(), h));
    }
    Ok(out)
}

/// The handle of the meta block named `name`.
pub fn find(entries: &[(Vec<u8>, BlockHandle)], name: &str) -> Option<BlockHandle> {
    entries
        .iter()
        .find(|(k, _)| k == name.as_bytes())
        .map(|(_, h)| *h)
}
