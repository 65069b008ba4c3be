//! Walking the index: the handles of the data blocks, in key order, one
//! index block at a time.
//!
//! Ported from RocksDB's `table/block_based/index_reader_common.cc`,
//! `binary_search_index_reader.cc` and `partitioned_index_reader.cc`
//! (index values: block handles, delta-encoded from format_version 4, with
//! the first key for `kBinarySearchWithFirstKey`; a two-level index points
//! at index partitions). `index_builder.cc` adds one entry per data block
//! (or index partition) as it is written, so the handles of a walk follow
//! one another in the file: [`HandleOrder`] checks it, and a walk reads
//! each block once.

use crate::block_entries::{EntryIter, ValueFormat};
use crate::block_fetch::BlockFetcher;
use crate::budget::ReadBudget;
use crate::error::{BlockKind, Error};
use crate::handle::{BlockHandle, HandleOrder};
use crate::properties::{IndexType, TableProperties};

/// What a walk calls with each index entry: its key and handle.
pub type KeyedVisit<'f> = dyn FnMut(&[u8], BlockHandle) -> Result<(), Error> + 'f;

/// The index of one table.
#[derive(Debug, Clone, Copy)]
pub struct IndexWalk<'a> {
    fetch: BlockFetcher<'a>,
    props: &'a TableProperties,
    top: BlockHandle,
}

impl<'a> IndexWalk<'a> {
    /// The index whose top-level block is at `top`.
    pub fn new(fetch: BlockFetcher<'a>, props: &'a TableProperties, top: BlockHandle) -> Self {
        Self { fetch, props, top }
    }

    fn index_type(&self) -> IndexType {
        self.props.index_type().unwrap_or(IndexType::BinarySearch)
    }

    /// Whether the index is two-level (index partitions).
    pub fn is_partitioned(&self) -> bool {
        self.index_type() == IndexType::TwoLevelIndexSearch
    }

    /// Calls `f` with each handle listed by the index block at `handle`
    /// (of kind `kind`), after checking it against `order` as the handle
    /// of a `target` block.
    fn for_each_entry(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        target: &BlockKind,
        order: &mut HandleOrder,
        budget: &mut ReadBudget,
        f: &mut KeyedVisit<'_>,
    ) -> Result<(), Error> {
        let block = self.fetch.read(handle, &kind, budget)?;
        let format = if self.props.index_value_is_delta_encoded() {
            ValueFormat::DeltaHandles
        } else {
            ValueFormat::Plain
        };
        let with_first_key = self.index_type() == IndexType::BinarySearchWithFirstKey;
        let mut it = EntryIter::new(&block.contents, kind.clone(), handle.offset, format, 0)?
            .with_first_key(with_first_key);
        while it.advance()? {
            let h = it.index_handle()?;
            order.accept(h, self.fetch.file_len(), target, &kind, handle.offset)?;
            f(it.key(), h)?;
        }
        Ok(())
    }

    /// Calls `f` with each index partition's handle (none unless the index
    /// is two-level).
    pub fn for_each_partition(
        &self,
        budget: &mut ReadBudget,
        f: &mut dyn FnMut(BlockHandle) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if !self.is_partitioned() {
            return Ok(());
        }
        let mut order = HandleOrder::new();
        self.for_each_entry(
            self.top,
            BlockKind::Index,
            &BlockKind::IndexPartition,
            &mut order,
            budget,
            &mut |_, h| f(h),
        )
    }

    /// Calls `f` with each data block's handle, in key order, reading one
    /// index block at a time.
    pub fn for_each_data_block(
        &self,
        budget: &mut ReadBudget,
        f: &mut dyn FnMut(BlockHandle) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.for_each_data_block_keyed(budget, &mut |_, h| f(h))
    }

    /// Calls `f` with each data block's index separator and handle, in key
    /// order, reading one index block at a time.
    pub fn for_each_data_block_keyed(
        &self,
        budget: &mut ReadBudget,
        f: &mut KeyedVisit<'_>,
    ) -> Result<(), Error> {
        let mut order = HandleOrder::new();
        if !self.is_partitioned() {
            return self.for_each_entry(
                self.top,
                BlockKind::Index,
                &BlockKind::Data,
                &mut order,
                budget,
                f,
            );
        }
        let mut partitions = Vec::new();
        self.for_each_partition(budget, &mut |p| {
            partitions.push(p);
            Ok(())
        })?;
        for p in partitions {
            self.for_each_entry(
                p,
                BlockKind::IndexPartition,
                &BlockKind::Data,
                &mut order,
                budget,
                f,
            )?;
        }
        Ok(())
    }
}
