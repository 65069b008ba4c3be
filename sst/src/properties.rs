//! The table properties block.
//!
//! Ported from RocksDB's `table/meta_blocks.cc` (`ParsePropertiesBlock`,
//! `ReadTablePropertiesHelper`: the global-seqno checksum retry;
//! `PropertyBlockBuilder`: a sorted map, so each name once),
//! `table/table_properties.cc` and `include/rocksdb/table_properties.h`
//! (property names), and `table/block_based/block_based_table_factory.cc`
//! (`rocksdb.block.based.table.*` names).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::block_entries::{EntryIter, ValueFormat};
use crate::block_fetch::{verify_trailer, BlockFetcher};
use crate::budget::ReadBudget;
use crate::coding::{fixed32, Reader};
use crate::compression::NO_COMPRESSION;
use crate::error::{BlockKind, Error};
use crate::handle::{BlockHandle, BLOCK_TRAILER_LEN};

/// Name of the properties meta block in the metaindex.
pub const PROPERTIES_BLOCK: &str = "rocksdb.properties";
/// Property holding an ingested file's global sequence number.
pub const GLOBAL_SEQNO: &str = "rocksdb.external_sst_file.global_seqno";

/// Reads the properties block at `handle` (`ReadTablePropertiesHelper`):
/// parse first, then verify the checksum; on a mismatch, an ingested file
/// whose global seqno was rewritten in place is verified again with that
/// value zeroed. Every name and value copied is charged to `budget`.
pub fn read(
    fetch: &BlockFetcher<'_>,
    handle: BlockHandle,
    budget: &mut ReadBudget,
) -> Result<TableProperties, Error> {
    let kind = BlockKind::Properties;
    let stored = fetch.stored(handle, &kind)?;
    let checked = verify_trailer(&stored, fetch.footer(), handle, &kind);
    let body_len = stored.len() - BLOCK_TRAILER_LEN as usize;
    if stored[body_len] != NO_COMPRESSION {
        checked?;
        let block = fetch.decode(stored, handle, &kind, budget)?;
        return parse(&block.contents, handle.offset, budget);
    }
    let Err(mismatch) = checked else {
        return parse(&stored[..body_len], handle.offset, budget);
    };
    // A checksum mismatch stands unless the block parses, has a global
    // seqno, and verifies with that value zeroed.
    let Ok(props) = parse(&stored[..body_len], handle.offset, budget) else {
        return Err(mismatch);
    };
    let Some(at) = props.global_seqno_value_offset.filter(|o| o + 8 <= body_len) else {
        return Err(mismatch);
    };
    let mut copy = Cow::into_owned(stored);
    copy[at..at + 8].fill(0);
    verify_trailer(&copy, fetch.footer(), handle, &kind).map_err(|_| mismatch)?;
    Ok(props)
}

/// Parses the contents of a properties block at `offset`. A name repeated
/// from the entry before is an error (RocksDB writes each name once, from
/// a map).
fn parse(contents: &[u8], offset: u64, budget: &mut ReadBudget) -> Result<TableProperties, Error> {
    let kind = BlockKind::Properties;
    let mut props = TableProperties::default();
    let mut it = EntryIter::new(contents, kind.clone(), offset, ValueFormat::Plain, 0)?;
    while it.advance()? {
        if it.repeats_previous_key() {
            return Err(it.bad("property name repeated"));
        }
        budget.charge((it.key().len() + it.value().len()) as u64, &kind, offset)?;
        let name = String::from_utf8_lossy(it.key()).into_owned();
        if name == GLOBAL_SEQNO {
            props.global_seqno_value_offset = Some(it.value_offset());
        }
        props.raw.insert(name, it.value().to_vec());
    }
    Ok(props)
}

/// The index type of a block-based table (`BlockBasedTableOptions::IndexType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexType {
    /// `kBinarySearch` (0).
    BinarySearch,
    /// `kHashSearch` (1).
    HashSearch,
    /// `kTwoLevelIndexSearch` (2): a partitioned index.
    TwoLevelIndexSearch,
    /// `kBinarySearchWithFirstKey` (3).
    BinarySearchWithFirstKey,
    /// Another value.
    Other(u32),
}

impl IndexType {
    /// From the property's value.
    pub fn from_u32(v: u32) -> Self {
        match v {
            0 => IndexType::BinarySearch,
            1 => IndexType::HashSearch,
            2 => IndexType::TwoLevelIndexSearch,
            3 => IndexType::BinarySearchWithFirstKey,
            v => IndexType::Other(v),
        }
    }

    /// RocksDB's enumerator name.
    pub fn name(&self) -> String {
        match self {
            IndexType::BinarySearch => "kBinarySearch".into(),
            IndexType::HashSearch => "kHashSearch".into(),
            IndexType::TwoLevelIndexSearch => "kTwoLevelIndexSearch".into(),
            IndexType::BinarySearchWithFirstKey => "kBinarySearchWithFirstKey".into(),
            IndexType::Other(v) => format!("unknown({v})"),
        }
    }
}

/// The properties of a table that matter for its filter, plus every raw
/// property by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableProperties {
    /// Every property, by name, with its raw value.
    pub raw: BTreeMap<String, Vec<u8>>,
    /// Offset of the global seqno value in the properties block, if any.
    pub global_seqno_value_offset: Option<usize>,
}

impl TableProperties {
    /// A `u64` property (varint-encoded). `None` when absent or malformed
    /// (RocksDB skips malformed values).
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.raw.get(name).and_then(|v| Reader::new(v).varint64())
    }

    /// A string property; `None` when absent.
    pub fn string(&self, name: &str) -> Option<String> {
        self.raw
            .get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// `rocksdb.num.entries`.
    pub fn num_entries(&self) -> Option<u64> {
        self.u64("rocksdb.num.entries")
    }

    /// `rocksdb.num.filter_entries`: keys and prefixes added to the filter.
    pub fn num_filter_entries(&self) -> Option<u64> {
        self.u64("rocksdb.num.filter_entries")
    }

    /// `rocksdb.raw.key.size`: the bytes of every key added to the table.
    pub fn raw_key_size(&self) -> Option<u64> {
        self.u64("rocksdb.raw.key.size")
    }

    /// `rocksdb.num.data.blocks`.
    pub fn num_data_blocks(&self) -> Option<u64> {
        self.u64("rocksdb.num.data.blocks")
    }

    /// `rocksdb.data.size`.
    pub fn data_size(&self) -> Option<u64> {
        self.u64("rocksdb.data.size")
    }

    /// `rocksdb.index.size`.
    pub fn index_size(&self) -> Option<u64> {
        self.u64("rocksdb.index.size")
    }

    /// `rocksdb.filter.size`.
    pub fn filter_size(&self) -> Option<u64> {
        self.u64("rocksdb.filter.size")
    }

    /// `rocksdb.format.version` (the footer's format_version is the one
    /// the reader goes by).
    pub fn format_version(&self) -> Option<u64> {
        self.u64("rocksdb.format.version")
    }

    /// `rocksdb.filter.policy`: the filter policy's name (for the built-in
    /// policies, `bloomfilter` or `ribbonfilter`...).
    pub fn filter_policy(&self) -> Option<String> {
        self.string("rocksdb.filter.policy")
    }

    /// `rocksdb.prefix.extractor.name` (`nullptr` when there is none).
    pub fn prefix_extractor_name(&self) -> Option<String> {
        self.string("rocksdb.prefix.extractor.name")
    }

    /// `rocksdb.comparator`.
    pub fn comparator(&self) -> Option<String> {
        self.string("rocksdb.comparator")
    }

    /// `rocksdb.compression`.
    pub fn compression(&self) -> Option<String> {
        self.string("rocksdb.compression")
    }

    /// `rocksdb.column.family.name`.
    pub fn column_family_name(&self) -> Option<String> {
        self.string("rocksdb.column.family.name")
    }

    /// `rocksdb.index.key.is.user.key`: index separators are user keys
    /// (no sequence number and type).
    pub fn index_key_is_user_key(&self) -> bool {
        self.u64("rocksdb.index.key.is.user.key").unwrap_or(0) != 0
    }

    /// `rocksdb.index.value.is.delta.encoded`.
    pub fn index_value_is_delta_encoded(&self) -> bool {
        self.u64("rocksdb.index.value.is.delta.encoded").unwrap_or(0) != 0
    }

    /// `rocksdb.index.partitions`.
    pub fn index_partitions(&self) -> Option<u64> {
        self.u64("rocksdb.index.partitions")
    }

    /// `rocksdb.data.block.restart.interval`.
    pub fn data_block_restart_interval(&self) -> Option<u64> {
        self.u64("rocksdb.data.block.restart.interval")
    }

    /// `rocksdb.block.based.table.index.type` (a fixed 32-bit value).
    pub fn index_type(&self) -> Option<IndexType> {
        self.raw
            .get("rocksdb.block.based.table.index.type")
            .filter(|v| v.len() >= 4)
            .map(|v| IndexType::from_u32(fixed32(v)))
    }

    /// `rocksdb.block.based.table.whole.key.filtering`: true unless the
    /// property says `0` (older files lack it: true).
    pub fn whole_key_filtering(&self) -> bool {
        self.raw
            .get("rocksdb.block.based.table.whole.key.filtering")
            .is_none_or(|v| v.as_slice() != b"0")
    }

    /// `rocksdb.block.based.table.prefix.filtering`: true unless `0`.
    pub fn prefix_filtering(&self) -> bool {
        self.raw
            .get("rocksdb.block.based.table.prefix.filtering")
            .is_none_or(|v| v.as_slice() != b"0")
    }

    /// The user-defined timestamp size the comparator name implies
    /// (`.u64ts` suffix: 8 bytes), or 0.
    pub fn timestamp_size(&self) -> usize {
        match self.comparator() {
            Some(c) if c.ends_with(".u64ts") => 8,
            _ => 0,
        }
    }
}
