//! An opened block-based SST file: footer, metaindex, properties and
//! filter, and the queries RocksDB's `Get` makes against the filter.
//!
//! Ported from RocksDB's `table/block_based/block_based_table_reader.cc`
//! (`BlockBasedTable::Open`, `ReadPropertiesBlock`,
//! `PrefetchIndexAndFilterBlocks`, `FullFilterKeyMayMatch`). The pieces
//! live in their own modules: `file_reader` (where the bytes come from:
//! positional reads of a file, or a buffer), [`crate::metaindex`],
//! [`crate::properties`], `filter_loading`, `index_walk` and, for the
//! walks over every block, [`crate::verify`].

use crate::block_fetch::BlockFetcher;
use crate::budget::ReadBudget;
use crate::error::Error;
use crate::file_reader::{DiskFile, FileReader, InMemoryFile};
use crate::filter::{Filter, QueryContext};
use crate::footer::{Footer, FOOTER_LEN};
use crate::handle::BlockHandle;
use crate::index_walk::IndexWalk;
use crate::key::Comparator;
use crate::metaindex::{self, MetaindexEntries};
pub use crate::metaindex::{COMPRESSION_DICT_BLOCK, INDEX_BLOCK, RANGE_DEL_BLOCK};
use crate::partition_seek::PartitionSeek;
use crate::prefix::PrefixExtractor;
use crate::properties::{self, TableProperties, PROPERTIES_BLOCK};
use ribbon::plugin::TableFilter;
use ribbon::rocksdb::format::FilterReader;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// Which RocksDB's answers a query gives, where they differ (the
/// block-based filter of RocksDB before 7.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReaderVersion {
    /// The RocksDB that wrote the file: a block-based filter is asked as
    /// RocksDB 6.x's `Get` did.
    #[default]
    Writer,
    /// RocksDB 7 and later (11.8 here): a block-based filter is ignored,
    /// so every key may match.
    Current,
}

/// How much of a file's end [`SstFile::open`] reads first (the footer,
/// meta blocks and filter of most tables).
const FIRST_TAIL: u64 = 256 << 10;

/// An SST file read as far as its filter: the footer, the metaindex, the
/// properties and every filter block, all checksum-verified. Queries answer
/// as RocksDB's `Get` asks the table's filter.
///
/// Opening reads only those blocks, and whatever the bytes, within the
/// file's read budget ([`crate::budget`]): memory stays within a small
/// multiple of the file's size plus one block of the largest size read.
/// The walks over the index and data blocks ([`SstFile::verify_filter`],
/// [`SstFile::verify_checksums`]) read one block at a time.
#[derive(Debug, Clone)]
pub struct SstFile {
    file: Arc<dyn FileReader>,
    footer: Footer,
    metaindex: MetaindexEntries,
    properties: TableProperties,
    comparator: Comparator,
    prefix_extractor: Option<PrefixExtractor>,
    filter: Filter,
    filter_block_name: Option<String>,
    compression_dict: Arc<[u8]>,
}

impl SstFile {
    /// Opens the file at `path`: reads its footer, metaindex, properties
    /// and filter (every partition), each block checksum-verified, by
    /// position (the data blocks are read when a method needs them).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with_tail(path, FIRST_TAIL)
    }

    /// [`SstFile::open`], first reading the last `first_tail` bytes in one
    /// read (the rest is read block by block).
    #[doc(hidden)]
    pub fn open_with_tail(path: impl AsRef<Path>, first_tail: u64) -> Result<Self, Error> {
        let first_tail = first_tail.max(FOOTER_LEN as u64);
        Self::from_reader(Arc::new(DiskFile::open(path.as_ref(), first_tail)?))
    }

    /// Opens a file from its bytes, as [`SstFile::open`] does. Never
    /// panics, whatever the bytes.
    ///
    /// Takes the bytes owned (a `Vec<u8>`, kept without a copy) or
    /// borrowed (`&[u8]`, `&Vec<u8>`, copied once): the `SstFile` owns
    /// what it reads, as it is `'static`, cheap to clone and shares its
    /// bytes between clones.
    ///
    /// ```
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures-versions/v7_8_sst_fastbloom.sst"))?;
    /// let borrowed = ribbon_sst::SstFile::from_bytes(&bytes[..])?;
    /// let owned = ribbon_sst::SstFile::from_bytes(bytes)?;
    /// assert_eq!(borrowed.file_len(), owned.file_len());
    /// assert!(ribbon_sst::SstFile::from_bytes(&b"not a table"[..]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes<'a>(data: impl Into<Cow<'a, [u8]>>) -> Result<Self, Error> {
        Self::from_reader(Arc::new(InMemoryFile::new(data.into().into_owned())))
    }

    fn from_reader(file: Arc<dyn FileReader>) -> Result<Self, Error> {
        let len = file.len();
        let footer_len = (FOOTER_LEN as u64).min(len);
        let footer = Footer::decode_tail(&file.read_at(len - footer_len, footer_len)?, len)?;
        let mut budget = ReadBudget::for_file(len);
        let fetch = BlockFetcher::new(file.as_ref(), &footer);
        let metaindex = metaindex::read(&fetch, &mut budget)?;
        let compression_dict: Arc<[u8]> = match metaindex::find(&metaindex, COMPRESSION_DICT_BLOCK) {
            Some(h) => {
                let kind = crate::error::BlockKind::CompressionDictionary;
                let block = fetch.read(h, &kind, &mut budget)?;
                budget.charge(block.contents.len() as u64, &kind, h.offset)?;
                Arc::from(block.contents.as_ref())
            }
            None => Arc::from(&[][..]),
        };
        let fetch = fetch.with_dictionary(&compression_dict);
        let properties = match metaindex::find(&metaindex, PROPERTIES_BLOCK) {
            Some(h) => properties::read(&fetch, h, &mut budget)?,
            None => TableProperties::default(),
        };
        let comparator = Comparator::from_name(properties.comparator().as_deref());
        let prefix_extractor = PrefixExtractor::from_property(properties.prefix_extractor_name().as_deref());
        let (filter, filter_block_name) =
            crate::filter_loading::read(&fetch, &metaindex, &properties, &mut budget)?;
        Ok(Self {
            file,
            footer,
            metaindex,
            properties,
            comparator,
            prefix_extractor,
            filter,
            filter_block_name,
            compression_dict,
        })
    }

    /// Reads the file's blocks.
    pub(crate) fn fetcher(&self) -> BlockFetcher<'_> {
        BlockFetcher::new(self.file.as_ref(), &self.footer).with_dictionary(&self.compression_dict)
    }

    /// The table's compression dictionary (the `rocksdb.compression_dict`
    /// meta block; empty when it has none), with which its data blocks are
    /// decompressed.
    pub fn compression_dictionary(&self) -> &[u8] {
        &self.compression_dict
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.file.len()
    }

    /// A fresh read budget for one operation on this file.
    pub(crate) fn budget(&self) -> ReadBudget {
        ReadBudget::for_file(self.file.len())
    }

    /// The decoded footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The table properties.
    pub fn properties(&self) -> &TableProperties {
        &self.properties
    }

    /// The metaindex: meta block names and handles, in file order.
    pub fn metaindex(&self) -> &[(Vec<u8>, BlockHandle)] {
        &self.metaindex
    }

    /// The filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The metaindex name of the filter block (`fullfilter.rocksdb.BuiltinBloomFilter`...).
    pub fn filter_block_name(&self) -> Option<&str> {
        self.filter_block_name.as_deref()
    }

    /// The table's prefix extractor, when it has one.
    pub fn prefix_extractor(&self) -> Option<&PrefixExtractor> {
        self.prefix_extractor.as_ref()
    }

    /// The table's comparator.
    pub fn comparator(&self) -> Comparator {
        self.comparator
    }

    /// Whether the filter holds whole keys (`whole_key_filtering`).
    pub fn whole_key_filtering(&self) -> bool {
        self.properties.whole_key_filtering()
    }

    fn query_context(&self) -> QueryContext<'_> {
        QueryContext {
            whole_key_filtering: self.whole_key_filtering(),
            prefix_extractor: self.prefix_extractor.as_ref().filter(|p| p.is_known()),
            comparator: self.comparator,
        }
    }

    /// Whether `Get(user_key)` would get past this table's filter: `false`
    /// exactly when RocksDB 11.8's filter check says "definitely not" (its
    /// `rocksdb.bloom.filter.useful` or `.prefix.useful` ticker counts it),
    /// assuming the reader's options match the file's (same policy family,
    /// whole-key filtering and prefix extractor as the properties record).
    /// `user_key` excludes any user-defined timestamp. Without a filter
    /// this reader can use, `true`.
    ///
    /// A block-based filter (RocksDB before 7.0) answers as the RocksDB 6.x
    /// that wrote it did ([`ReaderVersion::Writer`]); see
    /// [`SstFile::key_may_match_as`] for what RocksDB 7 and later answer.
    pub fn key_may_match(&self, user_key: impl AsRef<[u8]>) -> bool {
        self.key_may_match_as(user_key, ReaderVersion::Writer)
    }

    /// [`SstFile::key_may_match`] as the RocksDB of `version` answers. They
    /// differ only for a block-based filter: RocksDB 6.x's `Get` asks the
    /// filter of the data block the index finds for the key (and of the
    /// next ones while that block holds no key at or after it: the
    /// `rocksdb.bloom.filter.useful` ticker counts a "definitely not" from
    /// any of them), while RocksDB 7 and later ignore the filter.
    pub fn key_may_match_as(&self, user_key: impl AsRef<[u8]>, version: ReaderVersion) -> bool {
        let user_key = user_key.as_ref();
        match (&self.filter, version) {
            (Filter::BlockBased { .. }, ReaderVersion::Current) => true,
            (Filter::BlockBased { .. }, ReaderVersion::Writer) => self.block_based_get(user_key),
            _ => self.filter.key_may_match(user_key, &self.query_context()),
        }
    }

    /// RocksDB 6.x's `BlockBasedTable::Get` with a block-based filter, as
    /// far as the filter, for tables of plain values: `for
    /// (iiter->Seek(key); iiter->Valid() && !done; iiter->Next())`, where
    /// each data block's filter is asked first (a "no" ends the lookup and
    /// counts as useful), and a block holding a
    /// key at or after the lookup key ends it (found or not). Only the
    /// whole key is asked (`KeyMayMatch` is "may match" without
    /// `whole_key_filtering`). A data block that cannot be read answers
    /// "may match", and so does a lookup that would go past a second data
    /// block (RocksDB never writes a table where one does). Where merge
    /// operands of the lookup key continue into the next block, 6.x went on
    /// and asked that block's filter too; this answers "may match" there
    /// (never a false negative, but 6.x could have counted a "useful").
    fn block_based_get(&self, user_key: &[u8]) -> bool {
        let (Some(filters), Filter::BlockBased { data_blocks, .. }) =
            (self.filter.block_based(), &self.filter)
        else {
            return true;
        };
        if !self.whole_key_filtering() {
            return true;
        }
        let Some(first) = self.filter.data_block_for(user_key, self.comparator) else {
            return true;
        };
        // In a table RocksDB wrote, the block after the one the index finds
        // begins with a key after the separator, so after the lookup key:
        // two blocks at most (a hostile table gets no more). The walk
        // answers "no" when the first block's filter says no, or when the
        // first block holds no key at or after the lookup key and the
        // second block's filter says no; so the first block is read only
        // when its filter says yes and the second's says no.
        let mut blocks = data_blocks[first..].iter().take(2).map(|(_, h)| *h);
        let Some(h1) = blocks.next() else {
            return true;
        };
        if !filters.may_match(user_key, h1.offset) {
            return false;
        }
        match blocks.next() {
            None => true,
            Some(h2) if filters.may_match(user_key, h2.offset) => true,
            Some(_) => {
                let mut user = user_key.to_vec();
                user.extend(std::iter::repeat_n(0xffu8, self.comparator.timestamp_size));
                let target = crate::key::lookup_key(&user);
                match self.last_data_key(h1) {
                    Ok(Some(last)) => {
                        self.comparator.compare_internal(&last, &target) != Some(std::cmp::Ordering::Less)
                    }
                    Ok(None) => false,
                    Err(_) => true,
                }
            }
        }
    }

    /// [`SstFile::key_may_match`] for many keys, one answer per key, in
    /// order: each key's answer is what `Get` of it gets from the filter
    /// (the batch shape of every filter type in this workspace,
    /// `FilterReader::may_match_many`, `Ribbon::contains_many`). For full
    /// and partitioned filters that is also what RocksDB's MultiGet asks;
    /// RocksDB 6.x's MultiGet never asked a block-based filter, so for those
    /// files this answers as 6.x's `Get`, not its MultiGet.
    pub fn key_may_match_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        self.key_may_match_many_as(keys, ReaderVersion::Writer)
    }

    /// [`SstFile::key_may_match_many`] as the RocksDB of `version` answers
    /// (see [`SstFile::key_may_match_as`]).
    pub fn key_may_match_many_as<K: AsRef<[u8]>>(&self, keys: &[K], version: ReaderVersion) -> Vec<bool> {
        if let Filter::BlockBased { .. } = self.filter {
            return keys.iter().map(|k| self.key_may_match_as(k, version)).collect();
        }
        self.batched_may_match(keys)
    }

    /// The batched path of [`SstFile::key_may_match_many_as`] for full and
    /// partitioned filters: each filter block's reader is made once, and
    /// its entries (whole keys or prefixes) are asked in one
    /// [`ribbon::rocksdb::format::FilterReader::may_match_many`] (hashes first, then the probes with
    /// their memory fetches overlapped, as RocksDB's MultiGet). A
    /// partitioned filter's keys are grouped by partition and each
    /// partition's asked in one batch over its block. Same answers as
    /// asking key by key.
    fn batched_may_match<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        let ctx = self.query_context();
        let mut out = vec![true; keys.len()];
        if !self.filter.is_queryable() {
            return out;
        }
        // What `Get` asks of each key: the whole key or its prefix, or
        // nothing (then "may match").
        #[inline]
        fn entry<'k>(ctx: &QueryContext<'_>, k: &'k [u8]) -> Option<&'k [u8]> {
            if ctx.whole_key_filtering {
                Some(k)
            } else {
                ctx.prefix_extractor.and_then(|p| p.transform(k))
            }
        }
        match &self.filter {
            Filter::Full { contents, .. } => {
                let reader = self.filter.block_reader(contents);
                if ctx.whole_key_filtering {
                    return reader.may_match_many(keys);
                }
                let asked: Vec<(usize, &[u8])> = keys
                    .iter()
                    .enumerate()
                    .filter_map(|(i, k)| entry(&ctx, k.as_ref()).map(|e| (i, e)))
                    .collect();
                let entries: Vec<&[u8]> = asked.iter().map(|&(_, e)| e).collect();
                for (&(i, _), answer) in asked.iter().zip(reader.may_match_many(&entries)) {
                    out[i] = answer;
                }
            }
            Filter::Partitioned { partitions, .. } => {
                // Each partition's reader; keys with no partition or no
                // entry get one more reader, "may match".
                let mut readers: Vec<TableFilter<'_>> = partitions
                    .iter()
                    .map(|p| self.filter.partition_reader(p))
                    .collect();
                let unplaced = readers.len();
                readers.push(TableFilter::Builtin(FilterReader::AlwaysTrue));
                let seek = PartitionSeek::new(&self.filter, ctx.comparator, keys.len());
                let place = |k: &[u8]| match &seek {
                    Some(seek) => Some(seek.partition_for(k)),
                    None => self.filter.partition_for(k, ctx.comparator),
                };
                // The legacy Bloom hashes keys its own way: key by key.
                if !readers.iter().all(TableFilter::takes_hash64) {
                    for (o, k) in out.iter_mut().zip(keys) {
                        let k = k.as_ref();
                        if let (Some(p), Some(e)) = (place(k), entry(&ctx, k)) {
                            *o = readers[p].may_match(e);
                        }
                    }
                    return out;
                }
                // In key order (each key's bytes read once): its partition
                // and its entry's hash; then the queries grouped by
                // partition, each partition's in one batch over its block
                // (0.90 of the time of one batch across the partitions).
                let queries: Vec<(usize, u64)> = keys
                    .iter()
                    .map(|k| {
                        let k = k.as_ref();
                        match (place(k), entry(&ctx, k)) {
                            (Some(p), Some(e)) => (p, ribbon::core::hash::get_slice_hash64(e)),
                            _ => (unplaced, 0),
                        }
                    })
                    .collect();
                crate::partition_seek::answer_grouped(&readers, &queries, &mut out);
            }
            _ => {
                for (o, k) in out.iter_mut().zip(keys) {
                    *o = self.filter.key_may_match(k.as_ref(), &ctx);
                }
            }
        }
        out
    }

    /// Whether a key with `key`'s prefix may be in the table, as a prefix
    /// seek to `key` asks the filter: the prefix extractor's prefix of
    /// `key` against the filter (the partition chosen by `key`). `true`
    /// when `key` is out of the extractor's domain. An error when the table
    /// has no prefix extractor this reader can reproduce.
    pub fn prefix_may_match(&self, key: &[u8]) -> Result<bool, Error> {
        let pe = self.prefix_query_extractor()?;
        if !self.filter.is_queryable() {
            return Ok(true);
        }
        Ok(match pe.transform(key) {
            None => true,
            Some(prefix) => self.filter.entry_may_match(prefix, key, self.comparator),
        })
    }

    /// The prefix extractor prefix queries use, or why the table cannot
    /// answer them.
    fn prefix_query_extractor(&self) -> Result<&PrefixExtractor, Error> {
        let pe = match &self.prefix_extractor {
            None => {
                return Err(Error::Unsupported {
                    what: "the table has no prefix extractor: prefix queries need one".into(),
                })
            }
            Some(p) if !p.is_known() => {
                return Err(Error::Unsupported {
                    what: format!("prefix extractor {p} is not one this reader can reproduce"),
                })
            }
            Some(p) => p,
        };
        if let Filter::BlockBased { .. } = self.filter {
            return Err(Error::Unsupported {
                what: "prefix queries of a block-based filter (RocksDB before 7.0) are not supported; whole-key queries are".into(),
            });
        }
        Ok(pe)
    }

    /// [`SstFile::prefix_may_match`] for many keys: one answer per key, in
    /// order, each what `prefix_may_match` of it answers. The same error
    /// as `prefix_may_match` when the table cannot answer prefix queries
    /// (for no keys too).
    pub fn prefix_may_match_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<bool>, Error> {
        self.prefix_query_extractor()?;
        keys.iter().map(|k| self.prefix_may_match(k.as_ref())).collect()
    }

    /// The handle of the (top-level) index block.
    pub fn index_handle(&self) -> Result<BlockHandle, Error> {
        match self.footer.index {
            Some(h) => Ok(h),
            None => metaindex::find(&self.metaindex, INDEX_BLOCK).ok_or_else(|| Error::Missing {
                what: format!("{INDEX_BLOCK:?} in the metaindex"),
            }),
        }
    }

    /// The index, for walks over the index partitions and data blocks.
    pub(crate) fn index(&self) -> Result<IndexWalk<'_>, Error> {
        Ok(IndexWalk::new(
            self.fetcher(),
            &self.properties,
            self.index_handle()?,
        ))
    }

    /// The data blocks, in key order, from the index. (The walks of
    /// [`SstFile::verify_filter`] and [`SstFile::verify_checksums`] do
    /// not collect them.)
    pub fn data_block_handles(&self) -> Result<Vec<BlockHandle>, Error> {
        let mut out = Vec::new();
        self.index()?.for_each_data_block(&mut self.budget(), &mut |h| {
            out.push(h);
            Ok(())
        })?;
        Ok(out)
    }
}

/// The [`MayContain`](ribbon::MayContain) of a table: whole keys, asked as
/// RocksDB's `Get` asks the table's filter ([`SstFile::key_may_match`]:
/// `false` exactly when RocksDB's filter check says "definitely not"), and
/// for batches [`SstFile::key_may_match_many`].
///
/// ```
/// use ribbon::MayContain;
/// use ribbon_sst::SstFile;
///
/// // A table RocksDB 7.8 wrote, the keys probed, and RocksDB's own answers
/// // to `Get` (1: the filter let the key through).
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures-versions/v7_8_sst_fastbloom");
/// let sst = SstFile::open(format!("{dir}.sst"))?;
/// let hex = |s: &str| (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect::<Vec<u8>>();
/// let probes: Vec<Vec<u8>> = std::fs::read_to_string(format!("{dir}.probes"))?.lines().map(hex).collect();
/// let rocksdb: Vec<bool> = std::fs::read_to_string(format!("{dir}.expected"))?.lines().map(|l| l == "1").collect();
///
/// let answers = sst.contains_many(&probes);
/// assert_eq!(answers, rocksdb);
/// assert!(answers.contains(&false) && answers.contains(&true));
/// assert_eq!(sst.contains(&probes[0]), rocksdb[0]);
/// let filters: Vec<Box<dyn MayContain>> = vec![Box::new(sst)];
/// assert_eq!(filters[0].contains_many(&probes), rocksdb);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl ribbon::MayContain for SstFile {
    #[inline]
    fn contains_key(&self, key: &[u8]) -> bool {
        self.key_may_match(key)
    }

    fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer slot per key");
        out.copy_from_slice(&self.key_may_match_many(keys));
    }

    fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        self.key_may_match_many(keys)
    }

    fn contains_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer slot per key");
        out.copy_from_slice(&self.key_may_match_many(keys));
    }
}
