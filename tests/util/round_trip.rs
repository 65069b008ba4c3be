//! The round-trip machinery of `tests/bridge_db.rs` and
//! `tests/bridge_options.rs`: a [`Scenario`] is written once with RocksDB's
//! native policy and once with the Rust policy, and each database is read
//! with both. [`round_trip`] checks that the filter blocks written are
//! identical byte for byte (and sit in the same files at the same levels),
//! that no key is lost, and that RocksDB's filter statistics and perf
//! context counters are identical for every (writer, reader) pair.
#![allow(dead_code)]

use rocksdb::perf::{PerfContext, PerfMetric, PerfStatsLevel};
use rocksdb::statistics::Ticker;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Options, ReadOptions, SliceTransform, SstFileWriter, DB,
};
use std::path::Path;

/// A prefix extractor of a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefix {
    /// `rocksdb.FixedPrefix.N` (`SliceTransform::create_fixed_prefix`).
    Fixed(usize),
    /// `rocksdb.CappedPrefix.N` (by name, through an options string).
    Capped(usize),
    /// `rocksdb.Noop`, the whole key (by name, through an options string).
    Noop,
    /// [`CUSTOM_PREFIX_NAME`]: one RocksDB does not ship, made with
    /// `SliceTransform::create`: the first 5 bytes of keys whose first byte
    /// is below `'8'`; other keys are out of its domain.
    Custom,
}

/// The name of the [`Prefix::Custom`] extractor.
pub const CUSTOM_PREFIX_NAME: &str = "test.HalfDomainPrefix5";

fn custom_transform(key: &[u8]) -> &[u8] {
    &key[..5]
}

fn custom_in_domain(key: &[u8]) -> bool {
    key.len() >= 5 && key[0] < b'8'
}

/// What [`Prefix::Custom`] does to `key`: its prefix, or `None` out of the
/// domain.
pub fn custom_prefix(key: &[u8]) -> Option<&[u8]> {
    custom_in_domain(key).then(|| custom_transform(key))
}

#[derive(Clone)]
pub struct Scenario {
    /// RocksDB's policy id and the Rust policy's.
    pub native: String,
    pub rust: String,
    pub format_version: i32,
    /// kTwoLevelIndexSearch, partition_filters, metadata_block_size 512.
    pub partitioned: bool,
    pub prefix: Option<Prefix>,
    pub whole_key_filtering: bool,
    pub num_keys: u64,
    pub ingest: bool,
    /// Applied through `Options::get_options_from_string` before the filter
    /// policy is set (table options as `block_based_table_factory={...}`,
    /// which RocksDB applies to a copy of the table options already set).
    pub options: String,
    /// The `leveldb.BytewiseComparator.u64ts` comparator: every key is
    /// written with timestamp 1 and read at timestamp 2.
    pub timestamps: bool,
    /// The first half of the keys is compacted to the last level, the
    /// second half flushed to level 0 (a file on each).
    pub two_levels: bool,
}

impl Scenario {
    pub fn new(native: &str, rust: &str) -> Self {
        Self {
            native: native.into(),
            rust: rust.into(),
            format_version: 7,
            partitioned: false,
            prefix: None,
            whole_key_filtering: true,
            num_keys: 20_000,
            ingest: false,
            options: String::new(),
            timestamps: false,
            two_levels: false,
        }
    }
}

pub fn key(i: u64) -> Vec<u8> {
    format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5555).into_bytes()
}

/// Not a member, inside the key range (so the filter is consulted).
pub fn absent(i: u64) -> Vec<u8> {
    format!("{:016x}!", i.wrapping_mul(0xD1B5_4A32_D192_ED03)).into_bytes()
}

/// A u64 timestamp as `leveldb.BytewiseComparator.u64ts` encodes it.
pub fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

pub fn options(s: &Scenario, policy: &str) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(s.format_version);
    table.set_whole_key_filtering(s.whole_key_filtering);
    if s.partitioned {
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(true);
        table.set_metadata_block_size(512);
    }
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.enable_statistics();
    opts.set_write_buffer_size(512 << 20);
    opts.set_target_file_size_base(1 << 30);
    match s.prefix {
        Some(Prefix::Fixed(len)) => opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(len)),
        Some(Prefix::Custom) => opts.set_prefix_extractor(SliceTransform::create(
            CUSTOM_PREFIX_NAME,
            custom_transform,
            Some(custom_in_domain),
        )),
        Some(Prefix::Capped(_) | Prefix::Noop) | None => {}
    }
    opts.set_block_based_table_factory(&table);
    let mut extra = s.options.clone();
    match s.prefix {
        Some(Prefix::Capped(len)) => extra = format!("prefix_extractor=rocksdb.CappedPrefix.{len};{extra}"),
        Some(Prefix::Noop) => extra = format!("prefix_extractor=rocksdb.Noop;{extra}"),
        _ => {}
    }
    if s.timestamps {
        extra = format!("comparator=leveldb.BytewiseComparator.u64ts;{extra}");
    }
    if !extra.is_empty() {
        opts = opts
            .get_options_from_string(&extra)
            .unwrap_or_else(|e| panic!("options {extra:?}: {e}"));
    }
    // Last: the bridge makes a new table factory from the table options,
    // which RocksDB sanitises as it does every factory it constructs
    // (`BlockBasedTableFactory::InitializeOptions`: partition_filters off
    // without kTwoLevelIndexSearch...). A table option set through the
    // options string alone is not sanitised, and RocksDB itself crashes on
    // partition_filters with another index type.
    rocks_bridge::set_filter_policy(&mut opts, policy).unwrap();
    opts
}

fn put(s: &Scenario, db: &DB, i: u64) {
    if s.timestamps {
        db.put_with_ts(key(i), ts(1), i.to_le_bytes()).unwrap();
    } else {
        db.put(key(i), i.to_le_bytes()).unwrap();
    }
}

/// The SST files of a database: (level, file name), sorted.
pub type Layout = Vec<(i32, String)>;

/// Writes the scenario's keys with `policy`; returns where the files went.
pub fn write(s: &Scenario, dir: &Path, policy: &str) -> Layout {
    let opts = options(s, policy);
    let db = DB::open(&opts, dir).unwrap();
    if s.ingest {
        let sst = dir.join("ingest.sst");
        let mut w = SstFileWriter::create(&opts);
        w.open(&sst).unwrap();
        let mut keys: Vec<Vec<u8>> = (0..s.num_keys).map(key).collect();
        keys.sort();
        for k in &keys {
            if s.timestamps {
                w.put_with_ts(k, ts(1), b"v").unwrap();
            } else {
                w.put(k, b"v").unwrap();
            }
        }
        w.finish().unwrap();
        db.ingest_external_file(vec![sst]).unwrap();
    } else if s.two_levels {
        let half = s.num_keys / 2;
        for i in 0..half {
            put(s, &db, i);
        }
        db.flush().unwrap();
        // Forced, so the file is rewritten at the last level rather than
        // moved there.
        let mut co = rocksdb::CompactOptions::default();
        co.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        db.compact_range_opt::<&[u8], &[u8]>(None, None, &co);
        for i in half..s.num_keys {
            put(s, &db, i);
        }
        db.flush().unwrap();
    } else {
        for i in 0..s.num_keys {
            put(s, &db, i);
        }
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
    }
    let mut layout: Layout = db
        .live_files()
        .unwrap()
        .into_iter()
        .map(|f| (f.level, f.name.trim_start_matches('/').to_string()))
        .collect();
    layout.sort();
    layout
}

/// Opens with `opts` for the DB and its default column family, so that the
/// default column family has a handle for the batched MultiGet.
pub fn open_with_default_cf(opts: &Options, dir: &Path) -> DB {
    let cf = rocksdb::ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
    DB::open_cf_descriptors(opts, dir, vec![cf]).unwrap()
}

/// The statistics tickers every read compares.
pub const TICKERS: [Ticker; 14] = [
    Ticker::BloomFilterUseful,
    Ticker::BloomFilterFullPositive,
    Ticker::BloomFilterFullTruePositive,
    Ticker::BloomFilterPrefixChecked,
    Ticker::BloomFilterPrefixUseful,
    Ticker::BloomFilterPrefixTruePositive,
    Ticker::NonLastLevelSeekFiltered,
    Ticker::NonLastLevelSeekFilterMatch,
    Ticker::LastLevelSeekFiltered,
    Ticker::LastLevelSeekFilterMatch,
    Ticker::BlockCacheFilterMiss,
    Ticker::BlockCacheFilterHit,
    Ticker::BlockCacheFilterAdd,
    Ticker::BlockCacheFilterBytesInsert,
];

/// The tickers in [`TICKERS`] order, then the perf context's
/// `bloom_sst_hit_count` and `bloom_sst_miss_count`.
pub type Stats = [u64; 16];

/// Indexes into [`Stats`].
pub const USEFUL: usize = 0;
pub const FULL_POSITIVE: usize = 1;
pub const PREFIX_CHECKED: usize = 3;
pub const PREFIX_USEFUL: usize = 4;
pub const SEEK_FILTERED: [usize; 2] = [6, 8];
pub const SEEK_FILTER_MATCH: [usize; 2] = [7, 9];
pub const PERF_SST_HIT: usize = 14;
pub const PERF_SST_MISS: usize = 15;

fn read_options(s: &Scenario) -> ReadOptions {
    let mut ro = ReadOptions::default();
    if s.timestamps {
        ro.set_timestamp(ts(2));
    }
    ro
}

/// Reads every key back (Get and MultiGet), 100,000 absent keys (Get and
/// MultiGet) and, with a prefix extractor, 4,000 prefix seeks
/// (`prefix_same_as_start`); returns the statistics and perf counters.
pub fn read(s: &Scenario, dir: &Path, policy: &str) -> Stats {
    let mut opts = options(s, policy);
    opts.set_disable_auto_compactions(true);
    let db = open_with_default_cf(&opts, dir);
    rocksdb::perf::set_perf_stats(PerfStatsLevel::EnableCount);
    let mut perf = PerfContext::default();
    perf.reset();
    let ro = read_options(s);
    let step = (s.num_keys / 20_000).max(1);
    for i in (0..s.num_keys).step_by(step as usize) {
        assert!(
            db.get_opt(key(i), &ro).unwrap().is_some(),
            "{policy}: key {i} lost"
        );
    }
    let batch: Vec<Vec<u8>> = (0..s.num_keys.min(2000)).map(key).collect();
    let cf = db.cf_handle("default").unwrap();
    for r in db.batched_multi_get_cf_opt(cf, &batch, false, &ro) {
        assert!(r.unwrap().is_some(), "{policy}: MultiGet lost a key");
    }
    let absent_keys: Vec<Vec<u8>> = (0..100_000).map(absent).collect();
    for k in &absent_keys[..50_000] {
        assert!(db.get_opt(k, &ro).unwrap().is_none());
    }
    for chunk in absent_keys[50_000..].chunks(32) {
        for r in db.batched_multi_get_cf_opt(cf, chunk, false, &ro) {
            assert!(r.unwrap().is_none());
        }
    }
    if s.prefix.is_some() {
        let mut ro = read_options(s);
        ro.set_prefix_same_as_start(true);
        let mut it = db.raw_iterator_opt(ro);
        for i in 0..2000.min(s.num_keys) {
            let k = key(i);
            it.seek(&k);
            assert!(it.valid(), "{policy}: prefix seek to key {i} found nothing");
            assert_eq!(it.key(), Some(&k[..]), "{policy}: prefix seek to key {i}");
        }
        for k in &absent_keys[..2000] {
            it.seek(k);
            it.status().unwrap();
        }
    }
    let mut stats = [0; 16];
    for (i, t) in TICKERS.iter().enumerate() {
        stats[i] = opts.get_ticker_count(*t);
    }
    stats[PERF_SST_HIT] = perf.metric(PerfMetric::BloomSstHitCount);
    stats[PERF_SST_MISS] = perf.metric(PerfMetric::BloomSstMissCount);
    rocksdb::perf::set_perf_stats(PerfStatsLevel::Disable);
    stats
}

/// Every filter block (full filters and partitions) of the SSTs in `dir`,
/// extracted by the pure-Rust SST reader, sorted.
pub fn filter_blocks(dir: &Path) -> Vec<Vec<u8>> {
    let mut blocks = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst") {
            let sst = ribbon_sst::SstFile::open(&path).unwrap();
            blocks.extend(sst.filter().blocks().into_iter().map(<[u8]>::to_vec));
        }
    }
    blocks.sort();
    blocks
}

/// Per live SST file, in [`Layout`] order: its level, the metaindex name of
/// its filter block (`fullfilter.…`, `partitionedfilter.…`, or none) and
/// its number of filter blocks (partitions).
pub type FilterLayout = Vec<(i32, Option<String>, usize)>;

pub fn filter_layout(dir: &Path, layout: &Layout) -> FilterLayout {
    layout
        .iter()
        .map(|(level, name)| {
            let sst = ribbon_sst::SstFile::open(dir.join(name)).unwrap();
            (
                *level,
                sst.filter_block_name().map(str::to_string),
                sst.filter().blocks().len(),
            )
        })
        .collect()
}

/// What a round trip saw: the filter layout and blocks the native writer
/// wrote, and the statistics of every (writer, reader) pair.
pub struct Outcome {
    pub layout: FilterLayout,
    pub blocks: Vec<Vec<u8>>,
    pub stats: Stats,
}

/// The tests of one binary run in parallel threads and share the bridge's
/// process-wide counters: a test that reads a counter's change holds this
/// lock, so the change is its own.
pub fn counters_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `rocksdb.filter.policy` of every SST file in `dir` that has a
/// filter: RocksDB records the writing policy's `Name()`, so a file the
/// Rust policy wrote names `rust.RibbonFilter` or `rust.BloomFilter`.
pub fn filter_policy_names(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst") {
            let sst = ribbon_sst::SstFile::open(&path).unwrap();
            if !sst.filter().blocks().is_empty() {
                names.extend(sst.properties().filter_policy());
            }
        }
    }
    names
}

/// Both directions: the filter blocks are identical whoever wrote them, and
/// every (writer, reader) pair gives the same statistics.
pub fn round_trip(s: &Scenario) -> Outcome {
    let _counters = counters_lock();
    let mut results = Vec::new();
    let mut written = Vec::new();
    for writer in [&s.native, &s.rust] {
        let dir = tempfile::tempdir().unwrap();
        let built = rocks_bridge::counters().filters_built;
        let layout = write(s, dir.path(), writer);
        written.push((filter_layout(dir.path(), &layout), filter_blocks(dir.path())));
        if writer == &s.rust && !written[0].1.is_empty() {
            assert!(
                rocks_bridge::counters().filters_built > built,
                "{writer}: RocksDB never called the Rust builder"
            );
        }
        // Each file names its writer: the Rust policy's files say so.
        let names = filter_policy_names(dir.path());
        assert!(
            !names.is_empty() || written[0].1.is_empty(),
            "{writer}: no filter policy recorded"
        );
        for name in &names {
            assert_eq!(
                name.starts_with("rust."),
                writer == &s.rust,
                "{writer} wrote a file of {name}"
            );
        }
        for reader in [&s.native, &s.rust] {
            let created = rocks_bridge::counters().readers_created;
            let stats = read(s, dir.path(), reader);
            if reader == &s.rust && !written[0].1.is_empty() {
                assert!(
                    rocks_bridge::counters().readers_created > created,
                    "{reader}: RocksDB never called the Rust reader"
                );
            }
            results.push((writer.clone(), reader.clone(), stats));
        }
    }
    assert!(
        s.num_keys == 0 || !written[0].1.is_empty(),
        "{}: no filter blocks written",
        s.native
    );
    assert_eq!(
        written[0].0, written[1].0,
        "{} and {}: the filter layouts (level, filter block, partitions) differ",
        s.native, s.rust
    );
    assert!(
        written[0].1 == written[1].1,
        "{} and {}: the filter blocks written differ",
        s.native,
        s.rust
    );
    let (_, _, first) = &results[0];
    // The filters must actually be consulted and useful (a one-key file has
    // no key range for absent keys to fall in).
    assert!(
        s.num_keys < 2 || first[USEFUL] + first[PREFIX_USEFUL] > 0,
        "{}: filters never used: {first:?}",
        s.native
    );
    for (w, r, stats) in &results {
        assert_eq!(
            stats, first,
            "written by {w}, read by {r}: statistics differ from {:?} (order: {TICKERS:?}, perf sst hit, perf sst miss)",
            results[0]
        );
    }
    let (layout, blocks) = written.swap_remove(0);
    Outcome {
        layout,
        blocks,
        stats: *first,
    }
}
