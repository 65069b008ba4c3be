//! A table's filter: none, full, or partitioned, and the queries RocksDB's
//! `Get` makes against it.
//!
//! Ported from RocksDB's `table/block_based/block_based_table_reader.cc`
//! (`PrefetchIndexAndFilterBlocks`: the metaindex names `fullfilter.`,
//! `partitionedfilter.` and the obsolete `filter.` + the policy's
//! compatibility name; `FullFilterKeyMayMatch`),
//! `table/block_based/full_filter_block.cc` (`KeyMayMatch`,
//! `PrefixMayMatch`) and `table/block_based/partitioned_filter_block.cc`
//! (`GetFilterPartitionHandle`, `MayMatch`: seek the partition index to the
//! first separator at or after the lookup key, the last partition when
//! there is none; a zero-size handle answers "no"; an empty index "maybe").
//! The block-based filter of RocksDB before 7.0 is read by
//! [`crate::block_based_filter`] and queried per data block
//! ([`crate::SstFile::key_may_match`]).

use crate::footer::BlockHandle;
use crate::key::{self, Comparator};
use core::cmp::Ordering;
use ribbon::plugin::table_filter::{Description, Family, TableFilter};
use ribbon::rocksdb::format::FilterReader;

/// Metaindex prefix of a full filter.
pub const FULL_FILTER_PREFIX: &str = "fullfilter.";
/// Metaindex prefix of a partitioned filter.
pub const PARTITIONED_FILTER_PREFIX: &str = "partitionedfilter.";
/// Metaindex prefix of the block-based filter of RocksDB before 7.0.
pub const OBSOLETE_FILTER_PREFIX: &str = "filter.";
/// The compatibility name of RocksDB's built-in filter policies (and of
/// the bridge's `rust.RibbonFilter` and `rust.BloomFilter`).
pub const BUILTIN_COMPATIBILITY_NAME: &str = "rocksdb.BuiltinBloomFilter";

/// One partition of a partitioned filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The separator key in the partition index (an internal key, or a
    /// user key when the table says index keys are user keys).
    pub separator: Vec<u8>,
    /// Where the partition is.
    pub handle: BlockHandle,
    /// The partition's filter block contents.
    pub contents: Vec<u8>,
}

/// How the filter of a table is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// No filter block.
    None,
    /// A block-based filter (`filter.` prefix) of a policy other than the
    /// built-in one: every query may match.
    Obsolete {
        /// The block.
        handle: BlockHandle,
    },
    /// The block-based filter of RocksDB before 7.0 (`filter.` +
    /// `rocksdb.BuiltinBloomFilter`): one Bloom filter per range of data
    /// block offsets, queried through the index as RocksDB 6.x's `Get`
    /// did. RocksDB 7 and later ignore it (every query may match).
    BlockBased {
        /// The block.
        handle: BlockHandle,
        /// The filter block contents (checked by
        /// [`crate::block_based_filter::BlockBasedFilterBlock::parse`]).
        contents: Vec<u8>,
        /// Every data block's index separator and handle, in index order.
        data_blocks: Vec<(Vec<u8>, BlockHandle)>,
        /// Whether separators are internal keys; otherwise user keys.
        index_key_includes_seq: bool,
    },
    /// A filter of a family this reader does not know (neither the
    /// built-in one nor `rust.BalancedRibbon`): every query may match.
    UnknownPolicy {
        /// Its compatibility name.
        compatibility_name: String,
        /// The block.
        handle: BlockHandle,
        /// Whether it is partitioned.
        partitioned: bool,
    },
    /// One filter for the whole table.
    Full {
        /// The block.
        handle: BlockHandle,
        /// The filter block contents.
        contents: Vec<u8>,
        /// The family its blocks are read by.
        family: Family,
    },
    /// A partitioned filter.
    Partitioned {
        /// The top-level partition index block.
        index_handle: BlockHandle,
        /// Whether separators are internal keys (with sequence number and
        /// type); otherwise user keys.
        index_key_includes_seq: bool,
        /// The partitions in index order (empty when the index block is
        /// empty).
        partitions: Vec<Partition>,
        /// The family its blocks are read by.
        family: Family,
    },
}

/// The facts a query needs about the table besides the filter.
#[derive(Debug, Clone)]
pub(crate) struct QueryContext<'a> {
    pub whole_key_filtering: bool,
    pub prefix_extractor: Option<&'a crate::prefix::PrefixExtractor>,
    pub comparator: Comparator,
}

impl Filter {
    /// Whether a filter this reader can query is present.
    pub fn is_queryable(&self) -> bool {
        matches!(
            self,
            Filter::Full { .. } | Filter::Partitioned { .. } | Filter::BlockBased { .. }
        )
    }

    /// The parsed block-based filter block, for [`Filter::BlockBased`].
    pub fn block_based(&self) -> Option<crate::block_based_filter::BlockBasedFilterBlock<'_>> {
        match self {
            Filter::BlockBased { handle, contents, .. } => {
                // Parsed in full when the table was opened (filter_loading):
                // the constant-time layout is enough here.
                crate::block_based_filter::BlockBasedFilterBlock::layout(contents, handle.offset).ok()
            }
            _ => None,
        }
    }

    /// The family of a full or partitioned filter's blocks (the built-in
    /// one for every other kind).
    pub fn family(&self) -> Family {
        match self {
            Filter::Full { family, .. } | Filter::Partitioned { family, .. } => *family,
            _ => Family::Builtin,
        }
    }

    /// The reader of one of this filter's blocks (the full filter's or a
    /// partition's), by the filter's family.
    pub fn block_reader<'a>(&self, contents: &'a [u8]) -> TableFilter<'a> {
        TableFilter::in_family(self.family(), contents)
    }

    /// The reader of one of this filter's partitions: a zero-size handle
    /// marks keys past the table's range, where nothing matches.
    pub(crate) fn partition_reader<'a>(&self, partition: &'a Partition) -> TableFilter<'a> {
        match partition.handle.size {
            0 => TableFilter::Builtin(FilterReader::AlwaysFalse),
            _ => self.block_reader(&partition.contents),
        }
    }

    /// The filter blocks' contents (one for a full filter, one per
    /// partition), in order; none for a block-based filter (its block holds
    /// many filters: see [`Filter::block_based`]).
    pub fn blocks(&self) -> Vec<&[u8]> {
        match self {
            Filter::Full { contents, .. } => vec![contents.as_slice()],
            Filter::Partitioned { partitions, .. } => {
                partitions.iter().map(|p| p.contents.as_slice()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The partition `Get` reads for `user_key` (without timestamp): its
    /// index, or `None` when the partition cannot be chosen (no partitions,
    /// or a comparator this reader does not know).
    pub(crate) fn partition_for(&self, user_key: &[u8], cmp: Comparator) -> Option<usize> {
        let Filter::Partitioned {
            index_key_includes_seq,
            partitions,
            ..
        } = self
        else {
            return None;
        };
        if partitions.is_empty() || !cmp.is_known() {
            return None;
        }
        let target = seek_target(user_key, cmp, *index_key_includes_seq);
        let i = partitions.partition_point(|p| below(&p.separator, &target, cmp, *index_key_includes_seq));
        Some(i.min(partitions.len() - 1))
    }

    /// The first data block whose index separator is at or after
    /// `user_key` (without timestamp), as `Get`'s index seek finds it, for
    /// [`Filter::BlockBased`]; `None` past the last one or with a
    /// comparator this reader does not know.
    pub(crate) fn data_block_for(&self, user_key: &[u8], cmp: Comparator) -> Option<usize> {
        let Filter::BlockBased {
            data_blocks,
            index_key_includes_seq,
            ..
        } = self
        else {
            return None;
        };
        if !cmp.is_known() {
            return None;
        }
        let target = seek_target(user_key, cmp, *index_key_includes_seq);
        let i = data_blocks.partition_point(|(sep, _)| below(sep, &target, cmp, *index_key_includes_seq));
        (i < data_blocks.len()).then_some(i)
    }

    /// Whether `entry` (a whole key or a prefix) may be in the filter, with
    /// the partition chosen by `user_key` as RocksDB does (the lookup key,
    /// not the prefix, picks the partition).
    pub(crate) fn entry_may_match(&self, entry: &[u8], user_key: &[u8], cmp: Comparator) -> bool {
        match self {
            Filter::Full { contents, .. } => self.block_reader(contents).may_match(entry),
            Filter::Partitioned { partitions, .. } => match self.partition_for(user_key, cmp) {
                None => true,
                Some(i) => self.partition_reader(&partitions[i]).may_match(entry),
            },
            _ => true,
        }
    }

    /// What `Get(user_key)` asks the filter (`FullFilterKeyMayMatch`): the
    /// whole key when the table filters whole keys, else the key's prefix
    /// when it is in the extractor's domain, else nothing ("may match").
    pub(crate) fn key_may_match(&self, user_key: &[u8], ctx: &QueryContext<'_>) -> bool {
        if !self.is_queryable() {
            return true;
        }
        if ctx.whole_key_filtering {
            self.entry_may_match(user_key, user_key, ctx.comparator)
        } else if let Some(prefix) = ctx.prefix_extractor.and_then(|p| p.transform(user_key)) {
            self.entry_may_match(prefix, user_key, ctx.comparator)
        } else {
            true
        }
    }

    /// A summary of the filter blocks for `info`.
    pub fn summary(&self) -> FilterSummary {
        let mut s = FilterSummary::default();
        if let Filter::BlockBased { contents, .. } = self {
            s.bytes = contents.len() as u64;
            if let Some(b) = self.block_based() {
                s.kinds.push((BLOCK_BASED_KIND, b.len()));
            }
            return s;
        }
        let descs: Vec<Description> = self
            .blocks()
            .iter()
            .map(|b| self.block_reader(b).describe())
            .collect();
        for (b, d) in self.blocks().iter().zip(&descs) {
            s.bytes += b.len() as u64;
            let kind = d.kind_name();
            match s.kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => s.kinds.push((kind, 1)),
            }
        }
        s.descriptions = descs;
        s
    }
}

/// The kind name of a block-based filter's Bloom filters.
pub const BLOCK_BASED_KIND: &str = "BlockBasedBloom";

/// The key an index seek for `user_key` (without timestamp) looks for: a
/// read at the newest timestamp, as an internal lookup key when the index
/// keys are internal keys.
fn seek_target(user_key: &[u8], cmp: Comparator, internal: bool) -> Vec<u8> {
    let mut user = user_key.to_vec();
    user.extend(std::iter::repeat_n(0xffu8, cmp.timestamp_size));
    if internal {
        key::lookup_key(&user)
    } else {
        user
    }
}

/// Whether index separator `sep` sorts before `target`.
fn below(sep: &[u8], target: &[u8], cmp: Comparator, internal: bool) -> bool {
    let ord = if internal {
        cmp.compare_internal(sep, target)
    } else {
        cmp.compare_user(sep, target)
    };
    ord == Some(Ordering::Less)
}

/// Per-kind counts and sizes of a table's filter blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilterSummary {
    /// Filter kinds in first-seen order, with how many blocks have each.
    pub kinds: Vec<(&'static str, usize)>,
    /// Bytes of filter blocks (all partitions; without the partition
    /// index), trailers excluded.
    pub bytes: u64,
    /// Each block's description, in order.
    pub descriptions: Vec<Description>,
}

impl FilterSummary {
    /// `Standard128Ribbon`, or a mix such as `Standard128Ribbon×7+AlwaysFalse×1`.
    pub fn kind_label(&self) -> String {
        match self.kinds.as_slice() {
            [] => "none".into(),
            [(k, _)] => (*k).into(),
            many => many
                .iter()
                .map(|(k, n)| format!("{k}×{n}"))
                .collect::<Vec<_>>()
                .join("+"),
        }
    }
}
