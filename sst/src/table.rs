//! An opened block-based SST file: footer, metaindex, properties and
//! filter, plus a walk over the index and data blocks for verification.
//!
//! Ported from RocksDB's `table/block_based/block_based_table_reader.cc`
//! (`BlockBasedTable::Open`, `ReadPropertiesBlock`,
//! `PrefetchIndexAndFilterBlocks`, `FullFilterKeyMayMatch`),
//! `table/meta_blocks.cc` (`ReadTablePropertiesHelper`,
//! `ParsePropertiesBlock`, `FindOptionalMetaBlock`),
//! `table/block_based/index_reader_common.cc`,
//! `table/block_based/binary_search_index_reader.cc` and
//! `table/block_based/partitioned_index_reader.cc` (index values: block
//! handles, delta-encoded from format_version 4, with the first key for
//! `kBinarySearchWithFirstKey`; a two-level index points at index
//! partitions).

use crate::block::{self, EntryIter, FileBytes, RawBlock, ValueFormat};
use crate::error::{BlockKind, Error};
use crate::filter::{
    Filter, Partition, QueryContext, BUILTIN_COMPATIBILITY_NAME, FULL_FILTER_PREFIX, OBSOLETE_FILTER_PREFIX,
    PARTITIONED_FILTER_PREFIX,
};
use crate::footer::{BlockHandle, Footer};
use crate::key::{self, Comparator};
use crate::prefix::PrefixExtractor;
use crate::properties::{IndexType, TableProperties, GLOBAL_SEQNO, PROPERTIES_BLOCK};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Metaindex name of the index block (format_version 6 and later).
pub const INDEX_BLOCK: &str = "rocksdb.index";
/// Metaindex name of the range deletion block.
pub const RANGE_DEL_BLOCK: &str = "rocksdb.range_del";
/// Metaindex name of the compression dictionary block.
pub const COMPRESSION_DICT_BLOCK: &str = "rocksdb.compression_dict";

/// How much of a file's end [`SstFile::open`] reads first.
const FIRST_TAIL: u64 = 256 << 10;

/// An SST file read as far as its filter: the footer, the metaindex, the
/// properties and every filter block, all checksum-verified. Queries answer
/// as RocksDB's `Get` asks the table's filter.
#[derive(Debug, Clone)]
pub struct SstFile {
    bytes: FileBytes,
    path: Option<PathBuf>,
    whole: OnceLock<FileBytes>,
    footer: Footer,
    metaindex: Vec<(Vec<u8>, BlockHandle)>,
    properties: TableProperties,
    comparator: Comparator,
    prefix_extractor: Option<PrefixExtractor>,
    filter: Filter,
    filter_block_name: Option<String>,
}

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
}

impl SstFile {
    /// Opens the file at `path` as [`SstFile::from_bytes`] does, reading
    /// only the end of the file that holds the footer, meta blocks and
    /// filter (the data blocks are read when a method needs them).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with_tail(path, FIRST_TAIL)
    }

    /// [`SstFile::open`], first reading the last `first_tail` bytes (for
    /// tests of the tail reading).
    #[doc(hidden)]
    pub fn open_with_tail(path: impl AsRef<Path>, first_tail: u64) -> Result<Self, Error> {
        let first_tail = first_tail.max(1);
        let path = path.as_ref();
        let io = |e: std::io::Error| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let mut from = len.saturating_sub(first_tail);
        loop {
            let bytes = if from == 0 {
                FileBytes::whole(read_range(&mut f, 0, len).map_err(io)?)
            } else {
                FileBytes::tail(read_range(&mut f, from, len).map_err(io)?, len)
            };
            match Self::from_file_bytes(bytes, Some(path.to_path_buf())) {
                // Meta blocks further back: read from there (and a bit
                // more, for the blocks after it that may come next).
                Err(Error::NeedMoreBytes { from: need }) if from > 0 => {
                    from = need.min(from.saturating_sub(from / 2)).saturating_sub(first_tail);
                }
                other => return other,
            }
        }
    }

    /// Opens a file from its bytes: decodes the footer, reads the
    /// metaindex, the properties and the filter (every partition), each
    /// block checksum-verified. Never panics, whatever the bytes.
    pub fn from_bytes(data: Vec<u8>) -> Result<Self, Error> {
        Self::from_file_bytes(FileBytes::whole(data), None)
    }

    fn from_file_bytes(bytes: FileBytes, path: Option<PathBuf>) -> Result<Self, Error> {
        let footer = Footer::decode_tail(bytes.held(), bytes.len())?;
        let metaindex = read_metaindex(&bytes, &footer)?;
        let properties = match find(&metaindex, PROPERTIES_BLOCK) {
            Some(h) => read_properties(&bytes, &footer, h)?,
            None => TableProperties::default(),
        };
        let comparator = Comparator::from_name(properties.comparator().as_deref());
        let prefix_extractor = PrefixExtractor::from_property(properties.prefix_extractor_name().as_deref());
        let (filter, filter_block_name) = read_filter(&bytes, &footer, &metaindex, &properties)?;
        Ok(Self {
            bytes,
            path,
            whole: OnceLock::new(),
            footer,
            metaindex,
            properties,
            comparator,
            prefix_extractor,
            filter,
            filter_block_name,
        })
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

    /// The whole file's bytes (read now if only its tail was).
    fn whole(&self) -> Result<&FileBytes, Error> {
        if self.bytes.is_whole() {
            return Ok(&self.bytes);
        }
        if let Some(w) = self.whole.get() {
            return Ok(w);
        }
        let path = self.path.as_deref().ok_or(Error::NeedMoreBytes { from: 0 })?;
        let data = std::fs::read(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let _ = self.whole.set(FileBytes::whole(data));
        self.whole.get().ok_or(Error::NeedMoreBytes { from: 0 })
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
    pub fn key_may_match(&self, user_key: &[u8]) -> bool {
        self.filter.key_may_match(user_key, &self.query_context())
    }

    /// [`SstFile::key_may_match`] for many keys.
    pub fn keys_may_match<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        let ctx = self.query_context();
        keys.iter()
            .map(|k| self.filter.key_may_match(k.as_ref(), &ctx))
            .collect()
    }

    /// Whether a key with `key`'s prefix may be in the table, as a prefix
    /// seek to `key` asks the filter: the prefix extractor's prefix of
    /// `key` against the filter (the partition chosen by `key`). `true`
    /// when `key` is out of the extractor's domain. An error when the table
    /// has no prefix extractor this reader can reproduce.
    pub fn prefix_may_match(&self, key: &[u8]) -> Result<bool, Error> {
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
        if !self.filter.is_queryable() {
            return Ok(true);
        }
        Ok(match pe.transform(key) {
            None => true,
            Some(prefix) => self.filter.entry_may_match(prefix, key, self.comparator),
        })
    }

    /// The handle of the (top-level) index block.
    pub fn index_handle(&self) -> Result<BlockHandle, Error> {
        match self.footer.index {
            Some(h) => Ok(h),
            None => find(&self.metaindex, INDEX_BLOCK).ok_or_else(|| Error::Missing {
                what: format!("{INDEX_BLOCK:?} in the metaindex"),
            }),
        }
    }

    fn index_type(&self) -> IndexType {
        self.properties.index_type().unwrap_or(IndexType::BinarySearch)
    }

    fn index_entries(&self, handle: BlockHandle, kind: BlockKind) -> Result<Vec<BlockHandle>, Error> {
        let block = block::read_block(self.whole()?, &self.footer, handle, &kind)?;
        let format = if self.properties.index_value_is_delta_encoded() {
            ValueFormat::DeltaHandles
        } else {
            ValueFormat::Plain
        };
        let mut it = EntryIter::new(&block.contents, kind, handle.offset, format, 0)?
            .with_first_key(self.index_type() == IndexType::BinarySearchWithFirstKey);
        let mut out = Vec::new();
        while it.advance()? {
            out.push(it.index_handle()?);
        }
        Ok(out)
    }

    /// The index partitions (two-level index) or nothing.
    fn index_partitions(&self) -> Result<Vec<BlockHandle>, Error> {
        if self.index_type() == IndexType::TwoLevelIndexSearch {
            self.index_entries(self.index_handle()?, BlockKind::Index)
        } else {
            Ok(Vec::new())
        }
    }

    /// The data blocks, in key order, from the index.
    pub fn data_block_handles(&self) -> Result<Vec<BlockHandle>, Error> {
        if self.index_type() == IndexType::TwoLevelIndexSearch {
            let mut out = Vec::new();
            for p in self.index_partitions()? {
                out.extend(self.index_entries(p, BlockKind::IndexPartition)?);
            }
            Ok(out)
        } else {
            self.index_entries(self.index_handle()?, BlockKind::Index)
        }
    }

    /// Every block of the file with its kind: metaindex, meta blocks,
    /// index (and partitions), filter (and partitions), data blocks.
    pub fn blocks(&self) -> Result<Vec<(BlockKind, BlockHandle)>, Error> {
        let mut out = vec![(BlockKind::Metaindex, self.footer.metaindex)];
        for (name, h) in &self.metaindex {
            let name = String::from_utf8_lossy(name);
            let kind = match name.as_ref() {
                PROPERTIES_BLOCK => BlockKind::Properties,
                INDEX_BLOCK => BlockKind::Index,
                RANGE_DEL_BLOCK => BlockKind::RangeDeletion,
                COMPRESSION_DICT_BLOCK => BlockKind::CompressionDictionary,
                n if Some(n) == self.filter_block_name.as_deref() => match self.filter {
                    Filter::Partitioned { .. } => BlockKind::FilterPartitionIndex,
                    _ => BlockKind::Filter,
                },
                n => BlockKind::Meta(n.to_string()),
            };
            out.push((kind, *h));
        }
        if let Some(h) = self.footer.index {
            out.push((BlockKind::Index, h));
        }
        for h in self.index_partitions()? {
            out.push((BlockKind::IndexPartition, h));
        }
        if let Filter::Partitioned { partitions, .. } = &self.filter {
            for p in partitions.iter().filter(|p| p.handle.size != 0) {
                out.push((BlockKind::Filter, p.handle));
            }
        }
        for h in self.data_block_handles()? {
            out.push((BlockKind::Data, h));
        }
        Ok(out)
    }

    /// Verifies the checksum of every block; returns how many.
    pub fn verify_checksums(&self) -> Result<usize, Error> {
        let blocks = self.blocks()?;
        for (kind, h) in &blocks {
            if *kind == BlockKind::Properties {
                // Verified when opened, with the global seqno exception.
                continue;
            }
            block::verify_checksum(self.whole()?, &self.footer, *h, kind)?;
        }
        Ok(blocks.len())
    }

    /// Reads data block `handle` (checksum, decompression).
    pub fn read_data_block(&self, handle: BlockHandle) -> Result<RawBlock<'_>, Error> {
        block::read_block(self.whole()?, &self.footer, handle, &BlockKind::Data)
    }

    /// Calls `f` with every internal key of every data block, in order,
    /// and the offset of its block.
    pub fn for_each_data_key(&self, mut f: impl FnMut(&[u8], u64)) -> Result<(u64, u64), Error> {
        let interval = self
            .properties
            .data_block_restart_interval()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0);
        let (mut blocks, mut keys) = (0u64, 0u64);
        for h in self.data_block_handles()? {
            let block = self.read_data_block(h)?;
            let mut it = EntryIter::new(
                &block.contents,
                BlockKind::Data,
                h.offset,
                ValueFormat::Plain,
                interval,
            )?;
            while it.advance()? {
                f(it.key(), h.offset);
                keys += 1;
            }
            blocks += 1;
        }
        Ok((blocks, keys))
    }

    /// Checks that every key in the data blocks passes the filter the way
    /// `Get` checks it: the whole key (when the table filters whole keys)
    /// and its prefix (when the table has a prefix extractor this reader
    /// reproduces and the key is in its domain). A filter never has false
    /// negatives, so any miss means a corrupt filter or a reader bug.
    pub fn verify_filter(&self) -> Result<VerifyReport, Error> {
        let mut report = VerifyReport::default();
        let ts = self.comparator.timestamp_size;
        let whole = self.whole_key_filtering() && self.filter.is_queryable();
        let prefix =
            self.filter.is_queryable() && self.prefix_extractor.as_ref().is_some_and(|p| p.is_known());
        let (blocks, keys) = self.for_each_data_key(|ikey, offset| {
            let (user, _) = key::split_internal(ikey);
            let user = &user[..user.len().saturating_sub(ts)];
            let miss = |prefix: bool, report: &mut VerifyReport| {
                report.miss_count += 1;
                if report.misses.len() < 100 {
                    report.misses.push(FilterMiss {
                        user_key: user.to_vec(),
                        data_block_offset: offset,
                        prefix,
                    });
                }
            };
            if whole {
                report.whole_key_checks += 1;
                if !self.filter.entry_may_match(user, user, self.comparator) {
                    miss(false, &mut report);
                }
            }
            if prefix {
                if let Some(p) = self.prefix_extractor.as_ref().and_then(|pe| pe.transform(user)) {
                    report.prefix_checks += 1;
                    if !self.filter.entry_may_match(p, user, self.comparator) {
                        miss(true, &mut report);
                    }
                }
            }
        })?;
        report.data_blocks = blocks;
        report.keys = keys;
        Ok(report)
    }
}

fn find(metaindex: &[(Vec<u8>, BlockHandle)], name: &str) -> Option<BlockHandle> {
    metaindex
        .iter()
        .find(|(k, _)| k == name.as_bytes())
        .map(|(_, h)| *h)
}

fn read_metaindex(data: &FileBytes, footer: &Footer) -> Result<Vec<(Vec<u8>, BlockHandle)>, Error> {
    let kind = BlockKind::Metaindex;
    let block = block::read_block(data, footer, footer.metaindex, &kind)?;
    let mut it = EntryIter::new(
        &block.contents,
        kind.clone(),
        footer.metaindex.offset,
        ValueFormat::Plain,
        0,
    )?;
    let mut out = Vec::new();
    while it.advance()? {
        let h = BlockHandle::decode_from(it.value()).ok_or_else(|| Error::BadVarint {
            block: kind.clone(),
            offset: footer.metaindex.offset,
            what: "meta block handle",
        })?;
        out.push((it.key().to_vec(), h));
    }
    Ok(out)
}

fn parse_properties(contents: &[u8], offset: u64) -> Result<TableProperties, Error> {
    let kind = BlockKind::Properties;
    let mut props = TableProperties::default();
    let mut it = EntryIter::new(contents, kind, offset, ValueFormat::Plain, 0)?;
    while it.advance()? {
        let name = String::from_utf8_lossy(it.key()).into_owned();
        if name == GLOBAL_SEQNO {
            props.global_seqno_value_offset = Some(it.value_offset());
        }
        props.raw.insert(name, it.value().to_vec());
    }
    Ok(props)
}

/// `ReadTablePropertiesHelper`: parse first, then verify the checksum; on
/// a mismatch, an ingested file whose global seqno was rewritten in place
/// is verified again with that value zeroed.
fn read_properties(data: &FileBytes, footer: &Footer, handle: BlockHandle) -> Result<TableProperties, Error> {
    let kind = BlockKind::Properties;
    let stored = block::stored_block(data, handle, &kind)?;
    let checked = block::verify_trailer(stored, footer, handle, &kind);
    let compression = stored[stored.len() - 5];
    if compression != crate::compression::NO_COMPRESSION {
        checked?;
        let block = block::read_block(data, footer, handle, &kind)?;
        return parse_properties(&block.contents, handle.offset);
    }
    let body = &stored[..stored.len() - 5];
    let Err(mismatch) = checked else {
        return parse_properties(body, handle.offset);
    };
    // A checksum mismatch stands unless the block parses, has a global
    // seqno, and verifies with that value zeroed.
    let Ok(props) = parse_properties(body, handle.offset) else {
        return Err(mismatch);
    };
    let Some(off) = props.global_seqno_value_offset.filter(|o| o + 8 <= body.len()) else {
        return Err(mismatch);
    };
    let mut copy = stored.to_vec();
    copy[off..off + 8].fill(0);
    block::verify_trailer(&copy, footer, handle, &kind).map_err(|_| mismatch)?;
    Ok(props)
}

fn read_filter(
    data: &FileBytes,
    footer: &Footer,
    metaindex: &[(Vec<u8>, BlockHandle)],
    props: &TableProperties,
) -> Result<(Filter, Option<String>), Error> {
    const PREFIXES: [&str; 3] = [
        FULL_FILTER_PREFIX,
        PARTITIONED_FILTER_PREFIX,
        OBSOLETE_FILTER_PREFIX,
    ];
    let names: Vec<String> = metaindex
        .iter()
        .filter_map(|(k, _)| {
            let k = String::from_utf8_lossy(k);
            PREFIXES
                .iter()
                .find_map(|p| k.strip_prefix(p).map(str::to_string))
        })
        .collect();
    // RocksDB looks up its configured policy's compatibility name; this
    // reader takes the built-in one when present, else the first found.
    let Some(name) = names
        .iter()
        .find(|n| *n == BUILTIN_COMPATIBILITY_NAME)
        .or_else(|| names.first())
    else {
        return Ok((Filter::None, None));
    };
    for prefix in PREFIXES {
        let block_name = format!("{prefix}{name}");
        let Some(handle) = find(metaindex, &block_name) else {
            continue;
        };
        let partitioned = prefix == PARTITIONED_FILTER_PREFIX;
        let filter = if prefix == OBSOLETE_FILTER_PREFIX {
            Filter::Obsolete { handle }
        } else if name != BUILTIN_COMPATIBILITY_NAME {
            Filter::UnknownPolicy {
                compatibility_name: name.clone(),
                handle,
                partitioned,
            }
        } else if partitioned {
            read_partitioned(data, footer, handle, props)?
        } else {
            let block = block::read_block(data, footer, handle, &BlockKind::Filter)?;
            Filter::Full {
                handle,
                contents: block.contents.into_owned(),
            }
        };
        return Ok((filter, Some(block_name)));
    }
    Ok((Filter::None, None))
}

fn read_partitioned(
    data: &FileBytes,
    footer: &Footer,
    index_handle: BlockHandle,
    props: &TableProperties,
) -> Result<Filter, Error> {
    let kind = BlockKind::FilterPartitionIndex;
    let index = block::read_block(data, footer, index_handle, &kind)?;
    let index_key_includes_seq = !props.index_key_is_user_key();
    let mut partitions = Vec::new();
    if !index.contents.is_empty() {
        let format = if props.index_value_is_delta_encoded() {
            ValueFormat::DeltaHandles
        } else {
            ValueFormat::Plain
        };
        let mut it = EntryIter::new(&index.contents, kind, index_handle.offset, format, 0)?;
        while it.advance()? {
            let handle = it.index_handle()?;
            let contents = if handle.size == 0 {
                Vec::new()
            } else {
                block::read_block(data, footer, handle, &BlockKind::Filter)?
                    .contents
                    .into_owned()
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
        index_key_includes_seq,
        partitions,
    })
}

/// Bytes `from..to` of `f`.
fn read_range(f: &mut std::fs::File, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(to.saturating_sub(from).min(1 << 30) as usize);
    f.take(to - from).read_to_end(&mut buf)?;
    if (buf.len() as u64) < to - from {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the file shrank while being read",
        ));
    }
    Ok(buf)
}
