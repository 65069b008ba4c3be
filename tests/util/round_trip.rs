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
    /// partition_filters and metadata_block_size 512 with this index type
    /// (`BinarySearch`, `HashSearch` or `TwoLevelIndexSearch`), set through
    /// the table options API, whose factory RocksDB sanitises.
    pub partition_filters_with_index: Option<&'static str>,
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
            partition_filters_with_index: None,
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
    if let Some(index) = s.partition_filters_with_index {
        table.set_index_type(match index {
            "BinarySearch" => BlockBasedIndexType::BinarySearch,
            "HashSearch" => BlockBasedIndexType::HashSearch,
            "TwoLevelIndexSearch" => BlockBasedIndexType::TwoLevelIndexSearch,
            other => panic!("index type {other}"),
        });
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
    // Last: the table factory's other settings are kept (the bridge
    // reconfigures a copy of it through RocksDB's options-string API).
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

/// The table filter policy of column family `default` in the newest
/// `OPTIONS-NNNNNN` file of the database at `dir`, as RocksDB wrote it
/// (`None` for `nullptr` or no entry): what a reopen from the OPTIONS file
/// will create.
pub fn options_file_filter_policy(dir: &std::path::Path) -> Option<String> {
    let text = policy::options_file(dir);
    let section = text
        .split("\n[")
        .find(|s| s.starts_with("TableOptions/BlockBasedTable \"default\"]"))
        .expect("no block-based table options for column family default");
    let value = section
        .lines()
        .find_map(|l| l.trim().strip_prefix("filter_policy="))
        .expect("no filter_policy entry");
    // `ID`, or `{id=ID;OPTION=VALUE;...}` for a policy with options of its own.
    let id = match value.strip_prefix("{id=") {
        Some(rest) => &rest[..rest.find([';', '}']).unwrap_or(rest.len())],
        None => value,
    };
    (id != "nullptr").then(|| id.to_string())
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

/// The round trip of any filter policy id, a plugin's included:
/// [`policy::round_trip_policy`] (used by `tests/bridge_round_trip.rs`).
pub mod policy {
    use super::{absent, key};
    use rocksdb::statistics::Ticker;
    use rocksdb::{Cache, ColumnFamilyDescriptor, Env, Options, DB, DEFAULT_COLUMN_FAMILY_NAME};
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::Arc;

    /// What a stock RocksDB reader (no plugin configured) does with files
    /// the policy wrote.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Degradation {
        /// A policy of its own family (compatibility name): RocksDB's native
        /// `ribbonfilter:10` must not use its filters at all
        /// (`BloomFilterUseful` and `BloomFilterFullPositive` stay 0).
        NoFilterUsed,
        /// A `rust.*` policy of RocksDB's built-in family: the native policy
        /// reads its filters, as useful as the policy itself.
        NativeReads,
    }

    /// Keys written by each fill.
    pub const KEYS: u64 = 20_000;

    /// The fraction of absent-key reads a filter ruled out, per phase.
    #[derive(Clone, Debug, Default)]
    pub struct Fractions(pub Vec<(String, f64)>);

    impl Fractions {
        /// The smallest fraction seen.
        pub fn min(&self) -> f64 {
            self.0.iter().map(|(_, f)| *f).fold(f64::INFINITY, f64::min)
        }
    }

    /// Options from an options string naming `policy` (empty: no filter);
    /// `partitioned` adds partitioned filters (`kTwoLevelIndexSearch`,
    /// `metadata_block_size=256`). Statistics on.
    pub fn options_from_string(policy: &str, partitioned: bool) -> Options {
        let table = if partitioned {
            "partition_filters=true;index_type=kTwoLevelIndexSearch;metadata_block_size=256;"
        } else {
            ""
        };
        let filter = if policy.is_empty() {
            "filter_policy=nullptr".to_string()
        } else {
            format!("filter_policy={policy}")
        };
        let s = format!(
            "create_if_missing=true;disable_auto_compactions=true;write_buffer_size=67108864;\
             block_based_table_factory={{format_version=7;{table}{filter}}}"
        );
        let mut opts = Options::default()
            .get_options_from_string(&s)
            .unwrap_or_else(|e| panic!("options string {s:?}: {e}"));
        opts.enable_statistics();
        opts
    }

    /// Opens `dir` with `opts` for the DB and the default column family
    /// (which then has a handle for the batched MultiGet).
    pub fn open(opts: &Options, dir: &Path) -> DB {
        let cf = ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
        DB::open_cf_descriptors(opts, dir, vec![cf]).unwrap()
    }

    /// Writes keys `0..KEYS` in four flushes, then compacts everything into
    /// one sorted run.
    pub fn fill(db: &DB) {
        for i in 0..KEYS {
            db.put(key(i), i.to_le_bytes()).unwrap();
            if (i + 1) % (KEYS / 4) == 0 {
                db.flush().unwrap();
            }
        }
        db.compact_range::<&[u8], &[u8]>(None, None);
    }

    /// Filter statistics of one [`check`].
    #[derive(Clone, Copy, Debug)]
    pub struct Reads {
        /// Absent-key Gets and MultiGet keys issued (each).
        pub absent: u64,
        /// `BloomFilterUseful` over the absent-key Gets, then MultiGets.
        pub useful_get: u64,
        pub useful_multi_get: u64,
        /// `BloomFilterFullPositive` over all reads.
        pub full_positive: u64,
    }

    impl Reads {
        /// The smaller of the Get and MultiGet useful fractions.
        pub fn useful_fraction(&self) -> f64 {
            self.useful_get.min(self.useful_multi_get) as f64 / self.absent as f64
        }
    }

    /// Every key of `0..n` is found by Get and by batched MultiGet; 20,000
    /// absent keys (inside the key range) are not found, by Get, then by
    /// MultiGet. `opts`: the options holding the DB's statistics.
    pub fn check(db: &DB, opts: &Options, n: u64, what: &str) -> Reads {
        let cf = db.cf_handle(DEFAULT_COLUMN_FAMILY_NAME).unwrap();
        let useful = || opts.get_ticker_count(Ticker::BloomFilterUseful);
        let positive0 = opts.get_ticker_count(Ticker::BloomFilterFullPositive);
        for i in 0..n {
            assert!(db.get(key(i)).unwrap().is_some(), "{what}: Get lost key {i}");
        }
        let present: Vec<Vec<u8>> = (0..n).map(key).collect();
        for chunk in present.chunks(64) {
            for r in db.batched_multi_get_cf(cf, chunk, false) {
                assert!(r.unwrap().is_some(), "{what}: MultiGet lost a key");
            }
        }
        const ABSENT: u64 = 20_000;
        let before = useful();
        for i in 0..ABSENT {
            assert!(db.get(absent(i)).unwrap().is_none(), "{what}: absent key found");
        }
        let useful_get = useful() - before;
        let absent_keys: Vec<Vec<u8>> = (ABSENT..2 * ABSENT).map(absent).collect();
        let before = useful();
        for chunk in absent_keys.chunks(64) {
            for r in db.batched_multi_get_cf(cf, chunk, false) {
                assert!(r.unwrap().is_none(), "{what}: absent key found");
            }
        }
        Reads {
            absent: ABSENT,
            useful_get,
            useful_multi_get: useful() - before,
            full_positive: opts.get_ticker_count(Ticker::BloomFilterFullPositive) - positive0,
        }
    }

    /// [`check`], and the filters ruled out at least `min` of the absent
    /// keys; records the fraction under `what`.
    fn check_useful(db: &DB, opts: &Options, n: u64, min: f64, what: &str, out: &mut Fractions) {
        let reads = check(db, opts, n, what);
        let f = reads.useful_fraction();
        assert!(
            f >= min,
            "{what}: filters ruled out only {f:.4} of absent keys ({reads:?}), want {min}"
        );
        out.0.push((what.to_string(), f));
    }

    /// The text of the newest OPTIONS file in `dir`.
    pub fn options_file(dir: &Path) -> String {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
            .collect();
        files.sort_by_key(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name["OPTIONS-".len()..].parse::<u64>().unwrap_or(0)
        });
        std::fs::read_to_string(files.last().expect("an OPTIONS file")).unwrap()
    }

    /// The SST files of `dir`, sorted by name (oldest first).
    pub fn sst_files(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "sst"))
            .collect();
        files.sort();
        files
    }

    /// The options of `dir`'s newest OPTIONS file, with statistics on, and
    /// the database opened with them alone.
    pub fn reopen_from_options_file(dir: &Path) -> (DB, Options) {
        let (mut loaded, cfs) =
            Options::load_latest(dir, Env::new().unwrap(), false, Cache::new_lru_cache(8 << 20)).unwrap();
        loaded.enable_statistics();
        let db = DB::open_cf_descriptors(&loaded, dir, cfs).unwrap();
        (db, loaded)
    }

    /// The `rocksdb.filter.policy` property (the writing policy's name) of
    /// every SST file in `dir`.
    pub fn policy_names(dir: &Path) -> Vec<String> {
        sst_files(dir)
            .into_iter()
            .map(|p| {
                let sst = ribbon_sst::SstFile::open(&p).unwrap();
                sst.properties()
                    .filter_policy()
                    .unwrap_or_else(|| panic!("{p:?} records no filter policy"))
            })
            .collect()
    }

    /// The metaindex name of every SST file's filter in `dir`, and its
    /// number of filter partitions where the pure-Rust SST reader reads
    /// them (the families it knows: RocksDB's built-in one and
    /// `rust.BalancedRibbon`; `None` for others).
    fn partitions(dir: &Path) -> Vec<(String, Option<usize>)> {
        sst_files(dir)
            .into_iter()
            .map(|p| {
                let sst = ribbon_sst::SstFile::open(&p).unwrap();
                let name = sst.filter_block_name().unwrap_or("").to_string();
                let blocks = match sst.filter() {
                    ribbon_sst::Filter::UnknownPolicy { .. } => None,
                    f => Some(f.blocks().len()),
                };
                (name, blocks)
            })
            .collect()
    }

    /// One thread writes keys `KEYS..`, flushing and compacting in a loop,
    /// while 8 threads Get and MultiGet keys `0..KEYS` (written before);
    /// every read finds its key.
    fn reads_during_compactions(db: Arc<DB>, what: &str) {
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..8u64)
            .map(|t| {
                let (db, stop, what) = (db.clone(), stop.clone(), what.to_string());
                std::thread::spawn(move || {
                    let cf = db.cf_handle(DEFAULT_COLUMN_FAMILY_NAME).unwrap();
                    let mut rounds = 0u64;
                    while !stop.load(Relaxed) || rounds < 3 {
                        let start = (t * 7919 + rounds * 104_729) % KEYS;
                        for i in start..start + 300 {
                            assert!(
                                db.get(key(i % KEYS)).unwrap().is_some(),
                                "{what}: thread {t}: Get lost a key"
                            );
                        }
                        let batch: Vec<Vec<u8>> = (start..start + 64).map(|i| key(i % KEYS)).collect();
                        for r in db.batched_multi_get_cf(cf, &batch, false) {
                            assert!(r.unwrap().is_some(), "{what}: thread {t}: MultiGet lost a key");
                        }
                        rounds += 1;
                    }
                    rounds
                })
            })
            .collect();
        for round in 0..4 {
            for i in 0..10_000 {
                db.put(key(KEYS + round * 10_000 + i), b"w").unwrap();
                if i % 2500 == 2499 {
                    db.flush().unwrap();
                }
            }
            db.compact_range::<&[u8], &[u8]>(None, None);
        }
        stop.store(true, Relaxed);
        for r in readers {
            assert!(r.join().expect("a reader thread panicked") >= 3);
        }
    }

    /// Proves, for the RocksDB filter policy id `policy` (registered
    /// beforehand, when it is a plugin's):
    ///
    /// * (a) options from an options string naming it select it;
    /// * (b) after 20,000 keys in four flushes and a full compaction, every
    ///   key is found by Get and batched MultiGet, and the filters rule out
    ///   at least `min_useful` of the absent keys read by each
    ///   (`BloomFilterUseful`);
    /// * (c) the OPTIONS file names it, and the options
    ///   `Options::load_latest` gives alone reopen the DB with it: (b) again;
    /// * (d) with partitioned filters (several partitions per file): (b);
    /// * (e) 8 threads Get and MultiGet written keys while one thread
    ///   writes, flushes and compacts: every read finds its key;
    /// * (f) the DB reopened with stock `ribbonfilter:10`: every key found,
    ///   and per `degradation` no filter used or the filters as useful; and
    ///   with no filter policy: every key found, no filter used.
    ///
    /// Returns the useful fractions measured.
    pub fn round_trip_policy(policy: &str, min_useful: f64, degradation: Degradation) -> Fractions {
        rocks_bridge::register();
        let mut out = Fractions::default();
        // (a), checked in the OPTIONS file RocksDB writes at (c)
        let opts = options_from_string(policy, false);
        let id = rocks_bridge::canonical_id(policy).unwrap_or_else(|| policy.to_string());
        // (b)
        let dir = tempfile::tempdir().unwrap();
        {
            let db = open(&opts, dir.path());
            fill(&db);
            check_useful(
                &db,
                &opts,
                KEYS,
                min_useful,
                &format!("{policy}: written"),
                &mut out,
            );
        }
        // RocksDB records the writing policy's name in each file.
        let written_by = policy_names(dir.path());
        assert!(
            !written_by.is_empty(),
            "{policy}: no file records a filter policy"
        );
        // (c)
        assert_eq!(
            super::options_file_filter_policy(dir.path()).as_deref(),
            Some(id.as_str()),
            "{policy}: the OPTIONS file does not name {id}:\n{}",
            options_file(dir.path())
        );
        {
            let (db, loaded) = reopen_from_options_file(dir.path());
            check_useful(
                &db,
                &loaded,
                KEYS,
                min_useful,
                &format!("{policy}: reopened from OPTIONS"),
                &mut out,
            );
            // The loaded policy also builds: rewrite every key into new files.
            fill(&db);
            let rewritten = policy_names(dir.path());
            assert!(
                !rewritten.is_empty() && rewritten.iter().all(|n| written_by.contains(n)),
                "{policy}: files written after reopening name {rewritten:?}, before {written_by:?}"
            );
            check_useful(
                &db,
                &loaded,
                KEYS,
                min_useful,
                &format!("{policy}: rewritten after reopening"),
                &mut out,
            );
        }
        // (d)
        {
            let pdir = tempfile::tempdir().unwrap();
            drop({
                let db = open(&options_from_string(policy, true), pdir.path());
                fill(&db);
                db
            });
            let parts = partitions(pdir.path());
            assert!(
                parts.len() == 1
                    && parts[0].0.starts_with("partitionedfilter.")
                    && parts[0].1.is_none_or(|n| n >= 4),
                "{policy}: filters (metaindex name, partitions) {parts:?}"
            );
            // Reopened, RocksDB loads each partition of the one file into the
            // block cache once (as the table opens or as reads need it).
            let popts = options_from_string(policy, true);
            let db = open(&popts, pdir.path());
            check_useful(
                &db,
                &popts,
                KEYS,
                min_useful,
                &format!("{policy}: partitioned"),
                &mut out,
            );
            let loaded = popts.get_ticker_count(Ticker::BlockCacheFilterAdd);
            assert!(
                loaded >= parts[0].1.unwrap_or(4) as u64,
                "{policy}: {loaded} filter blocks loaded, partitions {parts:?}"
            );
        }
        // (e)
        {
            let cdir = tempfile::tempdir().unwrap();
            let db = Arc::new(open(&opts, cdir.path()));
            fill(&db);
            reads_during_compactions(db.clone(), policy);
            check(
                &db,
                &opts,
                KEYS + 40_000,
                &format!("{policy}: after concurrent compactions"),
            );
        }
        // (f)
        let native = options_from_string("ribbonfilter:10", false);
        {
            let db = open(&native, dir.path());
            let what = format!("{policy}: read by ribbonfilter:10");
            match degradation {
                Degradation::NoFilterUsed => {
                    let r = check(&db, &native, KEYS, &what);
                    assert_eq!(
                        (r.useful_get, r.useful_multi_get, r.full_positive),
                        (0, 0, 0),
                        "{what}: {r:?}"
                    );
                }
                Degradation::NativeReads => check_useful(&db, &native, KEYS, min_useful, &what, &mut out),
            }
        }
        let none = options_from_string("", false);
        let db = open(&none, dir.path());
        assert_eq!(super::options_file_filter_policy(dir.path()), None);
        let r = check(&db, &none, KEYS, &format!("{policy}: read without a filter"));
        assert_eq!(
            (r.useful_get, r.useful_multi_get, r.full_positive),
            (0, 0, 0),
            "{policy}: no filter: {r:?}"
        );
        out
    }
}
