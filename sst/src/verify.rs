//! The walks over every block of a table: listing them, verifying their
//! checksums, and checking that every key in the data blocks passes the
//! filter.
//!
//! Each walk reads one block at a time, in index order, so a table of any
//! size is verified with memory bounded by its largest block; the index
//! guarantees ([`crate::handle::HandleOrder`]) mean each block is read
//! once, so time is linear in the file's size.

use crate::block_entries::{EntryIter, ValueFormat};
use crate::block_fetch::RawBlock;
use crate::budget::ReadBudget;
use crate::error::{BlockKind, Error};
use crate::filter::Filter;
use crate::handle::BlockHandle;
use crate::key;
use crate::metaindex::{COMPRESSION_DICT_BLOCK, INDEX_BLOCK, RANGE_DEL_BLOCK};
use crate::properties::PROPERTIES_BLOCK;
use crate::table::SstFile;
use ribbon::plugin::Family;

/// Misses kept in a [`VerifyReport`] (all are counted).
const MISSES_KEPT: usize = 100;

/// One key whose filter said "definitely not" in [`SstFile::verify_filter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterMiss {
    /// The user key (timestamp stripped), as the filter holds it.
    pub user_key: Vec<u8>,
    /// Offset of its data block.
    pub data_block_offset: u64,
    /// Whether the prefix check (rather than the whole-key check) failed.
    pub prefix: bool,
}

/// What [`SstFile::verify_filter`] checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Data blocks read (each checksum-verified and decompressed).
    pub data_blocks: u64,
    /// Keys read from them.
    pub keys: u64,
    /// Whole-key filter checks made.
    pub whole_key_checks: u64,
    /// Prefix filter checks made.
    pub prefix_checks: u64,
    /// Checks that said "definitely not" (at most the first 100).
    pub misses: Vec<FilterMiss>,
    /// How many checks said "definitely not" in all.
    pub miss_count: u64,
    /// Why the keys were not checked against the filter, when they were
    /// not: no filter this reader can query, or partitions (or data-block
    /// filters) ordered by a comparator this reader does not know.
    pub unchecked: Option<&'static str>,
}

impl VerifyReport {
    fn miss(&mut self, user_key: &[u8], data_block_offset: u64, prefix: bool) {
        self.miss_count += 1;
        if self.misses.len() < MISSES_KEPT {
            self.misses.push(FilterMiss {
                user_key: user_key.to_vec(),
                data_block_offset,
                prefix,
            });
        }
    }
}

impl SstFile {
    /// The kind of the meta block named `name` in the metaindex.
    fn meta_block_kind(&self, name: &[u8]) -> BlockKind {
        let name = String::from_utf8_lossy(name);
        match name.as_ref() {
            PROPERTIES_BLOCK => BlockKind::Properties,
            INDEX_BLOCK => BlockKind::Index,
            RANGE_DEL_BLOCK => BlockKind::RangeDeletion,
            COMPRESSION_DICT_BLOCK => BlockKind::CompressionDictionary,
            n if Some(n) == self.filter_block_name() => match self.filter() {
                Filter::Partitioned { .. } => BlockKind::FilterPartitionIndex,
                _ => BlockKind::Filter,
            },
            n => BlockKind::Meta(n.to_string()),
        }
    }

    /// Calls `f` with every block of the file and its kind: metaindex,
    /// meta blocks, index (and partitions), filter (and partitions), data
    /// blocks, in that order, without collecting them.
    pub fn for_each_block(
        &self,
        mut f: impl FnMut(BlockKind, BlockHandle) -> Result<(), Error>,
    ) -> Result<(), Error> {
        f(BlockKind::Metaindex, self.footer().metaindex)?;
        for (name, h) in self.metaindex() {
            f(self.meta_block_kind(name), *h)?;
        }
        if let Some(h) = self.footer().index {
            f(BlockKind::Index, h)?;
        }
        let index = self.index()?;
        let mut budget = self.budget();
        index.for_each_partition(&mut budget, &mut |h| f(BlockKind::IndexPartition, h))?;
        if let Filter::Partitioned { partitions, .. } = self.filter() {
            for p in partitions.iter().filter(|p| p.handle.size != 0) {
                f(BlockKind::Filter, p.handle)?;
            }
        }
        index.for_each_data_block(&mut budget, &mut |h| f(BlockKind::Data, h))
    }

    /// Every block of the file with its kind (see
    /// [`SstFile::for_each_block`]).
    pub fn blocks(&self) -> Result<Vec<(BlockKind, BlockHandle)>, Error> {
        let mut out = Vec::new();
        self.for_each_block(|kind, h| {
            out.push((kind, h));
            Ok(())
        })?;
        Ok(out)
    }

    /// Verifies the checksum of every block, one block at a time; returns
    /// how many.
    pub fn verify_checksums(&self) -> Result<usize, Error> {
        let fetch = self.fetcher();
        let mut count = 0usize;
        self.for_each_block(|kind, h| {
            count += 1;
            // The properties were verified when opened, with the global
            // seqno exception.
            if kind == BlockKind::Properties {
                Ok(())
            } else {
                fetch.verify_checksum(h, &kind)
            }
        })?;
        Ok(count)
    }

    /// Reads data block `handle` (checksum, decompression), with the
    /// budget of a walk over the data blocks ([`ReadBudget::for_data`]).
    pub fn read_data_block(&self, handle: BlockHandle) -> Result<RawBlock<'_>, Error> {
        self.read_data_block_within(handle, &mut ReadBudget::for_data(self.file_len()))
    }

    /// [`SstFile::read_data_block`], charging its decompressed size to
    /// `budget`.
    pub(crate) fn read_data_block_within(
        &self,
        handle: BlockHandle,
        budget: &mut ReadBudget,
    ) -> Result<RawBlock<'_>, Error> {
        self.fetcher().read(handle, &BlockKind::Data, budget)
    }

    /// Calls `f` with every internal key of every data block, in order,
    /// and the offset of its block; returns how many blocks and keys. One
    /// data block is held at a time.
    ///
    /// The blocks' decompressed bytes are charged to
    /// [`ReadBudget::for_data`], the key bytes handed out to
    /// [`ReadBudget::for_data_keys`]: the file's budget plus
    /// `rocksdb.raw.key.size`, which RocksDB counts over every key it adds
    /// (`BlockBasedTableBuilder::Add`), capped in proportion to the file. So
    /// neither blocks of hostile compression ratios nor a data block whose
    /// keys share ever longer prefixes (a few bytes each on disk, quadratic
    /// key bytes) can make the walk longer than linear in the file size: it
    /// ends with an error instead.
    pub fn for_each_data_key(&self, mut f: impl FnMut(&[u8], u64)) -> Result<(u64, u64), Error> {
        let interval = self.restart_interval();
        let recorded_key_bytes = self.properties().raw_key_size().unwrap_or(0);
        let mut key_budget = ReadBudget::for_data_keys(self.file_len(), recorded_key_bytes);
        let mut data_budget = ReadBudget::for_data(self.file_len());
        let (mut blocks, mut keys) = (0u64, 0u64);
        self.index()?.for_each_data_block(&mut self.budget(), &mut |h| {
            let block = self.read_data_block_within(h, &mut data_budget)?;
            let mut it = EntryIter::new(
                &block.contents,
                BlockKind::Data,
                h.offset,
                ValueFormat::Plain,
                interval,
            )?;
            while it.advance()? {
                key_budget.charge(it.key().len() as u64, &BlockKind::Data, h.offset)?;
                f(it.key(), h.offset);
                keys += 1;
            }
            blocks += 1;
            Ok(())
        })?;
        Ok((blocks, keys))
    }

    /// The last internal key of the data block at `handle` (`None` when it
    /// is empty).
    pub(crate) fn last_data_key(&self, handle: BlockHandle) -> Result<Option<Vec<u8>>, Error> {
        let block = self.read_data_block(handle)?;
        let mut it = EntryIter::new(
            &block.contents,
            BlockKind::Data,
            handle.offset,
            ValueFormat::Plain,
            self.restart_interval(),
        )?;
        // Walk to the end, then copy the last key once: copying each key
        // would make a block of long shared keys cost quadratic time.
        let mut any = false;
        while it.advance()? {
            any = true;
        }
        Ok(any.then(|| it.key().to_vec()))
    }

    pub(crate) fn restart_interval(&self) -> u32 {
        self.properties()
            .data_block_restart_interval()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0)
    }

    /// Parses every Balanced Ribbon block of a `rust.BalancedRibbon`
    /// filter with its checksum.
    fn verify_balanced_blocks(&self) -> Result<(), Error> {
        let blocks: Vec<(BlockHandle, &[u8])> = match self.filter() {
            Filter::Full {
                handle,
                contents,
                family: Family::BalancedRibbon,
            } => vec![(*handle, contents.as_slice())],
            Filter::Partitioned {
                partitions,
                family: Family::BalancedRibbon,
                ..
            } => partitions
                .iter()
                .map(|p| (p.handle, p.contents.as_slice()))
                .collect(),
            _ => Vec::new(),
        };
        for (handle, contents) in blocks {
            if let Some(Err(e)) = ribbon::plugin::balanced_policy::parse_block(contents, true) {
                return Err(Error::BadBlock {
                    block: BlockKind::Filter,
                    offset: handle.offset,
                    what: format!("rust.BalancedRibbon filter: {e}"),
                });
            }
        }
        Ok(())
    }

    /// Checks that every key in the data blocks passes the filter the way
    /// `Get` checks it: the whole key (when the table filters whole keys)
    /// and its prefix (when the table has a prefix extractor this reader
    /// reproduces and the key is in its domain). A filter never has false
    /// negatives, so any miss means a corrupt filter or a reader bug.
    ///
    /// A `rust.BalancedRibbon` filter's Balanced blocks are first checked
    /// whole, their own checksum included ([`Error::BadBlock`]).
    pub fn verify_filter(&self) -> Result<VerifyReport, Error> {
        self.verify_balanced_blocks()?;
        let mut report = VerifyReport::default();
        let ts = self.comparator().timestamp_size;
        let cmp = self.comparator();
        let filter = self.filter();
        report.unchecked = if !filter.is_queryable() {
            Some("the table has no filter this reader can query")
        } else if !cmp.is_known() && !matches!(filter, Filter::Full { .. }) {
            Some("its filter partitions are ordered by a comparator this reader does not know")
        } else {
            None
        };
        let checked = report.unchecked.is_none();
        let whole = self.whole_key_filtering() && checked;
        let prefix_extractor = self.prefix_extractor().filter(|p| p.is_known() && checked);
        // A block-based filter: each key against its own data block's filter.
        let block_based = filter.block_based();
        let may_match = |entry: &[u8], user: &[u8], offset: u64| match &block_based {
            Some(b) => b.may_match(entry, offset),
            None => filter.entry_may_match(entry, user, cmp),
        };
        let (blocks, keys) = self.for_each_data_key(|ikey, offset| {
            let (user, _) = key::split_internal(ikey);
            let user = &user[..user.len().saturating_sub(ts)];
            if whole {
                report.whole_key_checks += 1;
                if !may_match(user, user, offset) {
                    report.miss(user, offset, false);
                }
            }
            if let Some(p) = prefix_extractor.and_then(|pe| pe.transform(user)) {
                report.prefix_checks += 1;
                if !may_match(p, user, offset) {
                    report.miss(user, offset, true);
                }
            }
        })?;
        report.data_blocks = blocks;
        report.keys = keys;
        Ok(report)
    }
}
