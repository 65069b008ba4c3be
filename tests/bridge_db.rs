//! Round trips through a real RocksDB: files written with RocksDB's native
//! policy are read with the Rust policy and the other way round, over the
//! paths a RocksDB user takes (put/flush/compaction, MultiGet, SstFileWriter
//! and ingestion, partitioned filters, prefix extractors, format versions,
//! the Ribbon/Bloom hybrid, bits/key from 1 to 20). Every run checks that
//! no key is lost and that RocksDB's filter statistics are identical
//! whichever side wrote and whichever side read.

use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedIndexType, BlockBasedOptions, Options, SliceTransform, SstFileWriter, DB};
use std::path::Path;

#[derive(Clone)]
struct Scenario {
    /// RocksDB's policy id and the Rust policy's.
    native: String,
    rust: String,
    format_version: i32,
    partitioned: bool,
    prefix_len: Option<usize>,
    whole_key_filtering: bool,
    num_keys: u64,
    ingest: bool,
}

impl Scenario {
    fn new(native: &str, rust: &str) -> Self {
        Self {
            native: native.into(),
            rust: rust.into(),
            format_version: 7,
            partitioned: false,
            prefix_len: None,
            whole_key_filtering: true,
            num_keys: 20_000,
            ingest: false,
        }
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5555).into_bytes()
}

/// Not a member, inside the key range (so the filter is consulted).
fn absent(i: u64) -> Vec<u8> {
    format!("{:016x}!", i.wrapping_mul(0xD1B5_4A32_D192_ED03)).into_bytes()
}

fn options(s: &Scenario, policy: &str) -> Options {
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
    if let Some(len) = s.prefix_len {
        opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(len));
    }
    opts.set_block_based_table_factory(&table);
    rocks_bridge::set_filter_policy(&mut opts, policy).unwrap();
    opts
}

fn write(s: &Scenario, dir: &Path, policy: &str) {
    let opts = options(s, policy);
    let db = DB::open(&opts, dir).unwrap();
    if s.ingest {
        let sst = dir.join("ingest.sst");
        let mut w = SstFileWriter::create(&opts);
        w.open(&sst).unwrap();
        let mut keys: Vec<Vec<u8>> = (0..s.num_keys).map(key).collect();
        keys.sort();
        for k in &keys {
            w.put(k, b"v").unwrap();
        }
        w.finish().unwrap();
        db.ingest_external_file(vec![sst]).unwrap();
    } else {
        for i in 0..s.num_keys {
            db.put(key(i), i.to_le_bytes()).unwrap();
        }
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
    }
}

/// Opens with `opts` for the DB and its default column family, so that the
/// default column family has a handle for the batched MultiGet.
fn open_with_default_cf(opts: &Options, dir: &Path) -> DB {
    let cf = rocksdb::ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
    DB::open_cf_descriptors(opts, dir, vec![cf]).unwrap()
}

/// (useful, full positive, full true positive, prefix checked, prefix useful)
type Stats = [u64; 5];

fn read(s: &Scenario, dir: &Path, policy: &str) -> Stats {
    let mut opts = options(s, policy);
    opts.set_disable_auto_compactions(true);
    let db = open_with_default_cf(&opts, dir);
    let step = (s.num_keys / 20_000).max(1);
    for i in (0..s.num_keys).step_by(step as usize) {
        assert!(db.get(key(i)).unwrap().is_some(), "{policy}: key {i} lost");
    }
    let batch: Vec<Vec<u8>> = (0..s.num_keys.min(2000)).map(key).collect();
    let cf = db.cf_handle("default").unwrap();
    for r in db.batched_multi_get_cf(cf, &batch, false) {
        assert!(r.unwrap().is_some(), "{policy}: MultiGet lost a key");
    }
    let absent_keys: Vec<Vec<u8>> = (0..100_000).map(absent).collect();
    for k in &absent_keys[..50_000] {
        assert!(db.get(k).unwrap().is_none());
    }
    for chunk in absent_keys[50_000..].chunks(32) {
        for r in db.batched_multi_get_cf(cf, chunk, false) {
            assert!(r.unwrap().is_none());
        }
    }
    [
        opts.get_ticker_count(Ticker::BloomFilterUseful),
        opts.get_ticker_count(Ticker::BloomFilterFullPositive),
        opts.get_ticker_count(Ticker::BloomFilterFullTruePositive),
        opts.get_ticker_count(Ticker::BloomFilterPrefixChecked),
        opts.get_ticker_count(Ticker::BloomFilterPrefixUseful),
    ]
}

/// Both directions: every (writer, reader) pair gives the same statistics.
/// Every filter block (full filters and partitions) of the SSTs in `dir`,
/// extracted by the pure-Rust SST reader, sorted.
fn filter_blocks(dir: &Path) -> Vec<Vec<u8>> {
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

fn round_trip(s: &Scenario) {
    let mut results = Vec::new();
    let mut written = Vec::new();
    for writer in [&s.native, &s.rust] {
        let dir = tempfile::tempdir().unwrap();
        let built = rocks_bridge::counters().filters_built;
        write(s, dir.path(), writer);
        written.push(filter_blocks(dir.path()));
        if writer == &s.rust && s.num_keys > 0 {
            assert!(
                rocks_bridge::counters().filters_built > built,
                "{writer}: RocksDB never called the Rust builder"
            );
        }
        for reader in [&s.native, &s.rust] {
            let created = rocks_bridge::counters().readers_created;
            let stats = read(s, dir.path(), reader);
            if reader == &s.rust {
                assert!(
                    rocks_bridge::counters().readers_created > created,
                    "{reader}: RocksDB never called the Rust reader"
                );
            }
            results.push((writer.clone(), reader.clone(), stats));
        }
    }
    assert!(
        s.num_keys == 0 || !written[0].is_empty(),
        "{}: no filter blocks written",
        s.native
    );
    assert!(
        written[0] == written[1],
        "{} and {}: the filter blocks written differ",
        s.native,
        s.rust
    );
    let (_, _, first) = &results[0];
    // The filters must actually be consulted and useful (a one-key file has
    // no key range for absent keys to fall in).
    assert!(
        s.num_keys < 2 || first[0] + first[4] > 0,
        "{}: filters never used: {first:?}",
        s.native
    );
    for (w, r, stats) in &results {
        assert_eq!(
            stats, first,
            "written by {w}, read by {r}: statistics differ from {:?}",
            results[0]
        );
    }
}

#[test]
fn put_flush_compact_get_multiget() {
    for bits in ["1", "6.5", "10", "20"] {
        round_trip(&Scenario::new(
            &format!("ribbonfilter:{bits}:-1"),
            &format!("rust.RibbonFilter:{bits}:-1"),
        ));
        round_trip(&Scenario::new(
            &format!("bloomfilter:{bits}"),
            &format!("rust.BloomFilter:{bits}"),
        ));
    }
}

#[test]
fn format_versions() {
    for fv in [2, 3, 4, 5, 6, 7] {
        let mut s = Scenario::new("bloomfilter:10", "rust.BloomFilter:10");
        s.format_version = fv;
        round_trip(&s);
        let mut s = Scenario::new("ribbonfilter:10", "rust.RibbonFilter:10");
        s.format_version = fv;
        round_trip(&s);
    }
}

#[test]
fn sst_file_writer_and_ingest() {
    for n in [1, 1000, 100_000] {
        let mut s = Scenario::new("ribbonfilter:10", "rust.RibbonFilter:10");
        s.ingest = true;
        s.num_keys = n;
        round_trip(&s);
    }
}

#[test]
fn partitioned_filters() {
    for (native, rust) in [
        ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1"),
        ("bloomfilter:10", "rust.BloomFilter:10"),
    ] {
        let mut s = Scenario::new(native, rust);
        s.partitioned = true;
        s.num_keys = 100_000;
        round_trip(&s);
    }
}

#[test]
fn prefix_extractor_with_and_without_whole_keys() {
    for whole in [true, false] {
        for (native, rust) in [
            ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1"),
            ("bloomfilter:10", "rust.BloomFilter:10"),
        ] {
            let mut s = Scenario::new(native, rust);
            s.prefix_len = Some(7);
            s.whole_key_filtering = whole;
            round_trip(&s);
        }
    }
}

#[test]
fn hybrid_across_levels() {
    for bbl in [0, 1, 3] {
        round_trip(&Scenario::new(
            &format!("ribbonfilter:10:{bbl}"),
            &format!("rust.RibbonFilter:10:{bbl}"),
        ));
    }
}

#[test]
fn a_million_keys_in_one_file() {
    let mut s = Scenario::new("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1");
    s.num_keys = 1_000_000;
    round_trip(&s);
}

#[test]
fn options_string_and_options_file_keep_the_policy() {
    rocks_bridge::register();
    let base = Options::default();
    let opts = base
        .clone()
        .get_options_from_string("block_based_table_factory={filter_policy=rust.RibbonFilter:6.5:2}")
        .unwrap();
    assert_eq!(
        rocks_bridge::filter_policy_id(&opts).as_deref(),
        Some("rust.RibbonFilter:6.5:2")
    );
    // Written to OPTIONS, read back by RocksDB's own loader.
    let dir = tempfile::tempdir().unwrap();
    {
        let mut opts = opts;
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir.path()).unwrap();
        db.put(b"a", b"1").unwrap();
        db.flush().unwrap();
    }
    // Reopen from the OPTIONS file alone: the Rust policy builds and reads.
    let (loaded, cfs) = Options::load_latest(
        dir.path(),
        rocksdb::Env::new().unwrap(),
        false,
        rocksdb::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    {
        let before = rocks_bridge::counters();
        let db = DB::open_cf_descriptors(&loaded, dir.path(), cfs).unwrap();
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        db.put(b"b", b"2").unwrap();
        db.flush().unwrap();
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
        let after = rocks_bridge::counters();
        assert!(
            after.readers_created > before.readers_created,
            "reopened DB did not read with Rust"
        );
        assert!(
            after.filters_built > before.filters_built,
            "reopened DB did not build with Rust"
        );
    }
    let text = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .next()
        .unwrap();
    // As RocksDB writes its own ribbonfilter: the id, and the mutable
    // bloom_before_level as an option of the policy.
    assert!(
        text.contains("filter_policy={id=rust.RibbonFilter:6.5:2;bloom_before_level=2;}"),
        "OPTIONS file: {text}"
    );
}

#[test]
fn concurrent_reads_during_compaction() {
    let s = Scenario::new("ribbonfilter:10:1", "rust.RibbonFilter:10:1");
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(&s, &s.rust);
    opts.set_write_buffer_size(1 << 20);
    let db = std::sync::Arc::new(open_with_default_cf(&opts, dir.path()));
    const BASE: u64 = 50_000;
    for i in 0..BASE {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..8)
        .map(|t| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rounds = 0u64;
                let cf = db.cf_handle("default").unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || rounds < 3 {
                    let start = (t * 7919 + rounds * 104_729) % BASE;
                    for i in start..start + 500 {
                        assert!(db.get(key(i % BASE)).unwrap().is_some(), "thread {t}: key lost");
                    }
                    let batch: Vec<Vec<u8>> = (start..start + 64).map(|i| key(i % BASE)).collect();
                    for r in db.batched_multi_get_cf(cf, &batch, false) {
                        assert!(r.unwrap().is_some(), "thread {t}: MultiGet lost a key");
                    }
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();
    for round in 0..4u64 {
        for i in 0..20_000u64 {
            db.put(key(BASE + round * 20_000 + i), b"w").unwrap();
        }
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader thread panicked") >= 3);
    }
}

/// The filter kinds of the SST files in `dir` that are not in `seen`.
fn new_filter_kinds(dir: &Path, seen: &mut std::collections::HashSet<std::path::PathBuf>) -> Vec<String> {
    let mut kinds = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst") && seen.insert(path.clone()) {
            kinds.push(
                ribbon_sst::SstFile::open(&path)
                    .unwrap()
                    .filter()
                    .summary()
                    .kind_label(),
            );
        }
    }
    kinds
}

#[test]
fn set_options_switches_policy_and_bloom_before_level() {
    let dir = tempfile::tempdir().unwrap();
    let s = Scenario::new("ribbonfilter:10", "rust.RibbonFilter:10");
    let mut opts = options(&s, "bloomfilter:10");
    // Only flushes: an automatic compaction would add files of its own.
    opts.set_disable_auto_compactions(true);
    let db = DB::open(&opts, dir.path()).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut flush = |db: &DB, round: u64| {
        for i in 0..1000 {
            db.put(key(round * 1000 + i), b"v").unwrap();
        }
        db.flush().unwrap();
        new_filter_kinds(dir.path(), &mut seen)
    };
    assert_eq!(flush(&db, 0), ["FastLocalBloom"]);
    // SetOptions selects the Rust policy by its id...
    db.set_options(&[(
        "block_based_table_factory",
        "{filter_policy=rust.RibbonFilter:10:-1}",
    )])
    .unwrap();
    let built = rocks_bridge::counters().filters_built;
    assert_eq!(flush(&db, 1), ["Standard128Ribbon"]);
    assert!(
        rocks_bridge::counters().filters_built > built,
        "the flush did not build in Rust"
    );
    // ...and changes its bloom_before_level, as with RocksDB's ribbonfilter:
    // flushes are level -1, so 0 makes them Bloom.
    db.set_options(&[("table_factory.filter_policy.bloom_before_level", "0")])
        .unwrap();
    assert_eq!(flush(&db, 2), ["FastLocalBloom"]);
    db.set_options(&[("table_factory.filter_policy.bloom_before_level", "-1")])
        .unwrap();
    assert_eq!(flush(&db, 3), ["Standard128Ribbon"]);
    for i in 0..4000 {
        assert!(db.get(key(i)).unwrap().is_some());
    }
}
