//! The table properties block.
//!
//! Ported from RocksDB's `table/meta_blocks.cc` (`ParsePropertiesBlock`,
//! `ReadTablePropertiesHelper`: the global-seqno checksum retry),
//! `table/table_properties.cc` and `include/rocksdb/table_properties.h`
//! (property names), and `table/block_based/block_based_table_factory.cc`
//! (`rocksdb.block.based.table.*` names).

use std::collections::BTreeMap;

use crate::coding::{fixed32, Reader};

/// Name of the properties meta block in the metaindex.
pub const PROPERTIES_BLOCK: &str = "rocksdb.properties";
/// Property holding an ingested file's global sequence number.
pub const GLOBAL_SEQNO: &str = "rocksdb.external_sst_file.global_seqno";

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
