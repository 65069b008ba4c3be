//! Finding the table's filter in the metaindex and reading its blocks.
//!
//! Ported from RocksDB's `table/block_based/block_based_table_reader.cc`
//! (`PrefetchIndexAndFilterBlocks`: the metaindex names `fullfilter.`,
//! `partitionedfilter.` and the obsolete `filter.` + the policy's
//! compatibility name) and `table/block_based/partitioned_filter_block.cc`
//! (`CacheDependencies`: the partition index lists the partitions in the
//! order `PartitionedFilterBlockBuilder` wrote them, one after another).

use crate::block_entries::{EntryIter, ValueFormat};
use crate::block_fetch::BlockFetcher;
use crate::budget::ReadBudget;
use crate::error::{BlockKind, Error};
use crate::filter::{
    Filter, Partition, BUILTIN_COMPATIBILITY_NAME, FULL_FILTER_PREFIX, OBSOLETE_FILTER_PREFIX,
    PARTITIONED_FILTER_PREFIX,
};
use crate::handle::{BlockHandle, HandleOrder};
use crate::metaindex;
use crate::properties::TableProperties;
use ribbon::plugin::Family;
use std::borrow::Cow;

const PREFIXES: [&str; 3] = [
    FULL_FILTER_PREFIX,
    PARTITIONED_FILTER_PREFIX,
    OBSOLETE_FILTER_PREFIX,
];

/// Reads the filter the metaindex names, with its metaindex name (or
/// [`Filter::None`]). RocksDB looks up its configured policy's
/// compatibility name; this reader takes the built-in family when present,
/// else `rust.BalancedRibbon`, else the first found.
pub fn read(
    fetch: &BlockFetcher<'_>,
    metaindex: &[(Vec<u8>, BlockHandle)],
    props: &TableProperties,
    budget: &mut ReadBudget,
) -> Result<(Filter, Option<String>), Error> {
    let names: Vec<String> = metaindex
        .iter()
        .filter_map(|(k, _)| {
            let k = String::from_utf8_lossy(k);
            PREFIXES
                .iter()
                .find_map(|p| k.strip_prefix(p).map(str::to_string))
        })
        .collect();
    let Some(name) = names
        .iter()
        .find(|n| *n == BUILTIN_COMPATIBILITY_NAME)
        .or_else(|| {
            names
                .iter()
                .find(|n| Family::from_compatibility_name(n).is_some())
        })
        .or_else(|| names.first())
    else {
        return Ok((Filter::None, None));
    };
    for prefix in PREFIXES {
        let block_name = format!("{prefix}{name}");
        let Some(handle) = metaindex::find(metaindex, &block_name) else {
            continue;
        };
        let partitioned = prefix == PARTITIONED_FILTER_PREFIX;
        let filter = if prefix == OBSOLETE_FILTER_PREFIX && name == BUILTIN_COMPATIBILITY_NAME {
            read_block_based(fetch, handle, metaindex, props, budget)?
        } else if prefix == OBSOLETE_FILTER_PREFIX {
            Filter::Obsolete { handle }
        } else if let Some(family) = Family::from_compatibility_name(name) {
            if partitioned {
                read_partitioned(fetch, handle, props, family, budget)?
            } else {
                Filter::Full {
                    handle,
                    contents: read_filter_block(fetch, handle, budget)?,
                    family,
                }
            }
        } else {
            Filter::UnknownPolicy {
                compatibility_name: name.clone(),
                handle,
                partitioned,
            }
        };
        return Ok((filter, Some(block_name)));
    }
    Ok((Filter::None, None))
}

/// The contents of one filter block (a full filter or a partition). A
/// block borrowed from memory is copied and the copy charged to `budget`;
/// one decompressed was charged as it was, and one read from disk is
/// bounded by the file (partitions do not overlap).
fn read_filter_block(
    fetch: &BlockFetcher<'_>,
    handle: BlockHandle,
    budget: &mut ReadBudget,
) -> Result<Vec<u8>, Error> {
    let kind = BlockKind::Filter;
    let block = fetch.read(handle, &kind, budget)?;
    match block.contents {
        Cow::Borrowed(b) => {
            budget.charge(b.len() as u64, &kind, handle.offset)?;
            Ok(b.to_vec())
        }
        Cow::Owned(v) => Ok(v),
    }
}

/// A block-based filter (RocksDB before 7.0): the block, checked, and the
/// index's separator and handle of every data block, which queries look up
/// as `Get` did (each separator copied is charged to `budget`).
fn read_block_based(
    fetch: &BlockFetcher<'_>,
    handle: BlockHandle,
    metaindex: &[(Vec<u8>, BlockHandle)],
    props: &TableProperties,
    budget: &mut ReadBudget,
) -> Result<Filter, Error> {
    let contents = read_filter_block(fetch, handle, budget)?;
    crate::block_based_filter::BlockBasedFilterBlock::parse(&contents, handle.offset)?;
    let index = match fetch.footer().index {
        Some(h) => h,
        None => metaindex::find(metaindex, metaindex::INDEX_BLOCK).ok_or_else(|| Error::Missing {
            what: format!("{:?} in the metaindex", metaindex::INDEX_BLOCK),
        })?,
    };
    let mut data_blocks = Vec::new();
    let walk = crate::index_walk::IndexWalk::new(*fetch, props, index);
    // The index blocks read are charged to `budget`, the separators copied
    // to what is left of it, then to `budget` itself.
    let mut copied = ReadBudget::with_limit(budget.limit().saturating_sub(budget.used()));
    walk.for_each_data_block_keyed(budget, &mut |sep, h| {
        copied.charge(sep.len() as u64 + 16, &BlockKind::Index, index.offset)?;
        data_blocks.push((sep.to_vec(), h));
        Ok(())
    })?;
    budget.charge(copied.used(), &BlockKind::Index, index.offset)?;
    Ok(Filter::BlockBased {
        handle,
        contents,
        data_blocks,
        index_key_includes_seq: !props.index_key_is_user_key(),
    })
}

/// A partitioned filter: its partition index, then every partition. The
/// partitions must follow one another in the file (see
/// [`HandleOrder`]), so each is read once; every separator copied is
/// charged to `budget`.
fn read_partitioned(
    fetch: &BlockFetcher<'_>,
    index_handle: BlockHandle,
    props: &TableProperties,
    family: Family,
    budget: &mut ReadBudget,
) -> Result<Filter, Error> {
    let kind = BlockKind::FilterPartitionIndex;
    let index = fetch.read(index_handle, &kind, budget)?;
    let mut partitions = Vec::new();
    if !index.contents.is_empty() {
        let format = if props.index_value_is_delta_encoded() {
            ValueFormat::DeltaHandles
        } else {
            ValueFormat::Plain
        };
        let mut it = EntryIter::new(&index.contents, kind.clone(), index_handle.offset, format, 0)?;
        let mut order = HandleOrder::new();
        while it.advance()? {
            let handle = it.index_handle()?;
            order.accept(
                handle,
                fetch.file_len(),
                &BlockKind::Filter,
                &kind,
                index_handle.offset,
            )?;
            budget.charge(it.key().len() as u64, &kind, index_handle.offset)?;
            let contents = if handle.size == 0 {
                Vec::new()
            } else {
                read_filter_block(fetch, handle, budget)?
            };
            partitions.push(Partition {
                separator: it.key().to_vec(),
                handle,
                contents,
            });
        }
    }
    Ok(Filter::Partitioned {
        index_handle,
        index_key_includes_seq: !props.index_key_is_user_key(),
        partitions,
        family,
    })
}
